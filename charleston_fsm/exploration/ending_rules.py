"""How a finished standard game is told ending (the property ``rule_ending``).

A game that ends keeps every tile where the rules put it whatever it then says, so the
transfer properties pass an engine that tells it wrong. Players, directors and the
record read two things of the end: the reason the ``charleston_ended`` row records (and
the table keeps), and the summary every view shows (``ending``: a code, the seats it
names, the words). Both are read here against the facts the commands recorded: the
votes (NMJL-02: a stop vote stops it, its voters named in seat order), the Second Right
that moved no tile (NMJL-10), and East's declaration (NMJL-14, NMJL-15, NMJL-21: a
Heavenly Hand ends it unless judged invalid, when it is set aside and said to be; a
judgement valid ends the game with the hand; the summary says who judged it and how,
or that the director has still to, NMJL-19).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..engine.charts.standard import StandardTable
from ..engine.events import Event
from ..engine.seats import SEATS
from ..engine.table import Table
from .properties import Finding
from .rule_book import Book

#: the reasons a standard game records when nothing declared ends it (NMJL-10: the
#: Second Right moved no tile from a hand, so no Courtesy Pass)
PLAYED_OUT = "all passes complete"
NO_COURTESY_PASS = "no tile passed from any hand on the Second Right: no Courtesy Pass"


def ending(events: Sequence[Event], after: Table, book: Book) -> Iterator[Finding]:
    """The reason recorded when the Charleston ends, and the summary every view shows of
    a finished game: read against the declaration and the votes the commands recorded."""
    if not book.standard or not isinstance(after, StandardTable) or not after.finished:
        return
    declared = after.declaration
    set_aside = bool(
        declared
        and declared["kind"] == "heavenly"
        and declared["verdict"] == "invalid"
        and declared.get("judged")
    )
    recorded = [e.payload["reason"] for e in events if e.type == "charleston_ended"]
    for reason in dict.fromkeys([*recorded, after.ended_reason]):
        yield from _reason(reason, declared, set_aside)
    stops = [s.value for s in SEATS if after.votes.get(s) == "stop"]
    if declared is not None and declared["kind"] == "heavenly" and not set_aside:
        expected, by, rules = "heavenly", ["east"], ("NMJL-14",)
    elif stops:
        expected, by, rules = "stopped", stops, ("NMJL-02",)
    elif after.ended_reason == NO_COURTESY_PASS:
        expected, by, rules = "no_courtesy", [], ("NMJL-10",)
    else:
        expected, by, rules = "all_passes", [], ("NMJL-03",)
    told = after.ending(lambda seat: seat.value)
    if told is None or (told["how"], told["by"]) != (expected, by):
        yield (
            "rule_ending",
            rules,
            f"the finished game is told as {told and (told['how'], told['by'])}; the votes "
            f"{dict((s.value, v) for s, v in after.votes.items())} and the declaration "
            f"{declared} say {(expected, by)}",
        )
    elif ("Heavenly Hand was judged invalid by the director and set aside" in told["text"]) != (
        set_aside
    ):
        yield (
            "rule_ending",
            ("NMJL-21",),
            f"the summary {'omits' if set_aside else 'tells'} a Heavenly Hand set aside, "
            f"where the declaration is {declared}",
        )
    elif declared is not None and not set_aside:
        yield from _told_verdict(told["text"], declared)


def _told_verdict(text: str, declared: Mapping[str, Any]) -> Iterator[Finding]:
    """The summary says what became of East's declaration: who judged it, how and what
    that did, or that the director has still to; and it names an Earthly Hand as one
    (NMJL-19, NMJL-21)."""
    if declared["verdict"] == "pending":
        said = ["still to judge"]
    else:
        judge = "the director" if declared.get("judged") else "the hand checker"
        said = [f"{judge} judged it {declared['verdict']}"]
        # what the verdict did: a valid hand ends the game, an invalid one leaves the
        # Charleston complete (a Heavenly Hand set aside is told apart, above)
        valid = declared["verdict"] == "valid"
        said.append("the game ends with this hand" if valid else "the Charleston stays complete")
    earthly = declared["kind"] == "earthly"
    if earthly:
        said.append("declared an Earthly Hand")
    words = text.lower()
    missing = [s for s in said if s.lower() not in words]
    if missing or (not earthly and "earthly hand" in words):
        yield (
            "rule_ending",
            ("NMJL-19", "NMJL-21"),
            f"the summary {text!r} of the declaration {declared} "
            + (f"does not say {missing}" if missing else "calls it an Earthly Hand"),
        )


def _reason(
    reason: str | None, declared: Mapping[str, Any] | None, set_aside: bool
) -> Iterator[Finding]:
    """The reason the ``charleston_ended`` row records, and the table keeps, from the
    declaration: a judgement valid ends the game with it, any other leaves the reason the
    passes gave."""
    if declared is None or set_aside:
        allowed: tuple[str, ...] = (PLAYED_OUT, NO_COURTESY_PASS)
        rules: tuple[str, ...] = ("NMJL-10", "NMJL-21")
    elif declared.get("judged") and declared["verdict"] == "valid":
        allowed, rules = (f"{declared['kind'].capitalize()} Hand judged valid",), ("NMJL-21",)
    elif declared["kind"] == "heavenly":
        allowed, rules = ("Heavenly Hand declared",), ("NMJL-14",)
    else:  # an Earthly Hand not judged valid leaves the Charleston complete as it ended
        allowed, rules = (PLAYED_OUT, NO_COURTESY_PASS), ("NMJL-15", "NMJL-21")
    if reason not in allowed:
        yield (
            "rule_ending",
            rules,
            f"the Charleston ended recording {reason!r}; with the declaration {declared} the "
            f"rule book says {' or '.join(repr(a) for a in allowed)}",
        )
