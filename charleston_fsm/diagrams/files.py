"""Rendering in each format, live games, files on disk, the README's chart, the CLI command."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from statemachine.contrib.diagram import GraphvizError, GraphvizNotFoundError
from statemachine.contrib.diagram.graphviz import run_graphviz

from ..engine.rulesets import RULESETS

if TYPE_CHECKING:
    from ..engine.table import Table
from .dot import to_dot
from .mermaid import to_mermaid
from .model import (
    ChartView,
    chart_view,
)

FORMATS: dict[str, str] = {"dot": "dot", "mermaid": "mmd", "svg": "svg"}
"""Output format -> file suffix."""

Format = Literal["dot", "mermaid", "svg"]

INSTALL_GRAPHVIZ = (
    "Graphviz's `dot` is needed for SVG: install it with `apt-get install graphviz` "
    "(Debian/Ubuntu) or `brew install graphviz` (macOS)."
)


# -- rendering and files -----------------------------------------------------------------
def graphviz_available() -> bool:
    return shutil.which("dot") is not None


def to_svg(view: ChartView) -> str:
    """The chart as SVG, laid out by Graphviz (raises GraphvizNotFoundError without it)."""
    try:
        return run_graphviz(to_dot(view), "svg").decode("utf-8")
    except GraphvizNotFoundError as exc:
        raise GraphvizNotFoundError(INSTALL_GRAPHVIZ) from exc


def render_view(view: ChartView, fmt: Format) -> str:
    if fmt == "dot":
        return to_dot(view)
    if fmt == "mermaid":
        return to_mermaid(view)
    if fmt == "svg":
        return to_svg(view)
    raise ValueError(f"Unknown diagram format {fmt!r}; choose one of: {', '.join(FORMATS)}.")


def render(ruleset: str, fmt: Format) -> str:
    """The diagram of a ruleset's chart under its own options."""
    return render_view(chart_view(ruleset), fmt)


def live(table: Table, fmt: Format = "svg", *, title: str | None = None) -> str:
    """The diagram of one live game: its ruleset's chart with the active states filled.

    Uses the game's own options (which may override the ruleset's defaults). During the
    Courtesy Pass both active leaves are filled, and their regions and the parallel state
    are outlined.
    """
    active = list(table.configuration)
    leaves = [sid for sid in active if not table.chart.states_map[sid].states]
    heading = title or f"Live game, ruleset {table.ruleset.name}: now at {', '.join(leaves)}"
    view = chart_view(table.ruleset, table.options, active=active, title=heading)
    return render_view(view, fmt)


def path_for(out_dir: Path, ruleset: str, fmt: Format) -> Path:
    return out_dir / f"{ruleset}.{FORMATS[fmt]}"


@dataclass
class Written:
    paths: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def write_all(
    out_dir: Path,
    rulesets: Sequence[str] | None = None,
    formats: Sequence[Format] = ("dot", "mermaid", "svg"),
) -> Written:
    """Write every ruleset's diagram in each format (no SVG, with a reason, without Graphviz)."""
    result = Written()
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in rulesets or sorted(RULESETS):
        view = chart_view(name)
        for fmt in formats:
            try:
                text = render_view(view, fmt)
            except GraphvizNotFoundError:
                if INSTALL_GRAPHVIZ not in result.problems:
                    result.problems.append(INSTALL_GRAPHVIZ)
                continue
            except GraphvizError as exc:
                result.problems.append(f"{name}.{FORMATS[fmt]}: Graphviz failed: {exc}")
                continue
            path = path_for(out_dir, name, fmt)
            path.write_text(text, encoding="utf-8")
            result.paths.append(path)
    return result


def default_out_dir() -> Path:
    """``diagrams/`` at the repository root in a source checkout, else in the working directory."""
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file():
        return root / "diagrams"
    return Path("diagrams")


def run_command(
    *,
    ruleset: str | None,
    fmt: str,
    out: Path | None,
    echo: Callable[[str], None],
    game: tuple[str, Table] | None = None,
    crossings: bool = False,
) -> int:
    """The body of ``charleston-fsm diagram``; returns the exit code.

    ``game`` is ``(game id, table)`` for a stored game (the CLI loads it from the store).
    ``out`` is a directory, or a file name when one ruleset in one format is asked for.
    ``crossings``: run the bounded exploration and draw on each arrow how many explored
    commands crossed it (:mod:`.crossings`), into ``RULESET-crossings.*`` (default out:
    the working directory, so the committed diagrams stay as the generator draws them);
    a transition that can fire but was never crossed is reported and exits 1.
    """
    formats: list[Format]
    if fmt == "all":
        formats = ["dot", "mermaid", "svg"]
    elif fmt in FORMATS:
        formats = [fmt]  # type: ignore[list-item]
    else:
        echo(f"Unknown format {fmt!r}; choose one of: svg, dot, mermaid, all.")
        return 2
    if ruleset is not None and ruleset not in RULESETS:
        echo(f"There is no ruleset {ruleset!r}; choose one of: {', '.join(RULESETS)}.")
        return 2
    if game is not None:
        game_id, table = game
        title = f"Game {game_id}, ruleset {table.ruleset.name}"
        where = out or Path(".")
        return _write(
            lambda f: live(table, f, title=title), f"game-{game_id}", formats, where, echo
        )
    if crossings:
        return _with_crossings([ruleset] if ruleset else sorted(RULESETS), formats, out, echo)
    if ruleset is not None:
        return _write(lambda f: render(ruleset, f), ruleset, formats, out, echo)
    result = write_all(out or default_out_dir(), None, formats)
    for path in result.paths:
        echo(f"wrote {path}")
    if (
        out is None
        and "mermaid" in formats
        and update_chart_page(default_out_dir().parent / CHART_PAGE)
    ):
        echo(f"updated the nmjl chart in {CHART_PAGE}")
    for problem in result.problems:
        echo(problem)
    if result.problems and len(formats) > 1:
        echo("DOT and Mermaid were written all the same.")
    return 1 if result.problems and formats == ["svg"] else 0


def _with_crossings(
    names: Sequence[str], formats: Sequence[Format], out: Path | None, echo: Callable[[str], None]
) -> int:
    from .crossings import explored_crossings, with_crossings

    code = 0
    for name in names:
        echo(f"exploring {name} (bounded) to count crossings ...")
        found = explored_crossings(name, jobs=os.cpu_count() or 1)
        view = with_crossings(chart_view(name), found.counts)
        stem = f"{name}-crossings"
        written = _write(
            lambda f, view=view: render_view(view, f), stem, formats, out or Path("."), echo
        )
        code = max(code, written)
        for move in found.uncrossed():
            event = f" ({move.event})" if move.event else ""
            echo(
                f"uncrossed: {name}: {move.source} -> {move.target}{event} can fire, "
                "no explored command crossed it"
            )
            code = 1
        if found.failed:
            echo(
                f"{name}: the exploration found failures "
                f"({', '.join(sorted(found.failed))}): run check"
            )
            code = 1
    return code


def _write(
    draw: Callable[[Format], str],
    stem: str,
    formats: Sequence[Format],
    out: Path | None,
    echo: Callable[[str], None],
) -> int:
    single_file = out is not None and out.suffix != "" and len(formats) == 1
    code = 0
    for fmt in formats:
        path = out if single_file else (out or default_out_dir()) / f"{stem}.{FORMATS[fmt]}"
        assert path is not None
        try:
            text = draw(fmt)
        except GraphvizNotFoundError:
            echo(INSTALL_GRAPHVIZ)
            code = 1 if len(formats) == 1 else code
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        echo(f"wrote {path}")
    return code


#: the rule reviewers' page, which shows the nmjl chart inline (GitHub draws Mermaid)
CHART_PAGE = "docs/diagrams.md"
CHART_PAGE_SECTION = "## State diagrams"


def update_chart_page(readme: Path, ruleset: str = "nmjl") -> bool:
    """Refresh the ```mermaid block of the page's "State diagrams" section; True if changed."""
    if not readme.is_file():
        return False
    text = readme.read_text(encoding="utf-8")
    section = text.find(CHART_PAGE_SECTION)
    start = text.find("```mermaid\n", section)
    if section < 0 or start < 0:
        return False
    start += len("```mermaid\n")
    end = text.index("\n```", start) + 1
    new = text[:start] + render(ruleset, "mermaid") + text[end:]
    if new == text:
        return False
    readme.write_text(new, encoding="utf-8")
    return True
