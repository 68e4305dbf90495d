"""The roots an admin gives everyone and those each person adds (webhost/storage/roots.py).

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "roots",
        sa.Column("owner", sa.String(255), primary_key=True),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("uri", sa.Text, nullable=False),
        sa.Column("name", sa.Text),
        sa.Column("updated_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("roots")
