"""The feed (a page, or a stream) and the webhooks: the platform's, or an organiser's own.

The feed is ``store/platform/feed.py``'s: one order of every game's and round's lifecycle,
resumable from any entry's cursor on any process. Webhooks are ``store/platform/webhooks.py``'s
endpoints, sent by every process's worker (``webhook_sender.py``). The feed's pages and
streams are read from a standby where the service has one (``store.standby``): a cursor
past a lagging standby's head is asked of the primary, so it is never refused wrongly.

The platform key (anyone, where the service has none) reads the whole feed and manages
every endpoint. An organiser's key reads the entries of its own games and rounds only
(the same cursors: its pages skip the others' entries), creates endpoints that are its
own (``organiser_id``; the outbox gives them its own entries only) and lists, reads,
pauses, resumes and deletes those alone: another's endpoint is **403**
``not_your_webhook`` (not a 404, as ``not_your_game``: the id is right, the key is not;
an unknown endpoint is a 404 for every caller).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field
from sse_starlette import EventSourceResponse, ServerSentEvent

from ..store import GameStore
from ..store.platform.feed import MAX_PAGE, Entry, InvalidCursor, Scope, of_organiser, parse_cursor
from .deps import PLATFORM_OR_ORGANISER, StoreDep, TokenFirstRoute, token_first
from .organiser_keys import ORGANISER_RULE, platform_or_organiser
from .problems import bad_request, forbidden
from .schemas import problems
from .schemas_platform import CreatedWebhook, FeedPage, WebhookEndpoint, WebhookList, WebhookLog
from .webhook_sender import check_url

#: every route here takes the platform's key or an organiser's (anyone's, without a
#: platform key): the router declares it for the document (deps.PLATFORM_OR_ORGANISER)
router = APIRouter(
    tags=["platform"],
    route_class=TokenFirstRoute,
    dependencies=[Depends(PLATFORM_OR_ORGANISER)],
)
#: how often a feed stream looks for new entries besides the commit notices
STREAM_POLL_SECONDS = 0.5
#: a filtered or scoped stream's checkpoint (its head passed entries it skipped) at most
#: this often (or every heartbeat, when that is shorter)
CHECKPOINT_SECONDS = 5.0

After = Annotated[
    str | None,
    Query(description="A cursor: read the entries after it (leave out: from the start)"),
]
#: entry types' names (``game.finished``): any other is refused 422 ``unknown_entry_type``
#: (``feed.check_types``, as webhook registration does) and never reaches the database
Types = Annotated[
    list[str] | None,
    Query(description="Only entries of these types (repeat the parameter); unknown: 422"),
]


@router.get(
    "/feed",
    summary="The feed: every game's and round's lifecycle, in one order, from a cursor",
    response_model=None,
    responses={200: {"model": FeedPage}, **problems(400, 401, 403, 422, 503)},
    description=(
        "Entries in the feed's one order (the same on every service process, and after "
        "restarts). Read on with `after=<next>`; an empty page means nothing newer yet. "
        "`next` is the head when the page is short: past every entry the filter skipped. "
        "A cursor past the newest entry is refused (400 `cursor_ahead`), an unknown type "
        "422 `unknown_entry_type`. Entries carry no tile. See docs/platforms.md."
    ),
)
@token_first(platform_or_organiser)
async def read_feed(
    request: Request,
    store: StoreDep,
    after: After = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100,
    types: Types = None,
) -> dict[str, Any]:
    scope = await run_in_threadpool(_scope, request)
    entries, cursor = await run_in_threadpool(_read, store, after, limit, types, scope)
    return {"entries": [e.to_dict() for e in entries], "next": cursor}


@router.get(
    "/feed/stream",
    summary="The feed as server-sent events (each event's id is its cursor)",
    response_model=None,
    responses={
        200: {
            "description": "The stream: the entries after the cursor, then each new one",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        },
        **problems(400, 401, 403, 422, 503),
    },
    description=(
        "The entries after `after` (or the `Last-Event-ID` header a reconnecting "
        "EventSource sends), then each new one as it is positioned. A comment line "
        "(`: ping`) every heartbeat keeps the connection open; a filtered (or an "
        "organiser's) stream sends a `checkpoint` event, its id the cursor past the "
        "entries it skipped, so a reconnect resumes there."
    ),
)
@token_first(platform_or_organiser)
async def stream_feed(
    request: Request,
    store: StoreDep,
    after: After = None,
    types: Types = None,
    last_event_id: Annotated[str | None, Header()] = None,
) -> EventSourceResponse:
    cursor = last_event_id or after
    scope = await run_in_threadpool(_scope, request)
    # a bad cursor (400) or type (422) is refused now, before the stream starts
    await run_in_threadpool(_read, store, cursor, 1, types, scope)
    heartbeat: float = request.app.state.feed_heartbeat
    every = min(CHECKPOINT_SECONDS, heartbeat)
    return EventSourceResponse(
        _entries(request, store, cursor, types, scope, every), ping=heartbeat
    )


def _scope(request: Request) -> Scope:
    """Which entries the caller reads: all (the platform) or its own organiser's."""
    organiser_id = platform_or_organiser(request)
    return None if organiser_id is None else of_organiser(organiser_id)


def _read(
    store: GameStore,
    after: str | None,
    limit: int,
    types: list[str] | None,
    scope: Scope,
) -> tuple[list[Entry], str]:
    try:
        return store.standby.feed.read(after, limit, types, scope)
    except InvalidCursor as bad:
        raise bad_request(bad.code, bad.message) from None


class FeedHead:
    """The feed's newest position, read at most once per :data:`STREAM_POLL_SECONDS` for
    every feed stream of this process (from a standby when there is one): an idle stream
    reads nothing, and a new entry costs each stream one read of its own page."""

    def __init__(self, store: GameStore) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._read_at = float("-inf")
        self._position = 0

    def position(self) -> int:
        with self._lock:
            now = time.monotonic()
            if now - self._read_at >= STREAM_POLL_SECONDS:
                self._position = parse_cursor(self._store.standby.feed.head())
                self._read_at = now
            return self._position

    @classmethod
    def of(cls, request: Request, store: GameStore) -> FeedHead:
        """The app's one (made on its first feed stream)."""
        with _MAKING:
            head: FeedHead | None = getattr(request.app.state, "feed_head", None)
            if head is None:
                head = request.app.state.feed_head = cls(store)
            return head


_MAKING = threading.Lock()


async def _entries(
    request: Request,
    store: GameStore,
    cursor: str | None,
    types: list[str] | None,
    scope: Scope,
    checkpoint_every: float,
) -> AsyncIterator[ServerSentEvent]:
    """The entries after ``cursor``, then new ones: a read whenever the process's
    :class:`FeedHead`, polled every :data:`STREAM_POLL_SECONDS`, moves past the stream's
    cursor (positions come after the commit, so a commit's notice would not find its
    entry positioned yet anyway; and no notice reaches a standby).

    A read answers the cursor past what it skipped (the head, ``Feed.read``); when that
    is beyond the last event's id, a ``checkpoint`` event with it as id follows, at most
    every ``checkpoint_every`` seconds (as a filtered subscription of an event store
    sends its checkpoints), so a reconnecting client does not read the skipped entries
    again."""
    sent = cursor or ""  # the id a reconnect would send
    last_checkpoint = time.monotonic()
    head = FeedHead.of(request, store)
    while not await request.is_disconnected():
        entries, cursor = await run_in_threadpool(
            store.standby.feed.read, cursor, MAX_PAGE, types, scope
        )
        for entry in entries:
            yield ServerSentEvent(
                data=json.dumps(entry.to_dict()), event=entry.type, id=entry.cursor
            )
            sent = entry.cursor
        now = time.monotonic()
        if cursor != sent and now - last_checkpoint >= checkpoint_every:
            yield ServerSentEvent(
                data=json.dumps({"cursor": cursor}), event="checkpoint", id=cursor
            )
            sent, last_checkpoint = cursor, now
        if len(entries) < MAX_PAGE:
            at = parse_cursor(cursor)
            while not await request.is_disconnected():
                await asyncio.sleep(STREAM_POLL_SECONDS)
                if await run_in_threadpool(head.position) > at:
                    break  # something new: read this stream's page
                if cursor != sent and time.monotonic() - last_checkpoint >= checkpoint_every:
                    break  # its checkpoint is due


# -- webhooks --------------------------------------------------------------------------------
class CreateWebhook(BaseModel):
    model_config = ConfigDict(extra="forbid")
    url: str = Field(
        description="Where to POST (http or https; public addresses only; a non-ASCII host "
        "or path is stored IDNA- and percent-encoded)"
    )
    event_types: list[str] = Field(
        default_factory=lambda: ["*"], description="Entry types to send, or ['*']"
    )
    signing: Literal["v1", "v1a"] = Field(
        "v1", description="v1: HMAC-SHA256 with a secret; v1a: Ed25519, GET /v1/anchor-key"
    )
    secret: str | None = Field(
        None, description="v1 only: whsec_<base64>; left out, the service makes one"
    )


@router.post(
    "/webhooks",
    status_code=201,
    summary="Register a webhook endpoint (its v1 secret is shown this once)",
    response_model=None,
    responses={201: {"model": CreatedWebhook}, **problems(400, 401, 403, 422, 503)},
)
@token_first(platform_or_organiser)
async def create_webhook(body: CreateWebhook, request: Request, store: StoreDep) -> dict[str, Any]:
    owner = await run_in_threadpool(platform_or_organiser, request)
    url = await run_in_threadpool(check_url, body.url)  # stored encoded (webhook_urls.py)
    return await run_in_threadpool(
        store.webhooks.create, url, body.event_types, body.signing, body.secret, owner
    )


@router.get(
    "/webhooks",
    summary="The webhook endpoints",
    response_model=None,
    responses={200: {"model": WebhookList}, **problems(401, 403, 503)},
)
@token_first(platform_or_organiser)
async def list_webhooks(request: Request, store: StoreDep) -> dict[str, Any]:
    owner = await run_in_threadpool(platform_or_organiser, request)
    return {"endpoints": await run_in_threadpool(store.webhooks.list, owner)}


@router.get(
    "/webhooks/{endpoint_id}",
    summary="One endpoint and its delivery log (last attempts, counts, next retry)",
    response_model=None,
    responses={200: {"model": WebhookLog}, **problems(401, 403, 404, 503)},
)
@token_first(platform_or_organiser)
async def get_webhook(
    endpoint_id: str,
    request: Request,
    store: StoreDep,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> dict[str, Any]:
    await run_in_threadpool(_own_endpoint, request, store, endpoint_id)
    return await run_in_threadpool(store.webhooks.deliveries, endpoint_id, limit)


@router.post(
    "/webhooks/{endpoint_id}/pause",
    summary="Pause an endpoint (entries keep collecting, sent once resumed)",
    response_model=None,
    responses={200: {"model": WebhookEndpoint}, **problems(401, 403, 404, 503)},
)
@token_first(platform_or_organiser)
async def pause_webhook(endpoint_id: str, request: Request, store: StoreDep) -> dict[str, Any]:
    await run_in_threadpool(_own_endpoint, request, store, endpoint_id)
    return await run_in_threadpool(store.webhooks.set_status, endpoint_id, "paused")


@router.post(
    "/webhooks/{endpoint_id}/resume",
    summary="Resume an endpoint (also one a 410 disabled: what it had pending, then new entries)",
    response_model=None,
    responses={200: {"model": WebhookEndpoint}, **problems(401, 403, 404, 503)},
)
@token_first(platform_or_organiser)
async def resume_webhook(endpoint_id: str, request: Request, store: StoreDep) -> dict[str, Any]:
    await run_in_threadpool(_own_endpoint, request, store, endpoint_id)
    return await run_in_threadpool(store.webhooks.set_status, endpoint_id, "active")


@router.delete(
    "/webhooks/{endpoint_id}",
    status_code=204,
    summary="Delete an endpoint, what it had pending and its log",
    response_class=Response,
    responses=problems(401, 403, 404, 503),
)
@token_first(platform_or_organiser)
async def delete_webhook(endpoint_id: str, request: Request, store: StoreDep) -> Response:
    await run_in_threadpool(_own_endpoint, request, store, endpoint_id)
    await run_in_threadpool(store.webhooks.delete, endpoint_id)
    return Response(status_code=204)


def _own_endpoint(request: Request, store: GameStore, endpoint_id: str) -> None:
    """Refuse an organiser's key another's endpoint (403; an unknown one: 404 first).
    An endpoint's owner never changes, so the check holds for the act that follows."""
    caller = platform_or_organiser(request)
    if caller is None:
        return
    if store.webhooks.get(endpoint_id)["organiser_id"] != caller:
        raise forbidden(
            "not_your_webhook",
            f"This organiser's key opens only its own organiser's webhook endpoints, and "
            f"{endpoint_id!r} is not one of them.",
            ORGANISER_RULE,
        )
