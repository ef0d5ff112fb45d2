"""A record anyone can verify: ``record export``, ``record verify``, ``anchors public-key``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from .common import AnchorKeyFile, DatabaseUrl, _open_store, _refusals, console
from .errors import command_text
from .records import anchors_app

commands = typer.Typer()
record_app = typer.Typer(
    help="A game's record as JSON Lines, signed with Ed25519, verified without a database.",
    no_args_is_help=True,
)
commands.add_typer(record_app, name="record")


@record_app.command("export")
def record_export(
    game_id: str = typer.Argument(..., help="The game's id."),
    out: str | None = typer.Option(None, "-o", "--out", help="The file (default: stdout)."),
    database_url: str | None = DatabaseUrl,
    anchor_key_file: str | None = AnchorKeyFile,
) -> None:
    """Write the game's record (deal, every row with its hash, the signed head) after
    the store verified it; 'record verify FILE' checks it anywhere, with no database."""
    from ..ledger.record import export_record

    store = _open_store(database_url, migrate_empty=False, anchor_key_file=anchor_key_file)
    with _refusals():
        text = export_record(store, game_id)
    if out is None:
        sys.stdout.write(text)
        return
    try:
        Path(out).write_text(text, encoding="utf-8")
    except OSError as exc:
        console.print(
            f"Cannot write {out}: {exc.strerror}.", style="red", highlight=False, markup=False
        )
        raise typer.Exit(2) from None
    rows = text.count('"kind": "row"')
    console.print(f"{rows} rows of game {game_id} written to {out}", highlight=False, markup=False)
    again = command_text(f"record verify {out}")
    console.print(f"check it anywhere with: {again}", highlight=False, markup=False)


@record_app.command("verify")
def record_verify(
    file: str = typer.Argument(..., help="A record from 'record export' or the desk."),
    public_key: str | None = typer.Option(
        None,
        "--public-key",
        help="The service's Ed25519 public key (GET /v1/anchor-key or 'anchors "
        "public-key'); without it the key written in the file is used.",
    ),
    as_json: bool = typer.Option(False, "--json", help="The verdict as JSON."),
) -> None:
    """Check a record offline: the hash chain, the Ed25519 signature of its head, the
    header against what is signed, and a replay of every row through the chart. Exit 1 on
    any finding, 2 on a file that cannot be read."""
    from ..ledger.record_verify import RecordUnreadable, verify_record_file

    try:
        verdict = verify_record_file(file, public_key)
    except RecordUnreadable as exc:
        console.print(f"Cannot read {file}: {exc}.", style="red", highlight=False, markup=False)
        raise typer.Exit(2) from None
    if as_json:
        sys.stdout.write(json.dumps(verdict.to_dict(), indent=1, ensure_ascii=False) + "\n")
        raise typer.Exit(0 if verdict.ok else 1)
    if verdict.ok:
        state = "finished" if verdict.finished else "not finished"
        console.print("ok", style="green", end="")
        console.print(
            f": game {verdict.game_id}, {verdict.rows} rows ({state}): the hash chain holds, "
            "the signed head is its last row, the header restates what is signed, and the "
            "rows replay through the chart to the signed table.",
            highlight=False,
            markup=False,
        )
        if not verdict.key_pinned:
            console.print(
                "The public key was taken from the file itself: pass --public-key (from GET "
                "/v1/anchor-key) to know the service signed it.",
                style="yellow",
                highlight=False,
                markup=False,
            )
    else:
        count = len(verdict.findings) + sum(verdict.more.values())
        console.print("FAILED", style="red", end="")
        console.print(f": {count} finding(s)", highlight=False, markup=False)
        for finding in verdict.findings:
            where = f"seq {finding.seq}: " if finding.seq is not None else ""
            console.print(f"  {where}{finding.message}", highlight=False, markup=False)
        for kind, more in verdict.more.items():
            console.print(
                f"  and {more:,} more of the same kind ({kind})", highlight=False, markup=False
            )
    for what in verdict.unsigned:
        console.print(f"  not signed: {what}", highlight=False, markup=False)
    raise typer.Exit(0 if verdict.ok else 1)


@anchors_app.command("public-key")
def anchors_public_key(anchor_key_file: str | None = AnchorKeyFile) -> None:
    """Print the Ed25519 public key that signs exported records (base64), for verifiers."""
    from ..ledger.record import public_key_text
    from ..store import load_key

    with _refusals():
        key = load_key(key_file=anchor_key_file)
    print(public_key_text(key))
