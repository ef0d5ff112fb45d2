"""The recorded head hash of each game, signed anchors of its chain, quarantined games.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

JSONDoc = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
TS = sa.DateTime(timezone=True)


def _game_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["game_id"], ["games.id"], name=f"fk_{table}_game_id_games", ondelete="CASCADE"
    )


def upgrade() -> None:
    op.add_column("games", sa.Column("head_hash", sa.String(64), nullable=True))
    op.execute(
        "UPDATE games SET head_hash = (SELECT hash FROM events "
        "WHERE events.game_id = games.id AND events.seq = games.last_seq)"
    )
    op.create_table(
        "anchors",
        sa.Column("game_id", sa.String(64), nullable=False),
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("head_hash", sa.String(64), nullable=False),
        sa.Column("finished", sa.Boolean(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("key_id", sa.String(16), nullable=False),
        sa.Column("signature", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("game_id", "seq", name="pk_anchors"),
        _game_fk("anchors"),
    )
    op.create_table(
        "quarantines",
        sa.Column("game_id", sa.String(64), nullable=False),
        sa.Column("number", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("report", JSONDoc, nullable=False),
        sa.Column("lifted_at", TS, nullable=True),
        sa.Column("lifted_by", sa.String(128), nullable=True),
        sa.Column("lift_note", sa.String(1000), nullable=True),
        sa.PrimaryKeyConstraint("game_id", "number", name="pk_quarantines"),
        _game_fk("quarantines"),
    )


def downgrade() -> None:
    op.drop_table("quarantines")
    op.drop_table("anchors")
    # a plain DROP COLUMN (SQLite 3.35+): batch mode would rebuild games on SQLite, and
    # dropping the old table with foreign keys on deletes every game's rows (CASCADE)
    op.drop_column("games", "head_hash")
