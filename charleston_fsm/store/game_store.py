"""The event store's front: games as append-only, hash-chained event rows plus a projection.

:class:`GameStore` holds no logic of its own. It builds the store's parts over one
:class:`~.core.StoreCore` (the database, its transactions, the anchor key, the warm
tables) and answers each public method with the part that owns it:

- ``core``, :class:`~.core.StoreCore`: upgrade, downgrade, schema_status, schema_state;
- ``registry``, :class:`~.games.GameRegistry`: create_game, role_for, games, last_seq;
- ``command_path``, :class:`~.command_path.CommandPath`: execute, wait_for_seals;
- ``reads``, :class:`~.reads.CheckedReads`: table, view, view_of, players, ensure_open, events,
  replay, refuse_beyond_head;
- ``integrity``, :class:`~.tamper.TamperEvidence`: verify, seal, verify_all, quarantines,
  lift_quarantine, anchors, restore_anchors, rebuild_projection;
- ``auditor``, :class:`~.auditor.Auditor`: audit, audit_all, check_projections;
- ``rounds``, :class:`~.rounds.Rounds`: create_round, round_opens, round_listing;
- ``clocks``, :class:`~.deadlines.ClockWorker`: fire_due_clocks, clock_view, direct.

No part imports this module: each gets the core and the parts it uses when it is built
here, so each can be built and tested on its own (``tests/test_store_parts.py``).
"""

from __future__ import annotations

from sqlalchemy.engine import URL

from .anchors import AnchorKey
from .auditor import Auditor
from .command_path import CommandPath
from .commands import NOTIFY_CHANNEL
from .core import StoreCore
from .deadlines import ClockWorker
from .games import GameRegistry
from .reads import CheckedReads
from .results import ExecuteResult, GameSummary
from .rounds import Rounds
from .tamper import TamperEvidence

__all__ = ["NOTIFY_CHANNEL", "ExecuteResult", "GameStore", "GameSummary"]


class GameStore:
    """Games on PostgreSQL (psycopg 3) or SQLite; see ``docs/architecture.md``."""

    def __init__(
        self,
        url: str | URL | None = None,
        *,
        echo: bool = False,
        anchor_key: AnchorKey | None = None,
    ) -> None:
        core = self.core = StoreCore(url, echo=echo, anchor_key=anchor_key)
        self.url = core.url
        self.dialect = core.dialect
        self.engine = core.engine

        self.registry = GameRegistry(core)
        self.integrity = TamperEvidence(core, self.registry)
        self.reads = CheckedReads(core, self.integrity.verify)
        core.lost_race = self.reads.refuse_beyond_head
        self.command_path = CommandPath(core, self.integrity)
        self.auditor = Auditor(core, self.integrity, self.reads)
        self.rounds = Rounds(core, self.registry, self.reads)
        self.clocks = ClockWorker(core, self.command_path)

        # the public methods, each the owning part's own (same signature and docstring)
        self.upgrade = core.upgrade
        self.downgrade = core.downgrade
        self.schema_status = core.schema_status
        self.schema_state = core.schema_state

        self.create_game = self.registry.create_game
        self.role_for = self.registry.role_for
        self.games = self.registry.games
        self.last_seq = self.registry.last_seq

        self.execute = self.command_path.execute
        self.wait_for_seals = self.command_path.wait_for_seals

        self.table = self.reads.table
        self.view = self.reads.view
        self.view_of = self.reads.view_of
        self.players = self.reads.players
        self.ensure_open = self.reads.ensure_open
        self.events = self.reads.events
        self.replay = self.reads.replay
        self.refuse_beyond_head = self.reads.refuse_beyond_head

        self.verify = self.integrity.verify
        self.seal = self.integrity.seal
        self.verify_all = self.integrity.verify_all
        self.quarantines = self.integrity.quarantines
        self.lift_quarantine = self.integrity.lift_quarantine
        self.anchors = self.integrity.anchors
        self.restore_anchors = self.integrity.restore_anchors
        self.rebuild_projection = self.integrity.rebuild_projection

        self.audit = self.auditor.audit
        self.audit_all = self.auditor.audit_all
        self.check_projections = self.auditor.check_projections

        self.create_round = self.rounds.create_round
        self.round_opens = self.rounds.round_opens
        self.round_listing = self.rounds.round_listing

        self.fire_due_clocks = self.clocks.fire_due_clocks
        self.clock_view = self.clocks.clock_view
        self.direct = self.clocks.direct

    @property
    def anchor_key(self) -> AnchorKey:
        """The key that signs anchors (``anchors.load_key`` on first use, when not given)."""
        return self.core.anchor_key

    def __repr__(self) -> str:
        return f"GameStore({self.url.render_as_string(hide_password=True)!r})"

    def dispose(self) -> None:
        """Close every pooled connection (call before forking, or when done), once the
        seals under way are written."""
        self.command_path.wait_for_seals()
        self.core.dispose()

    close = dispose
