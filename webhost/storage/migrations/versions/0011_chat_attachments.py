"""The chat's attachments: files and MCP resources a person attached to a message, sealed
(webhost/storage/attachments.py).

Revision ID: 0011
Revises: 0010
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "chat_attachments",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("person_id", sa.String(255), nullable=False),
        sa.Column("conversation_id", sa.String(64)),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("mime_type", sa.String(200), nullable=False),
        sa.Column("size", sa.BigInteger, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("sealed", sa.LargeBinary, nullable=False),
    )
    op.create_index("chat_attachments_person", "chat_attachments", ["person_id", "conversation_id"])


def downgrade() -> None:
    op.drop_index("chat_attachments_person", "chat_attachments")
    op.drop_table("chat_attachments")
