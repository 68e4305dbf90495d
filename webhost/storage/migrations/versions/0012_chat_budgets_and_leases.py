"""Budgets that hold and turns owned in the store: each person's day row and the tokens held by the steps still
running (webhost/storage/budgets.py), and one turn lease per conversation (webhost/storage/turn_leases.py).

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "chat_budget_days",
        sa.Column("person_id", sa.String(255), primary_key=True),
        sa.Column("day", sa.String(10), primary_key=True),
        sa.Column("reservations", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "chat_budget_holds",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("person_id", sa.String(255), nullable=False),
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("replica_id", sa.String(64), nullable=False),
        sa.Column("tokens", sa.BigInteger, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_index("chat_budget_holds_person", "chat_budget_holds", ["person_id", "day"])
    op.create_table(
        "chat_turn_leases",
        sa.Column("conversation_id", sa.String(64), primary_key=True),
        sa.Column("person_id", sa.String(255), nullable=False),
        sa.Column("replica_id", sa.String(64), nullable=False),
        sa.Column("turn_id", sa.String(64), nullable=False),
        sa.Column("started_at", sa.Float, nullable=False),
        sa.Column("heartbeat_at", sa.Float, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("chat_turn_leases")
    op.drop_index("chat_budget_holds_person", table_name="chat_budget_holds")
    op.drop_table("chat_budget_holds")
    op.drop_table("chat_budget_days")
