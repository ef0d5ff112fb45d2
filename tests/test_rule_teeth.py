"""The checker's teeth: rule defects seeded by hand, each caught with the rule it breaks.

Issue 38 lists the defects a reviewer could make that the invariants alone passed (the
transfers conserve every tile whichever way they go). Each is seeded here into the
engine in-process (``monkeypatch``, undone after the test), as a reviewer's mistake
would look, and the exploration (``check --bounded``'s: one interleaving for nmjl and
house) must fail with the rule id it breaks. Each runs on the smallest option set that
shows it and stops at the first failure, so the whole set stays within seconds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest

from charleston_fsm.engine import checks, errors, resolution, views
from charleston_fsm.engine import table as table_module
from charleston_fsm.engine.charts.four_winds import FOUR_WINDS_STEPS, FourWindsTable, Schedule
from charleston_fsm.engine.charts.standard import STANDARD_STEPS, StandardTable
from charleston_fsm.engine.checks import Checks
from charleston_fsm.engine.resolution import Resolution
from charleston_fsm.engine.seats import SEATS, Direction, Seat
from charleston_fsm.engine.steps import Step, exchange, standard
from charleston_fsm.engine.table import Table
from charleston_fsm.engine.tiles import face
from charleston_fsm.exploration import explore, runs
from charleston_fsm.exploration.option_sets import option_sets

Seed = Callable[[pytest.MonkeyPatch], None]


def _first_right_goes_left(mp: pytest.MonkeyPatch) -> None:
    mp.setitem(
        STANDARD_STEPS, "CHARLESTON_P1_R", standard("First Charleston: pass Right", Direction.LEFT)
    )


def _second_charleston_order_swapped(mp: pytest.MonkeyPatch) -> None:
    # the two order guards read the option the wrong way round
    left, across = StandardTable.second_left_first, StandardTable.second_across_first
    mp.setattr(StandardTable, "second_left_first", across)
    mp.setattr(StandardTable, "second_across_first", left)


def _one_stop_does_not_stop(mp: pytest.MonkeyPatch) -> None:
    # a majority decides: one stop among three continues plays the Second Charleston
    def any_stop(self: StandardTable) -> bool:
        return list(self.votes.values()).count("stop") >= 2

    def all_continue(self: StandardTable) -> bool:
        return len(self.votes) == len(SEATS) and list(self.votes.values()).count("continue") >= 3

    mp.setattr(StandardTable, "any_stop", any_stop)
    mp.setattr(StandardTable, "all_continue", all_continue)


def _late_objection_after_its_window(mp: pytest.MonkeyPatch) -> None:
    # the window counted one pass too long: a stop is still taken in the second pass
    original = StandardTable.second_across_first

    def second_across_first(self: StandardTable, event: Any, source: Any) -> bool:
        late = event == "vote" and source.id == "CHARLESTON_P2_A"
        return late or original(self)

    mp.setattr(StandardTable, "second_across_first", second_across_first)


def _courtesy_takes_the_larger(mp: pytest.MonkeyPatch) -> None:
    def pair_offer(self: StandardTable, pair: int) -> int | None:
        offers = [self.offers.get(s) for s in ((SEATS[0], SEATS[2]), (SEATS[1], SEATS[3]))[pair]]
        return None if None in offers else max(offers)  # type: ignore[type-var]

    mp.setattr(StandardTable, "_pair_offer", pair_offer)


def _joker_passable(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(checks, "is_joker", lambda tile: False)


def _two_where_three(mp: pytest.MonkeyPatch) -> None:
    step = Step(label="First Charleston: pass Across", direction=Direction.ACROSS, count=2)
    mp.setitem(STANDARD_STEPS, "CHARLESTON_P1_A", step)


def _selection_checked_as(
    mp: pytest.MonkeyPatch,
    seeded: Callable[[Callable[..., None], Any, Seat, Step, list[int], int], None],
) -> None:
    """The validator of a choice replaced by ``seeded``, given the original to call."""
    original = Checks._check_selection

    def check(self: Any, seat: Seat, step: Step, tiles: list[int], blind: int = 0) -> None:
        seeded(original, self, seat, step, tiles, blind)

    mp.setattr(Checks, "_check_selection", check)


def _another_seats_tile(mp: pytest.MonkeyPatch) -> None:
    # the validator looks a tile up in every hand at the table, not the chooser's
    def seeded(original: Any, table: Any, seat: Seat, step: Step, tiles: list[int], blind: int):
        table_class, own = type(table), type(table).hand
        table_class.hand = lambda t, s: [x for q in SEATS for x in own(t, q)]
        try:
            original(table, seat, step, tiles, blind)
        finally:
            table_class.hand = own

    _selection_checked_as(mp, seeded)


def _placing_dropped(mp: pytest.MonkeyPatch) -> None:
    original = Checks._check_selection

    def check(self: Any, seat: Seat, step: Step, tiles: list[int], blind: int = 0) -> None:
        options = self.options
        self.options = options.model_copy(update={"require_placing": False})
        try:
            original(self, seat, step, tiles, blind)
        finally:
            self.options = options

    mp.setattr(Checks, "_check_selection", check)


def _last_exchange_wrong_partner(mp: pytest.MonkeyPatch) -> None:
    sixth = exchange("Exchange 6: West and South", Seat.WEST, Seat.NORTH)
    mp.setitem(FOUR_WINDS_STEPS, "EXCHANGE_6_WS", sixth)


def _last_exchange_wrong_way(mp: pytest.MonkeyPatch) -> None:
    sixth = exchange("Exchange 6: West and South", Seat.SOUTH, Seat.WEST)
    mp.setitem(FOUR_WINDS_STEPS, "EXCHANGE_6_WS", sixth)


def _faces_in_events(mp: pytest.MonkeyPatch) -> None:
    original = views.redact

    def redact(event: Any, seat: Seat | None) -> dict[str, Any]:
        data = original(event, seat)
        if event.type == "pass_confirmed" and seat is not None and event.seat is not seat:
            data["payload"]["faces"] = [face(t) for t in event.payload["tiles"]]
        return data

    mp.setattr(views, "redact", redact)


def _blind_on_every_pass(mp: pytest.MonkeyPatch) -> None:
    # the step's blind mark forgotten: any pass may forward arriving tiles unseen
    mp.setattr(Table, "blind_max", lambda self, step: 3 if self.blind_pass_option() else 0)


def _blind_without_the_option(mp: pytest.MonkeyPatch) -> None:
    # the ruleset's option forgotten: house's last passes take a blind count
    mp.setattr(Table, "blind_max", lambda self, step: 3 if step.blind else 0)


def _nothing_moves(mp: pytest.MonkeyPatch) -> None:
    # the resolution reads a pass with tiles as one without: the step ends, no tile moves
    def resolve(step: Step, declarations: Any) -> Resolution:
        seats = [s for s in step.participants if s in declarations]
        return Resolution(handovers=[], kept={s: [] for s in seats}, routes={}, moved=False)

    mp.setattr(table_module, "resolve", resolve)


def _moved_recorded_wrong(mp: pytest.MonkeyPatch) -> None:
    # the resolution's record says nothing moved (what players and spectators read) while
    # its handovers moved every tile
    original = resolution.resolve

    def resolve(step: Step, declarations: Any) -> Resolution:
        return dataclasses.replace(original(step, declarations), moved=False)

    mp.setattr(table_module, "resolve", resolve)


def _ding_dong_kept_with_a_blind_count(mp: pytest.MonkeyPatch) -> None:
    # a Ding Dong's gifts kept with a blind count (a Declaration's default gone wrong): the
    # seat's view shows a blind pass that Four Winds has not
    original = FourWindsTable.record_gifts

    def record_gifts(self: FourWindsTable, seat: Seat, command: Any) -> None:
        original(self, seat, command)
        self.selections[seat] = dataclasses.replace(self.selections[seat], blind=1)

    mp.setattr(FourWindsTable, "record_gifts", record_gifts)


def _withdrawal_refused(mp: pytest.MonkeyPatch) -> None:
    # the withdrawal's test reads "or": every withdrawal (and change) refused
    def check_withdraw(self: Any, seat: Seat) -> None:
        raise errors.NothingConfirmed(f"{seat.label} has nothing to withdraw.")

    mp.setattr(Checks, "check_withdraw", check_withdraw)


def _blind_split_refused(mp: pytest.MonkeyPatch) -> None:
    # the blind count's range written as "all or none" (where a blind pass is allowed)
    def seeded(original: Any, table: Any, seat: Seat, step: Step, tiles: list[int], blind: int):
        if blind in (1, 2) and table.blind_max(step):
            raise errors.WrongCount("A blind pass forwards 0 or 3 tiles.", rule="NMJL-07")
        original(table, seat, step, tiles, blind)

    _selection_checked_as(mp, seeded)


def _courtesy_of_three_refused(mp: pytest.MonkeyPatch) -> None:
    # a free courtesy count's range ends one too early
    def seeded(original: Any, table: Any, seat: Seat, step: Step, tiles: list[int], blind: int):
        if step.count is None and len(tiles) == 3:
            raise errors.WrongCount("A courtesy pass is 0 to 2 tiles.", rule="PASS-02")
        original(table, seat, step, tiles, blind)

    _selection_checked_as(mp, seeded)


def _four_where_three(mp: pytest.MonkeyPatch) -> None:
    # the count compared with "at most": a fourth tile is taken along
    def seeded(original: Any, table: Any, seat: Seat, step: Step, tiles: list[int], blind: int):
        original(table, seat, step, tiles[:3] if len(tiles) + blind == 4 else tiles, blind)

    _selection_checked_as(mp, seeded)


def _negative_blind_taken(mp: pytest.MonkeyPatch) -> None:
    # the blind count's range starts at -1: a fourth tile from the hand makes up for it
    def seeded(original: Any, table: Any, seat: Seat, step: Step, tiles: list[int], blind: int):
        if blind == -1:
            original(table, seat, step, tiles[:3], 0)
            return
        original(table, seat, step, tiles, blind)

    _selection_checked_as(mp, seeded)


NO_BLIND = {"blind_pass": False}


def _ding_dong_receivers_unchecked(mp: pytest.MonkeyPatch) -> None:
    # the gifts' tiles checked, their receivers not: a tile to the giver, two to one
    # player, one to nobody all taken (the mutation run of four_winds.py, line 353)
    def check_gifts(self: FourWindsTable, seat: Seat, command: Any, source: Any) -> None:
        steps = self.ruleset.steps[source.id]
        self._check_selection(seat, steps, [g.tile for g in command.gifts])

    mp.setattr(FourWindsTable, "check_gifts", check_gifts)


def _stopped_game_told_as_played_out(mp: pytest.MonkeyPatch) -> None:
    # the summary reads the votes wrong: a game stopped by a vote is told as played in
    # full (the mutation run of charts/standard/table.py, line 130)
    ending = StandardTable.ending

    def told(self: StandardTable, name: Callable[[Seat], str]) -> dict[str, Any] | None:
        summary = ending(self, name)
        if summary is not None and summary["how"] == "stopped":
            return {**summary, "how": "all_passes", "by": []}
        return summary

    mp.setattr(StandardTable, "ending", told)


def _set_aside_heavenly_recorded_as_declared(mp: pytest.MonkeyPatch) -> None:
    # the recorded reason ignores the verdict: a Heavenly Hand judged invalid and set
    # aside ends the Charleston as "declared" (the same run, line 160)
    def default_end_reason(self: StandardTable) -> str:
        declared = self.declaration
        heavenly = declared and declared["kind"] == "heavenly"
        return "Heavenly Hand declared" if heavenly else "all passes complete"

    mp.setattr(StandardTable, "default_end_reason", default_end_reason)


def _offer_of_three_refused(mp: pytest.MonkeyPatch) -> None:
    # the offer's bound read as "under 3": a pair can agree at most 2 (the same run, line 183)
    check_offer = StandardTable.check_offer

    def capped(self: StandardTable, seat: Seat, command: Any) -> None:
        if command.count == 3:
            raise errors.WrongCount("A courtesy offer is 0 to 2 tiles.", rule="NMJL-13")
        check_offer(self, seat, command)

    mp.setattr(StandardTable, "check_offer", capped)


def _offer_of_four_taken(mp: pytest.MonkeyPatch) -> None:
    # the offer's bound one too high (the command's count has no bounds of its own; the
    # same run, line 183)
    check_offer = StandardTable.check_offer

    def loose(self: StandardTable, seat: Seat, command: Any) -> None:
        if command.count != 4:
            check_offer(self, seat, command)

    mp.setattr(StandardTable, "check_offer", loose)


def _late_objection_recorded_on_time(mp: pytest.MonkeyPatch) -> None:
    # the late stop's row loses its mark: the record tells it as a vote at the vote (the
    # same run, line 360)
    record = StandardTable.record_late_objection

    def unmarked(self: StandardTable, seat: Seat, command: Any, source: Any) -> None:
        before = len(self._pending)
        record(self, seat, command, source)
        for event in self._pending[before:]:
            event.payload.pop("late", None)

    mp.setattr(StandardTable, "record_late_objection", unmarked)


def _judgement_refusal_skipped(mp: pytest.MonkeyPatch) -> None:
    # a verdict where nothing is declared gets the chart's "not now", not the rule's
    # refusal (the same run, line 107)
    family_refusal = StandardTable.family_refusal

    def refusal(self: StandardTable, command: Any) -> errors.CharlestonError | None:
        return None if command.event == "judge_declaration" else family_refusal(self, command)

    mp.setattr(StandardTable, "family_refusal", refusal)


def _second_verdict_taken(mp: pytest.MonkeyPatch) -> None:
    # the verdict's validator lets a judged declaration be judged again (NMJL-21: once)
    check_judgement = StandardTable.check_judgement

    def again(self: StandardTable, seat: Seat | None) -> None:
        if self.declaration is None:
            check_judgement(self, seat)

    mp.setattr(StandardTable, "check_judgement", again)


def _second_charleston_refuses_everything(mp: pytest.MonkeyPatch) -> None:
    # once all four continued, every refused command is told the Second Charleston is
    # mandatory, a declaration too (the same run, line 109)
    family_refusal = StandardTable.family_refusal

    def refusal(self: StandardTable, command: Any) -> errors.CharlestonError | None:
        if command.event != "judge_declaration" and self.all_continue() and not self.finished:
            return family_refusal(self, command.model_copy(update={"type": "vote"}))
        return family_refusal(self, command)

    mp.setattr(StandardTable, "family_refusal", refusal)


NO_DING_DONG = {"ding_dong": "off"}
#: a deal whose round plays no Charleston: the Ding Dong window straight away
DING_DONG_ONLY = {"charleston": "last_round", "ding_dong_max": 1}
#: (defect, its seeding, ruleset, options, the rule id the failure must name)
DEFECTS: list[tuple[str, Seed, str, dict[str, Any], str]] = [
    ("first right goes left", _first_right_goes_left, "house", {}, "NMJL-01"),
    ("nmjl second order swapped", _second_charleston_order_swapped, "nmjl", NO_BLIND, "NMJL-04"),
    ("one stop vote does not stop", _one_stop_does_not_stop, "house", {}, "NMJL-02"),
    ("late objection after its window", _late_objection_after_its_window, "nmjl", NO_BLIND,
     "NMJL-06"),
    ("courtesy takes the larger count", _courtesy_takes_the_larger, "nmjl", NO_BLIND, "NMJL-13"),
    ("joker passable", _joker_passable, "house", {}, "PASS-03"),
    ("2 tiles where 3 are due", _two_where_three, "house", {}, "PASS-01"),
    ("another seat's tile accepted", _another_seats_tile, "house", {}, "PASS-04"),
    ("placing dropped", _placing_dropped, "house", {}, "PASS-08"),
    ("last exchange to the wrong partner", _last_exchange_wrong_partner, "four_winds",
     NO_DING_DONG, "FW-01"),
    ("last exchange the wrong way", _last_exchange_wrong_way, "four_winds", NO_DING_DONG, "FW-02"),
    ("tile faces in a seat's events", _faces_in_events, "house", {}, "PASS-11"),
    ("a blind pass on every pass", _blind_on_every_pass, "nmjl", {}, "NMJL-07"),
    ("a blind pass where the ruleset has none", _blind_without_the_option, "house", {},
     "HOUSE-02"),
    ("an exchange that moves nothing", _nothing_moves, "four_winds", NO_DING_DONG, "FW-01"),
    ("a pass recorded as moving nothing", _moved_recorded_wrong, "house", {}, "PASS-07"),
    ("a Ding Dong kept with a blind count", _ding_dong_kept_with_a_blind_count, "four_winds",
     DING_DONG_ONLY, "PASS-05"),
    # from the mutation run of checks.py (docs/mutation.md): what the book leaves free,
    # refused, and a count too large taken
    ("no withdrawal taken", _withdrawal_refused, "house", {}, "PASS-05"),
    ("a blind split of 1 or 2 refused", _blind_split_refused, "nmjl", {}, "NMJL-07"),
    ("a free courtesy of 3 refused", _courtesy_of_three_refused, "house", {}, "PASS-02"),
    ("4 tiles where 3 are due", _four_where_three, "house", {}, "PASS-01"),
    ("a blind count of -1 taken", _negative_blind_taken, "nmjl", {}, "NMJL-07"),
    # from the mutation run of four_winds.py
    ("a Ding Dong's receivers unchecked", _ding_dong_receivers_unchecked, "four_winds",
     DING_DONG_ONLY, "FW-04"),
    # from the mutation run of charts/standard/table.py: how a finished game is told
    ("a stopped game told as played out", _stopped_game_told_as_played_out, "house", {},
     "NMJL-02"),
    ("a set-aside Heavenly Hand recorded as declared", _set_aside_heavenly_recorded_as_declared,
     "house", {}, "NMJL-21"),
    ("a courtesy offer of 3 refused", _offer_of_three_refused, "nmjl", NO_BLIND, "NMJL-13"),
    ("a courtesy offer of 4 taken", _offer_of_four_taken, "nmjl", NO_BLIND, "NMJL-13"),
    ("a late objection recorded as on time", _late_objection_recorded_on_time, "nmjl", NO_BLIND,
     "NMJL-05"),
    ("a verdict on nothing told 'not now'", _judgement_refusal_skipped, "house", {}, "NMJL-21"),
    ("a declaration judged twice", _second_verdict_taken, "house", {}, "NMJL-21"),
    ("every refusal in the Second Charleston told it is mandatory",
     _second_charleston_refuses_everything, "house", {}, "NMJL-16"),
]  # fmt: skip


def _bounded(ruleset: str, options: dict[str, Any]) -> Any:
    return explore(
        ruleset,
        options,
        ordered=ruleset != "four_winds",
        extreme_splits=True,
        stop_at_failure=True,
    )


@pytest.mark.parametrize(
    ("seed", "ruleset", "options", "rule"),
    [pytest.param(*d[1:], id=d[0]) for d in DEFECTS],
)
def test_a_seeded_rule_defect_fails_with_its_rule_id(
    monkeypatch: pytest.MonkeyPatch, seed: Seed, ruleset: str, options: dict[str, Any], rule: str
) -> None:
    seed(monkeypatch)
    result = _bounded(ruleset, options)
    named = {r for f in result.failures for r in f.rules}
    assert rule in named, [(f.property, f.rules, f.message) for f in result.failures]


def test_a_schedule_read_on_the_wrong_round_fails_with_fw07(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The Four Winds flow classes are read from the engine's own guards, and one option
    set explores each: a schedule read wrong (the last-round Charleston played on every
    round but the North's) moves option sets between classes while each explored one may
    still be right. Every member of a class is held to the book's schedule (FW-07)."""
    assert not any(s.misread for s in option_sets("four_winds"))

    def plays(self: Schedule, round_: Seat) -> bool:
        return self is Schedule.EVERY_ROUND or (
            self is Schedule.LAST_ROUND and round_ is not Seat.NORTH
        )

    monkeypatch.setattr(Schedule, "plays", plays)
    chosen = option_sets("four_winds", bounded=True)
    misread = [message for option_set in chosen for message in option_set.misread]
    assert any(m.startswith("round north, charleston last_round") for m in misread), misread
    assert all("(FW-07)" in m for m in misread)
    failing = next(option_set for option_set in chosen if option_set.misread)
    checked = runs._explored(failing, bounded=True, max_depth=1)
    assert {(f.property, f.rules) for f in checked.exploration.failures} >= {
        ("rule_flow", ("FW-07",))
    }
