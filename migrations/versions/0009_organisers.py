"""Organisers: a platform's organisers, each with its own key, and who made each game and
round.

``organisers``: one row per organiser the platform created: its name and the sha256 of
its key (replaced when the key is rotated, kept with ``revoked_at`` once revoked). A
small table, kept whole on every node as ``rounds`` is. ``games.organiser_id`` and
``rounds.organiser_id``: the organiser whose key created them (a round's tables carry
its organiser too, so one join answers "does this key direct this table"); NULL for
what the platform's key created. No foreign key, as for ``games.round_id`` (0003).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "organisers",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False),
        sa.Column("key_rotated_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_organisers"),
    )
    # not unique: every unique constraint of the schema holds game_id (a Citus rule)
    op.create_index("ix_organisers_key_hash", "organisers", ["key_hash"])
    op.add_column("games", sa.Column("organiser_id", sa.String(64), nullable=True))
    op.create_index("ix_games_organiser_id", "games", ["organiser_id"])
    op.add_column("rounds", sa.Column("organiser_id", sa.String(64), nullable=True))
    op.create_index("ix_rounds_organiser_id", "rounds", ["organiser_id"])


def downgrade() -> None:
    op.drop_index("ix_rounds_organiser_id", table_name="rounds")
    op.drop_index("ix_games_organiser_id", table_name="games")
    # not batch mode: see 0003's downgrade (SQLite would rebuild games, cascading)
    op.execute("ALTER TABLE rounds DROP COLUMN organiser_id")
    op.execute("ALTER TABLE games DROP COLUMN organiser_id")
    op.drop_index("ix_organisers_key_hash", table_name="organisers")
    op.drop_table("organisers")
