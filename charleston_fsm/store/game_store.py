"""The event store's front: games as append-only, hash-chained event rows plus a projection.

:class:`GameStore` holds no logic and re-exposes no method: it builds the store's parts
over one :class:`~.core.StoreCore` (the database, its transactions, the anchor key, the
warm tables, the games this process served, the notices) and holds each under the name
of its module, where callers reach it:

- ``core``, :class:`~.core.StoreCore`: upgrade, downgrade, schema_status, schema_state;
- ``registry``, :class:`~.registry.GameRegistry`: create_game, role_for, games, last_seq;
- ``writes``, :class:`~.writes.Writes`: execute, annotate, act_for_seat (the one write
  path), wait_for_seals;
- ``reads``, :class:`~.reads.CheckedReads`: table, view, view_of, players, ensure_open,
  events, replay, refuse_beyond_head;
- ``tamper``, :class:`~.tamper.TamperEvidence`: verify, seal, verify_all, quarantines,
  lift_quarantine, anchors, restore_anchors, rebuild_projection;
- ``auditor``, :class:`~.auditor.Auditor`: audit, audit_all, check_projections;
- ``rounds``, :class:`~.rounds.Rounds`: create_round, round_opens, round_listing;
- ``clock_worker``, :class:`~.clock_worker.ClockWorker`: fire_due_clocks, clock_view;
- ``credentials``, :class:`~.credentials.Credentials`: replace_seat_token, set_spectator,
  set_round_spectator, spectator_delay, round_of, round_delay, round_spectator_delay,
  changes_since;
- ``round_acts``, :class:`~.round_acts.RoundActs`: act (start, pause, resume a round);
- ``spectating``, :class:`~.spectating.Spectating`: view, events, round_tables (what a
  spectator's link shows, behind its delay);
- ``organisers``, :class:`~.organisers.Organisers`: create, get, listing, rotate, revoke,
  holder, directing, owns_round, games, rounds (organisers' keys and what they own).
- ``feed``, :class:`~.feed.Feed`: read, head, sequence (every game's and round's lifecycle);
- ``webhooks``, :class:`~.webhooks.Webhooks`: create, list, get, set_status, delete,
  deliveries; ``outbox``, :class:`~.outbox.Outbox`: claim, complete (the senders').
- ``standby``, :class:`~.standbys.OnStandby`: the read parts (``reads``, ``spectating``,
  ``feed``, ``auditor``, ``rounds``, ``registry``) with each call served from a fresh
  standby (``read_urls``), else from the primary; ``standbys``: their watch (or ``None``).

No part imports this module: each gets the core and the parts it uses when it is built
here, so each can be built and tested on its own (``tests/test_store_parts.py``).
"""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy.engine import URL

from ..ledger.anchors import AnchorKey
from .database.core import StoreCore
from .database.standbys import OnStandby, Standbys, read_urls_from_env
from .evidence.auditor import Auditor
from .evidence.tamper import TamperEvidence
from .games.clock_worker import ClockWorker
from .games.reads import CheckedReads
from .games.registry import GameRegistry
from .games.writes import Writes
from .platform.feed import Feed
from .platform.feed import rider as feed_rider
from .platform.organisers import Organisers
from .platform.outbox import Outbox
from .platform.webhooks import Webhooks
from .rounds.credentials import Credentials
from .rounds.round_acts import RoundActs
from .rounds.rounds import Rounds
from .rounds.spectating import Spectating


class GameStore:
    """Games on PostgreSQL (psycopg 3) or SQLite; see ``docs/architecture.md``."""

    def __init__(
        self,
        url: str | URL | None = None,
        *,
        echo: bool = False,
        anchor_key: AnchorKey | None = None,
        read_urls: list[str] | None = None,
        read_max_lag: float | None = None,
    ) -> None:
        """``read_urls``: streaming standbys of this PostgreSQL primary for the reads that
        need no lock (default: ``$CHARLESTON_READ_DATABASE_URL``; none: all here);
        ``read_max_lag``: seconds one may lag and still be read (default:
        ``$CHARLESTON_READ_MAX_LAG``, else 5)."""
        core = self.core = StoreCore(url, echo=echo, anchor_key=anchor_key)
        self.url = core.url
        self.dialect = core.dialect
        self.engine = core.engine

        self.registry = GameRegistry(core)
        self.tamper = TamperEvidence(core, self.registry)
        # a read on a standby whose rows fail the check is verified from the primary's
        self.reads = CheckedReads(core, core.on_primary(self.tamper.verify))
        core.lost_race = self.reads.refuse_beyond_head
        self.writes = Writes(core, self.tamper)
        self.writes.add_rider(feed_rider)  # every write's feed entries and their outbox
        self.auditor = Auditor(core, self.tamper, self.reads)
        self.rounds = Rounds(core, self.registry, self.reads)
        self.clock_worker = ClockWorker(core, self.writes)
        self.credentials = Credentials(core, self.writes)
        self.round_acts = RoundActs(core, self.writes)
        self.spectating = Spectating(core, self.reads)
        self.organisers = Organisers(core)
        self.feed = Feed(core)
        self.webhooks = Webhooks(core)
        self.outbox = Outbox(core)
        urls = read_urls if read_urls is not None else read_urls_from_env()
        self.standbys = core.standbys = (
            Standbys(urls, core.url, pool_size=core.budget.route_threads, max_lag=read_max_lag)
            if urls
            else None
        )
        if self.standbys is not None:  # its watch samples the primary on a connection of its own
            core.budget = replace(core.budget, standby_watch=True)
        parts = ("reads", "spectating", "feed", "auditor", "rounds", "registry")
        self.standby = OnStandby(core, self.standbys, {p: getattr(self, p) for p in parts})

    @property
    def anchor_key(self) -> AnchorKey:
        """The key that signs anchors (``anchors.load_key`` on first use, when not given)."""
        return self.core.anchor_key

    def __repr__(self) -> str:
        return f"GameStore({self.url.render_as_string(hide_password=True)!r})"

    def dispose(self) -> None:
        """Close every pooled connection (call before forking, or when done), once the
        seals under way are written and the notices sent."""
        self.writes.wait_for_seals()
        self.core.dispose()

    close = dispose
