"""The checker's teeth in CI: a fixed sample of the mutation run's mutants, each killed.

``scripts/mutation.sh`` mutates every rule module of the engine and judges each mutant
by the bounded check (docs/mutation.md: the score, and every survivor explained); it
takes hours on 2 cores. This is its sample: a few of its mutants, one per rule
module, each a change to a rule the bounded check is known to catch, made by the same
cosmic-ray operator at the same line on a copy of the package, and judged the same way
(``charleston-fsm check --bounded --fail-fast`` exits 1, naming the rule). A property
lost, weakened, or no longer run makes its mutant survive, and this test fail.

Each mutant is found by its module, operator and the text of its line (not by
cosmic-ray's occurrence number, which any edit above it shifts), and dies within the
first commands of a game: the whole sample runs in well under a minute on 2 cores.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from api_helpers import cli

from charleston_fsm.engine.charts.standard import STANDARD_STEPS
from charleston_fsm.engine.seats import Direction
from charleston_fsm.engine.steps import standard
from charleston_fsm.exploration.runs import run_until_failure

ROOT = Path(__file__).resolve().parent.parent


def _mutation_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation", ROOT / "scripts" / "mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


mutation = _mutation_script()

#: (module under engine/, operator, the line's text before, after, what the check's
#: failure names: its rule id, or its property where it has none)
SAMPLE: list[tuple[str, str, str, str, str]] = [
    # placing demanded of a seat that received nothing: no first pass can be confirmed
    (
        "checks.py",
        "core/ReplaceAndWithOr",
        "if self.options.require_placing and self.received[seat]:",
        "if self.options.require_placing or self.received[seat]:",
        "SVC-01",
    ),
    # a pass with tiles from the hands resolved as one without: nothing moves
    (
        "resolution.py",
        "core/AddNot",
        "if not any(own.values()):",
        "if not not any(own.values()):",
        "PASS-07",
    ),
    # Right computed as Left
    (
        "seats.py",
        "core/ReplaceBinaryOperator_Add_Sub",
        "return SEATS[(self.place + direction.offset) % 4]",
        "return SEATS[(self.place - direction.offset) % 4]",
        "NMJL-01",
    ),
    # one Ding Dong more than the maximum
    (
        "charts/four_winds.py",
        "core/ReplaceComparisonOperator_GtE_Gt",
        "if self.ding_dongs >= self.options.ding_dong_max:",
        "if self.ding_dongs > self.options.ding_dong_max:",
        "FW-05",
    ),
    # a seat's pass rows stored without the step they answer
    (
        "turns.py",
        "core/ReplaceComparisonOperator_IsNot_Is",
        "if event.type in PASS_COMMAND_EVENTS and event.seat is not None:",
        "if event.type in PASS_COMMAND_EVENTS and event.seat is None:",
        "FAILED steps",
    ),
    # a game ended by a declared Heavenly Hand told as played in full
    (
        "charts/standard/table.py",
        "core/ReplaceComparisonOperator_Eq_NotEq",
        'if d and d["kind"] == "heavenly" and not self._set_aside_heavenly():',
        'if d and d["kind"] != "heavenly" and not self._set_aside_heavenly():',
        "NMJL-14",
    ),
]


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A compiled copy of the package, to mutate (the worktree is never touched)."""
    root = tmp_path_factory.mktemp("mutants")
    shutil.copytree(
        ROOT / "charleston_fsm",
        root / "charleston_fsm",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(root / "charleston_fsm")], check=True
    )
    return root


def sampled(root: Path, module: str, operator: str, before: str, after: str) -> object:
    """The one mutant of ``module`` by ``operator`` that turns the line ``before`` into
    ``after``."""
    path = f"{mutation.ENGINE}/{module}"
    source = (root / path).read_text()
    found = []
    for candidate in mutation.mutants([path], root):
        if candidate.operator != operator:
            continue
        old, new = mutation.changed_lines(source, mutation.mutated_source(source, candidate))
        if (old, new) == (before, after):
            found.append(candidate)
    assert len(found) == 1, (
        f"{module}: {len(found)} mutants {operator} turn {before!r} into {after!r}"
    )
    return found[0]


@pytest.mark.parametrize(
    ("module", "operator", "before", "after", "rule"),
    [pytest.param(*m, id=f"{m[0]}:{m[1].removeprefix('core/')}") for m in SAMPLE],
)
def test_a_sampled_mutant_is_killed_by_the_bounded_check(
    package: Path, tmp_path: Path, module: str, operator: str, before: str, after: str, rule: str
) -> None:
    mutant = sampled(package, module, operator, before, after)
    path = package / mutation.ENGINE / module
    original = path.read_text()
    path.write_text(mutation.mutated_source(original, mutant))
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                "from charleston_fsm.cli import app; app()",
                *("check", "--bounded", "--fail-fast", "--failures", str(tmp_path)),
            ],
            env=dict(os.environ, PYTHONPATH=str(package), PYTHONDONTWRITEBYTECODE="1")
            | {"COLUMNS": "400"},
            cwd=tmp_path,  # not the worktree: `-c` puts the working directory on the path
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        path.write_text(original)
    assert done.returncode == 1, f"the mutant survived:\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    assert rule in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]


def test_fail_fast_explores_what_the_check_explores_when_nothing_fails(tmp_path: Path) -> None:
    options = json.dumps({"charleston": "off", "ding_dong": "every_round", "ding_dong_max": 1})
    done = cli("check", "--ruleset", "four_winds", "--options", options, "--fail-fast")
    assert "four_winds: 1 option set(s) covering 1, 117 states" in done.stdout
    assert "every property held" in done.stdout and "stopped" not in done.stdout


def test_fail_fast_stops_at_a_defect_within_its_first_commands(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the First Right passed Left: seen at the first pass, in the first pass over the
    # option sets, before any is explored in full
    wrong = standard("First Charleston: pass Right", Direction.LEFT)
    monkeypatch.setitem(STANDARD_STEPS, "CHARLESTON_P1_R", wrong)
    [checked] = run_until_failure("house", bounded=True)
    assert not checked.exploration.complete
    assert "NMJL-01" in {r for f in checked.exploration.failures for r in f.rules}
