"""For rule reviewers: ``diagram`` (the charts drawn) and ``rules`` (the rule book)."""

from __future__ import annotations

import typer

from .common import (
    _open_store,
    check_database_url,
    check_ruleset,
    console,
)

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
) -> None:
    """Draw the rulesets' statecharts (or one stored game's) from the chart classes."""
    from pathlib import Path

    from ..diagrams import run_command

    loaded = None
    if game is not None:
        from ..store import GameNotFound

        try:
            loaded = (game, _open_store(database_url, migrate_empty=False).table(game))
        except GameNotFound as exc:
            console.print(f"[red]{exc}", highlight=False)
            raise typer.Exit(1) from None
    code = run_command(
        ruleset=ruleset,
        fmt=fmt,
        out=Path(out) if out else None,
        game=loaded,
        echo=lambda line: console.print(line, highlight=False, markup=False),
    )
    raise typer.Exit(code)


@commands.command("rules")
def rules_command(
    markdown: bool = typer.Option(
        False, "--markdown", help="The whole rule book as Markdown (docs/rules.md)."
    ),
    ruleset: str | None = typer.Option(None, help="Only the rules of one ruleset."),
    rule: list[str] = typer.Option([], "--rule", help="Only these rule ids (repeatable)."),
) -> None:
    """The rule book's matrix: each rule, where the code enforces it, which tests prove it."""
    from ..rulebook import RULES, RULESET_NAMES
    from ..store import errors as _store_errors  # noqa: F401  (their refusals name rules too)
    from ..traceability.render import to_markdown, to_rich
    from ..traceability.trace import default_tests_dir, matrix

    unknown = [r for r in rule if r not in RULES]
    if unknown or (ruleset is not None and ruleset not in RULESET_NAMES):
        what = f"rule {', '.join(unknown)}" if unknown else f"ruleset {ruleset!r}"
        console.print(f"There is no {what} in the rule book.", highlight=False, markup=False)
        raise typer.Exit(2)
    chosen = [
        r
        for r in RULES.values()
        if (ruleset is None or ruleset in r.rulesets) and (not rule or r.id in rule)
    ]
    rows = matrix(default_tests_dir(), chosen)
    if markdown:
        typer.echo(to_markdown(rows), nl=False)
        return
    console.print(to_rich(rows))
