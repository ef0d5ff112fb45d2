"""The ``charleston-fsm`` command line: thin, everything it does lives in the package.

One module per concern (play and demo, reference, serve, records, tournament); each
declares its commands on its own Typer, gathered here into the one ``app``. What every
command shares is set here once, so a module added later gets it too: ``-h``, help
without type placeholders and with docstrings reflowed, and :mod:`.errors`, which turns
a bad argument or a known failure into a plain line instead of a traceback.
"""

from __future__ import annotations

import os
import shlex
import sys

from . import check, director, play, record, records, reference, serve, tournament, webhooks
from .errors import PROG_ENV, PlainErrorsTyper, tidy_help

app = PlainErrorsTyper(
    help="The Charleston of American Mah Jongg as a statechart.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_show_locals=False,  # a bug's traceback must not print tokens
    add_completion=False,
)

for part in (play, reference, check, serve, records, record, director, tournament, webhooks):
    app.registered_commands += part.commands.registered_commands
    app.registered_groups += part.commands.registered_groups


@app.callback()
def main() -> None:
    """Run one of the commands below; COMMAND -h tells more about each."""


tidy_help(app)


def run_as_module(module: str) -> None:
    """``python -m MODULE``: the same ``app`` as the ``charleston-fsm`` script, for a Python
    whose scripts are not on the PATH (a virtual environment not activated).

    Its hints ("try: ... demo -h", "run ... migrate") name the command as it was typed here,
    interpreter included, so that each runs as printed; a name already set (``./dev cli``)
    is kept.
    """
    python = shlex.quote(sys.orig_argv[0]) if sys.orig_argv else "python"
    os.environ.setdefault(PROG_ENV, f"{python} -m {module}")
    app()
