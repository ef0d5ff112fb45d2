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

#: the program's name from outside, and what would colour the help for a terminal
OUTSIDE_SETTINGS = {"CHARLESTON_FSM_PROG", "FORCE_COLOR", "TTY_COMPATIBLE", "GITHUB_ACTIONS"}


def words(text: str) -> str:
    """The help's words with its layout taken out: Click wraps the usage line at its own
    width, so where it breaks depends on how long the interpreter's path is."""
    return " ".join(text.split())


def plain(prog: str | None = None) -> dict[str, str]:
    """This process's environment without colour, its program name set only when given."""
    env = {k: v for k, v in os.environ.items() if k not in OUTSIDE_SETTINGS}
    named = {"CHARLESTON_FSM_PROG": prog} if prog is not None else {}
    return {**env, "COLUMNS": "200", "NO_COLOR": "1", **named}


def python_m(
    module: str, *args: str, cwd: Path, prog: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m MODULE ARGS`` outside the clone, in plain text, its program name set from
    outside only when ``prog`` is given."""
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        capture_output=True,
        text=True,
        env=plain(prog),
        cwd=cwd,
        timeout=120,
    )


@pytest.mark.parametrize("module", ["charleston_fsm", "charleston_fsm.cli"])
def test_python_m_runs_the_command_line(module: str, tmp_path: Path) -> None:
    helped = python_m(module, "--help", cwd=tmp_path)
    assert helped.returncode == 0, helped.stderr
    assert f"Usage: {sys.executable} -m {module} [OPTIONS] COMMAND" in words(helped.stdout)
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
    shown = subprocess.run(argv, capture_output=True, text=True, env=plain(), cwd=tmp_path)
    assert shown.returncode == 0 and "--ruleset" in shown.stdout, shown.stderr


def test_a_name_set_from_outside_is_kept(tmp_path: Path) -> None:
    """``./dev cli`` names itself; ``python -m`` under it does not rename it."""
    done = python_m("charleston_fsm", "--help", cwd=tmp_path, prog="./dev cli")
    assert done.returncode == 0 and "Usage: ./dev cli [OPTIONS] COMMAND" in words(done.stdout)
