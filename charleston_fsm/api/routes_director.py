"""What only the director's token reads: the audit, the hash chain check, the live diagram."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from .deps import Credentials, StoreDep, director_only
from .render import diagram
from .schemas import VerifyResult, problems

router = APIRouter(tags=["director"])


@router.get(
    "/games/{game_id}/audit",
    summary="Audit report (director)",
    responses=problems(401, 403, 404),
)
def get_audit(
    game_id: str,
    request: Request,
    store: StoreDep,
    _: Credentials,
    format: Annotated[str, Query(pattern="^(json|text)$")] = "json",
) -> Response:
    director_only(request, game_id)
    report = store.audit(game_id)
    if format == "text":
        return PlainTextResponse(report.to_text())
    return JSONResponse(report.to_dict())


@router.get(
    "/games/{game_id}/verify",
    summary="Check the hash chain",
    response_model=None,
    responses={200: {"model": VerifyResult}, **problems(401, 403, 404)},
)
def get_verify(game_id: str, request: Request, store: StoreDep, _: Credentials) -> dict[str, Any]:
    director_only(request, game_id)
    result = store.verify(game_id)
    return {
        "game_id": game_id,
        "ok": bool(result.ok),
        "first_bad_seq": result.first_bad_seq,
        "message": result.message,
    }


@router.get(
    "/games/{game_id}/diagram",
    summary="The ruleset's diagram with this game's active states highlighted",
)
def get_game_diagram(
    game_id: str,
    request: Request,
    store: StoreDep,
    _: Credentials,
    format: Annotated[str, Query(description="svg, dot or mermaid")] = "svg",
) -> Response:
    director_only(request, game_id)
    from .. import diagrams

    return diagram(diagrams.live, store.table(game_id), format)
