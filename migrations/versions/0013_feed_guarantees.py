"""The feed's guarantees held by the database: one ``game.sealed`` per game, a position
never changed once given, and every entry of a round's table naming its round.

``uq_feed_game_sealed``: a partial unique index on ``feed (game_id)`` where ``type =
'game.sealed'``; ``store/platform/feed.py`` (``record_seal``) inserts the seal's entry ``ON
CONFLICT DO NOTHING`` against it, and a later seal of the same game (its record grew) is a
``game.record_updated`` entry. Existing extra ``game.sealed`` entries of a game (one per
seal before this revision) become ``game.record_updated``: the first stays.

``feed_position_fixed``: a trigger refusing any update that changes a position already
given (the sequencer only numbers entries without one, ``AND position IS NULL``; this
makes it the database's rule, whatever the statement).

Entries of a round's games written before this revision get their round's id.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

_PG_FUNCTION = """
CREATE FUNCTION feed_position_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'feed entry % has position %: a position once given never changes',
        OLD.entry_id, OLD.position;
END
$$
"""
_PG_TRIGGER = (
    "CREATE TRIGGER feed_position_fixed BEFORE UPDATE OF position ON feed FOR EACH ROW "
    "WHEN (OLD.position IS NOT NULL AND NEW.position IS DISTINCT FROM OLD.position) "
    "EXECUTE FUNCTION feed_position_fixed()"
)
_SQLITE_TRIGGER = (
    "CREATE TRIGGER feed_position_fixed BEFORE UPDATE OF position ON feed FOR EACH ROW "
    "WHEN OLD.position IS NOT NULL AND NEW.position IS NOT OLD.position BEGIN "
    "SELECT RAISE(ABORT, 'a feed position once given never changes'); END"
)


def upgrade() -> None:
    op.execute(
        "UPDATE feed SET type = 'game.record_updated' WHERE type = 'game.sealed' "
        "AND id NOT IN (SELECT min(id) FROM feed WHERE type = 'game.sealed' GROUP BY game_id)"
    )
    op.create_index(
        "uq_feed_game_sealed",
        "feed",
        ["game_id"],
        unique=True,
        postgresql_where=sa.text("type = 'game.sealed'"),
        sqlite_where=sa.text("type = 'game.sealed'"),
    )
    op.execute(
        "UPDATE feed SET round_id = (SELECT g.round_id FROM games g WHERE g.id = feed.game_id) "
        "WHERE round_id IS NULL AND game_id IS NOT NULL"
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_PG_FUNCTION)
        op.execute(_PG_TRIGGER)
    else:
        op.execute(_SQLITE_TRIGGER)


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS feed_position_fixed" + _on_feed())
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS feed_position_fixed()")
    op.drop_index("uq_feed_game_sealed", table_name="feed")


def _on_feed() -> str:
    return " ON feed" if op.get_bind().dialect.name == "postgresql" else ""
