"""A web session keeps the provider's refresh token, sealed, and when it last read the person's groups with it
(oidc mode: the groups follow the directory, re-read every `webhost.auth.refreshMinutes`; webhost/auth/refresh.py).

Sessions opened before have neither: they keep the groups of their sign-in until it ends.

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("web_sessions", sa.Column("sealed_refresh_token", sa.LargeBinary))
    op.add_column("web_sessions", sa.Column("refreshed_at", sa.Float))


def downgrade() -> None:
    with op.batch_alter_table("web_sessions") as table:
        table.drop_column("refreshed_at")
        table.drop_column("sealed_refresh_token")
