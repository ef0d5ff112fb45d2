"""``webhooks verify``: check a received delivery (its headers, its body) offline."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from .common import console

commands = typer.Typer()
webhooks_app = typer.Typer(
    help="Webhooks as a receiver sees them: check a delivery's Standard Webhooks signature.",
    no_args_is_help=True,
)
commands.add_typer(webhooks_app, name="webhooks")


@webhooks_app.command("verify")
def webhooks_verify(
    headers: str = typer.Option(
        ...,
        "--headers",
        help="A JSON file of the delivery's headers (webhook-id, webhook-timestamp, "
        "webhook-signature; other headers are ignored).",
    ),
    body: str = typer.Option(..., "--body", help="A file of the delivery's body, as received."),
    secret: str | None = typer.Option(
        None, "--secret", help="The endpoint's v1 secret (whsec_...), given at registration."
    ),
    public_key: str | None = typer.Option(
        None,
        "--public-key",
        help="For a v1a endpoint: the service's Ed25519 public key (GET /v1/anchor-key).",
    ),
    tolerance: float = typer.Option(
        300, "--tolerance", help="Seconds the timestamp may be from now (a saved delivery: more)."
    ),
) -> None:
    """Check a delivery's signature (v1 with --secret, or v1a with --public-key) and its
    timestamp. Exit 0 when it holds, 1 when it does not, 2 when a file cannot be read."""
    from ..ledger.webhook_signatures import WebhookNotVerified, verify

    try:
        received = json.loads(Path(headers).read_text(encoding="utf-8"))
        raw = Path(body).read_bytes()
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or "not a JSON object of headers"
        console.print(f"[red]Cannot read the delivery: {reason}.", highlight=False)
        raise typer.Exit(2) from None
    if not isinstance(received, dict) or not all(isinstance(v, str) for v in received.values()):
        console.print("[red]--headers must be a JSON object of header names to text.")
        raise typer.Exit(2)
    try:
        msg_id = verify(received, raw, secret=secret, public_key=public_key, tolerance=tolerance)
    except WebhookNotVerified as refused:
        console.print(f"[red]not verified[/]: {refused.message}", highlight=False)
        raise typer.Exit(1) from None
    console.print(f"[green]verified[/]: delivery {msg_id}", highlight=False)
