"""For rule reviewers: ``diagram`` (the charts drawn) and ``rules`` (the rule book)."""

from __future__ import annotations

import typer

from .common import (
    _open_store,
    check_database_url,
    check_ruleset,
    console,
)
from .errors import command_text

commands = typer.Typer()


@commands.command("diagram")
def diagram_command(
    ruleset: str | None = typer.Option(
        None, callback=check_ruleset, help="One ruleset (default: every ruleset)."
    ),
    fmt: str = typer.Option("all", "--format", help="svg, dot, mermaid or all."),
    out: str | None = typer.Option(
        None, help="Directory (default: diagrams/ at the repository root), or a file name."
    ),
    game: str | None = typer.Option(
        None, help="A stored game's id: its chart with the active states filled (default out: .)."
    ),
    database_url: str | None = typer.Option(
        None,
        "--database-url",
        envvar="CHARLESTON_DATABASE_URL",
        callback=check_database_url,
        help="The store, with --game.",
    ),
    crossings: bool = typer.Option(
        False,
        "--crossings",
        help="Run the bounded exploration (check --bounded) and write RULESET-crossings.* "
        "with how many explored commands crossed each transition (default out: .); exit 1 "
        "if one that can fire was never crossed.",
    ),
) -> None:
    """Draw the rulesets' statecharts (or one stored game's) from the chart classes."""
    from pathlib import Path

    from ..diagrams import run_command

    loaded = None
    if game is not None and crossings:
        raise typer.BadParameter("a game's chart has no crossings.", param_hint="--crossings")
    if game is not None:
        from ..store import GameNotFound

        try:
            loaded = (game, _open_store(database_url, migrate_empty=False).reads.table(game))
        except GameNotFound as exc:
            console.print(f"[red]{exc}", highlight=False)
            raise typer.Exit(1) from None
    code = run_command(
        ruleset=ruleset,
        fmt=fmt,
        out=Path(out) if out else None,
        game=loaded,
        crossings=crossings,
        echo=lambda line: console.print(line, highlight=False, markup=False),
    )
    raise typer.Exit(code)


def import_every_refusal() -> None:
    """Import every module of the engine, the ledger and the store, so that every refusal class (and
    the rules it names) is known to the rule book's matrix: without this, which refusals
    it lists would depend on what the process happened to import before."""
    import importlib
    import pkgutil

    from .. import engine, ledger, store

    for package in (engine, ledger, store):
        for found in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            importlib.import_module(found.name)


@commands.command("rules")
def rules_command(
    markdown: bool = typer.Option(
        False, "--markdown", help="The whole rule book as Markdown (docs/rules.md)."
    ),
    ruleset: str | None = typer.Option(None, help="Only the rules of one ruleset."),
    rule: list[str] = typer.Option(
        [],
        "--rule",
        help="One rule in full: statement, sources, decision, where the code enforces it, "
        "the tests that prove it (repeatable).",
    ),
) -> None:
    """The rule book: every rule by ruleset, one line each; --rule ID shows one in full."""
    from ..rulebook import CHAPTERS, RULES, RULESET_NAMES, rules_of
    from ..traceability.render import rule_lines, to_markdown
    from ..traceability.trace import default_tests_dir, matrix

    import_every_refusal()
    unknown = [r for r in rule if r not in RULES]
    if unknown or (ruleset is not None and ruleset not in RULESET_NAMES):
        what = f"rule {', '.join(unknown)}" if unknown else f"ruleset {ruleset!r}"
        listed = f"the ids that '{command_text('rules')}' lists"
        accepted = listed if unknown else ", ".join(RULESET_NAMES)
        console.print(
            f"There is no {what} in the rule book. Accepted: {accepted}.",
            highlight=False,
            markup=False,
        )
        raise typer.Exit(2)
    chosen = [
        r
        for r in RULES.values()
        if (ruleset is None or ruleset in r.rulesets) and (not rule or r.id in rule)
    ]
    if markdown:
        typer.echo(to_markdown(matrix(default_tests_dir(), chosen)), nl=False)
        return
    if rule:
        for row in matrix(default_tests_dir(), chosen):
            for line in rule_lines(row):
                style = "bold" if line == row.rule.id else ""
                console.print(line, style=style, highlight=False, markup=False)
        return
    ids = {r.id for r in chosen}
    for chapter in CHAPTERS:
        rules = [r for r in rules_of(chapter) if r.id in ids]
        if not rules:
            continue
        console.print(f"\n{chapter.title}", style="bold", highlight=False, markup=False)
        for r in rules:
            status = "" if r.implemented else f" ({r.status}, not played yet)"
            console.print(f"  {r.id:<9} {r.statement}{status}", highlight=False, markup=False)
    console.print(
        f"\n{len(chosen)} rules. One in full (sources, decision, where enforced, tests): "
        f"{command_text('rules --rule ' + chosen[0].id)}",
        style="dim",
        highlight=False,
        markup=False,
    )
