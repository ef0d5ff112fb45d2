"""What runs on after the request: a seat's bot, and the game's event stream."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from fastapi.concurrency import run_in_threadpool
from sse_starlette import EventSourceResponse, ServerSentEvent

from .deps import BotsDep, Credentials, NotifierDep, StoreDep, authenticate, seat_only
from .render import event_out

STREAM_POLL_SECONDS = 15.0  # safety re-read when no notification arrives
BOT_REFUSAL = "Only a seat's own token hands it to a bot."

router = APIRouter(tags=["games"])


# -- bots -----------------------------------------------------------------------------------
@router.post(
    "/games/{game_id}/bot",
    status_code=202,
    summary="Hand the token's seat to a bot (it plays from that seat's view only)",
    description=(
        "The bot runs in the service process that took the request and plays until "
        "the Charleston is over and it has nothing left to do. It is not persisted: "
        "after a restart, hand the seat over again. DELETE takes the seat back."
    ),
)
async def start_bot(
    game_id: str,
    request: Request,
    bots: BotsDep,
    _: Credentials,
    seed: Annotated[int | None, Query(description="The bot's random seed")] = None,
) -> dict[str, Any]:
    seat = await run_in_threadpool(seat_only, request, game_id, BOT_REFUSAL)
    started = bots.start(game_id, seat, seed)
    return {"game_id": game_id, "seat": seat.value, "bot": "playing", "started": started}


@router.delete("/games/{game_id}/bot", summary="Take the seat back from its bot")
async def stop_bot(game_id: str, request: Request, bots: BotsDep, _: Credentials) -> dict[str, Any]:
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
        "`?after=seq`."
    ),
    response_class=EventSourceResponse,
)
async def stream(
    game_id: str,
    request: Request,
    store: StoreDep,
    notifier: NotifierDep,
    _: Credentials,
    after: Annotated[int | None, Query(ge=0)] = None,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> EventSourceResponse:
    role = await run_in_threadpool(authenticate, request, game_id)
    start = after if after is not None else 0
    if after is None and last_event_id and last_event_id.isdigit():
        start = int(last_event_id)
    sub = notifier.subscribe(game_id)

    async def messages() -> AsyncIterator[ServerSentEvent]:
        last = start
        try:
            yield ServerSentEvent(
                data=json.dumps({"game_id": game_id, "role": role, "after": last}),
                event="subscribed",
            )
            while True:
                for stored in await run_in_threadpool(store.events, game_id, last):
                    yield ServerSentEvent(
                        data=json.dumps(event_out(stored, role)),
                        event=stored.type,
                        id=str(stored.seq),
                    )
                    last = stored.seq
                await sub.wait(STREAM_POLL_SECONDS)
        finally:
            notifier.unsubscribe(sub)

    return EventSourceResponse(messages(), ping=10)
