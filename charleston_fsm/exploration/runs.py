"""A check run: the option sets to explore, how each is explored, and a failure's replay.

The bounded form (CI) and the full form differ in three ways only. The full form
explores every interleaving of the seats' choices and every Four Winds flow class; the
bounded form explores ``nmjl`` and ``house`` with one interleaving (seats choose in turn
order, :func:`.abstraction.moves`, every step, branch and resolution still reached), the
Four Winds classes with at most 2 Ding Dongs (:mod:`.option_sets`), and, where received
tiles may be passed unplaced, only the two extreme splits between rack and received
tiles (:func:`.abstraction.canonical_tiles`).

A failure comes with the shortest command list that reaches it; :func:`counterexample`
makes it a file that ``charleston-fsm replay --commands FILE`` plays through the chart
(:func:`play_commands` is what it runs).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..engine.commands import parse_command
from ..engine.errors import CharlestonError
from ..engine.events import Event
from ..engine.ruleset import get_ruleset
from ..engine.table import Table
from ..engine.tiles import Deal
from .abstraction import canonical_deal
from .graph import Exploration, Failure, explore
from .option_sets import OptionSet, option_sets


@dataclass
class Checked:
    """One option set and what its exploration found."""

    option_set: OptionSet
    exploration: Exploration
    ordered: bool


def run_check(
    ruleset: str | None = None,
    *,
    options: dict[str, Any] | None = None,
    bounded: bool = False,
    jobs: int = 1,
    on_start: Callable[[OptionSet, int, int], None] | None = None,
    on_state: Callable[[int, int], None] | None = None,
) -> Iterator[Checked]:
    """Explore each option set of ``ruleset`` (default: every ruleset), or only
    ``options`` (of ``ruleset``).

    With ``jobs`` above 1 the option sets are explored in that many processes, largest
    first, and each result comes back without its graph (:meth:`Exploration.slim`), in
    the order they finish; ``on_state`` is then not called.
    """
    if options is not None:
        if ruleset is None:
            raise ValueError("options are a ruleset's: name the ruleset")
        get_ruleset(ruleset).options(options)  # a bad option is refused before anything runs
        label = ", ".join(f"{k} {v}" for k, v in options.items())
        chosen = [OptionSet(ruleset, dict(options), label=f"[{label}]")]
    else:
        chosen = option_sets(ruleset, bounded=bounded)
    if jobs > 1 and len(chosen) > 1:
        yield from _in_processes(chosen, bounded, jobs, on_start)
        return
    for index, option_set in enumerate(chosen):
        if on_start is not None:
            on_start(option_set, index, len(chosen))
        yield _explored(option_set, bounded, on_state)


def _explored(
    option_set: OptionSet,
    bounded: bool,
    on_state: Callable[[int, int], None] | None = None,
    *,
    slim: bool = False,
) -> Checked:
    ordered = bounded and option_set.ruleset != "four_winds"
    result = explore(
        option_set.ruleset,
        option_set.options,
        ordered=ordered,
        extreme_splits=bounded,
        on_state=on_state,
    )
    return Checked(option_set, result.slim() if slim else result, ordered)


def _in_processes(
    chosen: list[OptionSet],
    bounded: bool,
    jobs: int,
    on_start: Callable[[OptionSet, int, int], None] | None,
) -> Iterator[Checked]:
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # the largest explorations first: the run then takes about as long as the largest one
    # or the others shared out, not the largest started last
    order = sorted(chosen, key=lambda o: -o.weight)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(_explored, o, bounded, slim=True) for o in order]
        for done, future in enumerate(as_completed(futures)):
            checked = future.result()
            if on_start is not None:
                on_start(checked.option_set, done, len(chosen))
            yield checked


def counterexample(checked: Checked, failure: Failure) -> dict[str, Any]:
    """A failure as a file ``replay --commands`` plays: the deal, the options, the
    commands, and what went wrong at their end."""
    return {
        "ruleset": checked.option_set.ruleset,
        "options": checked.exploration.options,
        "deal": canonical_deal().to_dict(),
        "commands": failure.commands,
        "failure": {
            "property": failure.property,
            "rules": list(failure.rules),
            "message": failure.message,
            "configuration": failure.configuration,
        },
    }


@dataclass
class Played:
    """What ``play_commands`` did: the table, its events, and the refusal that stopped
    it (``None``: every command was taken)."""

    table: Table
    events: list[Event]
    refused_at: int | None = None
    refusal: str | None = None


def play_commands(data: Mapping[str, Any]) -> Played:
    """Play a command list (a :func:`counterexample` file's) on a new table.

    ``data`` holds ``ruleset``, ``options``, ``deal`` (``{"hands": ..., "wall": ...}``;
    default: the exploration's canonical deal) and ``commands``: each as a client sends
    it. A malformed field raises ``ValueError`` naming it; a refused command stops the
    play and is reported (with its number, from 1).
    """
    ruleset, commands = data.get("ruleset"), data.get("commands")
    if not isinstance(ruleset, str):
        raise ValueError('the file names no ruleset ("ruleset": "nmjl", "house" or "four_winds")')
    if not isinstance(commands, Sequence) or isinstance(commands, str | bytes):
        raise ValueError('the file has no command list ("commands": [...])')
    try:
        deal = Deal.from_dict(data["deal"]) if data.get("deal") else canonical_deal()
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f'the file\'s "deal" is not hands and a wall ({exc})') from None
    table = Table(deal, ruleset, data.get("options") or None)
    events: list[Event] = []
    for number, raw in enumerate(commands, start=1):
        try:
            command = parse_command(raw)
        except ValueError as exc:
            first = str(exc).splitlines()[0]
            raise ValueError(f"command {number} is not a command ({first})") from None
        try:
            events += table.execute(command)
        except CharlestonError as exc:
            return Played(table, events, number, exc.message)
    return Played(table, events)
