"""A check run: the option sets to explore, how each is explored, and a failure's replay.

The bounded form (CI) and the full form differ in three ways only. The full form
explores every interleaving of the seats' choices and every Four Winds flow class; the
bounded form explores ``nmjl`` and ``house`` with one interleaving (seats choose in turn
order, :func:`.abstraction.moves`, every step, branch and resolution still reached), the
Four Winds classes with at most 2 Ding Dongs (:mod:`.option_sets`), and, where received
tiles may be passed unplaced, only the two extreme splits between rack and received
tiles (:func:`.abstraction.canonical_tiles`). Both apply :mod:`.reduction` unless asked
not to (``reduce``).

``check --fail-fast`` (:func:`run_until_failure`) gives the same verdict soonest, for
a mutation run (``scripts/mutation.sh``, docs/mutation.md): every option set first to a
few commands from the deal, then each in full, the fastest first, stopped at the first
failure.

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
from .coverage import covered
from .explored import Exploration, Failure
from .graph import explore
from .option_sets import OptionSet, option_sets


@dataclass
class Checked:
    """One option set and what its exploration found."""

    option_set: OptionSet
    exploration: Exploration
    ordered: bool
    #: what it exercised (:meth:`.coverage.Coverage.to_json`), when asked for
    coverage: dict[str, Any] | None = None


def run_check(
    ruleset: str | None = None,
    *,
    options: dict[str, Any] | None = None,
    bounded: bool = False,
    jobs: int = 1,
    reduce: bool = True,
    coverage: bool = False,
    on_start: Callable[[OptionSet, int, int], None] | None = None,
    on_state: Callable[[int, int], None] | None = None,
) -> Iterator[Checked]:
    """Explore each option set of ``ruleset`` (default: every ruleset), or only
    ``options`` (of ``ruleset``).

    With ``jobs`` above 1 the option sets are explored in that many processes, largest
    first, and each result comes back without its graph (:meth:`Exploration.slim`), in
    the order they finish; ``on_state`` is then not called. ``reduce``: the reduction
    of :mod:`.reduction`; ``coverage``: record guards and rule ids (:mod:`.coverage`).
    """
    chosen = _chosen(ruleset, options, bounded)
    if jobs > 1 and len(chosen) > 1:
        yield from _in_processes(chosen, bounded, jobs, on_start, reduce, coverage)
        return
    for index, option_set in enumerate(chosen):
        if on_start is not None:
            on_start(option_set, index, len(chosen))
        yield _explored(option_set, bounded, on_state, reduce=reduce, coverage=coverage)


#: a fail-fast run's first pass: every option set to this many commands from the deal
#: (measured, docs/mutation.md: most defects show within a few commands of the deal, in
#: some option set, and this pass over all of them takes seconds)
SHALLOW_DEPTH = 6


def run_until_failure(
    ruleset: str | None = None,
    *,
    options: dict[str, Any] | None = None,
    bounded: bool = False,
    reduce: bool = True,
    on_start: Callable[[OptionSet, int, int], None] | None = None,
    on_state: Callable[[int, int], None] | None = None,
) -> Iterator[Checked]:
    """:func:`run_check`'s verdict, soonest (``check --fail-fast``, what a mutant is
    judged by): the same option sets and properties, in this process, up to the first
    failure.

    A first pass explores each option set to :data:`SHALLOW_DEPTH` commands from the
    deal; a second explores each in full, the fastest first (:attr:`OptionSet.weight`).
    Each exploration stops at its first failure, and the run after the first exploration
    that failed. The verdict is :func:`run_check`'s: the configurations within a depth
    and the commands taken there are checked as in a full exploration, the properties of
    the whole graph are judged only on a complete one (a cycle, on edges the whole graph
    has too), so a failure of a part is a failure of the whole; and a full exploration
    fails when run_check's does (it stops only once it has a failure). When nothing
    failed, every option set was explored in full, as run_check explores it. The first
    pass's explorations are yielded only when they failed (``exploration.complete`` is
    then false).
    """
    chosen = _chosen(ruleset, options, bounded)
    for option_set in chosen:
        checked = _explored(option_set, bounded, reduce=reduce, max_depth=SHALLOW_DEPTH)
        if checked.exploration.failures:
            yield checked
            return
    fastest = sorted(chosen, key=lambda o: o.weight)
    for index, option_set in enumerate(fastest):
        if on_start is not None:
            on_start(option_set, index, len(fastest))
        checked = _explored(option_set, bounded, on_state, reduce=reduce, stop_at_failure=True)
        yield checked
        if checked.exploration.failures:
            return


def _chosen(ruleset: str | None, options: dict[str, Any] | None, bounded: bool) -> list[OptionSet]:
    if options is None:
        return option_sets(ruleset, bounded=bounded)
    if ruleset is None:
        raise ValueError("options are a ruleset's: name the ruleset")
    get_ruleset(ruleset).options(options)  # a bad option is refused before anything runs
    label = ", ".join(f"{k} {v}" for k, v in options.items())
    return [OptionSet(ruleset, dict(options), label=f"[{label}]")]


def _explored(
    option_set: OptionSet,
    bounded: bool,
    on_state: Callable[[int, int], None] | None = None,
    *,
    slim: bool = False,
    reduce: bool = True,
    coverage: bool = False,
    max_depth: int | None = None,
    stop_at_failure: bool = False,
) -> Checked:
    ordered = bounded and option_set.ruleset != "four_winds"

    def run() -> Exploration:
        return explore(
            option_set.ruleset,
            option_set.options,
            ordered=ordered,
            extreme_splits=bounded,
            on_state=on_state,
            reduce=reduce,
            max_depth=max_depth,
            stop_at_failure=stop_at_failure or max_depth is not None,
        )

    exercised = None
    if coverage:
        result, found = covered(option_set.ruleset, run)
        exercised = found.to_json()
    else:
        result = run()
    for message in option_set.misread:  # the class it stands for, held to the book
        result.failures.append(Failure("rule_flow", ("FW-07",), message, [], []))
    return Checked(option_set, result.slim() if slim else result, ordered, exercised)


def _in_processes(
    chosen: list[OptionSet],
    bounded: bool,
    jobs: int,
    on_start: Callable[[OptionSet, int, int], None] | None,
    reduce: bool = True,
    coverage: bool = False,
) -> Iterator[Checked]:
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # the largest explorations first: the run then takes about as long as the largest one
    # or the others shared out, not the largest started last
    order = sorted(chosen, key=lambda o: -o.weight)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [
            pool.submit(_explored, o, bounded, slim=True, reduce=reduce, coverage=coverage)
            for o in order
        ]
        for done, future in enumerate(as_completed(futures)):
            checked = future.result()
            if on_start is not None:
                on_start(checked.option_set, done, len(chosen))
            yield checked


def counterexample(checked: Checked, failure: Failure) -> dict[str, Any]:
    """A failure as a file ``replay --commands`` plays: the deal, the options, the
    commands, and what went wrong at their end. ``overrides`` are the options the
    exploration was given (the rest are the ruleset's): the rule properties' expectations
    are the rule book's values with these (:class:`.rule_book.Book`), not the engine's."""
    return {
        "ruleset": checked.option_set.ruleset,
        "options": checked.exploration.options,
        "overrides": dict(checked.option_set.options),
        "deal": canonical_deal().to_dict(),
        "commands": failure.commands,
        **({"loop": failure.loop} if failure.loop is not None else {}),
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
