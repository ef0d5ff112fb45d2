"""The director's commands through a running service: ``director ruling | pause | resume |
judge | start | extend | bot | hand-back | substitute | answer | spectator``, the round's
``director round start | pause | resume | spectator``, and a seat's ``seat call``. They go
over HTTP with the director's (or the round's, or the seat's) token, so they are
authorised, recorded and streamed to every page exactly as the pages' buttons are."""

from __future__ import annotations

import uuid
from typing import Any

import typer

from .common import console

commands = typer.Typer()
director_app = typer.Typer(
    help="A director's ruling, pause, resume or verdict, sent to a running service.",
    no_args_is_help=True,
)
commands.add_typer(director_app, name="director")
round_app = typer.Typer(
    help="A round's start, pause, resume (every table at once) or spectator link.",
    no_args_is_help=True,
)
director_app.add_typer(round_app, name="round")
seat_app = typer.Typer(help="A seat's own act through a running service.", no_args_is_help=True)
commands.add_typer(seat_app, name="seat")

Url = typer.Option(
    "http://127.0.0.1:8000",
    "--url",
    envvar="CHARLESTON_URL",
    help="The running service (as printed by 'serve').",
)
Token = typer.Option(
    ...,
    "--token",
    envvar="CHARLESTON_DIRECTOR_TOKEN",
    help="The game's director token, or its round's token ($CHARLESTON_DIRECTOR_TOKEN).",
)


def send(url: str, token: str, game_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST the director command; a refusal or an unreachable service is a plain sentence
    and exit status 1 (refused) or 2 (no service)."""
    return call_service(url, token, "POST", f"/v1/games/{game_id}/director/commands", body)


def call_service(
    url: str, token: str, method: str, path: str, body: dict[str, Any] | None = None
) -> dict[str, Any]:
    """One request with a command id; a refusal or an unreachable service is a plain
    sentence and exit status 1 (refused) or 2 (no service)."""
    import httpx

    try:
        with httpx.Client(base_url=url.rstrip("/"), timeout=30) as client:
            response = client.request(
                method,
                path,
                json=None if body is None else {**body, "command_id": f"cli-{uuid.uuid4().hex}"},
                headers={"Authorization": f"Bearer {token}"},
            )
    except httpx.HTTPError as exc:
        console.print(
            f"[red]Cannot reach the service at {url} ({type(exc).__name__}). Is it running? "
            "Start it with './dev serve', or give its address with --url.",
            highlight=False,
        )
        raise typer.Exit(2) from None
    if response.status_code != 200:
        try:
            detail = response.json().get("detail") or response.text
        except ValueError:
            detail = response.text[:300]
        console.print(
            f"[red]Refused ({response.status_code}): {detail}", highlight=False, markup=False
        )
        raise typer.Exit(1)
    return response.json()  # type: ignore[no-any-return]


def _done(what: str, answer: dict[str, Any], game_id: str) -> None:
    seq = answer.get("last_seq") or max((e["seq"] for e in answer.get("events", [])), default="?")
    console.print(f"{what} recorded at seq {seq} of {game_id}", highlight=False)


@director_app.command("ruling")
def director_ruling(
    game_id: str = typer.Argument(..., help="The game."),
    kind: str = typer.Option(..., "--kind", help="note, warning, penalty or void."),
    text: str = typer.Option(..., "--text", help="The ruling (1-2000 characters)."),
    seat: str | None = typer.Option(None, "--seat", help="The seat it concerns, if one."),
    url: str = Url,
    token: str = Token,
) -> None:
    """Record a ruling in the game's chain (it changes no tile)."""
    body: dict[str, Any] = {"type": "record_ruling", "kind": kind, "text": text}
    if seat is not None:
        body["seat"] = seat
    _done("ruling", send(url, token, game_id, body), game_id)


@director_app.command("pause")
def director_pause(game_id: str = typer.Argument(..., help="The game."), url: str = Url,
                   token: str = Token) -> None:  # fmt: skip
    """Pause the game's clock: no deadline runs until it is resumed."""
    _done("pause", send(url, token, game_id, {"type": "pause_clock"}), game_id)


@director_app.command("resume")
def director_resume(game_id: str = typer.Argument(..., help="The game."), url: str = Url,
                    token: str = Token) -> None:  # fmt: skip
    """Resume the game's clock: every deadline moves by the paused time."""
    _done("resume", send(url, token, game_id, {"type": "resume_clock"}), game_id)


@director_app.command("judge")
def director_judge(
    game_id: str = typer.Argument(..., help="The game."),
    verdict: str = typer.Option(..., "--verdict", help="valid or invalid."),
    text: str = typer.Option(..., "--text", help="Why (1-2000 characters)."),
    url: str = Url,
    token: str = Token,
) -> None:
    """Judge East's declaration: valid ends the game with it; an invalid Heavenly Hand
    sends the table back to the First Right (NMJL-21)."""
    if verdict not in ("valid", "invalid"):
        console.print(f"[red]--verdict is valid or invalid, not {verdict!r}.", highlight=False)
        raise typer.Exit(1)
    body = {"type": "judge_declaration", "verdict": verdict, "text": text}
    _done(f"verdict {verdict}", send(url, token, game_id, body), game_id)


@director_app.command("start")
def director_start(game_id: str = typer.Argument(..., help="The game."), url: str = Url,
                   token: str = Token) -> None:  # fmt: skip
    """Start a table created held: its clock runs from now and seats may pass."""
    _done("start", send(url, token, game_id, {"type": "start_game"}), game_id)


@director_app.command("extend")
def director_extend(
    game_id: str = typer.Argument(..., help="The game."),
    seconds: int = typer.Option(..., "--seconds", help="Seconds to add (1-3600)."),
    seat: str | None = typer.Option(None, "--seat", help="One seat; without: every awaited seat."),
    reason: str | None = typer.Option(None, "--reason", help="Why (the seat sees it)."),
    url: str = Url,
    token: str = Token,
) -> None:
    """Add time to a seat's current deadline, or to every awaited seat's of the table."""
    body: dict[str, Any] = {"type": "extend_time", "seconds": seconds}
    if seat is not None:
        body["seat"] = seat
    if reason is not None:
        body["reason"] = reason
    answer = send(url, token, game_id, body)
    due = answer["events"][-1]["payload"]["due_at"]
    _done("extension", answer, game_id)
    for who, when in due.items():
        console.print(f"  {who.capitalize()} now has until {when}", highlight=False)


@director_app.command("bot")
def director_bot(
    game_id: str = typer.Argument(..., help="The game."),
    seat: str = typer.Option(..., "--seat", help="The seat the service's bot plays from now."),
    url: str = Url,
    token: str = Token,
) -> None:
    """Hand a seat to the service's bot (durable: it plays on after a restart)."""
    _done(
        f"{seat} to the bot",
        send(url, token, game_id, {"type": "hand_to_bot", "seat": seat}),
        game_id,
    )


@director_app.command("hand-back")
def director_hand_back(
    game_id: str = typer.Argument(..., help="The game."),
    seat: str = typer.Option(..., "--seat", help="The seat a person plays again."),
    label: str | None = typer.Option(None, "--label", help="Who plays it (the record says)."),
    url: str = Url,
    token: str = Token,
) -> None:
    """Hand a bot's seat back to a person (the seat's token plays it again)."""
    body: dict[str, Any] = {"type": "hand_back", "seat": seat}
    if label is not None:
        body["label"] = label
    _done(f"{seat} handed back", send(url, token, game_id, body), game_id)


@director_app.command("substitute")
def director_substitute(
    game_id: str = typer.Argument(..., help="The game."),
    seat: str = typer.Option(..., "--seat", help="The seat a substitute takes."),
    name: str | None = typer.Option(
        None, "--name", help="The substitute's name: the seat's name from now on."
    ),
    player_id: str | None = typer.Option(
        None, "--player-id", help="The substitute's own id on the platform."
    ),
    deadline: str = typer.Option(
        "fresh", "--deadline", help="fresh: the step's whole time from now; kept: what was left."
    ),
    label: str | None = typer.Option(None, "--label", help="A note, e.g. 'substitute'."),
    url: str = Url,
    token: str = Token,
) -> None:
    """Give a seat to a substitute: a new token (shown once); the old link stops working."""
    given = {"name": name, "player_id": player_id, "label": label}
    body: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    body["deadline"] = deadline
    answer = call_service(url, token, "POST", f"/v1/games/{game_id}/seats/{seat}/token", body)
    _done(f"{seat} substitute", answer, game_id)
    console.print(
        f"The seat's new link (shown once): {url.rstrip('/')}{answer['link']}",
        highlight=False,
        soft_wrap=True,
    )


@director_app.command("answer")
def director_answer(
    game_id: str = typer.Argument(..., help="The game."),
    seat: str = typer.Option(..., "--seat", help="The seat whose call is answered."),
    ruling: str | None = typer.Option(
        None, "--ruling", help="note, warning, penalty or void; without: cleared."
    ),
    text: str | None = typer.Option(None, "--text", help="The ruling (with --ruling)."),
    url: str = Url,
    token: str = Token,
) -> None:
    """Answer a seat's call to the director: a ruling, or cleared."""
    if (ruling is None) != (text is None):
        console.print("[red]--ruling and --text go together (neither: cleared).", highlight=False)
        raise typer.Exit(1)
    body: dict[str, Any] = {"type": "answer_call", "seat": seat, "answer": "cleared"}
    if ruling is not None:
        body.update(answer="ruling", kind=ruling, text=text)
    _done(f"answer to {seat}", send(url, token, game_id, body), game_id)


@director_app.command("spectator")
def director_spectator(
    game_id: str = typer.Argument(..., help="The game."),
    delay: int | None = typer.Option(
        None,
        "--delay",
        help="Seconds behind the table (0-3600; a round's table: at least the round's). "
        "Absent: the round's delay (a single game: live).",
    ),
    live: bool = typer.Option(
        False, "--live", help="A featured table's live link: the round's delay set aside."
    ),
    revoke: bool = typer.Option(False, "--revoke", help="Revoke the link instead."),
    url: str = Url,
    token: str = Token,
) -> None:
    """A new spectator link for the table (the old one stops working), or --revoke it."""
    path = f"/v1/games/{game_id}/spectator"
    if revoke:
        call_service(url, token, "DELETE", path)
        console.print(f"The spectator link of {game_id} is revoked.", highlight=False)
        return
    body: dict[str, Any] = {"live": True} if live else {}
    if delay is not None:
        body["delay"] = delay
    answer = call_service(url, token, "POST", path, body)
    _print_link("Spectator link", answer, url)


def _print_link(what: str, answer: dict[str, Any], url: str) -> None:
    """A new spectator link, shown once, with the delay the service gives it."""
    behind = "live" if answer["live"] else f"{answer['delay']} s behind"
    console.print(
        f"{what} ({behind}, shown once): {url.rstrip('/')}{answer['link']}",
        highlight=False,
        soft_wrap=True,
    )


RoundToken = typer.Option(
    ...,
    "--token",
    envvar="CHARLESTON_ROUND_TOKEN",
    help="The round's token, from its creation ($CHARLESTON_ROUND_TOKEN).",
)


def _round_act(act: str, round_id: str, url: str, token: str) -> None:
    answer = call_service(url, token, "POST", f"/v1/rounds/{round_id}/{act}", {})
    console.print(
        f"{act}: {answer['done']} of {len(answer['tables'])} tables, at {answer['at']}",
        highlight=False,
    )
    for table in answer["tables"]:
        if not table["done"]:
            console.print(
                f"  table {table['table']}: not done ({table['detail']})", highlight=False
            )


@round_app.command("start")
def round_start(round_id: str = typer.Argument(..., help="The round."), url: str = Url,
                token: str = RoundToken) -> None:  # fmt: skip
    """Start every held table of the round in the same instant."""
    _round_act("start", round_id, url, token)


@round_app.command("pause")
def round_pause(round_id: str = typer.Argument(..., help="The round."), url: str = Url,
                token: str = RoundToken) -> None:  # fmt: skip
    """Pause every table's clock in one act (all of them or none)."""
    _round_act("pause", round_id, url, token)


@round_app.command("resume")
def round_resume(round_id: str = typer.Argument(..., help="The round."), url: str = Url,
                 token: str = RoundToken) -> None:  # fmt: skip
    """Resume every paused table's clock in one act."""
    _round_act("resume", round_id, url, token)


@round_app.command("spectator")
def round_spectator(
    round_id: str = typer.Argument(..., help="The round."),
    delay: int | None = typer.Option(
        None,
        "--delay",
        help="Seconds behind the tables (0-3600): the round's delay from now on, on every "
        "link of its tables (but a live one). Absent: the round's delay as it is.",
    ),
    revoke: bool = typer.Option(False, "--revoke", help="Revoke the link instead."),
    url: str = Url,
    token: str = RoundToken,
) -> None:
    """A new spectator link for the round (the old one stops working), or --revoke it."""
    path = f"/v1/rounds/{round_id}/spectator"
    if revoke:
        call_service(url, token, "DELETE", path)
        console.print(f"The spectator link of round {round_id} is revoked.", highlight=False)
        return
    answer = call_service(url, token, "POST", path, {} if delay is None else {"delay": delay})
    _print_link("Round spectator link", answer, url)


@seat_app.command("call")
def seat_call(
    game_id: str = typer.Argument(..., help="The game."),
    reason: str | None = typer.Option(None, "--reason", help="Why (the director alone reads it)."),
    url: str = Url,
    token: str = typer.Option(
        ..., "--token", envvar="CHARLESTON_SEAT_TOKEN", help="The seat's token."
    ),
) -> None:
    """Call the director to the table."""
    body = {"reason": reason} if reason is not None else {}
    _done("call", call_service(url, token, "POST", f"/v1/games/{game_id}/call", body), game_id)
