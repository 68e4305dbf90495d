"""The ID token a web session keeps for sign-out (`id_token_hint`) is sealed, no longer in the clear
(webhost/auth/signin.py, `IdTokenSeal`).

The clear tokens of sessions opened before cannot be sealed here (the migration has no secret): they are
emptied, so signing out of such a session ends the provider's session without the hint. The old column
stays, empty, so that a replica of the previous version keeps working during a rolling upgrade (the sessions
it opens meanwhile keep their token there until they end); a later release drops it.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("web_sessions", sa.Column("sealed_id_token", sa.LargeBinary))
    op.execute("UPDATE web_sessions SET id_token = NULL")


def downgrade() -> None:
    with op.batch_alter_table("web_sessions") as table:
        table.drop_column("sealed_id_token")
