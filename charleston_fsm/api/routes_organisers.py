"""Organisers and their keys (the platform's key), and the games and rounds a key may list.

The platform creates an organiser and hands its key to it once; the key creates that
organiser's games and rounds and directs them (:mod:`.organiser_keys` says what it is
refused, and why a 403 rather than a 404). A rotation answers with the new key and
voids the old one at once on every process; a revocation voids it without a new one.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from ..store.database.models import MAX_ORGANISER_NAME
from ..store.platform.organisers import MAX_PAGE, Organiser
from .auth import new_token, token_hash
from .deps import (
    PlatformCredentials,
    PlatformKeyCredentials,
    StoreDep,
    TokenFirstRoute,
    token_first,
)
from .logs import log
from .organiser_keys import ORGANISER_RULE, platform_itself, platform_or_organiser
from .problems import forbidden
from .responses import FastJSONResponse
from .schemas import problems

router = APIRouter(tags=["organisers"], route_class=TokenFirstRoute)


# -- bodies and answers ------------------------------------------------------------------------
class CreateOrganiser(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"name": "Club"}]})
    name: str = Field(
        min_length=1,
        max_length=MAX_ORGANISER_NAME,
        description="The organiser's name, as the platform knows it.",
    )


class OrganiserOut(BaseModel):
    organiser_id: str = Field(description="The organiser's id.")
    name: str = Field(description="The organiser's name.")
    created_at: str = Field(description="When the platform created it (UTC).")
    key_rotated_at: str | None = Field(description="When its key was last rotated (UTC).")
    revoked_at: str | None = Field(description="When its key was revoked; null: it works.")
    active: bool = Field(description="Whether its key opens anything now.")


class OrganiserKey(OrganiserOut):
    key: str = Field(
        description="The organiser's key, shown once (the service keeps only its SHA-256): "
        "send it as 'Authorization: Bearer <key>'."
    )


class OrganiserList(BaseModel):
    organisers: list[OrganiserOut] = Field(description="Every organiser, oldest first.")


class Page(BaseModel):
    total: int = Field(description="How many there are in all (for this caller).")
    limit: int = Field(description="At most this many in this answer.")
    offset: int = Field(description="How many were skipped, oldest first.")


class GameList(Page):
    games: list[dict[str, Any]] = Field(
        description="game_id, created_at, ruleset, status, round_id, table, organiser_id, "
        "links.self (no token: each was shown once, at creation)."
    )


class RoundList(Page):
    rounds: list[dict[str, Any]] = Field(
        description="round_id, name, created_at, tables (how many), organiser_id, links.self."
    )


Limit = Annotated[int, Query(ge=1, le=MAX_PAGE, description="At most this many.")]
#: past any real listing, and inside both databases' integers (a larger one was a 500)
MAX_OFFSET = 1_000_000_000
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET, description="Skip this many, oldest first.")]
OrganiserFilter = Annotated[
    str | None,
    Query(
        max_length=64,
        pattern="^[A-Za-z0-9_-]+$",  # an id; NUL or other text never reaches the database
        description="Only this organiser's (the platform's key; an organiser's key lists "
        "its own whatever this says, and may name only itself).",
    ),
]


def _with_key(organiser: Organiser, key: str) -> dict[str, Any]:
    return {**organiser.to_dict(), "key": key, "links": _links(organiser.organiser_id)}


def _links(organiser_id: str) -> dict[str, str]:
    return {"self": f"/v1/organisers/{organiser_id}", "key": f"/v1/organisers/{organiser_id}/key"}


# -- the platform's routes ---------------------------------------------------------------------
@router.post(
    "/organisers",
    status_code=201,
    summary="Create an organiser; returns its key, once (the platform key)",
    response_model=None,
    responses={201: {"model": OrganiserKey}, **problems(400, 401, 403, 413, 422, 503)},
    description=(
        "The key creates the organiser's own games and rounds (POST /v1/games, "
        "POST /v1/rounds), lists them (GET /v1/games, GET /v1/rounds) and directs them "
        "as their director's and round's tokens do; it is refused everything else (403)."
    ),
)
@token_first(platform_itself)
def create_organiser(
    body: CreateOrganiser, request: Request, store: StoreDep, _: PlatformKeyCredentials
) -> FastJSONResponse:
    platform_itself(request)
    key = new_token()
    organiser = store.organisers.create(body.name, token_hash(key))
    request.state.role = "platform"
    log.info("organiser created", extra={"organiser_id": organiser.organiser_id})
    answer = _with_key(organiser, key)
    return FastJSONResponse(answer, status_code=201, headers={"Location": answer["links"]["self"]})


@router.get(
    "/organisers",
    summary="Every organiser, with whether its key works (the platform key)",
    response_model=None,
    responses={200: {"model": OrganiserList}, **problems(401, 403, 503)},
)
def list_organisers(request: Request, store: StoreDep, _: PlatformKeyCredentials) -> dict[str, Any]:
    platform_itself(request)
    return {"organisers": [o.to_dict() for o in store.organisers.listing()]}


@router.get(
    "/organisers/{organiser_id}",
    summary="One organiser (the platform key, or that organiser's own)",
    response_model=None,
    responses={200: {"model": OrganiserOut}, **problems(401, 403, 404, 503)},
)
def get_organiser(
    organiser_id: str, request: Request, store: StoreDep, _: PlatformCredentials
) -> dict[str, Any]:
    caller = platform_or_organiser(request)
    if caller is not None and caller != organiser_id:
        raise forbidden(
            "not_your_organiser",
            "An organiser's key reads only its own organiser, not another.",
            ORGANISER_RULE,
        )
    return {**store.organisers.get(organiser_id).to_dict(), "links": _links(organiser_id)}


@router.post(
    "/organisers/{organiser_id}/key",
    summary="Rotate an organiser's key: a new one, shown once; the old one void (platform key)",
    response_model=None,
    responses={200: {"model": OrganiserKey}, **problems(401, 403, 404, 503)},
    description=(
        "The old key is refused from the commit on: at once on this process, within a "
        "second on every other. A revoked organiser gets a working key again. The "
        "organiser's games and rounds, and their own tokens, are untouched."
    ),
)
@token_first(platform_itself)
def rotate_organiser_key(
    organiser_id: str, request: Request, store: StoreDep, _: PlatformKeyCredentials
) -> FastJSONResponse:
    platform_itself(request)
    key = new_token()
    organiser = store.organisers.rotate(organiser_id, token_hash(key))
    _forget(request, organiser_id)
    log.info("organiser key rotated", extra={"organiser_id": organiser_id})
    return FastJSONResponse(_with_key(organiser, key))


@router.delete(
    "/organisers/{organiser_id}/key",
    summary="Revoke an organiser's key: it opens nothing any more (platform key)",
    response_model=None,
    responses={200: {"model": OrganiserOut}, **problems(401, 403, 404, 503)},
    description=(
        "Refused from the commit on (401 `organiser_key_revoked`): at once on this "
        "process, within a second on every other. Its games and rounds stay, and so do "
        "their own tokens; a rotation issues the organiser a new key."
    ),
)
def revoke_organiser_key(
    organiser_id: str, request: Request, store: StoreDep, _: PlatformKeyCredentials
) -> dict[str, Any]:
    platform_itself(request)
    organiser = store.organisers.revoke(organiser_id)
    _forget(request, organiser_id)
    log.info("organiser key revoked", extra={"organiser_id": organiser_id})
    return {**organiser.to_dict(), "links": _links(organiser_id)}


def _forget(request: Request, organiser_id: str) -> None:
    """This process forgets the key at once (the others: ``CredentialWatch``)."""
    request.app.state.roles.forget({organiser_id})


# -- what a key lists ----------------------------------------------------------------------------
@router.get(
    "/games",
    summary="The games the key may list: an organiser's own, or every game (platform key)",
    response_model=None,
    responses={200: {"model": GameList}, **problems(400, 401, 403, 503)},
)
def list_games(
    request: Request,
    store: StoreDep,
    _: PlatformCredentials,
    limit: Limit = 100,
    offset: Offset = 0,
    organiser: OrganiserFilter = None,
) -> dict[str, Any]:
    owner, every = _listed(request, organiser)
    total, games = store.organisers.games(owner, every=every, limit=limit, offset=offset)
    return {"games": games, "total": total, "limit": limit, "offset": offset}


@router.get(
    "/rounds",
    summary="The rounds the key may list: an organiser's own, or every round (platform key)",
    response_model=None,
    responses={200: {"model": RoundList}, **problems(400, 401, 403, 503)},
)
def list_rounds(
    request: Request,
    store: StoreDep,
    _: PlatformCredentials,
    limit: Limit = 100,
    offset: Offset = 0,
    organiser: OrganiserFilter = None,
) -> dict[str, Any]:
    owner, every = _listed(request, organiser)
    total, rounds = store.organisers.rounds(owner, every=every, limit=limit, offset=offset)
    return {"rounds": rounds, "total": total, "limit": limit, "offset": offset}


def _listed(request: Request, organiser: str | None) -> tuple[str | None, bool]:
    """Whose games or rounds a listing shows: (organiser, every one's)."""
    caller = platform_or_organiser(request)
    if caller is None:
        return organiser, organiser is None
    if organiser is not None and organiser != caller:
        raise forbidden(
            "not_your_organiser",
            "An organiser's key lists only its own games and rounds: leave 'organiser' out "
            "or give its own id.",
            ORGANISER_RULE,
        )
    return caller, False
