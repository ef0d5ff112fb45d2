"""The organisers part of the store on both databases: keys kept as digests, what a key
directs, rotation and revocation logged for every process's credential watch."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from charleston_fsm.store import GameStore, InvalidOrganiser, NewGame, OrganiserNotFound, hash_token


def test_a_key_directs_its_organisers_games_until_rotated_or_revoked(store: GameStore) -> None:
    # the PostgreSQL database is the session's: count what this test adds
    games_before = store.organisers.games(None, every=True, limit=1, offset=0)[0]
    first = store.organisers.create("  Club A ", hash_token("key-a"))
    second = store.organisers.create("Club B", hash_token("key-b"))
    assert first.name == "Club A" and first.revoked_at is None
    game = store.registry.create_game(NewGame(seed=1, organiser_id=first.organiser_id))
    round_id, tables = store.rounds.create_round(
        [NewGame(seed=2), NewGame(seed=3)],
        token_hash=hash_token("round"),
        organiser_id=first.organiser_id,
    )
    platforms = store.registry.create_game(NewGame(seed=4))

    key_a, key_b = hash_token("key-a"), hash_token("key-b")
    assert store.organisers.holder(key_a).organiser_id == first.organiser_id
    assert store.organisers.holder(hash_token("nobody")) is None
    for game_id in (game, *tables):
        assert store.organisers.directing(game_id, key_a) == first.organiser_id
        assert store.organisers.directing(game_id, key_b) is None
    assert store.organisers.directing(platforms, key_a) is None
    assert store.organisers.owns_round(round_id, first.organiser_id)
    assert not store.organisers.owns_round(round_id, second.organiser_id)
    total, games = store.organisers.games(first.organiser_id, every=False, limit=10, offset=0)
    assert total == 3 and {g["game_id"] for g in games} == {game, *tables}
    assert store.organisers.games(None, every=True, limit=2, offset=0)[0] == games_before + 4
    assert len(store.organisers.games(None, every=True, limit=2, offset=0)[1]) == 2
    total, rounds = store.organisers.rounds(second.organiser_id, every=False, limit=10, offset=0)
    assert (total, rounds) == (0, [])

    since = datetime.now(UTC) - timedelta(seconds=1)
    rotated = store.organisers.rotate(first.organiser_id, hash_token("key-a2"))
    assert rotated.key_rotated_at is not None
    assert store.organisers.holder(key_a) is None  # the old digest is no one's
    assert store.organisers.directing(game, key_a) is None
    assert store.organisers.directing(game, hash_token("key-a2")) == first.organiser_id
    assert first.organiser_id in {s for s, _at, _what in store.credentials.changes_since(since)}

    revoked = store.organisers.revoke(first.organiser_id)
    assert revoked.revoked_at is not None
    assert store.organisers.holder(hash_token("key-a2")).revoked
    assert store.organisers.directing(game, hash_token("key-a2")) is None
    assert store.organisers.revoke(first.organiser_id) == revoked  # changes nothing
    listed = [o.organiser_id for o in store.organisers.listing()]
    assert listed[-2:] == [first.organiser_id, second.organiser_id]  # oldest first


def test_bad_organisers_are_refused_and_nothing_is_stored(store: GameStore) -> None:
    before = store.organisers.listing()
    with pytest.raises(InvalidOrganiser):
        store.organisers.create(" ", hash_token("k"))
    with pytest.raises(InvalidOrganiser):
        store.organisers.create("a\x00b", hash_token("k"))
    with pytest.raises(InvalidOrganiser):
        store.organisers.create("x" * 101, hash_token("k"))
    with pytest.raises(OrganiserNotFound):
        store.organisers.rotate("nobody", hash_token("k"))
    with pytest.raises(OrganiserNotFound):
        store.organisers.revoke("nobody")
    assert store.organisers.listing() == before
