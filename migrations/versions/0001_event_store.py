"""The event store: games, events, commands, projections, game_credentials.

Revision ID: 0001
Revises:
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

JSONDoc = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
TS = sa.DateTime(timezone=True)


def _game_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["game_id"], ["games.id"], name=f"fk_{table}_game_id_games", ondelete="CASCADE"
    )


def upgrade() -> None:
    op.create_table(
        "games",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("ruleset", sa.String(32), nullable=False),
        sa.Column("options", JSONDoc, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("players", JSONDoc, nullable=False),
        sa.Column("last_seq", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_games"),
    )
    op.create_table(
        "events",
        sa.Column("game_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("type", sa.String(32), nullable=False),
        sa.Column("seat", sa.String(8), nullable=True),
        sa.Column("step", sa.String(32), nullable=True),
        sa.Column("payload", JSONDoc, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("command_id", sa.String(128), nullable=True),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("game_id", "seq", name="pk_events"),
        _game_fk("events"),
    )
    op.create_table(
        "commands",
        sa.Column("game_id", sa.String(64), nullable=False),
        sa.Column("command_id", sa.String(128), nullable=False),
        sa.Column("command", JSONDoc, nullable=False),
        sa.Column("first_seq", sa.Integer(), nullable=False),
        sa.Column("last_seq", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("game_id", "command_id", name="pk_commands"),
        _game_fk("commands"),
    )
    op.create_table(
        "projections",
        sa.Column("game_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("snapshot", JSONDoc, nullable=False),
        sa.PrimaryKeyConstraint("game_id", name="pk_projections"),
        _game_fk("projections"),
    )
    op.create_table(
        "game_credentials",
        sa.Column("game_id", sa.String(64), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("game_id", "role", name="pk_game_credentials"),
        _game_fk("game_credentials"),
    )


def downgrade() -> None:
    for table in ("game_credentials", "projections", "commands", "events", "games"):
        op.drop_table(table)
