"""Each person's call history: tools/call, resources/read and prompts/get (webhost/storage/history.py).

Revision ID: 0006
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "call_history",
        # 64-bit on PostgreSQL: ids only grow, pruning does not give them back (SQLite's INTEGER is 64-bit).
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer, "sqlite"), primary_key=True, autoincrement=True),
        sa.Column("person_id", sa.String(255), nullable=False),
        sa.Column("started_at", sa.Float, nullable=False),
        sa.Column("server", sa.String(255), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("arguments", sa.Text, nullable=False),
        sa.Column("arguments_truncated", sa.Boolean, nullable=False),
        sa.Column("result", sa.Text, nullable=False),
        sa.Column("result_bytes", sa.Integer, nullable=False),
        sa.Column("result_truncated", sa.Boolean, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("duration_ms", sa.Float, nullable=False),
        sa.Column("tab", sa.String(64), nullable=False),
        sa.Column("call_id", sa.String(200), nullable=False),
    )
    op.create_index("call_history_person", "call_history", ["person_id", "id"])


def downgrade() -> None:
    op.drop_index("call_history_person", table_name="call_history")
    op.drop_table("call_history")
