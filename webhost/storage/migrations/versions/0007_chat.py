"""The chat: each person's conversations, their messages (sealed), the requests sent to the model (sealed),
the apps' model contexts (sealed) and the tokens used (webhost/storage/conversations.py).

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "chat_conversations",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("person_id", sa.String(255), nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("model_id", sa.String(64), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.Column("sealed_settings", sa.LargeBinary),
    )
    op.create_index("chat_conversations_person", "chat_conversations", ["person_id", "updated_at"])
    op.create_table(
        "chat_messages",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("conversation_id", sa.String(64), nullable=False),
        sa.Column("person_id", sa.String(255), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("replica_id", sa.String(64)),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.Column("sealed", sa.LargeBinary, nullable=False),
    )
    op.create_index("chat_messages_conversation", "chat_messages", ["conversation_id", "seq"])
    op.create_table(
        "chat_requests",
        sa.Column("message_id", sa.String(64), primary_key=True),
        sa.Column("step", sa.Integer, primary_key=True),
        sa.Column("conversation_id", sa.String(64), nullable=False),
        sa.Column("person_id", sa.String(255), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("sealed", sa.LargeBinary, nullable=False),
    )
    op.create_index("chat_requests_conversation", "chat_requests", ["conversation_id", "created_at"])
    op.create_table(
        "chat_contexts",
        sa.Column("conversation_id", sa.String(64), primary_key=True),
        sa.Column("instance", sa.String(64), primary_key=True),
        sa.Column("person_id", sa.String(255), nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.Column("sealed", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "chat_usage",
        sa.Column("person_id", sa.String(255), primary_key=True),
        sa.Column("day", sa.String(10), primary_key=True),
        sa.Column("model_id", sa.String(64), primary_key=True),
        sa.Column("conversation_id", sa.String(64), primary_key=True),
        sa.Column("input_tokens", sa.BigInteger, nullable=False),
        sa.Column("output_tokens", sa.BigInteger, nullable=False),
    )
    op.create_index("chat_usage_day", "chat_usage", ["day"])


def downgrade() -> None:
    op.drop_index("chat_usage_day", table_name="chat_usage")
    op.drop_table("chat_usage")
    op.drop_table("chat_contexts")
    op.drop_index("chat_requests_conversation", table_name="chat_requests")
    op.drop_table("chat_requests")
    op.drop_index("chat_messages_conversation", table_name="chat_messages")
    op.drop_table("chat_messages")
    op.drop_index("chat_conversations_person", table_name="chat_conversations")
    op.drop_table("chat_conversations")
