"""The chat's branches: each message names the message before it in its branch (`parent_id`), and each
conversation the last message of the branch it shows (`leaf_id`) (webhost/storage/conversations.py).

Messages written before are one branch in the order they were written: each one's parent is the one before
it (by `seq`), set here; a conversation without `leaf_id` shows the branch of its newest message.

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("chat_messages", sa.Column("parent_id", sa.String(64)))
    op.add_column("chat_conversations", sa.Column("leaf_id", sa.String(64)))
    messages = sa.table(
        "chat_messages",
        sa.column("id", sa.String),
        sa.column("conversation_id", sa.String),
        sa.column("seq", sa.Integer),
        sa.column("parent_id", sa.String),
    )
    db = op.get_bind()
    rows = db.execute(
        sa.select(messages.c.id, messages.c.conversation_id).order_by(messages.c.conversation_id, messages.c.seq)
    ).all()
    before: dict[str, str] = {}
    for message_id, conversation_id in rows:
        parent = before.get(conversation_id)
        if parent is not None:
            db.execute(messages.update().where(messages.c.id == message_id).values(parent_id=parent))
        before[conversation_id] = message_id


def downgrade() -> None:
    with op.batch_alter_table("chat_conversations") as table:
        table.drop_column("leaf_id")
    with op.batch_alter_table("chat_messages") as table:
        table.drop_column("parent_id")
