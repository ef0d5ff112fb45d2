"""Spectators: a read-only link per table and per round, and what it shows.

The director issues (again, with a delay) or revokes a table's link, the round's
director the round's; every answer a spectator gets is built by
:mod:`charleston_fsm.engine.spectators` (no tile, ever) behind the link's delay, applied
here by the service (``store.spectating``): the view, the events and the stream. A
spectator's token opens nothing else: no seat's view, no desk, no command.

What a spectator reads needs no lock and may be a moment late, so it is read from a
standby where the service has one (``store.standby``, ``store/database/standbys.py``), else from
the primary; the link itself (its token, its delay, its revocation) is always the
primary's, through this process's cache of it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field
from sse_starlette import EventSourceResponse, ServerSentEvent

from ..engine.view_models import SpectatorView
from ..store import GameQuarantined
from ..store.database.models import MAX_SEQ
from ..store.games.reads import check_could_exist
from ..store.rounds.credentials import MAX_DELAY
from ..store.rounds.spectating import BehindDelay
from .auth import bearer_token, new_token, token_hash
from .commands import command_id_of
from .deps import (
    DirectorCredentials,
    NotifierDep,
    RoundCredentials,
    SpectatorCredentials,
    StoreDep,
    TokenFirstRoute,
    director_only,
    token_first,
)
from .game_setup import spectator_page
from .logs import log
from .problems import ApiProblem, command_headers, unauthorized
from .responses import FastJSONResponse
from .routes_live import STREAM_POLL_SECONDS, problem_message, resume_from
from .routes_rounds import SPECTATOR_RULE, round_director_only
from .schemas import problems
from .schemas_platform import SpectatedRound, SpectatorEvents

router = APIRouter(tags=["spectators"], route_class=TokenFirstRoute)
IdempotencyKey = Annotated[str | None, Header(alias="Idempotency-Key")]


class RoundLinkBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    delay: int | None = Field(
        None,
        ge=0,
        le=MAX_DELAY,
        strict=True,
        description="Seconds behind the tables (0: live); absent: the round's delay as it "
        "is. It becomes the round's delay, which every link of its tables keeps (but a "
        "featured table's live link).",
    )
    command_id: str | None = Field(None, description="Not used by a round's link.")


class LinkBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    delay: int | None = Field(
        None,
        ge=0,
        le=MAX_DELAY,
        strict=True,
        description="Seconds behind the table; absent: its round's delay (0 for a single "
        "game: live). A table of a round is never shown less than the round's delay "
        "behind but by `live`.",
    )
    live: bool = Field(
        False,
        strict=True,
        description="A featured table's live link: the table as it happens, its round's "
        "delay set aside (an explicit choice; no `delay` with it).",
    )
    command_id: str | None = Field(None, description="Makes a retry safe (a table's link).")


class SpectatorLink(BaseModel):
    token: str | None = Field(description="The link's secret, shown once (null: revoked).")
    link: str | None = Field(description="The spectator page with the secret after #.")
    delay: int | None = Field(description="Seconds the link lags behind (null: revoked).")
    live: bool | None = Field(
        None, description="True when the link shows the table as it happens (no delay)."
    )
    command_id: str | None = None


class SpectatedTable(BaseModel):
    game_id: str
    role: str = Field(description="Always spectator.")
    players: dict[str, Any]
    delay: int = Field(description="Seconds the view lags behind the table.")
    live: bool = Field(description="True when the link shows the table as it happens.")
    view: SpectatorView


# -- the director's links ---------------------------------------------------------------------
def _director_guard(request: Request) -> None:
    director_only(request, request.path_params["game_id"])


def _round_guard(request: Request) -> None:
    round_director_only(request, request.path_params["round_id"])


@router.post(
    "/games/{game_id}/spectator",
    summary="A new spectator link for the table, with its delay; the old one void (director)",
    response_model=None,
    responses={200: {"model": SpectatorLink}, **problems(400, 401, 403, 404, 409, 422, 423, 503)},
    description="A `spectator_link` row (issued, delay). The token is shown once. A table "
    "of a round keeps the round's delay: a shorter one is 422 `below_round_delay`; a "
    "featured table's live link is `{\"live\": true}`. The answer states the link's delay.",
)
@token_first(_director_guard)
def post_spectator(
    game_id: str,
    request: Request,
    store: StoreDep,
    _: DirectorCredentials,
    body: LinkBody | None = None,
    idempotency_key: IdempotencyKey = None,
) -> FastJSONResponse:
    director_only(request, game_id)
    return _set_link(request, store, game_id, body or LinkBody(), idempotency_key, issue=True)


@router.delete(
    "/games/{game_id}/spectator",
    summary="Revoke the table's spectator link (director)",
    response_model=None,
    responses={200: {"model": SpectatorLink}, **problems(400, 401, 403, 404, 409, 423, 503)},
    description="A `spectator_link` row (revoked); the link stops working on every process "
    "within a second, and its open streams end.",
)
def delete_spectator(
    game_id: str,
    request: Request,
    store: StoreDep,
    _: DirectorCredentials,
    idempotency_key: IdempotencyKey = None,
) -> FastJSONResponse:
    director_only(request, game_id)
    return _set_link(request, store, game_id, LinkBody(), idempotency_key, issue=False)


def _set_link(
    request: Request,
    store: Any,
    game_id: str,
    body: LinkBody,
    idempotency_key: str | None,
    *,
    issue: bool,
) -> FastJSONResponse:
    command_id = command_id_of(body.command_id, idempotency_key)
    request.state.command_id = command_id
    if issue:
        _check_link(store, game_id, body)
    token = new_token() if issue else None
    digest = token_hash(token) if token else None
    delay = store.credentials.set_spectator(
        game_id, digest, body.delay or 0, f"director:{command_id}", live=body.live
    )
    request.app.state.roles.forget({game_id})
    request.app.state.notifier.publish(game_id)  # its open streams look at their link now
    answer = {
        "token": token,
        "link": spectator_page(game_id, token) if token else None,
        "delay": delay,
        "live": None if delay is None else delay == 0,
        "command_id": command_id,
    }
    return FastJSONResponse(answer, headers=command_headers(command_id))


def _check_link(store: Any, game_id: str, body: LinkBody) -> None:
    """A live link has no delay; any other link of a round's table keeps the round's."""
    if body.live and body.delay:
        raise ApiProblem(
            422,
            "live_with_delay",
            'A live link shows the table as it happens: send {"live": true} without a '
            "delay, or a delay without live.",
            kind="request",
            rule=SPECTATOR_RULE,
        )
    of_round = store.credentials.round_of(game_id)
    if of_round and not body.live and body.delay is not None and body.delay < of_round[1]:
        raise ApiProblem(
            422,
            "below_round_delay",
            f"This table's round shows its spectators {of_round[1]} s behind, on every "
            f"link of its tables: a delay of {body.delay} s is shorter. Leave the delay out "
            '(the round\'s), give a longer one, or send {"live": true} for a featured '
            "table's live link.",
            kind="request",
            rule=SPECTATOR_RULE,
        )


@router.post(
    "/rounds/{round_id}/spectator",
    summary="A new spectator link for the round, with its delay; the old one void",
    response_model=None,
    responses={200: {"model": SpectatorLink}, **problems(400, 401, 404, 422, 503)},
    description="Its delay becomes the round's: every spectator link of its tables is "
    "shown at least that far behind (but a featured table's live link).",
)
@token_first(_round_guard)
def post_round_spectator(
    round_id: str,
    request: Request,
    store: StoreDep,
    _: RoundCredentials,
    body: RoundLinkBody | None = None,
) -> dict[str, Any]:
    round_director_only(request, round_id)
    body = body or RoundLinkBody()
    delay = store.credentials.round_delay(round_id) if body.delay is None else body.delay
    token = new_token()
    store.credentials.set_round_spectator(round_id, token_hash(token), delay)
    _changed(request, round_id)
    return {
        "token": token,
        "link": _round_page(round_id, token),
        "delay": delay,
        "live": delay == 0,
    }


@router.delete(
    "/rounds/{round_id}/spectator",
    summary="Revoke the round's spectator link",
    response_model=None,
    responses={200: {"model": SpectatorLink}, **problems(401, 404, 503)},
    description="The link stops working on every process within a second, and its open "
    "streams end; the round's delay stays, on every link of its tables.",
)
def delete_round_spectator(
    round_id: str, request: Request, store: StoreDep, _: RoundCredentials
) -> dict[str, Any]:
    round_director_only(request, round_id)
    store.credentials.set_round_spectator(round_id, None, 0)
    _changed(request, round_id)
    return {"token": None, "link": None, "delay": None, "live": None}


def _changed(request: Request, round_id: str) -> None:
    """This process forgets the round's link now and wakes its open streams (every other
    process does within a second: ``token_cache.CredentialWatch``)."""
    request.app.state.roles.forget({round_id})
    request.app.state.notifier.publish(round_id)


def _round_page(round_id: str, token: str) -> str:
    return f"/watch/round/{round_id}#token={token}"


# -- what a spectator reads ---------------------------------------------------------------------
def spectator_only(request: Request, game_id: str) -> int:
    """The delay of the spectator link this request's token is, for this game (a 404
    for an unknown game before any 401)."""
    store = request.app.state.store
    check_could_exist(game_id)
    token = bearer_token(request)
    digest = token_hash(token or "")
    cache = request.app.state.roles
    delay = cache.spectator((game_id, digest)) if token else None
    if delay is None:
        store.registry.last_seq(game_id)  # GameNotFound
        delay = store.credentials.spectator_delay(game_id, digest) if token else None
        if delay is not None:
            cache.remember_spectator((game_id, digest), delay)
    if token is None:
        raise unauthorized(
            "missing_token", "Send the spectator link's token as 'Authorization: Bearer <token>'."
        )
    if delay is None:
        raise unauthorized(
            "invalid_token",
            "This token is not a spectator link of this table (it may have been revoked).",
        )
    request.state.role = "spectator"
    return delay


def _behind(exc: BehindDelay) -> ApiProblem:
    left = max(1, int((exc.shown_at - datetime.now(UTC)).total_seconds()) + 1)
    return ApiProblem(
        409,
        "behind_delay",
        "This link shows the table behind a delay: nothing of it is old enough yet. "
        f"Look again in {left} s.",
        kind="not_now",
        rule=SPECTATOR_RULE,
        headers={"Retry-After": str(left)},
    )


@router.get(
    "/games/{game_id}/spectate",
    summary="The table as a spectator sees it, behind the link's delay (spectator's token)",
    response_model=None,
    responses={200: {"model": SpectatedTable}, **problems(401, 404, 409, 423, 503)},
    description="Seats, tile counts, each step's confirmations, the votes, the clock; "
    "never a tile. With a delay, the table as it stood `delay` seconds ago (409 "
    "`behind_delay` with Retry-After while nothing is that old).",
)
def get_spectate(
    game_id: str, request: Request, store: StoreDep, _: SpectatorCredentials
) -> FastJSONResponse:
    delay = spectator_only(request, game_id)
    try:
        shown = store.standby.spectating.view(game_id, delay)
    except BehindDelay as exc:
        raise _behind(exc) from None
    answer = {
        "game_id": game_id,
        "role": "spectator",
        "players": shown.players,
        "delay": delay,
        "live": delay == 0,
        "view": shown.view,
    }
    return FastJSONResponse(answer)


@router.get(
    "/games/{game_id}/spectate/events",
    summary="The table's events as a spectator may see them, behind the link's delay",
    response_model=None,
    responses={200: {"model": SpectatorEvents}, **problems(400, 401, 404, 423, 503)},
)
def get_spectate_events(
    game_id: str,
    request: Request,
    store: StoreDep,
    _: SpectatorCredentials,
    after: Annotated[int, Query(ge=0, le=MAX_SEQ)] = 0,
) -> dict[str, Any]:
    delay = spectator_only(request, game_id)
    events, _waiting = store.standby.spectating.events(game_id, after, delay)
    last = events[-1]["seq"] if events else after
    return {"game_id": game_id, "role": "spectator", "delay": delay, "live": delay == 0,
            "events": events, "last_seq": last}  # fmt: skip


@router.get(
    "/games/{game_id}/spectate/stream",
    summary="Server-sent events for a spectator: each row once it is older than the delay",
    response_class=EventSourceResponse,
    responses={
        200: {"content": {"text/event-stream": {"schema": {"type": "string"}}}},
        **problems(400, 401, 404, 423, 503),
    },
    description="As the game's stream, redacted for spectators: `subscribed`, then one "
    "message per row once it is older than the link's delay (`id` = seq). A revoked link "
    "(the table's or its round's) ends its stream within a second, on every process, "
    "with one `invalid_token` message.",
)
async def spectate_stream(
    game_id: str,
    request: Request,
    store: StoreDep,
    notifier: NotifierDep,
    _: SpectatorCredentials,
    after: Annotated[int | None, Query(ge=0, le=MAX_SEQ)] = None,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> EventSourceResponse:
    delay = await run_in_threadpool(spectator_only, request, game_id)
    await run_in_threadpool(store.standby.reads.ensure_open, game_id)
    start = after if after is not None else resume_from(last_event_id)
    of_round = await run_in_threadpool(store.credentials.round_of, game_id)
    # woken by the table's rows, and by a change of its links or its round's (every
    # process's credential watch publishes the games and rounds whose links changed)
    # read from a standby: woken once the rows are there (api/notify.py)
    sub = notifier.subscribe(game_id, also=(of_round[0],) if of_round else (), standby=True)
    digest = token_hash(bearer_token(request) or "")
    cache = request.app.state.roles

    async def messages() -> AsyncIterator[ServerSentEvent]:
        last, shown = start, delay
        try:
            hello = {"game_id": game_id, "role": "spectator", "after": last, "delay": delay}
            yield ServerSentEvent(data=json.dumps(hello), event="subscribed")
            while True:
                still = await run_in_threadpool(_link_delay, store, cache, game_id, digest)
                if still is None:  # revoked (or issued again): the link opens nothing now
                    yield ServerSentEvent(data=json.dumps(_revoked()), event="invalid_token")
                    return
                shown = still  # the round's delay raised: no row newer than it from now on
                try:
                    sent, waiting = await run_in_threadpool(
                        store.standby.spectating.events, game_id, last, shown
                    )
                except GameQuarantined as exc:
                    yield ServerSentEvent(data=json.dumps(problem_message(exc)), event=exc.code)
                    return
                for data in sent:
                    yield ServerSentEvent(
                        data=json.dumps(data), event=data["type"], id=str(data["seq"])
                    )
                    last = data["seq"]
                await sub.wait(_next_wait(waiting, shown))
        finally:
            notifier.unsubscribe(sub)

    log.info("spectator stream", extra={"role": "spectator"})
    return EventSourceResponse(messages(), ping=10)


def _link_delay(store: Any, cache: Any, game_id: str, digest: str) -> int | None:
    """The link's delay now (``None``: revoked): the primary's, through this process's
    cache, which every process empties within a second of a change of the game's or its
    round's links (``token_cache.CredentialWatch``), waking the stream."""
    delay: int | None = cache.spectator((game_id, digest))
    if delay is None:
        delay = store.credentials.spectator_delay(game_id, digest)
        if delay is not None:
            cache.remember_spectator((game_id, digest), delay)
    return delay


def _next_wait(waiting: list[Any], delay: int) -> float:
    """Until the first waiting row is older than the delay (or the usual poll)."""
    if not waiting:
        return STREAM_POLL_SECONDS
    due = waiting[0].created_at.timestamp() + delay - datetime.now(UTC).timestamp()
    return min(STREAM_POLL_SECONDS, max(0.05, due + 0.01))


def _revoked() -> dict[str, Any]:
    return {
        "status": 401,
        "code": "invalid_token",
        "kind": "auth",
        "detail": "This spectator link was revoked: it opens nothing any more.",
        "rule": SPECTATOR_RULE,
    }


@router.get(
    "/rounds/{round_id}/spectate",
    summary="The round's tables for its spectator link (the round's spectator token)",
    response_model=None,
    responses={200: {"model": SpectatedRound}, **problems(401, 404, 503)},
    description="Each table's number, label, players and game id (its spectator page is "
    "/watch/{game_id} with the same token), and where it is behind the link's delay: its "
    "step (phase, pass_number, pass_total, step), whether it ended and how (`ending`), "
    "`as_of` (the moment shown; null while nothing is that old: `shown_from`).",
)
def get_round_spectate(
    round_id: str, request: Request, store: StoreDep, _: SpectatorCredentials
) -> dict[str, Any]:
    token = bearer_token(request)
    store.rounds.round_opens(round_id, "")  # RoundNotFound before any 401
    delay = store.credentials.round_spectator_delay(round_id, token_hash(token)) if token else None
    if delay is None:
        raise unauthorized(
            "invalid_token" if token else "missing_token",
            "Send the round's spectator token as 'Authorization: Bearer <token>' (a revoked "
            "link opens nothing).",
        )
    request.state.role = "spectator"
    return store.standby.spectating.round_tables(round_id, delay)
