"""What leaves in more than one route: events as a role may see them, and diagrams."""

from __future__ import annotations

from typing import Any

from fastapi.responses import Response

from ..engine.views import redact
from .auth import seat_of
from .problems import ApiProblem, bad_request


def _iso(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else value


def _client_command_id(stored_id: str | None, role: str) -> str | None:
    """The id the seat sent, from the store's ``<seat>:<id>``; ``None`` for others' ids."""
    if stored_id and stored_id.startswith(f"{role}:"):
        return stored_id[len(role) + 1 :]
    return None


def seed_text(seed: int | None) -> str | None:
    """A deal's seed as the API gives it: its decimal digits as text. Seeds reach 2**62,
    past the 2**53 a JavaScript (or any IEEE double) number holds exactly, and a director
    who quotes a rounded one to deal again gets other tiles. The signed record keeps the
    number its hash covers (docs/record.md)."""
    return None if seed is None else str(seed)


def event_out(stored: Any, role: str) -> dict[str, Any]:
    """One stored event as ``role`` may see it: redacted for a seat, whole for the director.

    Seats never get the hash chain: a hash over a payload of a few tile ids could be
    brute-forced back to the tiles.
    """
    seat = seat_of(role)
    data = redact(stored.event, seat)
    if data["type"] == "game_created" and isinstance(data["payload"].get("seed"), int):
        data["payload"] = {**data["payload"], "seed": seed_text(data["payload"]["seed"])}
    data["seq"] = stored.seq
    data["created_at"] = _iso(stored.created_at)
    if seat is None:
        data["command_id"] = stored.command_id
        data["prev_hash"] = stored.prev_hash
        data["hash"] = stored.hash
    else:
        own = _client_command_id(stored.command_id, role)
        if own is not None:
            data["command_id"] = own
    return data


# -- diagrams (charleston_fsm.diagrams, written by the diagrams engineer) -----------------------
DIAGRAM_TYPES = {
    "svg": "image/svg+xml",
    "dot": "text/vnd.graphviz; charset=utf-8",
    "mermaid": "text/plain; charset=utf-8",
}
#: the 200 of a diagram route in the OpenAPI document: one content type per format
DIAGRAM_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The diagram: SVG (default), Graphviz DOT or Mermaid (`?format=`)",
        "content": {
            media.split(";")[0]: {"schema": {"type": "string"}} for media in DIAGRAM_TYPES.values()
        },
    }
}


def diagram(render: Any, subject: Any, fmt: str) -> Response:
    """Render with :mod:`charleston_fsm.diagrams`; SVG needs Graphviz's ``dot``."""
    if fmt not in DIAGRAM_TYPES:
        raise bad_request(
            "unknown_diagram_format", f"Choose a format among: {', '.join(DIAGRAM_TYPES)}."
        )
    from statemachine.contrib.diagram import GraphvizNotFoundError

    try:
        content = render(subject, fmt)
    except GraphvizNotFoundError:
        raise ApiProblem(
            503,
            "graphviz_unavailable",
            "SVG needs Graphviz on the server; ask for format=dot or format=mermaid.",
            kind="server",
        ) from None
    return Response(content, media_type=DIAGRAM_TYPES[fmt])
