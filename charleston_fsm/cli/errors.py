"""What every command shares without asking: plain errors and tidy help.

A user who mistypes an argument, points at a database that is not one, or at a service
that is not running gets one or two plain lines (what was wrong, what is accepted) and a
non-zero exit, never a traceback. A traceback is kept for what no one foresaw: a bug.
"""

from __future__ import annotations

import inspect
import os
import re
import sys
from typing import Any

import typer
from typer import core as typer_core

try:  # typer >= 0.2x carries its own copy of click: its exceptions are those
    from typer._click import exceptions as click
except ImportError:  # pragma: no cover - an older typer on the real click
    from click import exceptions as click  # type: ignore[no-redef]

#: The name printed in hints ("try: charleston-fsm demo -h"); ``./dev`` sets it to
#: ``./dev cli`` so that every hint runs as printed from a clone.
PROG_ENV = "CHARLESTON_FSM_PROG"

DATABASE_URLS_ACCEPTED = (
    "sqlite:///path/to/file.sqlite3 (a file, created if missing) or "
    "postgresql://user@host:5432/database"
)

SERVICE_URLS_ACCEPTED = "http://host:port of a running service, e.g. http://127.0.0.1:8000"


def prog() -> str:
    """How the user runs this program: ``charleston-fsm``, or ``./dev cli`` in a clone."""
    return os.environ.get(PROG_ENV) or "charleston-fsm"


_COMMANDS = (
    "demo|serve|migrate|replay|audit|verify|anchors|quarantine|ruling|simulate|rules|diagram|"
    "play|bench|record|director|check"
)


def as_run_here(text: str) -> str:
    """A message from below (the store's 'run charleston-fsm migrate') with its commands
    written as the user runs them here (``./dev cli migrate`` in a clone)."""
    if prog() == "charleston-fsm":
        return text
    return re.sub(rf"\bcharleston-fsm (?=(?:{_COMMANDS})\b)", f"{prog()} ", text)


def command_text(args: str) -> str:
    """A command to print for the user, runnable as printed: ``./dev serve`` in a clone
    (``./dev`` has jobs of its own for demo and serve), else ``charleston-fsm ARGS``."""
    if prog() == "./dev cli" and args.split(" ", 1)[0] in ("demo", "serve"):
        return f"./dev {args}"
    return f"{prog()} {args}"


def say_error(*lines: str) -> None:
    """Plain lines on stderr: the first says what was wrong, the next what to do."""
    for line in lines:
        typer.echo(line, err=True)


class PlainErrorsTyper(typer.Typer):
    """A Typer whose entry point turns usage errors and known failures into plain lines."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        command = typer.main.get_command(self)
        argv = list(kwargs.pop("args", None) or sys.argv[1:])
        try:
            code = command.main(args=argv, prog_name=prog(), standalone_mode=False)
        except click.NoArgsIsHelpError as exc:  # rich help is printed as it is made
            if exc.format_message().strip():
                typer.echo(exc.format_message(), err=True)
            code = 2
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx else prog()
            say_error(f"{where}: {_usage_text(exc)}", f"({where} -h lists what it accepts)")
            code = exc.exit_code
        except click.ClickException as exc:
            say_error(f"{prog()}: {exc.format_message()}")
            code = exc.exit_code
        except (typer.Abort, KeyboardInterrupt):
            say_error("stopped")
            code = 130
        except Exception as exc:
            known = known_failure(exc)
            if known is None:
                raise
            say_error(*known)
            code = 1 if _is_refusal(exc) else 2
        sys.exit(code if isinstance(code, int) else 0)


def _usage_text(exc: click.UsageError) -> str:
    text = exc.format_message()
    # click's "Invalid value for '--ruleset': …" reads well; its "No such option" too
    return text[:1].upper() + text[1:] if text else "bad usage"


def _is_refusal(exc: BaseException) -> bool:
    from ..engine.errors import CharlestonError

    return isinstance(exc, CharlestonError)


def known_failure(exc: BaseException) -> tuple[str, ...] | None:
    """The plain lines for a failure the user can fix; ``None`` for a bug."""
    import httpx
    from sqlalchemy import exc as sa

    from ..engine.errors import CharlestonError

    if isinstance(exc, CharlestonError):
        return (as_run_here(exc.message),)
    plain = getattr(exc, "plain_lines", None)  # a failure that says itself (bench floors)
    if isinstance(plain, tuple) and plain and all(isinstance(line, str) for line in plain):
        return plain
    if isinstance(exc, sa.ArgumentError | sa.NoSuchModuleError):
        return (
            f"That database URL cannot be used ({exc}).",
            f"Accepted: {DATABASE_URLS_ACCEPTED}.",
        )
    if isinstance(exc, sa.OperationalError | sa.InterfaceError):
        reason = str(exc.orig or exc).strip().splitlines()[0]
        return (f"Cannot reach the database: {reason}",)
    if isinstance(exc, httpx.InvalidURL | httpx.UnsupportedProtocol):
        return (f"That URL cannot be used: {_sentence(exc)}", f"Accepted: {SERVICE_URLS_ACCEPTED}.")
    if isinstance(exc, httpx.TransportError):
        return (
            f"Cannot reach the service at {_request_url(exc)}: {_sentence(exc)}",
            f"Is it running? Start one with: {_serve_hint()}",
        )
    if isinstance(exc, FileNotFoundError | PermissionError | IsADirectoryError):
        return (f"Cannot open {exc.filename}: {exc.strerror}.",)
    return None


def _sentence(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if text.endswith(".") else text + "."


def _request_url(exc: Any) -> str:
    try:
        request = exc.request
    except RuntimeError:  # httpx raises when the error has no request
        return "that URL"
    return f"{request.url.scheme}://{request.url.netloc.decode()}"


def _serve_hint() -> str:
    return command_text("serve")


# -- help ------------------------------------------------------------------------------------
def _type_shown_only_for_choices(self: Any, ctx: Any) -> str | None:
    """No ``<str>``/``<bool>``/``<int>`` column: the help text says what a value is."""
    if getattr(self, "metavar", None) is not None:
        return str(self.metavar)
    return self.display_type(ctx) if self.type_descriptor.is_choice else None


def reflow(text: str | None) -> str | None:
    """Docstrings are hard-wrapped for the source: join each paragraph's lines so help
    wraps at the terminal's width, paragraphs (blank lines) kept."""
    if not text:
        return text
    paragraphs = re.split(r"\n\s*\n", inspect.cleandoc(text))
    return "\n\n".join(" ".join(p.split()) for p in paragraphs)


def tidy_help(app: typer.Typer) -> None:
    """Reflow every command's and group's help, for commands declared in any module."""
    typer_core.TyperOption.display_type_rich = _type_shown_only_for_choices  # type: ignore[method-assign]
    typer_core.TyperArgument.display_type_rich = _type_shown_only_for_choices  # type: ignore[method-assign]
    _tidy(app)


def _tidy(app: typer.Typer) -> None:
    app.info.help = reflow(app.info.help if isinstance(app.info.help, str) else None) or (
        app.info.help
    )
    for info in app.registered_commands:
        if info.callback is not None:
            info.help = reflow(info.help or inspect.getdoc(info.callback))
    if app.registered_callback is not None and app.registered_callback.callback is not None:
        cb = app.registered_callback
        cb.help = reflow(cb.help or inspect.getdoc(cb.callback))
    for group in app.registered_groups:
        if isinstance(group.help, str):
            group.help = reflow(group.help)
        if group.typer_instance is not None:
            _tidy(group.typer_instance)
