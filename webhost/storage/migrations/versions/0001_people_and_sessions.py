"""People, web sessions and pending sign-ins.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "people",
        sa.Column("id", sa.String(255), primary_key=True),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("email", sa.String(320)),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("groups", sa.JSON, nullable=False),
        sa.Column("first_seen", sa.Float, nullable=False),
        sa.Column("last_seen", sa.Float, nullable=False),
    )
    op.create_table(
        "web_sessions",
        sa.Column("id_hash", sa.String(64), primary_key=True),
        sa.Column("person_id", sa.String(255), sa.ForeignKey("people.id", ondelete="CASCADE"), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False),
        sa.Column("revoked_at", sa.Float),
        sa.Column("id_token", sa.Text),
    )
    op.create_index("web_sessions_person", "web_sessions", ["person_id"])
    op.create_table(
        "sign_ins",
        sa.Column("state_hash", sa.String(64), primary_key=True),
        sa.Column("nonce", sa.String(128), nullable=False),
        sa.Column("code_verifier", sa.String(128), nullable=False),
        sa.Column("redirect_uri", sa.Text, nullable=False),
        sa.Column("next_path", sa.Text, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("used_at", sa.Float),
    )


def downgrade() -> None:
    op.drop_table("sign_ins")
    op.drop_index("web_sessions_person", "web_sessions")
    op.drop_table("web_sessions")
    op.drop_table("people")
