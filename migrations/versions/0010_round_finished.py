"""A round's count of tables and of finished tables: the one ``round.finished`` entry.

``rounds.tables``: how many tables the round was created with (its games, fixed at
creation). ``rounds.finished_tables``: raised by one by the write that finishes one of its
games, in that write's statement (``store/platform/feed.py``, ``RoundFinished``); the write that
raises it to ``tables`` records the round's ``round.finished`` feed entry. The row's lock
serialises two writes finishing the last two tables at once, so exactly one of them sees
the count reach ``tables``. Existing rounds get both counts from their games (a round
finished before this revision gets no entry).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "rounds", sa.Column("tables", sa.Integer(), nullable=False, server_default=sa.text("0"))
    )
    op.add_column(
        "rounds",
        sa.Column("finished_tables", sa.Integer(), nullable=False, server_default=sa.text("0")),
    )
    op.execute(
        "UPDATE rounds SET "
        "tables = (SELECT count(*) FROM games g WHERE g.round_id = rounds.id), "
        "finished_tables = (SELECT count(*) FROM games g WHERE g.round_id = rounds.id "
        "AND g.status = 'finished')"
    )


def downgrade() -> None:
    # not batch mode: see 0003's downgrade (SQLite would rebuild the table)
    op.execute("ALTER TABLE rounds DROP COLUMN finished_tables")
    op.execute("ALTER TABLE rounds DROP COLUMN tables")
