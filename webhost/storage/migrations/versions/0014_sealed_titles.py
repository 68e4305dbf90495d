"""A conversation's title is sealed like its messages (`sealed_title`), no longer in the clear: it is the first
line of the person's first message or the model's summary of it, so it says what the conversation is about.

The migration has no secret, so it cannot seal the titles already written: they stay in `title` until webhost
starts with this revision, which seals them (`storage/conversation_titles.py`, `seal_clear_titles`) and empties
the column. A title read before that is read from the old column. The column stays (empty) so that a replica of
the previous version keeps working during a rolling upgrade; it shows the titles this version writes as empty.

Revision ID: 0014
Revises: 0013
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("chat_conversations", sa.Column("sealed_title", sa.LargeBinary))


def downgrade() -> None:
    with op.batch_alter_table("chat_conversations") as table:
        table.drop_column("sealed_title")
