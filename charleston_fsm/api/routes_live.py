"""What runs on after the request: a seat's bot, and the game's event stream."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from fastapi.concurrency import run_in_threadpool
from sse_starlette import EventSourceResponse, ServerSentEvent

from ..store import GameQuarantined
from ..store.database.models import MAX_SEQ
from .auth import bearer_token, seat_of, token_hash
from .deps import (
    BotsDep,
    GameCredentials,
    NotifierDep,
    SeatCredentials,
    StoreDep,
    authenticate,
    seat_only,
)
from .problems import bad_request, status_for
from .render import event_out
from .schemas import BotStarted, BotStopped, problems

STREAM_POLL_SECONDS = 15.0  # safety re-read when no notification arrives
SEQ_TEXT = re.compile(r"^[0-9]{1,10}$")  # ASCII digits only: int() also takes "٣" and "1_0"
BOT_REFUSAL = "Only a seat's own token hands it to a bot."

router = APIRouter(tags=["games"])


# -- bots -----------------------------------------------------------------------------------
@router.post(
    "/games/{game_id}/bot",
    status_code=202,
    summary="Hand the token's seat to a bot (it plays from that seat's view only)",
    response_model=None,
    responses={202: {"model": BotStarted}, **problems(400, 401, 403, 404, 423, 503)},
    description=(
        "The bot runs in the service process that took the request and plays until "
        "the Charleston is over and it has nothing left to do. It is not persisted: "
        "after a restart, hand the seat over again. DELETE takes the seat back."
    ),
)
async def start_bot(
    game_id: str,
    request: Request,
    store: StoreDep,
    bots: BotsDep,
    _: SeatCredentials,
    seed: Annotated[int | None, Query(description="The bot's random seed")] = None,
) -> dict[str, Any]:
    seat = await run_in_threadpool(seat_only, request, game_id, BOT_REFUSAL)
    await run_in_threadpool(store.reads.ensure_open, game_id)
    started = bots.start(game_id, seat, seed)
    return {"game_id": game_id, "seat": seat.value, "bot": "playing", "started": started}


@router.delete(
    "/games/{game_id}/bot",
    summary="Take the seat back from its bot",
    response_model=None,
    responses={200: {"model": BotStopped}, **problems(401, 403, 404, 503)},
)
async def stop_bot(
    game_id: str, request: Request, bots: BotsDep, _: SeatCredentials
) -> dict[str, Any]:
    seat = await run_in_threadpool(seat_only, request, game_id, BOT_REFUSAL)
    stopped = await bots.stop(game_id, seat)
    return {"game_id": game_id, "seat": seat.value, "stopped": stopped}


# -- live stream ----------------------------------------------------------------------------
@router.get(
    "/games/{game_id}/stream",
    summary="Server-sent events: the game's events as they are stored, redacted",
    description=(
        "Each SSE message is one stored event (`id` = seq, `event` = type, `data` = the "
        "event as GET /events shows it to this token). Resume with `Last-Event-ID` or "
        "`?after=seq`. A game quarantined while streaming ends its stream with one "
        "`game_quarantined` message (the problem document)."
    ),
    response_class=EventSourceResponse,
    responses={
        200: {
            "description": "The stream: `subscribed`, then one message per stored event",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        },
        **problems(400, 401, 404, 423, 503),
    },
)
async def stream(
    game_id: str,
    request: Request,
    store: StoreDep,
    notifier: NotifierDep,
    _: GameCredentials,
    after: Annotated[int | None, Query(ge=0, le=MAX_SEQ)] = None,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> EventSourceResponse:
    role = await run_in_threadpool(authenticate, request, game_id)
    await run_in_threadpool(store.reads.ensure_open, game_id)
    start = after if after is not None else resume_from(last_event_id)
    sub = notifier.subscribe(game_id)
    digest = token_hash(bearer_token(request) or "")

    async def messages() -> AsyncIterator[ServerSentEvent]:
        last = start
        try:
            yield ServerSentEvent(
                data=json.dumps({"game_id": game_id, "role": role, "after": last}),
                event="subscribed",
            )
            while True:
                try:
                    stored_events = await run_in_threadpool(store.reads.events, game_id, last)
                except GameQuarantined as exc:
                    yield ServerSentEvent(data=json.dumps(problem_message(exc)), event=exc.code)
                    return
                for stored in stored_events:
                    if (
                        _replaces(stored, role)
                        and await run_in_threadpool(store.registry.role_for, game_id, digest)
                        != role
                    ):  # a substitute took the seat: this token opens nothing now
                        yield ServerSentEvent(data=json.dumps(_replaced()), event="invalid_token")
                        return
                    yield ServerSentEvent(
                        data=json.dumps(event_out(stored, role)),
                        event=stored.type,
                        id=str(stored.seq),
                    )
                    last = stored.seq
                if stored_events:
                    clock = await run_in_threadpool(
                        store.clock_worker.clock_view, game_id, seat_of(role)
                    )
                    if clock is not None:  # a seat's own deadline only (the director: all)
                        yield ServerSentEvent(
                            data=json.dumps({"game_id": game_id, "seq": last, "clock": clock}),
                            event="deadline",
                        )
                await sub.wait(STREAM_POLL_SECONDS)
        finally:
            notifier.unsubscribe(sub)

    return EventSourceResponse(messages(), ping=10)


def _replaces(stored: Any, role: str) -> bool:
    """Whether the row gave the stream's seat a new token."""
    return (
        stored.type == "seat_taken"
        and stored.seat == role
        and bool(stored.payload.get("token_replaced"))
    )


def _replaced() -> dict[str, Any]:
    return {
        "status": 401,
        "code": "invalid_token",
        "kind": "auth",
        "detail": "A substitute took this seat with a new token: this one opens nothing now.",
        "rule": "SVC-14",
    }


def problem_message(exc: GameQuarantined) -> dict[str, Any]:
    """The refusal as a stream's last message (headers are long gone by then)."""
    return {
        "status": status_for(exc),
        "code": exc.code,
        "kind": exc.kind,
        "detail": exc.message,
        "rule": exc.rule,
    }


def resume_from(last_event_id: str | None) -> int:
    """The seq in ``Last-Event-ID`` (the ``id`` of a message this stream sent), else 0."""
    if not last_event_id:
        return 0
    if not SEQ_TEXT.match(last_event_id) or int(last_event_id) > MAX_SEQ:
        raise bad_request(
            "invalid_last_event_id",
            f"Last-Event-ID is the id of a message of this stream: a seq, 0 to {MAX_SEQ} "
            "in ASCII digits.",
        )
    return int(last_event_id)
