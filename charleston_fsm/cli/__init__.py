"""The ``charleston-fsm`` command line: thin, everything it does lives in the package.

One module per concern (play and demo, reference, serve, records, tournament); each
declares its commands on its own Typer, gathered here into the one ``app``.
"""

from __future__ import annotations

import typer

from . import director, play, record, records, reference, serve, tournament

app = typer.Typer(
    help="The Charleston of American Mah Jongg as a statechart.", no_args_is_help=True
)

for part in (play, reference, serve, records, record, director, tournament):
    app.registered_commands += part.commands.registered_commands
    app.registered_groups += part.commands.registered_groups


@app.callback()
def main() -> None:
    """Run one of the commands below."""
