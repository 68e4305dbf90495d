"""Replicas and the calls each one runs, so another replica can resume or report them (webhost/storage/live_calls.py).

Revision ID: 0005
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "replicas",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("started_at", sa.Float, nullable=False),
        sa.Column("heartbeat_at", sa.Float, nullable=False),
    )
    op.create_table(
        "live_calls",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("replica_id", sa.String(64), nullable=False),
        sa.Column("person_id", sa.String(255), nullable=False),
        sa.Column("server", sa.String(255), nullable=False),
        sa.Column("method", sa.String(64), nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("call_id", sa.String(200), nullable=False),
        sa.Column("tab_id", sa.String(64)),
        sa.Column("started_at", sa.Float, nullable=False),
        sa.Column("question", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("sealed_round", sa.LargeBinary),
        sa.Column("round_at", sa.Float),
    )
    op.create_index("live_calls_person", "live_calls", ["person_id"])


def downgrade() -> None:
    op.drop_index("live_calls_person", table_name="live_calls")
    op.drop_table("live_calls")
    op.drop_table("replicas")
