"""The store's contract, on both backends: games, commands, idempotency, typed errors."""

from __future__ import annotations

import psycopg
import pytest
from sqlalchemy import func, select

from charleston_fsm.engine.commands import ConfirmPass, PlaceTiles, Vote
from charleston_fsm.engine.errors import (
    CharlestonError,
    InvalidCommand,
    NothingToPlace,
    TileNotInHand,
)
from charleston_fsm.engine.seats import SEATS, Seat
from charleston_fsm.engine.tiles import is_joker
from charleston_fsm.store import (
    NOTIFY_CHANNEL,
    CommandIdConflict,
    EventNotFound,
    GameNotFound,
    GameStore,
    InvalidGameSetup,
    NewGame,
    hash_token,
)
from charleston_fsm.store.database.models import CommandRow, EventRow, ProjectionRow


def three(store: GameStore, game_id: str, seat: Seat) -> list[int]:
    return [t for t in store.reads.table(game_id).racks[seat] if not is_joker(t)][:3]


def counts(store: GameStore, game_id: str) -> tuple[int, int, int]:
    with store.engine.connect() as conn:
        return (
            conn.scalar(select(func.count()).where(EventRow.game_id == game_id)),
            conn.scalar(select(func.count()).where(CommandRow.game_id == game_id)),
            conn.scalar(select(ProjectionRow.seq).where(ProjectionRow.game_id == game_id)),
        )


@pytest.mark.rule("SVC-07")
def test_schema_is_current(store: GameStore) -> None:
    assert store.core.schema_status() == "current"


def test_created_game_has_its_setup_row(store: GameStore) -> None:
    game_id = store.registry.create_game(NewGame(seed=5, players={"east": "Ann", Seat.WEST: "Bo"}))
    (row,) = store.reads.events(game_id)
    assert (row.seq, row.type, row.prev_hash, row.command_id) == (1, "game_created", "0" * 64, None)
    assert row.payload["players"] == {"east": "Ann", "west": "Bo"}
    assert row.payload["seed"] == 5
    assert row.payload["deal"] == store.reads.table(game_id).deal.to_dict()
    (summary,) = store.registry.games()
    assert (summary.id, summary.last_seq, summary.status) == (game_id, 1, "active")
    assert summary.players == {"east": "Ann", "west": "Bo"}
    assert store.tamper.verify(game_id).ok


def test_create_game_with_explicit_hands_and_options(store: GameStore) -> None:
    hands = {
        s.value: list(range(i * 14, i * 14 + (14 if s is Seat.EAST else 13)))
        for i, s in enumerate(SEATS)
    }
    game_id = store.registry.create_game(NewGame("house", {"require_placing": False}, hands=hands))
    table = store.reads.table(game_id)
    assert table.ruleset.name == "house"
    assert table.options.require_placing is False
    assert table.racks[Seat.SOUTH] == hands["south"]


@pytest.mark.rule("SVC-03")
def test_setup_errors_are_typed(store: GameStore) -> None:
    with pytest.raises(CharlestonError) as info:
        store.registry.create_game(NewGame("no-such-rules"))
    assert info.value.kind == "setup"
    with pytest.raises(InvalidGameSetup):
        store.registry.create_game(NewGame(players={"dealer": "Ann"}))
    with pytest.raises(InvalidGameSetup):
        store.registry.create_game(NewGame(hands={"dealer": list(range(14))}))
    with pytest.raises(InvalidGameSetup):
        store.registry.create_game(NewGame(credentials={"east": "not-a-hash"}))
    with pytest.raises(InvalidGameSetup):
        store.registry.create_game(NewGame(credentials={"umpire": hash_token("x")}))
    assert store.registry.games() == []


def test_credentials_map_token_hashes_to_roles(store: GameStore) -> None:
    tokens = {role: f"token-{role}" for role in ("east", "south", "west", "north", "director")}
    game_id = store.registry.create_game(
        NewGame(credentials={r: hash_token(t) for r, t in tokens.items()})
    )
    other = store.registry.create_game(NewGame(credentials={"east": hash_token("token-other")}))
    for role, token in tokens.items():
        assert store.registry.role_for(game_id, hash_token(token)) == role
    assert store.registry.role_for(game_id, hash_token("token-other")) is None
    assert store.registry.role_for(other, hash_token("token-east")) is None


def test_execute_appends_rows_and_moves_the_projection(store: GameStore) -> None:
    game_id = store.registry.create_game(NewGame(seed=1))
    tiles = three(store, game_id, Seat.EAST)
    result = store.writes.execute(
        game_id, ConfirmPass(seat=Seat.EAST, tiles=tiles), command_id="c1"
    )
    assert not result.duplicate
    (row,) = result.events
    assert (row.seq, row.type, row.seat, row.command_id) == (2, "pass_confirmed", "east", "c1")
    assert row.step == "CHARLESTON_P1_R"
    assert row.prev_hash == store.reads.events(game_id)[0].hash
    assert store.reads.events(game_id, after=1) == result.events
    assert store.reads.table(game_id).selections[Seat.EAST].tiles == tuple(tiles)
    assert counts(store, game_id) == (2, 1, 2)


@pytest.mark.rule("SVC-02")
def test_a_dict_command_is_parsed_and_a_bad_one_refused(store: GameStore) -> None:
    game_id = store.registry.create_game(NewGame(seed=1))
    tiles = three(store, game_id, Seat.SOUTH)
    store.writes.execute(game_id, {"type": "confirm_pass", "seat": "south", "tiles": tiles})
    with pytest.raises(InvalidCommand):
        store.writes.execute(game_id, {"type": "confirm_pass", "seat": "nobody"})
    with pytest.raises(InvalidCommand):
        store.writes.execute(game_id, PlaceTiles(seat=Seat.EAST), command_id="x" * 129)
    assert counts(store, game_id) == (2, 1, 2)


@pytest.mark.rule("SVC-06")
def test_a_refusal_writes_nothing(store: GameStore) -> None:
    game_id = store.registry.create_game(NewGame(seed=2))
    before = (store.reads.events(game_id), store.reads.table(game_id).snapshot())
    with pytest.raises(TileNotInHand):
        store.writes.execute(
            game_id, ConfirmPass(seat=Seat.EAST, tiles=three(store, game_id, Seat.WEST))
        )
    with pytest.raises(NothingToPlace):
        store.writes.execute(game_id, PlaceTiles(seat=Seat.EAST))
    with pytest.raises(CharlestonError) as info:
        store.writes.execute(game_id, Vote(seat=Seat.EAST, choice="stop"))
    assert info.value.kind == "not_now"
    assert (store.reads.events(game_id), store.reads.table(game_id).snapshot()) == before
    assert counts(store, game_id) == (1, 0, 1)


@pytest.mark.rule("SVC-06")
def test_a_retry_with_the_same_id_returns_the_original_events(store: GameStore) -> None:
    game_id = store.registry.create_game(NewGame(seed=3))
    resolving = None
    for seat in SEATS:
        command = ConfirmPass(seat=seat, tiles=three(store, game_id, seat))
        resolving = (command, store.writes.execute(game_id, command, command_id=f"id-{seat}"))
    command, first = resolving  # type: ignore[misc]
    assert any(e.type == "pass_resolved" for e in first.events)
    written = counts(store, game_id)
    again = store.writes.execute(game_id, command, command_id="id-north")
    assert again.duplicate
    assert again.events == first.events
    assert counts(store, game_id) == written
    # as a dict, the same command is the same command
    again = store.writes.execute(game_id, command.model_dump(mode="json"), command_id="id-north")
    assert again.duplicate and again.events == first.events


@pytest.mark.rule("SVC-06")
def test_a_reused_id_with_another_command_is_a_conflict(store: GameStore) -> None:
    game_id = store.registry.create_game(NewGame(seed=4))
    store.writes.execute(
        game_id,
        ConfirmPass(seat=Seat.EAST, tiles=three(store, game_id, Seat.EAST)),
        command_id="same",
    )
    with pytest.raises(CommandIdConflict) as info:
        store.writes.execute(
            game_id,
            ConfirmPass(seat=Seat.SOUTH, tiles=three(store, game_id, Seat.SOUTH)),
            command_id="same",
        )
    assert (info.value.kind, info.value.code) == ("not_now", "command_id_conflict")
    # ids are per game: another game may use the same one
    other = store.registry.create_game(NewGame(seed=4))
    store.writes.execute(
        other, ConfirmPass(seat=Seat.EAST, tiles=three(store, other, Seat.EAST)), command_id="same"
    )
    assert counts(store, game_id) == (2, 1, 2)


@pytest.mark.rule("SVC-07")
def test_unknown_games_are_not_found(store: GameStore) -> None:
    for call in (
        lambda: store.writes.execute("nope", PlaceTiles(seat=Seat.EAST)),
        lambda: store.reads.table("nope"),
        lambda: store.reads.events("nope"),
        lambda: store.reads.replay("nope"),
        lambda: store.tamper.verify("nope"),
        lambda: store.auditor.audit("nope"),
        lambda: store.registry.last_seq("nope"),
    ):
        with pytest.raises(GameNotFound) as info:
            call()
        assert (info.value.kind, info.value.code) == ("not_found", "game_not_found")


@pytest.mark.rule("SVC-07")
def test_replay_outside_the_record_is_not_found(store: GameStore) -> None:
    game_id = store.registry.create_game(NewGame(seed=4))
    with pytest.raises(EventNotFound):
        store.reads.replay(game_id, at=2)
    with pytest.raises(EventNotFound):
        store.reads.replay(game_id, at=0)
    assert store.reads.replay(game_id, at=1).snapshot() == store.reads.table(game_id).snapshot()


@pytest.mark.postgres
def test_each_command_notifies_at_commit(pg_store: GameStore, pg_url: str) -> None:
    game_id = pg_store.registry.create_game(NewGame(seed=6))
    libpq = pg_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(libpq, autocommit=True) as listener:
        listener.execute(f"LISTEN {NOTIFY_CHANNEL}")
        result = pg_store.writes.execute(
            game_id, ConfirmPass(seat=Seat.EAST, tiles=three(pg_store, game_id, Seat.EAST))
        )
        with pytest.raises(TileNotInHand):  # a refusal notifies nobody
            pg_store.writes.execute(
                game_id, ConfirmPass(seat=Seat.SOUTH, tiles=three(pg_store, game_id, Seat.WEST))
            )
        received = [n.payload for n in listener.notifies(timeout=0.5, stop_after=2)]
    assert received == [f"{game_id}:{result.last_seq}"]
