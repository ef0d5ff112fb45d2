"""For rule reviewers: ``check`` explores every reachable configuration of the charts."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from ..diagrams.crossings import Crossings

from .common import check_ruleset, console
from .errors import command_text

commands = typer.Typer()


@commands.command("check")
def check_command(
    ruleset: str | None = typer.Option(
        None, callback=check_ruleset, help="One ruleset (default: every ruleset)."
    ),
    options: str | None = typer.Option(
        None,
        "--options",
        help="One option set of --ruleset, as JSON (e.g. '{\"ding_dong_max\": 1}'); "
        "the others keep the ruleset's values.",
    ),
    bounded: bool = typer.Option(
        False,
        "--bounded",
        help="CI's form: nmjl and house with one interleaving of the seats' choices, Four "
        "Winds with at most 2 Ding Dongs.",
    ),
    failures: str = typer.Option(
        ".", "--failures", help="Directory for a failure's command list (replay --commands)."
    ),
    as_json: str | None = typer.Option(
        None, "--json", help="Also write the figures per option set to this JSON file."
    ),
    jobs: int = typer.Option(
        0, "--jobs", min=0, help="Processes exploring option sets at once (0: one per core)."
    ),
    unreduced: bool = typer.Option(
        False,
        "--unreduced",
        help="Count every received tile where placing is free (no reduction: slower; "
        "the reduction's own check).",
    ),
    fail_fast: bool = typer.Option(
        False,
        "--fail-fast",
        help="The same verdict, soonest (what a mutation run judges each mutant by, "
        "scripts/mutation.sh): in one process, every option set first to a few commands "
        "from the deal, then each in full, the fastest first; stop at the first failure.",
    ),
    coverage: bool = typer.Option(
        False,
        "--coverage",
        help="Also list every guard seen true and false and every rule id exercised by "
        "an accepted and by a refused command.",
    ),
) -> None:
    """Explore every configuration a game can reach, through the real engine, and check
    in each: someone can act (or the game is over) and allowed_commands is exact; no
    cycle but change and withdrawal; 152 tiles, jokers never moved; no seat sees a tile
    it does not hold; the rule book's invariants. Exit 1 on a failure, with the shortest
    command list to it written for replay --commands, or when a chart transition the
    explored options let fire was never crossed."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from ..diagrams.crossings import Crossings
    from ..exploration.runs import counterexample, run_check, run_until_failure
    from ..exploration.traces import in_words, pytest_file

    chosen = None
    if options is not None:
        if ruleset is None:
            raise typer.BadParameter("--options needs --ruleset.", param_hint="--options")
        try:
            chosen = json.loads(options)
        except json.JSONDecodeError as exc:
            raise typer.BadParameter(f"not JSON ({exc.msg}).", param_hint="--options") from None
        if not isinstance(chosen, dict):
            raise typer.BadParameter("a JSON object of options.", param_hint="--options")
    out = Path(failures)
    if not out.is_dir():
        raise typer.BadParameter(f"{failures!r} is not a directory.", param_hint="--failures")
    if fail_fast and coverage:
        raise typer.BadParameter("--coverage needs every option set explored in full.")
    workers = 1 if fail_fast else jobs or os.cpu_count() or 1
    rows: list[dict] = []
    written: list[Path] = []
    crossed: dict[str, Crossings] = {}
    started = time.perf_counter()
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console,
        transient=True,
    )
    with progress:
        task = progress.add_task("exploring", total=None)

        def on_start(option_set, index: int, total: int) -> None:  # type: ignore[no-untyped-def]
            if workers > 1:  # the bar counts option sets explored
                progress.update(task, description="option sets", completed=index + 1, total=total)
            else:
                progress.update(task, description=f"{index + 1}/{total} {option_set.name}")

        def on_state(done: int, known: int) -> None:
            if done % 50 == 0 or done == known:
                progress.update(task, completed=done, total=known)

        runs = (
            run_until_failure(
                ruleset,
                options=chosen,
                bounded=bounded,
                reduce=not unreduced,
                on_start=on_start,
                on_state=on_state,
            )
            if fail_fast
            else run_check(
                ruleset,
                options=chosen,
                bounded=bounded,
                jobs=workers,
                reduce=not unreduced,
                coverage=coverage,
                on_start=on_start,
                on_state=on_state,
            )
        )
        for checked in runs:
            result = checked.exploration
            row = {
                "ruleset": checked.option_set.ruleset,
                "option_set": checked.option_set.label,
                "options": result.options,
                "covers": checked.option_set.covers,
                "interleavings": "one (seat order)" if checked.ordered else "all",
                "states": result.states,
                "transitions": result.transitions,
                "final_states": result.final_states,
                "longest_without_change": result.longest_without_change,
                "seconds": round(result.seconds, 1),
                "held": result.held,
                "failed": sorted({f.property for f in result.failures}),
                "reductions": result.reductions,
                **({"coverage": checked.coverage} if checked.coverage is not None else {}),
            }
            rows.append(row)
            # keyed by the option set's typed name, not the row's (a row's values are mixed)
            name = checked.option_set.ruleset
            crossed.setdefault(name, Crossings(name)).add(result.crossings, result.options)
            line = _line(row)
            if not result.complete:  # a fail-fast run stopped at its failure
                line += (
                    "; stopped at the first failure, every configuration within "
                    f"{result.complete_to_depth} command(s) of the deal checked"
                )
            progress.console.print(line, highlight=False, markup=False)
            for failure in result.failures:
                number = f"{checked.option_set.ruleset}-{len(written) + 1}"
                path = out / f"check-{number}.json"
                data = counterexample(checked, failure)
                path.write_text(json.dumps(data, indent=1) + "\n")
                test = out / f"test_check_{number.replace('-', '_')}.py"
                test.write_text(pytest_file(data, f"check {number} {failure.property}"))
                written.append(path)
                _print_failure(failure, path, in_words(data), test)
    _print_totals(rows, time.perf_counter() - started)
    _print_reductions(rows)
    if coverage:
        from ..exploration.coverage import print_coverage

        print_coverage(rows, console)
    # a fail-fast run that failed stopped early: its crossings are not the whole check's
    uncrossed = 0 if fail_fast and written else _print_uncrossed(crossed)
    if as_json:
        Path(as_json).write_text(json.dumps(rows, indent=1) + "\n")
    raise typer.Exit(1 if written or uncrossed else 0)


def _line(row: dict) -> str:
    verdict = "FAILED " + ", ".join(row["failed"]) if row["failed"] else "all held"
    longest = row["longest_without_change"]
    return (
        f"{row['ruleset']} {row['option_set']}".strip()
        + f": {row['states']} states, {row['transitions']} transitions, "
        f"{row['seconds']} s; {verdict} ({', '.join(row['held'])})"
        + (f"; longest game without change or withdrawal: {longest} commands" if longest else "")
    )


def _print_failure(failure, path: Path, steps: str, test: Path) -> None:  # type: ignore[no-untyped-def]
    """The failure, its shortest trace as numbered steps in words, and where its command
    list and its regression test were written."""
    console.print(
        f"  [red]{failure.property}[/] ({', '.join(failure.rules)}): {failure.message}",
        highlight=False,
    )
    console.print(
        f"  at {', '.join(failure.configuration)} after {len(failure.commands)} command(s):",
        highlight=False,
        markup=False,
    )
    for line in steps.splitlines():
        console.print(f"  {line}", highlight=False, markup=False, soft_wrap=True)
    if failure.loop is not None:
        console.print(
            f"  then round this loop forever ({len(failure.loop)} command(s), back to "
            f"{', '.join(failure.configuration)}):",
            highlight=False,
            markup=False,
        )
        for command in failure.loop:
            console.print(f"    {json.dumps(command)}", highlight=False, markup=False)
    console.print(
        f"  play it: {command_text(f'replay --commands {path}')}", highlight=False, markup=False
    )
    console.print(
        f"  regression test (fails on the defect, passes once fixed): {test}",
        highlight=False,
        markup=False,
    )


def _print_totals(rows: list[dict], seconds: float) -> None:
    by_ruleset: dict[str, list[dict]] = {}
    for row in rows:
        by_ruleset.setdefault(row["ruleset"], []).append(row)
    for name, group in by_ruleset.items():
        failed = sorted({p for r in group for p in r["failed"]})
        console.print(
            f"{name}: {len(group)} option set(s) covering {sum(r['covers'] for r in group)}, "
            f"{sum(r['states'] for r in group)} states, "
            f"{sum(r['transitions'] for r in group)} transitions, "
            f"{round(sum(r['seconds'] for r in group), 1)} s: "
            + ("[red]FAILED " + ", ".join(failed) if failed else "[green]every property held"),
            highlight=False,
        )
    console.print(f"total {seconds:.1f} s", highlight=False)


def _print_reductions(rows: list[dict]) -> None:
    """What each ruleset's verdicts rest on: the reductions applied, and the fairness
    assumption liveness is checked under."""
    from ..exploration.fairness import ASSUMPTION

    by_ruleset: dict[str, set[str]] = {}
    for row in rows:
        by_ruleset.setdefault(row["ruleset"], set()).update(row["reductions"])
    for name, found in by_ruleset.items():
        if name == "four_winds":
            found.add("one option set per flow class (exploration/option_sets.py)")
        console.print(
            f"{name}: reductions applied: {'; '.join(sorted(found))}; no symmetry reduction",
            highlight=False,
            markup=False,
        )
    console.print(f"terminating and finishing checked under {ASSUMPTION}", highlight=False)


def _print_uncrossed(crossed: dict[str, Crossings]) -> int:
    """Report, as a finding, each chart transition that some explored option set lets
    fire but that no explored command crossed (a branch nothing reaches, or one the
    exploration does not try); those the options rule out are listed, not counted.
    Returns the number of findings."""
    from ..engine.ruleset import get_ruleset
    from ..exploration.analysis import chart_transitions

    findings = 0
    for name, found in crossed.items():
        missed = found.uncrossed()
        findings += len(missed)
        for move in missed:
            console.print(
                f"[red]uncrossed[/]: {name}: {move.source} -> {move.target}"
                + (f" ({move.event})" if move.event else "")
                + " can fire with the explored options, but no explored command crossed it",
                highlight=False,
            )
        taken = {(source, target) for source, target, _ in found.counts}
        untaken = [
            f"{source} -> {target}" + (f" ({events})" if events else "")
            for source, target, events in chart_transitions(get_ruleset(name).chart)
            if (source, target) not in taken
        ]
        if untaken:
            console.print(
                f"{name}: chart transitions no explored command took: {'; '.join(untaken)}",
                highlight=False,
                markup=False,
            )
        else:
            console.print(
                f"{name}: every chart transition was taken by some explored command",
                highlight=False,
                markup=False,
            )
    return findings
