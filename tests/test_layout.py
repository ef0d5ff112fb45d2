"""The package's shape: no import cycle, an engine without I/O, modules that read in one
sitting.

The imports are read from the source (``ast``), not from a running interpreter, so an
import inside a function counts as much as one at the top: it is a dependency all the
same, only a later one. Imports under ``if TYPE_CHECKING:`` count too: they never run,
but a type named there is one the module depends on to be read, and a circle drawn
through them is a circle all the same (the pieces have no order a reader can follow).
import-linter (``.ci/run``) enforces the layers; this finds what it does not look at:
cycles inside one layer, and the sizes.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import charleston_fsm

PACKAGE = Path(charleston_fsm.__file__).parent
MAX_LINES = 500

#: what the engine may not import: it does no I/O (docs/architecture.md)
IO_LIBRARIES = frozenset(
    {"sqlalchemy", "psycopg", "fastapi", "starlette", "uvicorn", "httpx", "typer", "rich"}
)
#: the project's packages the engine may import: its own and the rule book below it
ENGINE_MAY_IMPORT = ("engine", "rulebook")


def modules(package: Path) -> dict[str, Path]:
    """Every module of ``package`` by dotted name (a package by its ``__init__``)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


Import = tuple[str, list[str]]


def imports(name: str, path: Path) -> Iterator[Import]:
    """What module ``name`` imports, wherever in the file (under TYPE_CHECKING too): for
    ``import x.y``, ``("x.y", [])``; for ``from x import a, b``, ``("x", ["x.a", "x.b"])``
    (``a`` may be a module or a name defined in ``x``), relative sources made absolute."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                base = package[: len(package) - node.level + 1]
                source = ".".join([*base, *([source] if source else [])])
            yield source, [f"{source}.{alias.name}" for alias in node.names]


def targets(imported: Import, known: dict[str, Path]) -> set[str]:
    """The package's modules one import depends on: ``from x import a`` on module ``x.a``
    when every name imported is a module, else on ``x`` (and any of its modules named);
    a name inside a module, on that module."""
    source, names = imported
    named = names if names and all(n in known for n in names) else [source, *names]
    found = set()
    for target in named:
        while target not in known and "." in target:
            target = target.rsplit(".", 1)[0]
        if target in known:
            found.add(target)
    return found


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports."""
    known = modules(package)
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        graph[name] = set().union(*(targets(i, known) for i in imports(name, path))) - {name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def chain(graph: dict[str, set[str]], component: list[str]) -> str:
    """One circle of a strongly connected ``component``, the shortest back to its first
    module, as a reader would follow it: ``a -> b -> c -> a``."""
    start, members = component[0], set(component)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier and start not in came_from:
        following = []
        for node in frontier:
            for target in sorted(graph[node] & members):
                if target not in came_from:
                    came_from[target] = node
                    following.append(target)
        frontier = following
    circle, node = [start], came_from[start]
    while node != start:
        circle.append(node)
        node = came_from[node]
    return " -> ".join([start, *reversed(circle[1:]), start])


def circles(package: Path) -> list[str]:
    """Each import cycle of ``package`` as one chain of module names, and its members."""
    graph = import_graph(package)
    return [
        f"{chain(graph, component)} (all of: {', '.join(component)})" for component in cycles(graph)
    ]


# -- the package ------------------------------------------------------------------------------
def test_the_package_has_no_import_cycle() -> None:
    found = circles(PACKAGE)
    assert not found, "import cycles:\n" + "\n".join(found)


def test_the_engine_imports_no_io_library_and_nothing_above_it() -> None:
    known = modules(PACKAGE)
    allowed = tuple(f"charleston_fsm.{sub}" for sub in ENGINE_MAY_IMPORT)
    wrong = []
    for name, path in known.items():
        if not name.startswith("charleston_fsm.engine"):
            continue
        for imported in imports(name, path):
            if imported[0].split(".")[0] in IO_LIBRARIES:
                wrong.append(f"{name} imports {imported[0]}")
            for target in targets(imported, known):
                if not (target in allowed or target.startswith(tuple(f"{a}." for a in allowed))):
                    wrong.append(f"{name} imports {target}")
    assert wrong == []


def test_no_module_is_over_the_size_that_reads_in_one_sitting() -> None:
    long = {
        str(path.relative_to(PACKAGE.parent)): lines
        for path in PACKAGE.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


# -- the pages' JavaScript modules ------------------------------------------------------------
STATIC = PACKAGE / "web" / "static"
JS_IMPORT = re.compile(
    r"""^\s*(?:import|export)\b[^;'"]*?\bfrom\s*["']\./([\w.-]+\.js)["']""", re.M
)


def js_graph(static: Path) -> dict[str, set[str]]:
    """Each page module and the page modules it imports (``import … from "./x.js"``, and
    ``export … from``, a re-export)."""
    return {
        path.name: set(JS_IMPORT.findall(path.read_text(encoding="utf-8")))
        for path in sorted(static.glob("*.js"))
    }


def test_the_pages_modules_import_no_cycle() -> None:
    graph = js_graph(STATIC)
    assert graph["table.js"] >= {"table_state.js", "actions.js", "rack.js"}  # the scan reads
    assert cycles(graph) == []
    for module, targets_ in graph.items():
        assert targets_ <= set(graph), f"{module} imports a file that is not there"
        # the seat's page has one owner: its parts import its state, never the page itself
        assert "table.js" not in targets_, f"{module} imports the page (table.js)"


def test_a_cycle_between_page_modules_is_found(tmp_path: Path) -> None:
    (tmp_path / "a.js").write_text('import { b } from "./b.js";\nexport const a = 1;\n')
    (tmp_path / "b.js").write_text('export { a } from "./a.js";\nexport const b = 2;\n')
    assert cycles(js_graph(tmp_path)) == [["a.js", "b.js"]]


#: a string literal of capitals, as a state id or a piece of one is written ("DECIDE")
JS_CAPITALS = re.compile(r"""["'`]([A-Z][A-Z0-9_]{2,})["'`]""")
JS_COMMENT = re.compile(r"/\*.*?\*/|(?<![:\\])//[^\n]*", re.S)


def state_id_guesses(static: Path, ids: set[str], totals: set[int]) -> list[str]:
    """Where a page module tests for a chart state (an id, or a piece of one: the flow's
    words, ``"DECIDE"``, ``"COURTESY"``, ``"DING"``) or writes a pass total by hand
    ("of 7"): a page reads the view's ``phase``, ``pass_number`` and ``pass_total``."""
    pieces = {piece for i in ids for piece in i.split("_") if len(piece) > 2} | ids
    found = []
    for path in sorted(static.glob("*.js")):
        code = JS_COMMENT.sub("", path.read_text(encoding="utf-8"))
        found += [f"{path.name}: {w!r}" for w in JS_CAPITALS.findall(code) if w in pieces]
        for total in totals:
            found += [f"{path.name}: {m!r}" for m in re.findall(rf"\bof {total}\b", code)]
    return found


def _chart_ids_and_totals() -> tuple[set[str], set[int]]:
    from engine_helpers import new_table

    from charleston_fsm.engine.rulesets import RULESETS
    from charleston_fsm.engine.seats import Seat
    from charleston_fsm.engine.views import seat_view

    ids = {s.id for r in RULESETS.values() for s in r.chart.states_map.values()}
    totals = {seat_view(new_table(name), Seat.EAST)["game"]["pass_total"] for name in RULESETS}
    return ids, totals


def test_the_pages_read_the_phase_and_never_a_state_id() -> None:
    ids, totals = _chart_ids_and_totals()
    assert "CHARLESTON_DECIDE_STOP" in ids and 7 in totals  # the charts were read
    assert state_id_guesses(STATIC, ids, totals) == []


def test_a_guess_at_a_state_is_found(tmp_path: Path) -> None:
    (tmp_path / "a.js").write_text(
        '// "COURTESY" in a comment, and "of 7" too, say nothing\n'
        'const inVote = v.game.state.some((s) => s.includes("DECIDE"));\n'
        "const text = `Pass ${n} of 7`;\n"
    )
    found = state_id_guesses(tmp_path, {"SECOND_DECIDE", "COURTESY"}, {7})
    assert found == ["a.js: 'DECIDE'", "a.js: 'of 7'"]


# -- the scan itself can fail ----------------------------------------------------------------
def _package(root: Path, files: dict[str, str]) -> Path:
    package = root / "pkg"
    for relative, source in files.items():
        path = package / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
    return package


def test_a_cycle_through_an_import_inside_a_function_is_found(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "__init__.py": "",
            "low.py": "def late():\n    from .high import thing\n    return thing\n",
            "high.py": "from pkg import low\nthing = low\n",
            "side.py": "from . import low\n",
        },
    )
    assert cycles(import_graph(package)) == [["pkg.high", "pkg.low"]]


def test_a_cycle_across_subpackages_is_found(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a/__init__.py": "from .x import X\n",
            "a/x.py": "import pkg.b.y\nX = 1\n",
            "b/__init__.py": "",
            "b/y.py": "from ..a import X\n",
        },
    )
    assert cycles(import_graph(package)) == [["pkg.a", "pkg.a.x", "pkg.b.y"]]


def test_an_import_for_type_checking_only_is_a_cycle_too(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "__init__.py": "",
            "low.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .high import Thing\n"
            ),
            "high.py": "from .low import TYPE_CHECKING\nclass Thing: ...\n",
        },
    )
    assert circles(package) == ["pkg.high -> pkg.low -> pkg.high (all of: pkg.high, pkg.low)"]


def test_a_cycle_is_told_as_a_chain_of_modules(tmp_path: Path) -> None:
    package = _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "from . import b\n",
            "b.py": "from . import c\n",
            "c.py": "def late():\n    from .a import x\n",
            "d.py": "from . import a\n",
        },
    )
    assert circles(package) == ["pkg.a -> pkg.b -> pkg.c -> pkg.a (all of: pkg.a, pkg.b, pkg.c)"]


@pytest.mark.parametrize("source", ["import sqlalchemy\n", "def f():\n    import rich.table\n"])
def test_an_io_import_in_an_engine_module_would_be_seen(source: str, tmp_path: Path) -> None:
    package = _package(
        tmp_path, {"__init__.py": "", "engine/__init__.py": "", "engine/x.py": source}
    )
    found = imports("pkg.engine.x", package / "engine" / "x.py")
    assert any(source.split(".")[0] in IO_LIBRARIES for source, _names in found)


def test_the_command_line_starts_without_the_store() -> None:
    """Importing the CLI (every command, every serve worker, before its first line) loads
    neither the store nor SQLAlchemy: a store imported there cost 5 s a start on 2 cores.
    The serve options' defaults it names instead are the store's own."""
    import subprocess
    import sys

    from charleston_fsm.cli import serve
    from charleston_fsm.store.database import connection_budget

    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, charleston_fsm.cli; "
            "print(sorted(m for m in ('sqlalchemy', 'charleston_fsm.store', 'alembic') "
            "if m in sys.modules))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert loaded.stdout.strip() == "[]", loaded.stdout
    assert serve.ROUTE_THREADS_ENV == connection_budget.ROUTE_THREADS_ENV
    assert serve.DEFAULT_ROUTE_THREADS == connection_budget.DEFAULT_ROUTE_THREADS


def test_record_verify_imports_no_database_library(tmp_path: Path) -> None:
    """A person holding only a record file verifies it without a database: the command
    runs (here on a file that is no record: exit 1 with findings) and neither the store
    nor a database library was imported on the way."""
    import subprocess
    import sys

    record = tmp_path / "not-a-record.jsonl"
    record.write_text('{"format": "nothing"}\n', encoding="utf-8")
    script = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from charleston_fsm.cli import app\n"
        f"result = CliRunner().invoke(app, ['record', 'verify', {str(record)!r}])\n"
        "print(result.exit_code)\n"
        "print(sorted(m for m in ('sqlalchemy', 'psycopg', 'alembic', 'charleston_fsm.store')"
        " if m in sys.modules))\n"
    )
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    exit_code, loaded = ran.stdout.strip().splitlines()[-2:]
    assert exit_code == "1", ran.stdout
    assert loaded == "[]", ran.stdout
