"""The record: ``replay``, ``audit``, ``verify``, ``anchors``, ``quarantine``."""

from __future__ import annotations

import typer

from ..engine.story import step_text
from ..engine.tiles import describe
from .common import (
    AnchorKeyFile,
    DatabaseUrl,
    _open_store,
    _print_story,
    _refusals,
    console,
    courtesy_given,
    uneven_courtesy_note,
)

commands = typer.Typer()


@commands.command("replay")
def replay_command(
    game_id: str | None = typer.Argument(None, help="The game's id."),
    seq: int | None = typer.Option(None, help="Stop after this event (default: all)."),
    database_url: str | None = DatabaseUrl,
    commands_file: str | None = typer.Option(
        None,
        "--commands",
        help="Instead of a stored game: play a JSON file's command list on a new table "
        "(what check writes for a failure).",
    ),
) -> None:
    """Rebuild a stored game through the chart and print it (director's knowledge); or,
    with --commands FILE, play a command list through the chart (no database)."""
    if (game_id is None) == (commands_file is None):
        raise typer.BadParameter(
            "Give a stored game's id, or --commands FILE, not both and not neither."
        )
    if commands_file is not None:
        _replay_commands(commands_file)
        return
    store = _open_store(database_url, migrate_empty=False)
    with _refusals():
        events = [e for e in store.reads.events(game_id) if seq is None or e.seq <= seq]
        table = store.reads.replay(game_id, at=seq)
    chart = table.ruleset.chart
    console.rule(f"[bold]game {game_id}, ruleset {table.ruleset.name}, up to seq {events[-1].seq}")
    _print_story((e.event for e in events[1:]), chart)
    console.print(
        f"state: {step_text(table.configuration, chart)} ({', '.join(table.configuration)})",
        highlight=False,
        markup=False,
    )
    dealt = {seat: len(tiles) for seat, tiles in table.deal.hands.items()}
    gifts = any(e.type == "ding_dong_given" for e in events)
    why = "Ding Dong gifts move one tile each way" if gifts else "an uneven courtesy"
    for seat, tiles in table.racks.items():
        waiting = table.received[seat]
        held = len(tiles) + len(waiting)
        extra = f"  (received, not placed: {describe(waiting)})" if waiting else ""
        if held != dealt[seat]:
            extra += f"  [{held} tiles, dealt {dealt[seat]}: {why}]"
        console.print(
            f"{seat.label:<6} {describe(sorted(tiles))}{extra}", highlight=False, markup=False
        )


def _replay_commands(file: str) -> None:
    """Play the file's commands; print the story, where the table stands and each hand.
    Exit 1 when a command is refused, 2 when the file cannot be read or used."""
    import json
    from pathlib import Path

    from ..exploration.runs import play_commands

    try:
        data = json.loads(Path(file).read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("the file holds no JSON object")
        played = play_commands(data)
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or "not UTF-8 text"
        console.print(f"[red]Cannot read {file}: {reason}.", highlight=False)
        raise typer.Exit(2) from None
    except ValueError as exc:  # json.JSONDecodeError is one
        console.print(f"[red]Cannot play {file}: {exc}.", highlight=False)
        raise typer.Exit(2) from None
    table = played.table
    chart = table.ruleset.chart
    console.rule(f"[bold]{file}: ruleset {table.ruleset.name}, {len(data['commands'])} commands")
    _print_story(played.events, chart)
    console.print(
        f"state: {step_text(table.configuration, chart)} ({', '.join(table.configuration)})",
        highlight=False,
        markup=False,
    )
    for seat, tiles in table.racks.items():
        waiting = table.received[seat]
        extra = f"  (received, not placed: {describe(waiting)})" if waiting else ""
        console.print(
            f"{seat.label:<6} {describe(sorted(tiles))}{extra}", highlight=False, markup=False
        )
    failure = data.get("failure")
    if isinstance(failure, dict):
        console.print(
            f"check found here: {failure.get('property')} "
            f"({', '.join(failure.get('rules') or ())}): {failure.get('message')}",
            highlight=False,
            markup=False,
        )
    if played.refused_at is not None:
        console.print(
            f"[red]command {played.refused_at} was refused: {played.refusal}", highlight=False
        )
        raise typer.Exit(1)


@commands.command("audit")
def audit_command(
    game_id: str = typer.Argument(..., help="The game's id."),
    as_json: bool = typer.Option(False, "--json", help="The report as JSON."),
    database_url: str | None = DatabaseUrl,
) -> None:
    """The audit report of one game: every event, every tile's route, the hash chain."""
    import json

    store = _open_store(database_url, migrate_empty=False)
    with _refusals():
        report = store.auditor.audit(game_id)
    if as_json:
        print(json.dumps(report.to_dict(), indent=2, default=str))
    else:
        console.print(report.to_text(), highlight=False, markup=False)
        note = uneven_courtesy_note(courtesy_given(store.reads.events(game_id)))
        if note:
            console.print(f"\n{note}", highlight=False, markup=False)


@commands.command("verify")
def verify_command(
    game_id: str | None = typer.Argument(None, help="One game (default: every game)."),
    anchors: str | None = typer.Option(
        None, "--anchors", help="Also check against an anchors file from 'anchors export'."
    ),
    replay: bool = typer.Option(
        False,
        "--replay",
        help="Replay every game through the chart, even those a sealed anchor vouches for.",
    ),
    jobs: int = typer.Option(
        0, "--jobs", "-j", min=0, help="Worker processes for many games (0: one per core)."
    ),
    database_url: str | None = DatabaseUrl,
    anchor_key_file: str | None = AnchorKeyFile,
) -> None:
    """Verify stored games: every row's hash and link, the recorded head, the signed
    anchors, and projection == replay. A game that fails is quarantined.

    A finished game whose final anchor is sealed (replayed once when it finished) is
    checked against that signed head instead of being replayed again; --replay forces it."""
    import os

    from rich.progress import Progress

    from ..engine.errors import CharlestonError
    from ..store import read_anchor_file

    store = _open_store(database_url, migrate_empty=False, anchor_key_file=anchor_key_file)
    try:
        kept = read_anchor_file(anchors) if anchors else None
    except CharlestonError as exc:
        console.print(f"[red]{exc.message}", highlight=False)
        raise typer.Exit(2) from None
    stored = {g.id for g in store.registry.games()}
    ids = [game_id] if game_id else sorted(stored)
    if game_id and game_id not in stored:
        console.print(f"[red]There is no game {game_id!r}.", highlight=False)
        raise typer.Exit(1)
    gone = sorted(set(kept or ()) - stored) if game_id is None else []
    with Progress(console=console, disable=len(ids) < 20, transient=True) as bar:
        task = bar.add_task("verifying", total=len(ids))
        found = store.tamper.verify_all(
            ids,
            kept,
            replay=replay,
            jobs=jobs or os.cpu_count() or 1,
            progress=lambda n: bar.advance(task, n),
        )
    bad = 0
    for verdict in found.verifications:
        if not verdict.ok:
            bad += 1
            console.print(f"[red]{verdict.game_id}: FAILED, quarantined", highlight=False)
            for finding in verdict.findings:
                where = f"seq {finding.seq}" if finding.seq is not None else "game"
                console.print(
                    f"  {where} {finding.kind}: {finding.message}", highlight=False, markup=False
                )
    for gid in gone:
        console.print(
            f"[red]{gid}: in the anchors file but not in the database: the game was deleted",
            highlight=False,
        )
    console.print(
        f"{len(ids)} game(s) verified: {len(ids) - bad} ok, {bad} failed (quarantined)"
        + (f"; {len(gone)} anchored game(s) missing" if gone else "")
        + (f"; checked against {anchors}" if anchors else "")
    )
    console.print(
        f"[dim]{found.rows} rows hashed; {found.replayed} game(s) replayed through the chart, "
        f"{len(ids) - found.replayed} vouched for by a sealed anchor; {found.sealed} sealed now",
        highlight=False,
    )
    if bad or gone:
        raise typer.Exit(1)


anchors_app = typer.Typer(help="Signed anchors of the games' hash chains.", no_args_is_help=True)
commands.add_typer(anchors_app, name="anchors")


@anchors_app.command("restore")
def anchors_restore(
    file: str = typer.Argument(..., help="An anchors file from 'anchors export'."),
    database_url: str | None = DatabaseUrl,
    anchor_key_file: str | None = AnchorKeyFile,
) -> None:
    """Put back anchors of FILE that are missing or altered in the database (a repair;
    only anchors signed with this service's key are taken)."""
    from ..store import read_anchor_file

    store = _open_store(database_url, migrate_empty=False, anchor_key_file=anchor_key_file)
    with _refusals():
        kept = [a for anchors in read_anchor_file(file).values() for a in anchors]
        restored = store.tamper.restore_anchors(kept)
    console.print(f"{restored} anchor(s) restored from {file}", highlight=False)


@anchors_app.command("export")
def anchors_export(
    file: str = typer.Argument(..., help="The file to write (keep it outside the database)."),
    database_url: str | None = DatabaseUrl,
    anchor_key_file: str | None = AnchorKeyFile,
) -> None:
    """Write every stored anchor to FILE, for 'verify --anchors FILE' later."""
    from ..store import write_anchor_file

    store = _open_store(database_url, migrate_empty=False, anchor_key_file=anchor_key_file)
    anchors = store.tamper.anchors()
    count = write_anchor_file(file, anchors, store.anchor_key.key_id)
    games = len({a.game_id for a in anchors})
    console.print(f"{count} anchor(s) of {games} game(s) written to {file}", highlight=False)


quarantine_app = typer.Typer(help="Games set aside because verify failed.", no_args_is_help=True)
commands.add_typer(quarantine_app, name="quarantine")


@quarantine_app.command("list")
def quarantine_list(
    game_id: str | None = typer.Argument(None, help="One game (default: every game)."),
    everything: bool = typer.Option(False, "--all", help="Lifted quarantines too."),
    database_url: str | None = DatabaseUrl,
) -> None:
    """The quarantined games and what verify found."""
    store = _open_store(database_url, migrate_empty=False)
    shown = [q for q in store.tamper.quarantines(game_id) if everything or q["active"]]
    for q in shown:
        state = "ACTIVE" if q["active"] else f"lifted {q['lifted_at']} by {q['lifted_by']}"
        console.print(f"{q['game_id']} #{q['number']} since {q['since']}: {state}", markup=False)
        for finding in q["findings"]:
            console.print(f"  {finding['kind']}: {finding['message']}", markup=False)
        if q["lift_note"]:
            console.print(f"  note: {q['lift_note']}", markup=False)
    console.print(f"{len(shown)} quarantine(s)")


@quarantine_app.command("rebuild-projection")
def quarantine_rebuild_projection(
    game_id: str = typer.Argument(..., help="The game."),
    database_url: str | None = DatabaseUrl,
    anchor_key_file: str | None = AnchorKeyFile,
) -> None:
    """Rebuild a game's projection from its rows (a repair; only when the rows verify)."""
    store = _open_store(database_url, migrate_empty=False, anchor_key_file=anchor_key_file)
    with _refusals():
        verdict = store.tamper.rebuild_projection(game_id)
    console.print(f"projection of {game_id} rebuilt: {verdict.message}", highlight=False)


@quarantine_app.command("lift")
def quarantine_lift(
    game_id: str = typer.Argument(..., help="The game."),
    note: str = typer.Option(..., "--note", help="What was repaired (kept with the lift)."),
    by: str = typer.Option(None, "--by", envvar="USER", help="Who lifts it (default: $USER)."),
    anchors: str | None = typer.Option(
        None, "--anchors", help="Verify against this anchors file too (needed when it found it)."
    ),
    database_url: str | None = DatabaseUrl,
    anchor_key_file: str | None = AnchorKeyFile,
) -> None:
    """Lift a game's quarantine: refused while its record still fails verify."""
    from ..store import read_anchor_file

    store = _open_store(database_url, migrate_empty=False, anchor_key_file=anchor_key_file)
    with _refusals():
        kept = read_anchor_file(anchors).get(game_id, []) if anchors else None
        lifted = store.tamper.lift_quarantine(
            game_id, by=f"{by or 'unknown'} (CLI)", note=note, kept=kept
        )
    console.print(
        f"quarantine #{lifted['number']} of {game_id} lifted by {lifted['lifted_by']}",
        highlight=False,
    )
