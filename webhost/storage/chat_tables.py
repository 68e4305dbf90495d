"""The chat's tables (webhost/storage/conversations.py reads and writes them; the attachments' table is in
attachments.py). What is sealed there is in the columns named `sealed*`."""

from __future__ import annotations

import sqlalchemy as sa

from webhost.storage.db import metadata

chat_conversations = sa.Table(
    "chat_conversations",
    metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("person_id", sa.String(255), nullable=False),
    # Empty: the title is sealed (`sealed_title`); a title here is one a previous version wrote in the clear, which
    # webhost seals when it starts (storage/conversation_titles.py).
    sa.Column("title", sa.Text, nullable=False),
    sa.Column("sealed_title", sa.LargeBinary),
    sa.Column("model_id", sa.String(64), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
    sa.Column("sealed_settings", sa.LargeBinary),
    sa.Column("leaf_id", sa.String(64)),  # the last message of the branch shown (None: the newest message's)
    sa.Index("chat_conversations_person", "person_id", "updated_at"),
)
chat_messages = sa.Table(
    "chat_messages",
    metadata,
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
    sa.Column("parent_id", sa.String(64)),  # the message before this one in its branch (None: the first)
    sa.Index("chat_messages_conversation", "conversation_id", "seq"),
)
chat_requests = sa.Table(
    "chat_requests",
    metadata,
    sa.Column("message_id", sa.String(64), primary_key=True),
    sa.Column("step", sa.Integer, primary_key=True),
    sa.Column("conversation_id", sa.String(64), nullable=False),
    sa.Column("person_id", sa.String(255), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("sealed", sa.LargeBinary, nullable=False),
    sa.Index("chat_requests_conversation", "conversation_id", "created_at"),
)
chat_contexts = sa.Table(
    "chat_contexts",
    metadata,
    sa.Column("conversation_id", sa.String(64), primary_key=True),
    sa.Column("instance", sa.String(64), primary_key=True),
    sa.Column("person_id", sa.String(255), nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
    sa.Column("sealed", sa.LargeBinary, nullable=False),
)
chat_usage = sa.Table(
    "chat_usage",
    metadata,
    sa.Column("person_id", sa.String(255), primary_key=True),
    sa.Column("day", sa.String(10), primary_key=True),
    sa.Column("model_id", sa.String(64), primary_key=True),
    sa.Column("conversation_id", sa.String(64), primary_key=True),
    sa.Column("input_tokens", sa.BigInteger, nullable=False),
    sa.Column("output_tokens", sa.BigInteger, nullable=False),
    sa.Index("chat_usage_day", "day"),
)
