"""The malformed choices a person can send, tried where a well-formed one was taken.

The explorer's own moves are well formed (:func:`.abstraction.moves` names distinct,
non-joker tiles of the seat's own hand, in the count the step asks), so a validator
that wrongly accepts a bad choice is never exercised by them. Here, in each
configuration where the explorer's choice for a seat was *accepted*, the same choice is
sent spoiled one way at a time, and each must be refused with the code of the rule it
breaks and change nothing (the table's snapshot is the same after the refusal):

======================================  ==========================  =====================
spoiled choice                          code                        rule
======================================  ==========================  =====================
a joker of the seat's own hand          ``joker_passed``            PASS-03
a tile of the wall (held by nobody)     ``tile_not_in_hand``        PASS-04 (FW-02 [*]_)
a tile of another seat's hand           ``tile_not_in_hand``        PASS-04 (FW-02 [*]_)
one tile fewer than the book's count    ``wrong_count``             PASS-01, NMJL-13, FW-04
one tile more than the book's count     ``wrong_count``             PASS-01, NMJL-13, FW-04
a tile declared blind where none may    ``blind_pass_not_allowed``  NMJL-07, HOUSE-02, FW-02
four tiles blind                        ``wrong_count``             NMJL-07
four tiles and a blind count of -1      ``wrong_count``             NMJL-07
four tiles where a courtesy is free     ``wrong_count``             PASS-02
a courtesy offer of -1, and of 4        ``wrong_count``             NMJL-13
a stop after the late objection window  ``second_charleston_...``   NMJL-06, HOUSE-04
a second vote                           ``already_voted``           NMJL-02
Mah Jongg declared by South             ``only_east_declares``      NMJL-17
a Ding Dong asked by South              ``only_east_requests_...``  FW-06
the Ding Dong window closed by South    ``director_command``        FW-08
a vote in the First Charleston          ``not_allowed_now``         NMJL-02
East's Mah Jongg, Second Charleston     ``not_allowed_now``         NMJL-16
a verdict with nothing declared         ``no_declaration_to_judge`` NMJL-21
a second verdict on a declaration       ``declaration_already_...`` NMJL-21
a pass confirmed after the end          ``charleston_over``         NMJL-20
======================================  ==========================  =====================

.. [*] the second player of a Four Winds exchange naming a tile not its own gets
   ``responder_own_tiles_only`` (FW-02), whichever tile it is.

Which tile breaks the rule does not matter to a validator (the package's argument), so
each spoiled choice is tried once per configuration of the chart, seat, command and
count (:attr:`Malformed.seen`), not in every configuration: a few hundred executions per
option set. The expected counts come from :mod:`.rule_book`, not from the engine.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..engine.commands import parse_command
from ..engine.errors import CharlestonError
from ..engine.table import Table
from ..engine.tiles import is_joker
from .properties import Finding
from .rule_book import COURTESY_MOST, STANDARD_COUNT, TURN_ORDER, Book
from .rule_properties import stage
from .transfer_rules import seat_state

#: what a spoiled choice must be refused with: its name, the code, the rules it may name
Expectation = tuple[str, str, tuple[str, ...]]


class Malformed:
    """The spoiled choices of one exploration, and the keys already tried."""

    def __init__(self, book: Book, wall: Sequence[int]) -> None:
        self.book = book
        self.wall_tile = wall[0]
        self.seen: set[tuple[Any, ...]] = set()
        self.tried = 0

    def check(
        self, table: Table, snapshot: Mapping[str, Any], accepted: Sequence[Mapping[str, Any]]
    ) -> Iterator[tuple[Finding, dict[str, Any]]]:
        """Try the spoiled forms of ``accepted`` (the explorer's choices taken in the
        configuration of ``snapshot``, loaded in ``table``); yield each finding with the
        command that broke the rule. ``table`` is left loaded with ``snapshot``."""
        for command, expected in self._spoiled(snapshot, accepted):
            self.tried += 1
            try:
                table.execute(parse_command(command))
            except CharlestonError as refusal:
                changed = table.snapshot() != snapshot
                if refusal.code != expected[1] or refusal.rule not in expected[2] or changed:
                    yield (
                        (
                            "malformed",
                            expected[2],
                            f"{expected[0]}: refused with {refusal.code} ({refusal.rule})"
                            + ("; and the table changed" if changed else "")
                            + f"; the rule book says {expected[1]} ({', '.join(expected[2])})",
                        ),
                        command,
                    )
                    table.load(snapshot)
                continue
            except Exception as exc:  # a bug in the engine: a finding, with its path
                message = f"{expected[0]} raised {type(exc).__name__}: {exc}"
                yield ("crash", (), message), command
                table.load(snapshot)
                continue
            yield (
                (
                    "malformed",
                    expected[2],
                    f"{expected[0]} was taken; the rule book says it is refused with "
                    f"{expected[1]} ({', '.join(expected[2])})",
                ),
                command,
            )
            table.load(snapshot)

    # -- the spoiled forms ------------------------------------------------------------------
    def _spoiled(
        self, snapshot: Mapping[str, Any], accepted: Sequence[Mapping[str, Any]]
    ) -> Iterator[tuple[dict[str, Any], Expectation]]:
        config = tuple(snapshot["configuration"])
        for command in accepted:
            name, seat = str(command["type"]), str(command.get("seat"))
            if name == "confirm_pass":
                tiles, blind = list(command["tiles"]), command.get("blind", 0)
            elif name == "give_ding_dong":
                tiles, blind = [g["tile"] for g in command["gifts"]], 0
            elif name == "offer_courtesy":
                yield from self._offers_out_of_bounds(config, seat)
                continue
            else:
                continue
            key = (config, seat, name, len(tiles), blind, bool(snapshot["received"][seat]))
            if key in self.seen:
                continue
            self.seen.add(key)
            for spoiled, expected in self._spoil(snapshot, seat, name, tiles, blind):
                yield _command(name, seat, spoiled, blind, command), expected
            refused_by = self.book.blind_rule(seat_state(config, seat, self.book))
            if name == "confirm_pass" and tiles and not blind and refused_by is not None:
                # the same count, its last tile declared blind instead
                what = f"a blind pass at {stage(config)}"
                expected = (what, "blind_pass_not_allowed", refused_by)
                yield _command(name, seat, tiles[:-1], 1, command), expected
            if name == "confirm_pass" and refused_by is None:
                yield from self._blind_counts(snapshot, seat, tiles, blind, command)
            if name == "give_ding_dong":
                yield from _misdirected(seat, command)
        yield from self._out_of_turn(snapshot, config)
        if self.book.standard:
            yield from self._judged_wrongly(snapshot["declaration"], config)

    def _offers_out_of_bounds(
        self, config: tuple[str, ...], seat: str
    ) -> Iterator[tuple[dict[str, Any], Expectation]]:
        """A courtesy offer outside 0 to 3 (NMJL-13; the command's count has no bounds of
        its own), where the seat's offer was taken."""
        key = (config, seat, "offer_courtesy")
        if key in self.seen:
            return
        self.seen.add(key)
        for count in (-1, COURTESY_MOST + 1):
            offer = {"type": "offer_courtesy", "seat": seat, "count": count}
            yield offer, (f"a courtesy offer of {count}", "wrong_count", ("NMJL-13",))

    def _blind_counts(
        self,
        snapshot: Mapping[str, Any],
        seat: str,
        tiles: list[int],
        blind: int,
        command: Mapping[str, Any],
    ) -> Iterator[tuple[dict[str, Any], Expectation]]:
        """Where a blind pass is allowed, a blind count outside 0-3 (NMJL-07), the total
        kept: four blind, and a fourth tile from the hand made up by a blind count of -1."""
        expected: Expectation = ("four tiles blind", "wrong_count", ("NMJL-07",))
        yield _command("confirm_pass", seat, [], 4, command), expected
        spare = _spare(snapshot["racks"][seat] + snapshot["received"][seat], tiles)
        if spare and blind == 0:
            expected = ("four tiles and a blind count of -1", "wrong_count", ("NMJL-07",))
            yield _command("confirm_pass", seat, [*tiles, spare[0]], -1, command), expected

    def _spoil(
        self, snapshot: Mapping[str, Any], seat: str, name: str, tiles: list[int], blind: int
    ) -> Iterator[tuple[list[int], Expectation]]:
        hand = snapshot["racks"][seat] + snapshot["received"][seat]
        state = seat_state(snapshot["configuration"], seat, self.book)
        foreign_rule = ("PASS-04",), "tile_not_in_hand"
        if (
            not self.book.standard
            and state not in (None, "DING_DONG")
            and seat == self.book.participants(state)[1]
        ):  # the exchange's second player
            foreign_rule = ("FW-02",), "responder_own_tiles_only"
        if tiles:
            jokers = [t for t in hand if is_joker(t)]
            if jokers:
                rules = ("PASS-03",) if self.book.standard else ("PASS-03", "FW-03")
                yield [*tiles[:-1], jokers[0]], ("a joker", "joker_passed", rules)
            yield (
                [*tiles[:-1], self.wall_tile],
                ("a tile of the wall", foreign_rule[1], foreign_rule[0]),
            )
            other = TURN_ORDER[(TURN_ORDER.index(seat) + 1) % 4]
            theirs = [t for t in snapshot["racks"][other] if not is_joker(t)]
            if theirs:
                yield (
                    [*tiles[:-1], theirs[0]],
                    (f"a tile of {other}'s hand", foreign_rule[1], foreign_rule[0]),
                )
        yield from self._wrong_counts(snapshot, seat, state, tiles, blind, hand)

    def _wrong_counts(
        self,
        snapshot: Mapping[str, Any],
        seat: str,
        state: str | None,
        tiles: list[int],
        blind: int,
        hand: list[int],
    ) -> Iterator[tuple[list[int], Expectation]]:
        book = self.book
        courtesy = state is not None and state.startswith("PAIR_")
        if courtesy and book.options["courtesy_mode"] != "agreed_min":
            extra = _spare(hand, tiles)[: COURTESY_MOST + 1 - len(tiles)]
            if len(tiles) + len(extra) > COURTESY_MOST:
                yield tiles + extra, ("four courtesy tiles", "wrong_count", ("PASS-02",))
            return
        if courtesy:
            pair = book.participants(state)  # type: ignore[arg-type]
            due, rules = min(snapshot["offers"][s] for s in pair), ("NMJL-13",)
        elif state == "DING_DONG":
            due, rules = STANDARD_COUNT, ("FW-04",)
        else:
            due, rules = STANDARD_COUNT, ("PASS-01",)
        if tiles and len(tiles) + blind == due:
            what = f"{due - 1} tile(s) where {due} are due"
            yield tiles[:-1], (what, "wrong_count", rules)
        spare = _spare(hand, tiles)
        if spare and len(tiles) + blind == due and state != "DING_DONG":  # a gift a tile
            what = f"{due + 1} tile(s) where {due} are due"
            yield [*tiles, spare[0]], (what, "wrong_count", rules)

    def _judged_wrongly(
        self, declared: Mapping[str, Any] | None, config: tuple[str, ...]
    ) -> Iterator[tuple[dict[str, Any], Expectation]]:
        """The director's verdict where there is nothing to judge: no declaration, or one
        judged already (NMJL-21: a declaration is judged once). Once per chart
        configuration and state of the declaration: a configuration is first reached
        before anything is judged (a Heavenly Hand set aside returns to the First Right)."""
        judged = declared is not None and bool(declared.get("judged"))
        key = (config, "verdict", declared is None, judged)
        if key in self.seen:
            return
        self.seen.add(key)
        judge = {
            "type": "judge_declaration",
            "verdict": "valid",
            "text": "A hand as the card shows.",
        }
        if declared is None and stage(config) == "CHARLESTON_P1_R":
            what = ("a verdict with nothing declared", "no_declaration_to_judge", ("NMJL-21",))
            yield judge, what
        elif judged:
            yield judge, ("a second verdict", "declaration_already_judged", ("NMJL-21",))

    def _out_of_turn(
        self, snapshot: Mapping[str, Any], config: tuple[str, ...]
    ) -> Iterator[tuple[dict[str, Any], Expectation]]:
        """Votes, declarations and requests a person may send where the book refuses them,
        once per chart configuration."""
        key = (config, "out of turn")
        if key in self.seen:
            return
        self.seen.add(key)
        book, was = self.book, stage(config)
        if book.standard and was.startswith("CHARLESTON_P2"):
            yield (
                {"type": "declare_mah_jongg", "seat": "east"},
                ("Mah Jongg declared in the Second Charleston", "not_allowed_now", ("NMJL-16",)),
            )
            late = book.options["late_objection"]
            if not late or was != book.second_first:
                rule = "NMJL-06" if late else "HOUSE-04"
                yield (
                    {"type": "vote", "seat": "east", "choice": "stop"},
                    (
                        f"a stop at {was}, after the late objection's window",
                        "second_charleston_mandatory",
                        (rule,),
                    ),
                )
        if was == "CHARLESTON_DECIDE_STOP":
            for seat, choice in snapshot["votes"].items():
                yield (
                    {"type": "vote", "seat": seat, "choice": choice},
                    (
                        f"{seat}'s second vote",
                        "already_voted",
                        ("NMJL-02",),
                    ),
                )
                break
        if book.standard and was in ("CHARLESTON_P1_R", "CHARLESTON_DONE"):
            yield (
                {"type": "declare_mah_jongg", "seat": "south"},
                (
                    "Mah Jongg declared by South",
                    "only_east_declares",
                    ("NMJL-17",),
                ),
            )
        if book.standard and was == "CHARLESTON_P1_R":
            yield (
                {"type": "vote", "seat": "east", "choice": "continue"},
                ("a vote in the First Charleston", "not_allowed_now", ("NMJL-02",)),
            )
        if was == "CHARLESTON_DONE":
            tiles = [t for t in snapshot["racks"]["south"] if not is_joker(t)][:STANDARD_COUNT]
            yield (
                {"type": "confirm_pass", "seat": "south", "tiles": tiles, "blind": 0},
                ("a pass confirmed after the end", "charleston_over", ("NMJL-20",)),
            )
        if not book.standard:
            yield (
                {"type": "close_ding_dong", "seat": "south"},
                (
                    "the Ding Dong window closed by South",
                    "director_command",
                    ("FW-08",),
                ),
            )
        if was == "DING_DONG_OPEN":
            yield (
                {"type": "request_ding_dong", "seat": "south"},
                (
                    "a Ding Dong asked by South",
                    "only_east_requests_ding_dong",
                    ("FW-06",),
                ),
            )


def _misdirected(
    seat: str, command: Mapping[str, Any]
) -> Iterator[tuple[dict[str, Any], Expectation]]:
    """A Ding Dong's gifts sent otherwise than one tile to each other player (FW-04): a
    tile to the giver, two to one receiver, one to nobody."""
    gifts = [dict(g) for g in command["gifts"]]
    if len(gifts) < 2:
        return
    wrong: list[tuple[Any, str, str]] = [
        (seat, "a Ding Dong tile given to the giver", "ding_dong_to_self"),
        (gifts[1]["to"], "two Ding Dong tiles to one receiver", "ding_dong_same_receiver"),
        (None, "a Ding Dong tile to nobody", "ding_dong_to_nobody"),
    ]
    for to, what, code in wrong:
        spoiled = [{**gifts[0], "to": to}, *gifts[1:]]
        yield {"type": "give_ding_dong", "seat": seat, "gifts": spoiled}, (what, code, ("FW-04",))


def _spare(hand: Sequence[int], tiles: Sequence[int]) -> list[int]:
    """The passable tiles of ``hand`` a choice of ``tiles`` leaves out (to spoil it with
    one more)."""
    return [t for t in hand if not is_joker(t) and t not in tiles]


def _command(
    name: str, seat: str, tiles: list[int], blind: int, original: Mapping[str, Any]
) -> dict[str, Any]:
    if name == "give_ding_dong":
        receivers = [g["to"] for g in original["gifts"]]
        return {
            "type": name,
            "seat": seat,
            "gifts": [{"tile": t, "to": to} for t, to in zip(tiles, receivers, strict=False)],
        }
    return {"type": name, "seat": seat, "tiles": tiles, "blind": blind}
