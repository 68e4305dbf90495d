"""The values each person provides for `${input:ID}`, encrypted (webhost/storage/inputs.py).

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "person_inputs",
        sa.Column("person_id", sa.String(255), primary_key=True),
        sa.Column("input_id", sa.String(64), primary_key=True),
        sa.Column("sealed", sa.LargeBinary, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("person_inputs")
