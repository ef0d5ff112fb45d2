"""What only the director's token reads or does: the audit, verify, the quarantine and
its lift, the live diagram, and the commands no seat gives."""

from __future__ import annotations

import contextlib
from typing import Annotated, Any

from fastapi import APIRouter, Body, Header, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from ..engine.annotations import from_director
from ..engine.commands import ANNOTATION_COMMANDS, DIRECTOR_COMMANDS
from ..store.evidence.audit import AuditReport
from .commands import command_answer, command_from, command_id_of, execute_with_retries
from .deps import DirectorCredentials, StoreDep, TokenFirstRoute, director_only, token_first
from .problems import ApiProblem, bad_request
from .render import DIAGRAM_RESPONSES, diagram
from .schemas import (
    COMMAND_HEADERS,
    DirectorCommandResult,
    LiftQuarantine,
    QuarantineList,
    QuarantineOut,
    VerifyResult,
    problems,
)
from .schemas_commands import DIRECTOR_COMMAND_MODELS, declared_body

router = APIRouter(tags=["director"], route_class=TokenFirstRoute)


def _director_guard(request: Request) -> None:
    """The director's token of this game, checked before a body is read (as for seats:
    no token is a 401, a seat's a 403, whatever the body). Until the body is read, the
    only command id a refusal can name is an ``Idempotency-Key`` header's."""
    key = request.headers.get("Idempotency-Key")
    if key:
        with contextlib.suppress(ApiProblem):
            request.state.command_id = command_id_of(None, key)
    director_only(request, request.path_params["game_id"])


@router.get(
    "/games/{game_id}/audit",
    summary="Audit report (director)",
    response_model=None,
    responses={
        200: {
            "model": AuditReport,
            "content": {"text/plain": {"schema": {"type": "string"}}},
            "description": "The report as JSON, or as text with format=text",
        },
        **problems(400, 401, 403, 404, 423, 503),
    },
)
def get_audit(
    game_id: str,
    request: Request,
    store: StoreDep,
    _: DirectorCredentials,
    format: Annotated[str, Query(pattern="^(json|text)$")] = "json",
) -> Response:
    director_only(request, game_id)
    report = store.standby.auditor.audit(game_id)  # a read: a standby's, when fresh
    if format == "text":
        return PlainTextResponse(report.to_text())
    return JSONResponse(report.to_dict())


@router.get(
    "/games/{game_id}/verify",
    summary="Verify the stored record: hashes, head, anchors, projection (quarantines on failure)",
    response_model=None,
    responses={200: {"model": VerifyResult}, **problems(401, 403, 404, 503)},
    description=(
        "The same checks as `charleston-fsm verify`. A failed verify quarantines the game "
        "(`quarantine` in the answer): its events, views, replay, stream and commands "
        "answer 423 `game_quarantined` until a director lifts it."
    ),
)
def get_verify(
    game_id: str, request: Request, store: StoreDep, _: DirectorCredentials
) -> dict[str, Any]:
    director_only(request, game_id)
    return store.tamper.verify(game_id).to_dict()


@router.get(
    "/games/{game_id}/quarantine",
    summary="The game's quarantines, active and lifted (director)",
    response_model=None,
    responses={200: {"model": QuarantineList}, **problems(401, 403, 404)},
)
def get_quarantine(
    game_id: str, request: Request, store: StoreDep, _: DirectorCredentials
) -> dict[str, Any]:
    director_only(request, game_id)
    return {"game_id": game_id, "quarantines": store.tamper.quarantines(game_id)}


@router.post(
    "/games/{game_id}/quarantine/lift",
    summary="Lift the quarantine once the record verifies again (director)",
    response_model=None,
    responses={200: {"model": QuarantineOut}, **problems(400, 401, 403, 404, 409)},
    description=(
        "Runs verify first: while the record still fails, the answer is 409 "
        "`quarantine_not_lifted` with what is still wrong. The lift is recorded with the "
        "note."
    ),
)
@token_first(_director_guard)
def lift_quarantine(
    game_id: str,
    request: Request,
    store: StoreDep,
    _: DirectorCredentials,
    body: LiftQuarantine | None = None,
) -> dict[str, Any]:
    director_only(request, game_id)
    note = body.note if body is not None else ""  # checked as a ruling's text (KEPT)
    return store.tamper.lift_quarantine(game_id, by="director (HTTP)", note=note)


@router.get(
    "/games/{game_id}/diagram",
    summary="The ruleset's diagram with this game's active states highlighted",
    response_class=Response,
    responses={**DIAGRAM_RESPONSES, **problems(400, 401, 403, 404, 423, 503)},
)
def get_game_diagram(
    game_id: str,
    request: Request,
    store: StoreDep,
    _: DirectorCredentials,
    format: Annotated[str, Query(description="svg, dot or mermaid")] = "svg",
) -> Response:
    director_only(request, game_id)
    from .. import diagrams

    return diagram(diagrams.live, store.reads.table(game_id), format)


@router.post(
    "/games/{game_id}/director/commands",
    summary="A command of the platform or director (Ding Dong window, clock, rulings)",
    response_model=None,
    responses={
        200: {"model": DirectorCommandResult, "headers": COMMAND_HEADERS},
        **problems(400, 401, 403, 404, 409, 422, 423, 503),
    },
    openapi_extra=declared_body("DirectorCommand"),
    description=(
        "Commands no seat gives (`DirectorCommand`: "
        + ", ".join(f"`{name}`" for name in sorted(DIRECTOR_COMMAND_MODELS))
        + "). `close_ding_dong` (ruleset `four_winds`) ends the window in which East may "
        "request a Ding Dong; `judge_declaration` rules on East's declaration; "
        "`start_game` opens a held table; `pause_clock` and `resume_clock` stop and "
        "restart the game's clock (resuming moves every deadline by the paused time); "
        "`extend_time` adds seconds to a seat's deadline (no seat: every awaited seat's); "
        "`hand_to_bot` and `hand_back` hand a seat to the service's bot and back; "
        "`record_ruling` adds a ruling to the chain and `answer_call` answers a seat's "
        "call. Each is a recorded row; none moves a tile. "
        "`command_id` or `Idempotency-Key` makes a retry safe, as for seats."
    ),
)
@token_first(_director_guard)
def post_director_command(
    game_id: str,
    request: Request,
    store: StoreDep,
    _: DirectorCredentials,
    body: Annotated[dict[str, Any], Body(examples=[{"type": "close_ding_dong"}])],
    idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
) -> JSONResponse:
    body = dict(body)
    try:
        command_id = command_id_of(body.pop("command_id", None), idempotency_key)
    except ApiProblem:
        request.state.command_id = None  # refused, naming no id
        raise
    request.state.command_id = command_id  # every answer from here on names it
    director_only(request, game_id)
    kind = body.get("type")
    annotation = isinstance(kind, str) and kind in ANNOTATION_COMMANDS
    if (
        not isinstance(kind, str)
        or kind not in DIRECTOR_COMMANDS
        or ("seat" in body and not annotation)
    ):
        raise bad_request(
            "not_a_director_command",
            f"The director sends only {', '.join(sorted(DIRECTOR_COMMANDS))}, without a seat; "
            "seats send their own commands with their tokens.",
        )
    if annotation:
        result = store.writes.annotate(game_id, from_director(body), f"director:{command_id}")
        return command_answer(store, game_id, command_id, result, None)
    command = command_from(body)
    result = execute_with_retries(store, game_id, command, f"director:{command_id}")
    return command_answer(store, game_id, command_id, result, None)
