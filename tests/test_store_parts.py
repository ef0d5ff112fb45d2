"""The store's parts, each built over a core of its own, without the GameStore front.

The front only wires parts together (``store/game_store.py``); these tests build the
few parts a behaviour needs and check it there, on both databases, so a part that
started to lean on the front (or on a part it was not given) fails here.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import charleston_fsm.store as store_package
from charleston_fsm.engine.bots import bots_for, play
from charleston_fsm.engine.seats import Seat
from charleston_fsm.engine.views import seat_view
from charleston_fsm.ledger.hashing import hash_token
from charleston_fsm.store import GameQuarantined, GameStore, NewGame
from charleston_fsm.store.database.core import StoreCore
from charleston_fsm.store.database.models import EventRow
from charleston_fsm.store.evidence.tamper import TamperEvidence
from charleston_fsm.store.games.reads import CheckedReads
from charleston_fsm.store.games.registry import GameRegistry
from charleston_fsm.store.games.writes import Writes
from charleston_fsm.store.rounds.rounds import Rounds

DIRECTOR = hash_token("director-token")


@pytest.fixture
def core(db_url: str) -> Iterator[StoreCore]:
    core = StoreCore(db_url)
    try:
        yield core
    finally:
        core.dispose()


def test_the_games_part_alone_creates_lists_and_names_roles(core: StoreCore) -> None:
    registry = GameRegistry(core)
    game_id = registry.create_game(NewGame(seed=7, credentials={"director": DIRECTOR}))
    assert registry.last_seq(game_id) == 1
    assert [g.id for g in registry.games()] == [game_id]
    assert registry.role_for(game_id, DIRECTOR) == "director"
    assert registry.role_for(game_id, hash_token("someone else")) is None


def test_the_reads_part_alone_serves_views_and_refuses_a_tampered_record(
    core: StoreCore,
) -> None:
    registry = GameRegistry(core)
    tamper = TamperEvidence(core, registry)
    reads = CheckedReads(core, tamper.verify)
    game_id = registry.create_game(NewGame(seed=3))

    assert reads.view(game_id, "east") == seat_view(reads.table(game_id), Seat.EAST)
    assert [e.type for e in reads.events(game_id)] == ["game_created"]
    assert reads.replay(game_id).snapshot() == reads.table(game_id).snapshot()

    with core.engine.begin() as conn:  # a row rewritten behind the service's back
        conn.execute(
            EventRow.__table__.update()
            .where(EventRow.game_id == game_id, EventRow.seq == 1)
            .values(payload={"ruleset": "nmjl"})
        )
    with pytest.raises(GameQuarantined):
        reads.events(game_id)
    assert tamper.quarantines(game_id)[0]["active"]


def test_the_command_path_alone_plays_a_game_to_its_sealed_end(core: StoreCore) -> None:
    registry = GameRegistry(core)
    tamper = TamperEvidence(core, registry)
    reads = CheckedReads(core, tamper.verify)
    writes = Writes(core, tamper)
    game_id = registry.create_game(NewGame(seed=11))

    ids = iter(range(1, 10_000))
    played = play(
        lambda command: writes.execute(game_id, command, command_id=f"bot-{next(ids)}"),
        lambda seat: reads.view(game_id, seat),
        bots_for(11),
    )
    writes.wait_for_seals()
    assert played > 0
    assert reads.view(game_id)["game"]["finished"]
    verdict = tamper.verify(game_id)
    assert verdict.ok, verdict.message
    assert verdict.replayed is False  # the command path sealed it: no replay needed


def test_the_rounds_part_alone_makes_a_round_whole_or_not_at_all(core: StoreCore) -> None:
    registry = GameRegistry(core)
    reads = CheckedReads(core, TamperEvidence(core, registry).verify)
    rounds = Rounds(core, registry, reads)

    with pytest.raises(Exception, match="Table 2"):
        rounds.create_round([NewGame(seed=1), NewGame("mahjong")], token_hash=DIRECTOR)
    assert registry.games() == []
    round_id, game_ids = rounds.create_round(
        [NewGame(seed=1), NewGame(seed=2)], token_hash=DIRECTOR
    )
    listing = rounds.round_listing(round_id)
    assert [t.game_id for t in listing.tables] == game_ids
    assert all(t.awaiting == ["east", "south", "west", "north"] for t in listing.tables)
    assert rounds.round_opens(round_id, DIRECTOR)


#: the front's parts and what they share, by their sub-package (``bots.py`` is a user of
#: the front, not a part)
PARTS = (
    "database.core",
    "games.results",
    "games.registry",
    "games.writes",
    "games.reads",
    "evidence.tamper",
    "evidence.auditor",
    "rounds.rounds",
    "games.clock_worker",
    "evidence.sweep",
)


def test_no_part_imports_the_front() -> None:
    """No module of the store's sub-packages imports ``game_store``, not even for a type
    (but ``games/bots.py``, which plays a game through the front)."""
    folder = Path(store_package.__file__).parent
    leaning = []
    modules = [p for p in folder.rglob("*.py") if p.parent != folder and p.name != "bots.py"]
    assert {f"{p.parent.name}.{p.stem}" for p in modules} >= set(PARTS)
    for path in modules:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("game_store"):
                leaning.append(path.name)
    assert leaning == []


def test_the_front_holds_each_part_under_its_module_name(sqlite_url: str) -> None:
    """The front holds no logic and no alias: each part is reached by its module's name."""
    store = GameStore(sqlite_url)
    try:
        for name in (*PARTS[:1], *PARTS[2:-1]):
            part = getattr(store, name.rpartition(".")[2])
            assert type(part).__module__ == f"charleston_fsm.store.{name}", name
        assert store.core.lost_race == store.reads.refuse_beyond_head
        methods = {n for n in vars(GameStore) if not n.startswith("_")}
        assert methods <= {"anchor_key", "dispose", "close"}, methods
    finally:
        store.dispose()
