"""Rounds: many tables created in one call, and each game's round and table number.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

JSONDoc = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "rounds",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("name", sa.String(64), nullable=True),
        sa.Column("settings", JSONDoc, nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_rounds"),
    )
    # No foreign key: games stay keyed (and distributable) by game alone, and adding
    # one on SQLite would rebuild the games table.
    op.add_column("games", sa.Column("round_id", sa.String(64), nullable=True))
    op.add_column("games", sa.Column("round_table", sa.Integer(), nullable=True))
    op.create_index("ix_games_round_id", "games", ["round_id"])


def downgrade() -> None:
    op.drop_index("ix_games_round_id", table_name="games")
    # Not batch mode: on SQLite it rebuilds games, and dropping the old table with
    # foreign keys on would cascade to every game's events. Both backends drop a column.
    op.execute("ALTER TABLE games DROP COLUMN round_table")
    op.execute("ALTER TABLE games DROP COLUMN round_id")
    op.drop_table("rounds")
