"""The director's commands through a running service: ``director ruling | pause | resume |
judge``. They go over HTTP with the director's (or the round's) token, so they are
authorised, recorded and streamed to every page exactly as the desk's buttons are."""

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
    import httpx

    try:
        with httpx.Client(base_url=url.rstrip("/"), timeout=30) as client:
            response = client.post(
                f"/v1/games/{game_id}/director/commands",
                json={**body, "command_id": f"cli-{uuid.uuid4().hex}"},
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
