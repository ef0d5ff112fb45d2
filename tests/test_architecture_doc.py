"""docs/architecture.md lists every part: each module of the package has its line under
"Every module", and no line there names a module that is not in the package.

A map that leaves out a module sends a newcomer reading the code to find it; one that
names a module long gone sends them looking for nothing. Both are caught here, so a new
module comes with its line and a removed one takes its line with it.
"""

from __future__ import annotations

import re
from pathlib import Path

import charleston_fsm

PACKAGE = Path(charleston_fsm.__file__).parent
DOC = PACKAGE.parent / "docs" / "architecture.md"
#: a row of the module tables: | `engine/table.py` | what it holds |
ROW = re.compile(r"^\| `([\w/]+\.py)` \| (.*) \|$", re.M)


def package_modules(package: Path) -> set[str]:
    """Every module of ``package`` by its path inside it (``engine/table.py``)."""
    return {path.relative_to(package).as_posix() for path in package.rglob("*.py")}


def listed_modules(doc: str) -> dict[str, str]:
    """The modules the "Every module" section lists, each with its line."""
    section = doc.split("\n## Every module\n", 1)[1].split("\n## ", 1)[0]
    return dict(ROW.findall(section))


def differences(package: Path, doc: str) -> tuple[list[str], list[str]]:
    """(modules without a line, lines naming no module), sorted."""
    have, listed = package_modules(package), listed_modules(doc)
    return sorted(have - set(listed)), sorted(set(listed) - have)


def test_every_module_has_its_line_and_every_line_its_module() -> None:
    listed = listed_modules(DOC.read_text(encoding="utf-8"))
    assert "engine/table.py" in listed and "store/games/writes.py" in listed  # the section was read
    missing, gone = differences(PACKAGE, DOC.read_text(encoding="utf-8"))
    assert missing == [], f"add a line to docs/architecture.md for: {missing}"
    assert gone == [], f"docs/architecture.md lists modules that are gone: {gone}"
    assert [m for m, line in listed.items() if not line.strip()] == []


def test_a_missing_and_a_stale_line_are_both_found(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    for name in ("__init__.py", "sub/__init__.py", "sub/kept.py", "sub/new.py"):
        (package / name).write_text('"""A module."""\n', encoding="utf-8")
    doc = (
        "# Map\n\n## Every module\n\n| module | what it holds |\n|---|---|\n"
        "| `__init__.py` | The package. |\n| `sub/__init__.py` | A part. |\n"
        "| `sub/kept.py` | Kept. |\n| `sub/old.py` | Gone since. |\n\n"
        "## Next\n\n| `sub/new.py` | listed outside the section: not a line of it |\n"
    )
    assert differences(package, doc) == (["sub/new.py"], ["sub/old.py"])
