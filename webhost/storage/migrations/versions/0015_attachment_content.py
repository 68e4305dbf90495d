"""An attachment's sealed content moves to a table of its own (`chat_attachment_content`), out of its row in
`chat_attachments`: giving a sent attachment its conversation updates that row, and SQLite rewrites a whole row
on an update, so it read and wrote the file's megabytes again on every send (bench/chat.py row 8).

The content already kept is copied over and `chat_attachments.sealed` is emptied (NULL). The column stays so that
a replica of the previous version keeps working during a rolling upgrade: it reads the attachments kept before as
they were, and those this version keeps as no longer readable, until it is replaced.

Revision ID: 0015
Revises: 0014
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "chat_attachment_content",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("person_id", sa.String(255), nullable=False),
        sa.Column("sealed", sa.LargeBinary, nullable=False),
    )
    op.execute(
        "INSERT INTO chat_attachment_content (id, person_id, sealed) SELECT id, person_id, sealed FROM chat_attachments"
    )
    with op.batch_alter_table("chat_attachments") as table:
        table.alter_column("sealed", existing_type=sa.LargeBinary, nullable=True)
    op.execute("UPDATE chat_attachments SET sealed = NULL")


def downgrade() -> None:
    op.execute(
        "UPDATE chat_attachments SET sealed = (SELECT c.sealed FROM chat_attachment_content c"
        " WHERE c.id = chat_attachments.id)"
    )
    op.execute("DELETE FROM chat_attachments WHERE sealed IS NULL")  # none: every row's content was there
    with op.batch_alter_table("chat_attachments") as table:
        table.alter_column("sealed", existing_type=sa.LargeBinary, nullable=False)
    op.drop_table("chat_attachment_content")
