"""Games and their credentials: a new game's first row, projection and credentials; who
a token is; the list of games and a game's head.

A part of the store (:mod:`.core`): built over a :class:`~.core.StoreCore`, held by the
front :class:`~.game_store.GameStore` and used by the rounds part (a round's tables are
games). A new game's head is cached at once (``served.py``): its first command needs no
read.
"""

from __future__ import annotations

import random
import re
import uuid
from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError
from sqlalchemy import Connection, bindparam, insert, select

from ...engine import clocks, seating, time_control
from ...engine.clock_state import Clock, storing
from ...engine.field_errors import field_errors
from ...engine.rulesets import get_ruleset
from ...engine.seats import SEATS, Seat
from ...engine.table import Table
from ...engine.tiles import Deal
from ...ledger.chain import event_row
from ...ledger.hashing import GENESIS, utc
from ..database.core import Part
from ..database.models import (
    AnchorRow,
    CredentialRow,
    EventRow,
    GameRow,
    ProjectionRow,
    SpectatorLinkRow,
)
from ..errors import GameNotFound, InvalidGameSetup
from ..evidence import integrity
from ..platform import feed
from .append import Head
from .new_game import NewGame
from .reads import check_could_exist, could_exist
from .results import GameSummary

ROLES = frozenset([*(s.value for s in SEATS), "director"])
_ROLE = select(CredentialRow.role).where(
    CredentialRow.game_id == bindparam("b_game"), CredentialRow.token_hash == bindparam("b_token")
)
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class NewGameRows:
    """The rows of one new game, made before any transaction (``new_game_rows``)."""

    game: dict[str, Any]
    event: dict[str, Any]
    anchor: dict[str, Any] | None
    projection: dict[str, Any]
    credentials: list[dict[str, Any]]
    spectator: dict[str, Any] | None = None
    #: the game's clock (``game["clock"]`` is its document): its head's, and the feed's ids
    clock: Clock | None = None


class GameRegistry(Part):
    """``create_game``, ``role_for``, ``games`` and ``last_seq``."""

    def create_game(self, game: NewGame, *, conn: Connection | None = None) -> str:
        """A new game (:class:`~.new_game.NewGame`): its ``game_created`` row (seq 1),
        projection and credentials; returns its id.

        ``conn``: inside the caller's write transaction, instead of one of its own.
        """
        rows = self.new_game_rows(game)
        game_id = rows.game["id"]
        unknown = (
            f"The database connection was lost while game {game_id!r} was being committed, "
            "so it may or may not exist. Look it up by its id, or create a new game: an "
            "unused game changes nothing."
        )
        owned = conn is None
        with self.core.writing(unknown) if conn is None else nullcontext(conn) as conn:
            self.insert_games(conn, [rows])
        if owned:  # else the caller's transaction commits it, and says so
            self.committed([rows])
        return game_id

    def new_game_rows(self, game: NewGame) -> NewGameRows:
        """Every row of a new game, made without the database: the chart, the deal, the
        clock's first deadlines and the anchor's signature are the slow part, and a round
        makes them all before it takes the database's write lock (:meth:`insert_games`)."""
        clock_options = _clock_options(game.clock)
        bot_seats = _bot_seats(game.bots)
        rules = get_ruleset(game.ruleset)
        hands, seed, start_at = game.hands, game.seed, game.start_at
        if hands is not None:
            try:
                by_seat = {Seat(str(s)): list(h) for s, h in hands.items()}
            except ValueError:
                raise InvalidGameSetup(
                    f"Hands are given per seat (east, south, west, north), not {list(hands)}."
                ) from None
            deal = Deal.explicit(by_seat)
        else:
            if seed is None:
                seed = random.SystemRandom().randrange(2**31)
            deal = Deal.shuffled(seed)
        table = Table(deal, rules, game.options)
        players_doc = self._players(game.players)
        ids_doc = self._players(game.player_ids)
        creds = self._credentials(game.credentials)
        game_id = game.game_id or uuid.uuid4().hex
        now = _now()
        payload = {
            "ruleset": rules.name,
            "options": table.options.model_dump(mode="json"),
            "deal": deal.to_dict(),
            "players": players_doc,
            "seed": seed,
        }
        if ids_doc:
            payload["player_ids"] = ids_doc
        first_clock = None
        held = game.held or start_at is not None
        if clock_options is not None or bot_seats or held or ids_doc:
            payload["clock"] = clock_options.model_dump(mode="json") if clock_options else None
            payload["bots"] = sorted(s.value for s in bot_seats)
            thinking = _pace(game.pace, bot_seats)
            new = clocks.new_clock(
                clock_options,
                bot_seats,
                game=f"{seed}:{game_id}",
                pace=thinking,
                player_ids=ids_doc,  # the feed's entries read each seat's id from it
            )
            if bot_seats:
                payload["pace"] = thinking
            if held:
                payload["start"] = {"held": True, "at": clocks.iso(start_at) if start_at else None}
                if game.awaiting is not None:
                    payload["start"]["awaiting"] = list(game.awaiting)
                new = time_control.hold(new, now, start_at, game.awaiting)
            first_clock = clocks.advance(new, table, now, 1)
        first = event_row(game_id, 1, "game_created", None, None, payload, None, now, GENESIS)
        return NewGameRows(
            game={
                "id": game_id,
                "round_id": game.round_id,
                "round_table": game.round_table,
                "organiser_id": game.organiser_id,
                "ruleset": rules.name,
                "options": payload["options"],
                "created_at": now,
                "players": players_doc,
                "last_seq": 1,
                "status": "finished" if table.finished else "active",
                "head_hash": first["hash"],
                "clock": storing(first_clock),
                "next_due": clocks.next_due(first_clock),
            },
            event=first,
            anchor=integrity.anchor_row(
                self.core.anchor_key, game_id, 1, 1, first["hash"], table.finished, now
            ),
            projection={"game_id": game_id, "seq": 1, "snapshot": table.snapshot()},
            credentials=[
                {"game_id": game_id, "role": r, "token_hash": h} for r, h in creds.items()
            ],
            spectator=None
            if game.spectator is None
            else spectator_row(game_id, *game.spectator[:2], now, live=game.spectator[2]),
            clock=first_clock,
        )

    def insert_games(self, conn: Connection, games: Sequence[NewGameRows]) -> None:
        """Write games made by :meth:`new_game_rows` in the caller's transaction: one
        statement per table of the schema for all of them (a round of 500 holds the
        write lock for a fraction of a second, not for the games' making)."""
        if not games:
            return
        conn.execute(insert(GameRow), [g.game for g in games])
        conn.execute(insert(EventRow), [g.event for g in games])
        anchors = [g.anchor for g in games if g.anchor is not None]
        if anchors:
            conn.execute(insert(AnchorRow), anchors)
        conn.execute(insert(ProjectionRow), [g.projection for g in games])
        credentials = [c for g in games for c in g.credentials]
        if credentials:
            conn.execute(insert(CredentialRow), credentials)
        links = [g.spectator for g in games if g.spectator is not None]
        if links:
            conn.execute(insert(SpectatorLinkRow), links)
        feed.record(conn, [created_entry(g) for g in games])

    def committed(self, games: Sequence[NewGameRows]) -> None:
        """Once the games are committed: cache their heads (no one waits on a game that
        did not exist, so a new game needs no notice)."""
        for g in games:
            head = Head(1, 0, g.event["hash"], g.projection["snapshot"], g.clock)
            self.core.served.put(g.game["id"], head)

    @staticmethod
    def _players(players: Mapping[str | Seat, Any] | None) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in (players or {}).items():
            try:
                result[Seat(str(key)).value] = value
            except ValueError:
                raise InvalidGameSetup(
                    f"Players are given per seat (east, south, west, north), not {key!r}."
                ) from None
        return result

    @staticmethod
    def _credentials(credentials: Mapping[str, str] | None) -> dict[str, str]:
        result: dict[str, str] = {}
        for role, token_hash in (credentials or {}).items():
            role = str(role)
            if role not in ROLES:
                raise InvalidGameSetup(
                    f"Credentials are given per role ({', '.join(sorted(ROLES))}), not {role!r}."
                )
            if not isinstance(token_hash, str) or not _HEX64.match(token_hash):
                raise InvalidGameSetup(
                    f"The credential of {role} must be a sha256 hex digest (64 lowercase "
                    "hex characters), never the token itself."
                )
            result[role] = token_hash
        return result

    def role_for(self, game_id: str, token_hash: str) -> str | None:
        if not could_exist(game_id):
            return None
        with self.core.reading() as conn:
            return conn.execute(_ROLE, {"b_game": game_id, "b_token": token_hash}).scalar()

    def games(self) -> list[GameSummary]:
        with self.core.reading() as conn:
            rows = conn.execute(select(GameRow).order_by(GameRow.created_at, GameRow.id)).all()
        return [
            GameSummary(
                id=r.id,
                ruleset=r.ruleset,
                options=r.options,
                players=r.players,
                created_at=utc(r.created_at),
                last_seq=r.last_seq,
                status=r.status,
            )
            for r in rows
        ]

    def last_seq(self, game_id: str) -> int:
        check_could_exist(game_id)
        with self.core.reading() as conn:
            seq = conn.execute(select(GameRow.last_seq).where(GameRow.id == game_id)).scalar()
        if seq is None:
            raise GameNotFound(f"There is no game {game_id!r}.")
        return seq


def created_entry(rows: NewGameRows) -> dict[str, Any]:
    """The feed's ``game.created`` of a new game (no deal, no seed: nothing concealed)."""
    game = rows.game
    data = {"ruleset": game["ruleset"], "players": game["players"]}
    ids = seating.player_ids(rows.clock)
    if ids:
        data["player_ids"] = ids
    if game["round_table"] is not None:
        data["table"] = game["round_table"]
    return feed.new_entry(
        "game.created",
        game["created_at"],
        game_id=game["id"],
        round_id=game["round_id"],
        seq=1,
        data=data,
    )


def spectator_row(
    game_id: str, token_hash: str, delay: int, now: datetime, *, live: bool = False
) -> dict[str, Any]:
    """A table's spectator link's row (``live``: its round's delay does not apply)."""
    check_digest(token_hash)
    return {
        "game_id": game_id,
        "token_hash": token_hash,
        "delay": delay,
        "created_at": now,
        "live": live,
    }


def check_digest(token_hash: str) -> None:
    if not _HEX64.match(token_hash):
        raise InvalidGameSetup("A link is stored as the sha256 of its token, never the token.")


def _clock_options(
    clock: clocks.ClockOptions | Mapping[str, Any] | None,
) -> clocks.ClockOptions | None:
    if clock is None or isinstance(clock, clocks.ClockOptions):
        return clock
    try:
        return clocks.ClockOptions.model_validate(dict(clock))
    except ValidationError as exc:
        problems = field_errors(exc.errors(), prefix="clock.", unnamed="")
        raise InvalidGameSetup(
            f"The clock options are not valid ({problems}): give seconds per kind "
            "(confirm_pass, vote, courtesy, place_tiles) and on_expiry auto_play or flag_late."
        ) from None


def _pace(pace: float | None, bots: frozenset[Seat]) -> float:
    if pace is not None and not 0 <= pace <= clocks.MAX_PACE:
        raise InvalidGameSetup(
            f"A bot's pace is 0 to {clocks.MAX_PACE:g} seconds of thinking, not {pace!r}."
        )
    return clocks.pace_for(pace, bots)


def _bot_seats(bots: Sequence[str | Seat] | None) -> frozenset[Seat]:
    try:
        return frozenset(Seat(str(s)) for s in bots or ())
    except ValueError:
        raise InvalidGameSetup(
            f"Bot seats are east, south, west or north, not {list(bots or ())}."
        ) from None


def _now() -> datetime:
    return datetime.now(UTC)
