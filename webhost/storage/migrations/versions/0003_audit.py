"""The audit log and the app permissions each person remembered (webhost/storage/audit.py).

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "audit",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True, autoincrement=True),
        sa.Column("ts", sa.Float, nullable=False),
        sa.Column("session", sa.String(200)),
        sa.Column("server", sa.String(200)),
        sa.Column("frame", sa.String(200)),
        sa.Column("kind", sa.String(200), nullable=False),
        sa.Column("decision", sa.String(200)),
        sa.Column("summary", sa.Text),
        sa.Column("detail", sa.Text),
        sa.Column("user_id", sa.String(200)),
        sa.Column("user_name", sa.String(200)),
        sqlite_autoincrement=True,
    )
    op.create_index("audit_server", "audit", ["server", "id"])
    op.create_index("audit_user", "audit", ["user_id", "id"])
    op.create_index("audit_ts", "audit", ["ts"])
    op.create_table(
        "granted_permissions",
        sa.Column("person_id", sa.String(255), primary_key=True),
        sa.Column("server", sa.String(255), primary_key=True),
        sa.Column("permission", sa.String(64), primary_key=True),
        sa.Column("granted", sa.Boolean, nullable=False),
        sa.Column("ts", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("granted_permissions")
    op.drop_index("audit_ts", "audit")
    op.drop_index("audit_user", "audit")
    op.drop_index("audit_server", "audit")
    op.drop_table("audit")
