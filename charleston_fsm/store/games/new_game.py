"""A new game's spec: the one value ``GameRegistry.create_game`` and ``new_game_rows`` take.

Its fields were once the same eighteen parameters on both methods, forwarded one by one,
and spelled again by the API's create-game path and by each table of a round: a new
setting had four lists to keep in step. Now it is added here once.

It is the store's, not the engine's: beside the game's own data (rules, deal, seats, clock,
bots, start gate) it carries what only the store keeps (the digests of the credentials
and of the spectator link, the round, the organiser, the id). Nothing is checked on
construction: ``new_game_rows`` checks it all and raises ``InvalidGameSetup``, inside a
round with its table's number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from datetime import datetime
from typing import Any

from ...engine import clocks
from ...engine.seats import Seat


@dataclass(frozen=True)
class NewGame:
    """A new game as its creator asks for it (every field optional).

    ``ruleset`` and ``options``: the rule book and its options. ``seed`` (a shuffled deal;
    a random one when ``None``) or ``hands`` (an explicit deal, per seat). ``players``:
    each seat's name. ``credentials``: the sha256 of each role's token (a seat or
    ``director``), never a token.

    Keyword only: ``game_id`` (``None``: a fresh uuid4 hex); ``round_id`` and
    ``round_table`` (a round's table, set by ``create_round``). ``clock``
    (:class:`~charleston_fsm.engine.clocks.ClockOptions` or its mapping), ``bots`` (seats
    the service's auto player plays) and ``pace`` (how long they think, in seconds;
    ``clocks.pace_for`` when ``None``) are fixed in the ``game_created`` payload, and so is
    the start gate: ``held`` (the director starts it), ``start_at`` (it starts then) or
    ``awaiting`` (held until each of these seats has opened its page;
    :mod:`charleston_fsm.engine.time_control`). ``spectator``: the sha256 of its spectator
    link's token, the link's delay in seconds and whether it is a featured table's live
    link (its round's delay does not apply to it). ``organiser_id``: the organiser whose
    key creates it (its key then directs it); ``None``: the platform's. ``player_ids``:
    the platform's own id of each seat's player (in the ``game_created`` payload and the
    clock document, which a substitute's changes).
    """

    ruleset: str = "nmjl"
    options: Mapping[str, Any] | None = None
    seed: int | None = None
    hands: Mapping[str | Seat, Sequence[int]] | None = None
    players: Mapping[str | Seat, Any] | None = None
    credentials: Mapping[str, str] | None = None
    _: KW_ONLY
    game_id: str | None = None
    round_id: str | None = None
    round_table: int | None = None
    clock: clocks.ClockOptions | Mapping[str, Any] | None = None
    bots: Sequence[str | Seat] | None = None
    held: bool = False
    start_at: datetime | None = None
    awaiting: Sequence[str] | None = None
    spectator: tuple[str, int, bool] | None = None
    pace: float | None = None
    organiser_id: str | None = None
    player_ids: Mapping[str | Seat, str] | None = None
