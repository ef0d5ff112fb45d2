"""The round's director at each of its tables: the round token opens them as director.

A director running a room holds one secret, the round's token; the room links to every
table's desk with it, so the desk reads and rules each table without a second token.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from ..database.models import GameRow, RoundRow


def round_director_opens(store: Any, game_id: str, token_hash: str) -> bool:
    """Whether ``token_hash`` is the token of the round ``game_id`` is a table of."""
    with store.core.reading() as conn:
        found = conn.execute(
            select(RoundRow.id)
            .join(GameRow, GameRow.round_id == RoundRow.id)
            .where(GameRow.id == game_id, RoundRow.token_hash == token_hash)
        ).first()
    return found is not None
