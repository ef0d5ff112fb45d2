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

from ..engine import clocks, time_control
from ..engine.field_errors import field_errors
from ..engine.rulesets import get_ruleset
from ..engine.seats import SEATS, Seat
from ..engine.table import Table
from ..engine.tiles import Deal
from ..ledger.chain import event_row
from ..ledger.hashing import GENESIS, utc
from . import feed, integrity
from .append import Head, pg_sql
from .core import Part
from .errors import GameNotFound, InvalidGameSetup
from .models import AnchorRow, CredentialRow, EventRow, GameRow, ProjectionRow, SpectatorLinkRow
from .on_loop import OnLoop
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


class GameRegistry(Part):
    """``create_game``, ``role_for``, ``games`` and ``last_seq``."""

    def create_game(
        self,
        ruleset: str = "nmjl",
        options: Mapping[str, Any] | None = None,
        seed: int | None = None,
        hands: Mapping[str | Seat, Sequence[int]] | None = None,
        players: Mapping[str | Seat, Any] | None = None,
        credentials: Mapping[str, str] | None = None,
        *,
        game_id: str | None = None,
        round_id: str | None = None,
        round_table: int | None = None,
        conn: Connection | None = None,
        clock: clocks.ClockOptions | Mapping[str, Any] | None = None,
        bots: Sequence[str | Seat] | None = None,
        held: bool = False,
        start_at: datetime | None = None,
        spectator: tuple[str, int] | None = None,
        pace: float | None = None,
        organiser_id: str | None = None,
    ) -> str:
        """A new game: its ``game_created`` row (seq 1), projection and credentials.

        ``clock`` (:class:`~charleston_fsm.engine.clocks.ClockOptions`), ``bots`` (seats the
        service's auto player plays) and ``pace`` (how long they think, in seconds;
        ``clocks.pace_for`` when ``None``) are fixed here, in the ``game_created`` payload,
        and so is the start gate: ``held`` (the director starts it) or ``start_at`` (it
        starts then; :mod:`charleston_fsm.engine.time_control`). ``spectator``: the sha256
        of its spectator link's token and the link's delay in seconds. ``organiser_id``:
        the organiser whose key creates it (its key then directs it); ``None``: the
        platform's.
        ``conn``: inside the caller's write transaction, instead of one of its own.
        """
        rows = self.new_game_rows(
            ruleset,
            options,
            seed,
            hands,
            players,
            credentials,
            game_id=game_id,
            round_id=round_id,
            round_table=round_table,
            clock=clock,
            bots=bots,
            held=held,
            start_at=start_at,
            spectator=spectator,
            pace=pace,
            organiser_id=organiser_id,
        )
        game_id = rows.game["id"]
        unknown = (
            f"The database connection was lost while game {game_id!r} was being committed, "
            "so it may or may not exist. Look it up by its id, or create a new game: an "
            "unused game changes nothing."
        )
        owned = conn is None
        with self._writing(unknown) if conn is None else nullcontext(conn) as conn:
            self.insert_games(conn, [rows])
        if owned:  # else the caller's transaction commits it, and says so
            self.committed([rows])
        return game_id

    def new_game_rows(
        self,
        ruleset: str = "nmjl",
        options: Mapping[str, Any] | None = None,
        seed: int | None = None,
        hands: Mapping[str | Seat, Sequence[int]] | None = None,
        players: Mapping[str | Seat, Any] | None = None,
        credentials: Mapping[str, str] | None = None,
        *,
        game_id: str | None = None,
        round_id: str | None = None,
        round_table: int | None = None,
        clock: clocks.ClockOptions | Mapping[str, Any] | None = None,
        bots: Sequence[str | Seat] | None = None,
        held: bool = False,
        start_at: datetime | None = None,
        spectator: tuple[str, int] | None = None,
        pace: float | None = None,
        organiser_id: str | None = None,
    ) -> NewGameRows:
        """Every row of a new game, made without the database (:meth:`create_game`'s
        arguments): the chart, the deal, the clock's first deadlines and the anchor's
        signature are the slow part, and a round makes them all before it takes the
        database's write lock (:meth:`insert_games`)."""
        clock_options = _clock_options(clock)
        bot_seats = _bot_seats(bots)
        rules = get_ruleset(ruleset)
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
        table = Table(deal, rules, options)
        players_doc = self._players(players)
        creds = self._credentials(credentials)
        game_id = game_id or uuid.uuid4().hex
        now = _now()
        payload = {
            "ruleset": rules.name,
            "options": table.options.model_dump(mode="json"),
            "deal": deal.to_dict(),
            "players": players_doc,
            "seed": seed,
        }
        clock_doc = None
        held = held or start_at is not None
        if clock_options is not None or bot_seats or held:
            payload["clock"] = clock_options.model_dump(mode="json") if clock_options else None
            payload["bots"] = sorted(s.value for s in bot_seats)
            doc = clocks.new_doc(
                clock_options,
                bot_seats,
                game=f"{seed}:{game_id}",
                pace=_pace(pace, bot_seats),
            )
            if bot_seats:
                payload["pace"] = doc["pace"]
            if held:
                payload["start"] = {"held": True, "at": clocks.iso(start_at) if start_at else None}
                doc = time_control.hold(doc, now, start_at)
            clock_doc = clocks.advance(doc, table, now, 1)
        first = event_row(game_id, 1, "game_created", None, None, payload, None, now, GENESIS)
        return NewGameRows(
            game={
                "id": game_id,
                "round_id": round_id,
                "round_table": round_table,
                "organiser_id": organiser_id,
                "ruleset": rules.name,
                "options": payload["options"],
                "created_at": now,
                "players": players_doc,
                "last_seq": 1,
                "status": "finished" if table.finished else "active",
                "head_hash": first["hash"],
                "clock": clock_doc,
                "next_due": clocks.next_due(clock_doc),
            },
            event=first,
            anchor=integrity.anchor_row(
                self.anchor_key, game_id, 1, 1, first["hash"], table.finished, now
            ),
            projection={"game_id": game_id, "seq": 1, "snapshot": table.snapshot()},
            credentials=[
                {"game_id": game_id, "role": r, "token_hash": h} for r, h in creds.items()
            ],
            spectator=None
            if spectator is None
            else spectator_row(game_id, spectator[0], spectator[1], now),
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
            head = Head(1, 0, g.event["hash"], g.projection["snapshot"], g.game["clock"])
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
        with self._reading() as conn:
            return conn.execute(_ROLE, {"b_game": game_id, "b_token": token_hash}).scalar()

    async def role_for_on_loop(self, game_id: str, token_hash: str) -> str | None:
        """:meth:`role_for` on the running event loop, without a thread (PostgreSQL)."""
        if not could_exist(game_id):
            return None
        params = {"b_game": game_id, "b_token": token_hash}
        return await OnLoop.of(self.core).fetch_value(pg_sql(_ROLE), params)  # type: ignore[no-any-return]

    def games(self) -> list[GameSummary]:
        with self._reading() as conn:
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
        with self._reading() as conn:
            seq = conn.execute(select(GameRow.last_seq).where(GameRow.id == game_id)).scalar()
        if seq is None:
            raise GameNotFound(f"There is no game {game_id!r}.")
        return seq


def created_entry(rows: NewGameRows) -> dict[str, Any]:
    """The feed's ``game.created`` of a new game (no deal, no seed: nothing concealed)."""
    game = rows.game
    data = {"ruleset": game["ruleset"], "players": game["players"]}
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


def spectator_row(game_id: str, token_hash: str, delay: int, now: datetime) -> dict[str, Any]:
    """A table's spectator link's row."""
    check_digest(token_hash)
    return {"game_id": game_id, "token_hash": token_hash, "delay": delay, "created_at": now}


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
