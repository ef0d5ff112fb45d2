"""``python -m charleston_fsm`` and ``python -m charleston_fsm.cli``, run as real
processes: the same commands as the ``charleston-fsm`` script, hints that name the
command as it was typed (and run as printed), a bad argument answered with a sentence."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from charleston_fsm.cli import app


def python_m(module: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m MODULE ARGS`` outside the clone, its program name not set from outside."""
    env = {k: v for k, v in os.environ.items() if k != "CHARLESTON_FSM_PROG"}
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        env={**env, "COLUMNS": "200"},
        cwd=cwd,
        timeout=120,
    )


@pytest.mark.parametrize("module", ["charleston_fsm", "charleston_fsm.cli"])
def test_python_m_runs_the_command_line(module: str, tmp_path: Path) -> None:
    helped = python_m(module, "--help", cwd=tmp_path)
    assert helped.returncode == 0, helped.stderr
    assert f"Usage: {sys.executable} -m {module} [OPTIONS] COMMAND" in helped.stdout
    for command in app.registered_commands:
        if command.name:
            assert f" {command.name} " in helped.stdout, command.name
    for group in app.registered_groups:
        assert f" {group.name} " in helped.stdout, group.name

    refused = python_m(module, "demo", "--ruleset", "nope", cwd=tmp_path)
    said = refused.stdout + refused.stderr
    assert refused.returncode == 2, said
    assert "Invalid value for '--ruleset': 'nope' is not a ruleset. Accepted:" in said
    assert "Traceback" not in said and "╭" not in said, said
    # the hint names the command as typed here, and runs as printed
    hint = refused.stderr.splitlines()[-1]
    assert hint == f"({sys.executable} -m {module} demo -h lists what it accepts)"
    argv = shlex.split(hint.removeprefix("(").removesuffix(" lists what it accepts)"))
    env = {k: v for k, v in os.environ.items() if k != "CHARLESTON_FSM_PROG"}
    shown = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert shown.returncode == 0 and "--ruleset" in shown.stdout, shown.stderr


def test_a_name_set_from_outside_is_kept(tmp_path: Path) -> None:
    """``./dev cli`` names itself; ``python -m`` under it does not rename it."""
    env = {**os.environ, "CHARLESTON_FSM_PROG": "./dev cli", "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-m", "charleston_fsm", "--help"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0 and "Usage: ./dev cli [OPTIONS] COMMAND" in done.stdout
