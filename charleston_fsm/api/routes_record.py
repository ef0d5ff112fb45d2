"""A record anyone can verify (the game's, signed), the public key that checks it, and a
round's results for the books."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import PlainTextResponse, Response

from ..ledger.record import anchor_key_document, export_record
from ..tournament.duplicate import NotDuplicate, comparison_csv, round_comparison
from ..tournament.results import results_csv, round_results
from .deps import DirectorCredentials, RoundCredentials, StoreDep, director_only
from .problems import ApiProblem
from .render import DIAGRAM_RESPONSES, diagram
from .routes_rounds import round_director_only
from .schemas import problems
from .schemas_platform import AnchorKeyDocument, RoundComparison, RoundResults

router = APIRouter(tags=["record"])


@router.get(
    "/anchor-key",
    summary="The Ed25519 public key that signs exported records (no token)",
    response_model=None,
    responses={200: {"model": AnchorKeyDocument}},
)
def get_anchor_key(store: StoreDep) -> dict[str, str]:
    return anchor_key_document(store.anchor_key)


@router.get(
    "/games/{game_id}/record",
    summary="The game's record as JSON Lines, its head signed with Ed25519 (director)",
    response_class=Response,
    responses={
        200: {"content": {"application/jsonl": {"schema": {"type": "string"}}}},
        **problems(400, 401, 403, 404, 422, 423, 503),
    },
    description=(
        "The deal, every row with its hash, and the head signed after the store verified "
        "the game (format `charleston-fsm record v1`, docs/record.md). Anyone checks it "
        "without a database: `charleston-fsm record verify FILE --public-key KEY`."
    ),
)
async def get_record(
    game_id: str, request: Request, store: StoreDep, _: DirectorCredentials
) -> Response:
    await run_in_threadpool(director_only, request, game_id)
    # verified and exported from one standby's rows (a copy as of a moment), when fresh
    text = await run_in_threadpool(store.standby.call, export_record, store, game_id)
    return Response(
        text,
        media_type="application/jsonl",
        headers={"Content-Disposition": f'attachment; filename="game-{game_id}.jsonl"'},
    )


@router.get(
    "/rounds/{round_id}/results",
    summary="A round's results: per table its end, late seats, rulings, verdicts",
    response_model=None,
    responses={
        200: {
            "content": {
                "text/csv": {"schema": {"type": "string"}},
            },
            "model": RoundResults,
            "description": "The results as JSON, or as CSV with format=csv",
        },
        **problems(400, 401, 404, 503),
    },
)
def get_round_results(
    round_id: str,
    request: Request,
    store: StoreDep,
    _: RoundCredentials,
    format: Annotated[str, Query(pattern="^(json|csv)$")] = "json",
) -> Any:
    round_director_only(request, round_id)
    results = store.standby.call(round_results, store, round_id)
    if format == "csv":
        return PlainTextResponse(
            results_csv(results),
            media_type="text/csv",
            headers={"Content-Disposition": f'attachment; filename="round-{round_id}.csv"'},
        )
    return results


@router.get(
    "/rounds/{round_id}/comparison",
    summary="A duplicate round's tables compared on their one deal (the round's director)",
    response_model=None,
    responses={
        200: {
            "content": {
                "text/csv": {"schema": {"type": "string"}},
            },
            "model": RoundComparison,
            "description": "The comparison as JSON, or as CSV with format=csv",
        },
        **problems(400, 401, 404, 409, 503),
    },
    description=(
        "Per table and seat: the tiles passed at each step (to whom, and those passed on "
        "unseen), the votes, the courtesy counts, and where the table's Charleston "
        "stopped, read from each table's audit. A table's row fills in when its "
        "Charleston ends; tiles, the deal and its number only once every table's has "
        "(`complete`; until then `withheld` says why). A round dealt per table: 409."
    ),
)
def get_round_comparison(
    round_id: str,
    request: Request,
    store: StoreDep,
    _: RoundCredentials,
    format: Annotated[str, Query(pattern="^(json|csv)$")] = "json",
) -> Any:
    round_director_only(request, round_id)
    try:
        comparison = store.standby.call(round_comparison, store, round_id)
    except NotDuplicate:
        raise ApiProblem(
            409,
            "round_not_duplicate",
            f"Round {round_id!r} deals each table its own tiles, so there is nothing to "
            'compare: a round created with "deal": "duplicate" deals every table the '
            "same tiles.",
            kind="setup",
            rule="SVC-09",
        ) from None
    if format == "csv":
        return PlainTextResponse(
            comparison_csv(comparison),
            media_type="text/csv",
            headers={
                "Content-Disposition": f'attachment; filename="round-{round_id}-comparison.csv"'
            },
        )
    return comparison


@router.get(
    "/games/{game_id}/replay/diagram",
    summary="The diagram with the active states of the table at seq N (director)",
    response_class=Response,
    responses={**DIAGRAM_RESPONSES, **problems(400, 401, 403, 404, 423, 503)},
    description="What the desk's timeline slider lights: the configuration after row `seq`.",
)
def get_replay_diagram(
    game_id: str,
    request: Request,
    store: StoreDep,
    _: DirectorCredentials,
    seq: Annotated[int, Query(ge=1)],
    format: Annotated[str, Query(description="svg, dot or mermaid")] = "svg",
) -> Response:
    director_only(request, game_id)
    from .. import diagrams

    return diagram(diagrams.live, store.standby.reads.replay(game_id, at=seq), format)
