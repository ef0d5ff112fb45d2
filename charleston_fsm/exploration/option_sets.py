"""Which option sets an exploration must cover, and why fewer than all of them suffice.

``nmjl`` and ``house`` are each one option set. ``four_winds`` has 648 (4 rounds x 3
Charleston schedules x 3 Ding Dong schedules x ``ding_dong_max`` 1-9 x
``require_placing``), but the chart and the table read the round and the two schedules
only through two guards, ``charleston_this_round`` and ``ding_dong_this_round``: two
option sets on which both guards agree, with the same ``ding_dong_max`` and
``require_placing``, play the same flow (the round's name appears only in the ending's
words). So the 648 fall into 2 x 2 x 9 x 2 = 72 *flow classes*, computed here from the
engine's own guards (:func:`four_winds_classes`), and exploring one option set per class
covers all 648.

``ding_dong_max`` is read by one validator only (``check_ding_dong_request``: no more
requests than the maximum), so a class with maximum k+1 plays the flow of maximum k
and one more, identical, Ding Dong round. The bounded form (CI) explores the classes
with maxima 1 and 2 (the limit reached at once, and one repetition before it); the full
form explores every maximum.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..engine.charts.four_winds import FourWindsOptions, FourWindsTable, Schedule
from ..engine.ruleset import get_ruleset
from ..engine.seats import SEATS
from .abstraction import canonical_deal
from .rule_book import Book

#: the ``ding_dong_max`` values the bounded form explores (see the module's docstring)
BOUNDED_DING_DONG_MAX = (1, 2)


@dataclass(frozen=True)
class OptionSet:
    """One exploration to run: a ruleset, its options, what it stands for."""

    ruleset: str
    options: dict[str, Any]
    #: how many of the ruleset's option sets this one stands for (its flow class's size)
    covers: int = 1
    label: str = ""
    #: a rough guess of its exploration's size, to start the largest first (``--jobs``):
    #: the run takes as long as its longest exploration if that one starts first
    weight: int = 0
    #: the option sets it stands for whose flow the engine reads otherwise than the rule
    #: book (FW-07), each in words: a class built from a wrong guard (:func:`misread`)
    misread: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.ruleset} {self.label}".strip()


def four_winds_option_sets() -> Iterator[dict[str, Any]]:
    """Every option set of ``four_winds`` (648)."""
    fields = FourWindsOptions.model_fields
    maxima = range(
        fields["ding_dong_max"].metadata[0].ge, fields["ding_dong_max"].metadata[1].le + 1
    )
    for round_, charleston, ding_dong, maximum, placing in itertools.product(
        SEATS, Schedule, Schedule, maxima, (True, False)
    ):
        yield {
            "round": round_.value,
            "charleston": charleston.value,
            "ding_dong": ding_dong.value,
            "ding_dong_max": maximum,
            "require_placing": placing,
        }


def flow_class(table: FourWindsTable) -> tuple[Any, ...]:
    """What of a Four Winds table's options its flow reads (the module's docstring)."""
    return (
        table.charleston_this_round(),
        table.ding_dong_this_round(),
        table.options.ding_dong_max,
        table.options.require_placing,
    )


def four_winds_classes() -> dict[tuple[Any, ...], list[dict[str, Any]]]:
    """The 648 option sets of ``four_winds`` by flow class, read from the engine's guards."""
    deal = canonical_deal()
    classes: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    table = FourWindsTable(deal, "four_winds")
    for options in four_winds_option_sets():
        table.redeal(deal, "four_winds", options)
        classes.setdefault(flow_class(table), []).append(options)
    return classes


def misread(members: list[dict[str, Any]], flow: tuple[Any, ...]) -> tuple[str, ...]:
    """Those of ``members`` (one flow class, ``flow`` as the engine's guards read it)
    whose Charleston or Ding Dong the rule book plays otherwise (FW-07).

    The classes are read from the engine's guards, and one option set explores each: a
    guard that reads a schedule wrong would move option sets into a class whose flow is
    not theirs, and the explored one could still be right. So every member is held to
    the book's schedule here, not only the one explored.
    """
    found = []
    for options in members:
        book = Book.of("four_winds", options)
        read = (book.charleston_this_round, book.ding_dong_this_round)
        if read != tuple(flow[:2]):
            found.append(
                f"round {options['round']}, charleston {options['charleston']}, ding dong "
                f"{options['ding_dong']}: the engine plays the Charleston "
                f"{_on(flow[0])} and the Ding Dong {_on(flow[1])}; the rule book (FW-07) "
                f"plays them {_on(read[0])} and {_on(read[1])}"
            )
    return tuple(found)


def _on(plays: bool) -> str:
    return "on" if plays else "off"


def option_sets(ruleset: str | None = None, *, bounded: bool = False) -> list[OptionSet]:
    """The option sets ``check`` explores: every ruleset's (or ``ruleset``'s), one per
    Four Winds flow class (only the bounded maxima when ``bounded``)."""
    chosen: list[OptionSet] = []
    for name in ("nmjl", "house", "four_winds"):
        if ruleset is not None and name != ruleset:
            continue
        get_ruleset(name)
        if name != "four_winds":
            # measured: nmjl about twice house's size; both explode with every interleaving
            weight = (2 if name == "nmjl" else 1) * (150 if bounded else 1500)
            chosen.append(OptionSet(name, {}, weight=weight))
            continue
        for flow, members in sorted(four_winds_classes().items()):
            charleston, ding_dong, maximum, placing = flow
            if bounded and maximum not in BOUNDED_DING_DONG_MAX:
                continue
            label = (
                f"[charleston {'on' if charleston else 'off'}, ding dong "
                f"{'on' if ding_dong else 'off'}, max {maximum}, "
                f"placing {'required' if placing else 'free'}]"
            )
            # exchanges, more Ding Dongs and placing left free each multiply the
            # configurations (the figures in docs/exploration.md; placing free by 2 once
            # the reduction merges the received counts)
            weight = (
                (10 if charleston else 1)
                * (3 * maximum if ding_dong else 1)
                * (1 if placing else 2)
            )
            chosen.append(
                OptionSet(
                    name,
                    members[0],
                    covers=len(members),
                    label=label,
                    weight=weight,
                    misread=misread(members, flow),
                )
            )
    return chosen
