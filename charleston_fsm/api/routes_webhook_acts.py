"""What an endpoint's owner does after registering it: rotate its secret, recover what
failed, resend one delivery (``store/platform/webhooks.py``; the rest of the webhook routes are
``routes_platform.py``'s, with the same keys: the platform's, or an organiser's for its
own endpoints, another's answering 403 ``not_your_webhook``)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field

from ..store.platform.webhooks import DEFAULT_GRACE_SECONDS, MAX_GRACE_SECONDS
from .deps import PLATFORM_OR_ORGANISER, StoreDep, TokenFirstRoute, token_first
from .organiser_keys import platform_or_organiser
from .routes_platform import _own_endpoint
from .schemas import problems
from .schemas_platform import CreatedWebhook, RecoveredDeliveries

router = APIRouter(
    tags=["platform"],
    route_class=TokenFirstRoute,
    dependencies=[Depends(PLATFORM_OR_ORGANISER)],
)


class RotateSecret(BaseModel):
    model_config = ConfigDict(extra="forbid")
    secret: str | None = Field(
        None, description="The new v1 secret (whsec_<base64>); left out, the service makes one"
    )
    grace_seconds: int = Field(
        DEFAULT_GRACE_SECONDS,
        ge=0,
        le=MAX_GRACE_SECONDS,
        description="How long the replaced secret still signs, as a second v1 signature "
        "(default 24 h, at most 7 days; 0: not at all)",
    )


class Recover(BaseModel):
    model_config = ConfigDict(extra="forbid")
    since: datetime = Field(description="Resend the deliveries given up of entries from then")
    until: datetime | None = Field(None, description="… and before then (left out: until now)")


EntryId = Annotated[str, Path(description="A delivery's webhook-id (its feed entry's id)")]


@router.post(
    "/webhooks/{endpoint_id}/rotate-secret",
    summary="Rotate a v1 endpoint's secret (the new one is shown this once; the old one "
    "still signs for the grace)",
    response_model=None,
    responses={200: {"model": CreatedWebhook}, **problems(400, 401, 403, 404, 422, 503)},
)
@token_first(platform_or_organiser)
async def rotate_secret(
    endpoint_id: str, body: RotateSecret, request: Request, store: StoreDep
) -> dict[str, Any]:
    await run_in_threadpool(_own_endpoint, request, store, endpoint_id)
    return await run_in_threadpool(
        store.webhooks.rotate, endpoint_id, body.secret, body.grace_seconds
    )


@router.post(
    "/webhooks/{endpoint_id}/recover",
    status_code=202,
    summary="Resend every delivery given up of the entries written in a window",
    response_model=None,
    responses={202: {"model": RecoveredDeliveries}, **problems(400, 401, 403, 404, 422, 503)},
)
@token_first(platform_or_organiser)
async def recover(
    endpoint_id: str, body: Recover, request: Request, store: StoreDep
) -> dict[str, Any]:
    await run_in_threadpool(_own_endpoint, request, store, endpoint_id)
    return await run_in_threadpool(store.webhooks.recover, endpoint_id, body.since, body.until)


@router.post(
    "/webhooks/{endpoint_id}/resend/{entry_id}",
    status_code=202,
    summary="Resend one delivery (by its webhook-id), whatever became of it",
    response_model=None,
    responses={202: {"model": RecoveredDeliveries}, **problems(400, 401, 403, 404, 503)},
)
@token_first(platform_or_organiser)
async def resend(
    endpoint_id: str, entry_id: EntryId, request: Request, store: StoreDep
) -> dict[str, Any]:
    await run_in_threadpool(_own_endpoint, request, store, endpoint_id)
    return await run_in_threadpool(store.webhooks.resend, endpoint_id, entry_id)
