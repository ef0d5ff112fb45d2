"""Streaming standbys: reads that need no lock, served from a replica fresh enough.

``serve --read-database-url`` names one or more PostgreSQL hot standbys of the primary.
What a reader may be shown a little late goes there (spectators, the feed, audit, replay,
records, round listings: the routes ask through :class:`OnStandby`); what must see the
reader's own writes (a seat's view after its command, whatever a director acts on, every
credential) stays on the primary. docs/deploy.md, "Read replicas", is the operator's map.

**How stale, measured without clocks.** One thread per process (:class:`Standbys`, the
*watch*) samples the primary's WAL position (``pg_current_wal_lsn()``) every
:data:`WATCH_SECONDS`, keeping each sample with this process's monotonic time, then asks
each standby how far it has replayed (``pg_last_wal_replay_lsn()``). A standby that has
replayed a sample's position holds everything committed before that sample was taken, so
its *lag* is the time since the newest sample it has reached: about one tick on an idle
or a caught-up standby, growing while its replay is behind or paused, whatever the two
servers' clocks say. A standby lagging more than the bound (``--read-max-lag``, default
:data:`DEFAULT_MAX_LAG` s), not measured within the bound, unreachable, or not in
recovery (promoted: no longer a copy of this primary) is not used: its reads go to the
primary. ``/readyz`` shows each standby's lag and why one is not used.

**Reads that fall back.** A routed call runs with this thread's reads on the chosen
standby (:meth:`StoreCore.reading` asks :attr:`StoreCore.read_on`); writes never move.
When the standby has not got what the caller names yet (a game, a round or a feed
position created since: :data:`NOT_THERE_YET`), or its connection fails, or a query is
cancelled by replay (a recovery conflict), the same call runs again on the primary: an
answer from a standby is never a "not found" that the primary would not give.

**Streams without LISTEN.** ``NOTIFY`` does not reach a standby (and a standby cannot
``LISTEN``), so the watch also reads, in the same tick, the ``last_seq`` of every game a
stream of this process follows from a standby (one indexed statement for all of them)
and tells :attr:`Standbys.on_rows` of each that moved: one poll per process, fanned out
to every client by the API's notifier. While no standby is usable, those streams read
the primary and wake on its notices instead.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL

from ...engine import errors
from .core import failover_is_disconnect, hung_up
from .urls import driver_options, render, resolve_url, without_driver_options

if TYPE_CHECKING:
    from ..evidence.auditor import Auditor
    from ..games.reads import CheckedReads
    from ..games.registry import GameRegistry
    from ..platform.feed import Feed
    from ..rounds.rounds import Rounds
    from ..rounds.spectating import Spectating

#: the setting: standbys' URLs, separated by whitespace (a URL may hold commas)
READ_URLS_ENV = "CHARLESTON_READ_DATABASE_URL"
#: the setting: seconds a standby may lag before its reads go to the primary
MAX_LAG_ENV = "CHARLESTON_READ_MAX_LAG"
DEFAULT_MAX_LAG = 5.0
#: seconds between the watch's ticks (its lag granularity, and a standby stream's wake-up)
WATCH_SECONDS = 0.1
#: seconds of primary samples kept (a standby further behind is "more than" this)
SAMPLES_KEPT_SECONDS = 120.0
#: the standby's pool waits this long for a connection before the read goes to the primary
STANDBY_POOL_WAIT = 5.0
#: error codes that mean "not on this standby yet": the primary is asked instead
NOT_THERE_YET = frozenset(
    {
        "game_not_found",
        "round_not_found",
        "event_not_found",
        "organiser_not_found",
        "cursor_ahead",
        "store_unavailable",
        "conflict",
    }
)
log = logging.getLogger("charleston_fsm.store")
T = TypeVar("T")

_STANDBY_TICK = (
    "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text, "
    "CASE WHEN pg_is_in_recovery() THEN pg_is_wal_replay_paused() ELSE false END"
)
_HEADS = "SELECT id, last_seq FROM games WHERE id = ANY(%s)"


def read_urls_from_env() -> list[str]:
    """The standbys' URLs in ``$CHARLESTON_READ_DATABASE_URL`` (whitespace-separated)."""
    return os.environ.get(READ_URLS_ENV, "").split()


def max_lag_from_env() -> float:
    given = os.environ.get(MAX_LAG_ENV, "")
    try:
        value = float(given)
    except ValueError:
        return DEFAULT_MAX_LAG
    return value if value > 0 else DEFAULT_MAX_LAG


def lsn(text: str | None) -> int | None:
    """A ``pg_lsn`` as a number (``16/B374D848`` -> its 64-bit position)."""
    if not text:
        return None
    high, _, low = text.partition("/")
    return (int(high, 16) << 32) | int(low, 16)


@dataclass
class Standby:
    """One standby: its pool and what the watch last measured of it."""

    name: str
    url: URL
    engine: Engine
    lag_seconds: float | None = None
    lag_bytes: int | None = None
    replay_paused: bool = False
    checked_at: float = float("-inf")
    #: why it is not used (``None``: it may be)
    reason: str | None = "not measured yet"
    reads: int = 0
    fallbacks: int = 0
    #: game -> last_seq the watch last saw on it (games whose streams it follows)
    heads: dict[str, int] = field(default_factory=dict)

    def fresh(self, max_lag: float, now: float) -> bool:
        return (
            self.reason is None
            and self.lag_seconds is not None
            and self.lag_seconds <= max_lag
            and now - self.checked_at <= max_lag
        )

    def report(self, max_lag: float, now: float) -> dict[str, Any]:
        used = self.fresh(max_lag, now)
        why = self.reason
        if why is None and not used:
            why = (
                f"lagging {self.lag_seconds:.1f} s, more than the {max_lag:g} s bound"
                if self.lag_seconds is not None and self.lag_seconds > max_lag
                else "not measured within the bound"
            )
        return {
            "name": self.name,
            "used": used,
            "lag_seconds": None if self.lag_seconds is None else round(self.lag_seconds, 3),
            "lag_bytes": self.lag_bytes,
            "replay_paused": self.replay_paused,
            "not_used_because": why,
            "reads": self.reads,
            "fallbacks": self.fallbacks,
        }


class Standbys:
    """The process's standbys, their watch, and the choice of one for a read."""

    def __init__(
        self,
        urls: Sequence[str | URL],
        primary: URL,
        *,
        pool_size: int,
        max_lag: float | None = None,
        watch_seconds: float = WATCH_SECONDS,
    ) -> None:
        if primary.get_backend_name() != "postgresql":
            raise errors.SetupError(
                "Reads from standbys need a PostgreSQL primary (a standby streams its WAL); "
                f"this database is {primary.get_backend_name()}."
            )
        self.primary_dsn = render(primary.set(drivername="postgresql"))
        self.max_lag = max_lag if max_lag is not None else max_lag_from_env()
        self.watch_seconds = watch_seconds
        self.members: list[Standby] = []
        for given in urls:
            url = resolve_url(given)
            if url.get_backend_name() != "postgresql":
                raise errors.SetupError(
                    f"A read database is a PostgreSQL standby; {url.get_backend_name()!r} "
                    "is not one."
                )
            # as the primary's engine: psycopg's own options apart, and a server going away
            # (a standby promoted or restarted) is a lost connection, replaced at checkout
            # (``core.hung_up``: no round trip)
            engine = create_engine(
                without_driver_options(url),
                pool_size=pool_size,
                max_overflow=0,
                pool_timeout=STANDBY_POOL_WAIT,
                connect_args=driver_options(url),
            )
            event.listen(engine, "handle_error", failover_is_disconnect)
            event.listen(engine, "checkout", hung_up)
            self.members.append(Standby(url.render_as_string(hide_password=True), url, engine))
        self._turn = itertools.count()
        self._samples: deque[tuple[float, int]] = deque()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._conns: dict[str, Any] = {}
        #: which games' heads to follow (the API: the games its standby streams show)
        self.followed: Callable[[], Iterable[str]] = tuple
        #: told (game, seq) when a followed game's rows reached every usable standby
        self.on_rows: Callable[[str, int], None] = lambda _g, _s: None
        #: told when the set of usable standbys changed (streams re-read where they read)
        self.on_change: Callable[[], None] = lambda: None
        self._usable_names: tuple[str, ...] = ()
        #: game -> the head last told for it (``_tell_rows``)
        self._told: dict[str, int] = {}
        self.ticks = 0

    # -- choosing ----------------------------------------------------------------------
    def pick(self) -> Standby | None:
        """A usable standby, in turn (``None``: read the primary)."""
        now = time.monotonic()
        usable = [s for s in self.members if s.fresh(self.max_lag, now)]
        if not usable:
            return None
        return usable[next(self._turn) % len(usable)]

    @property
    def in_use(self) -> bool:
        now = time.monotonic()
        return any(s.fresh(self.max_lag, now) for s in self.members)

    def report(self) -> dict[str, Any]:
        now = time.monotonic()
        return {
            "max_lag_seconds": self.max_lag,
            "standbys": [s.report(self.max_lag, now) for s in self.members],
        }

    # -- the watch -----------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is not None or not self.members:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="charleston-standbys", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()

    def dispose(self) -> None:
        self.stop()
        for member in self.members:
            member.engine.dispose()

    def _loop(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                self.tick()
            except Exception as exc:  # the watch never dies; a standby not measured is unused
                log.warning("standby watch failed", extra={"error": type(exc).__name__})
            self._stop.wait(max(0.0, self.watch_seconds - (time.monotonic() - started)))

    def tick(self) -> None:
        """One measurement: the primary's position, then each standby's replay and the
        heads of the followed games; then who is told what."""
        sampled = self._sample_primary()
        followed = sorted(set(self.followed()))
        for member in self.members:
            self._measure(member, sampled, followed)
        now = time.monotonic()
        usable = tuple(s.name for s in self.members if s.fresh(self.max_lag, now))
        if usable != self._usable_names:
            log.info(
                "standbys in use changed",
                extra={"standbys": list(usable), "max_lag": self.max_lag},
            )
            self._usable_names = usable
            self.on_change()
        self._tell_rows(followed, now)
        self.ticks += 1

    def _connection(self, key: str, dsn: str) -> Any:
        import psycopg

        conn = self._conns.get(key)
        if conn is None or conn.closed:
            conn = self._conns[key] = psycopg.connect(dsn, autocommit=True, connect_timeout=5)
        return conn

    def _drop(self, key: str) -> None:
        conn = self._conns.pop(key, None)
        if conn is not None:
            conn.close()

    def _sample_primary(self) -> tuple[float, int] | None:
        try:
            row = (
                self._connection("primary", self.primary_dsn)
                .execute("SELECT pg_current_wal_lsn()::text")
                .fetchone()
            )
        except Exception:
            self._drop("primary")
            return None  # no sample: the standbys' lags grow until the primary answers
        position = lsn(row[0] if row else None)
        if position is None:
            return None
        sample = (time.monotonic(), position)
        self._samples.append(sample)
        while self._samples and sample[0] - self._samples[0][0] > SAMPLES_KEPT_SECONDS:
            self._samples.popleft()
        return sample

    def _measure(
        self, member: Standby, sampled: tuple[float, int] | None, followed: list[str]
    ) -> None:
        dsn = render(member.url.set(drivername="postgresql"))
        try:
            conn = self._connection(member.name, dsn)
            recovering, replayed_text, paused = conn.execute(_STANDBY_TICK).fetchone()
            heads = dict(conn.execute(_HEADS, [followed]).fetchall()) if followed else {}
        except Exception as exc:
            self._drop(member.name)
            member.reason = f"unreachable ({type(exc).__name__})"
            member.lag_seconds = None
            member.lag_bytes = None
            return
        now = time.monotonic()
        member.checked_at = now
        member.replay_paused = bool(paused)
        member.heads = heads
        if not recovering:
            member.reason = "not a standby (not in recovery: promoted, or a primary)"
            return
        replayed = lsn(replayed_text)
        if replayed is None:
            member.reason = "has replayed nothing yet"
            return
        reached = [at for at, position in self._samples if position <= replayed]
        if not reached:
            oldest = self._samples[0][0] if self._samples else now
            member.lag_seconds = now - oldest  # at least this much (no sample it reached)
        else:
            member.lag_seconds = max(0.0, now - reached[-1])
        member.lag_bytes = max(0, sampled[1] - replayed) if sampled else None
        member.reason = None if sampled else "the primary's position is not known"

    def _tell_rows(self, followed: list[str], now: float) -> None:
        """Each followed game whose rows every usable standby now has, past what was
        told before: once per game and new head, for the whole process (a stream that
        read already finds nothing new: a wake costs it one read, never a row)."""
        usable = [s for s in self.members if s.fresh(self.max_lag, now)]
        kept: dict[str, int] = {}
        for game in followed if usable else ():
            heads = [s.heads.get(game) for s in usable]
            if any(h is None for h in heads):
                continue
            seq = min(h for h in heads if h is not None)
            kept[game] = seq
            if self._told.get(game, -1) < seq:
                self.on_rows(game, seq)
        self._told = kept


class OnStandby:
    """The store's parts, each method call served from a usable standby when there is
    one, else (or when the standby has not got it yet) from the primary.

    ``store.standby.spectating.view(...)`` is ``store.spectating.view(...)`` with this
    thread's reads on a standby. Calls made inside the call (the part's own) stay there.
    """

    reads: CheckedReads
    spectating: Spectating
    feed: Feed
    auditor: Auditor
    rounds: Rounds
    registry: GameRegistry

    def __init__(self, core: Any, standbys: Standbys | None, parts: dict[str, Any]) -> None:
        self._core = core
        self._standbys = standbys
        for name, part in parts.items():
            setattr(self, name, part if standbys is None else _Routed(part, self))

    def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        standbys = self._standbys
        local = self._core.read_on
        if standbys is None or getattr(local, "standby", None) is not None:
            return fn(*args, **kwargs)
        member = standbys.pick()
        if member is None:
            return fn(*args, **kwargs)
        local.standby = member
        try:
            result = fn(*args, **kwargs)
            member.reads += 1
            return result
        except errors.CharlestonError as exc:
            if exc.code not in NOT_THERE_YET:
                raise
            member.fallbacks += 1
        finally:
            local.standby = None
        return fn(*args, **kwargs)


class _Routed:
    """One part, its callables routed through :meth:`OnStandby.call`."""

    def __init__(self, part: Any, router: OnStandby) -> None:
        self._part = part
        self._router = router

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._part, name)
        if not callable(found):
            return found

        def routed(*args: Any, **kwargs: Any) -> Any:
            return self._router.call(found, *args, **kwargs)

        return routed
