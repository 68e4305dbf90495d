"""Each person's OAuth tokens and client registration per remote server, sealed (webhost/storage/oauth_tokens.py).

Revision ID: 0004
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "oauth_grants",
        sa.Column("person_id", sa.String(255), primary_key=True),
        sa.Column("server", sa.String(255), primary_key=True),
        sa.Column("kind", sa.String(16), primary_key=True),
        sa.Column("sealed", sa.LargeBinary, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("oauth_grants")
