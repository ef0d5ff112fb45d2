"""The answers of the platform's routes (feed, webhooks), of a round's results and of the
spectator's listings, for the OpenAPI document (beside :mod:`.schemas`).

These objects are open (fields may be added; the views of :mod:`.schemas` are the closed
contract): a client generated from the document keeps a field it does not know in its
``additional_properties``. Every field named here is always present.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from ..store.platform.feed import ENTRY_TYPES

#: every feed entry type, from the feed's own list (store/platform/feed.py)
FeedEntryType = Literal[tuple(sorted(ENTRY_TYPES))]  # type: ignore[valid-type]


# -- the feed ----------------------------------------------------------------------------------
class FeedEntry(BaseModel):
    """One entry of the feed: what happened to a game or round, never a tile."""

    cursor: str = Field(description="Read on after this entry with ?after=<cursor>.")
    id: str = Field(description="The entry's id (a webhook's webhook-id).")
    type: FeedEntryType = Field(description="What happened (game.finished, round.created …).")
    at: str = Field(description="When it happened (UTC, ISO 8601).")
    game_id: str | None = Field(description="The game, for a game's entry.")
    round_id: str | None = Field(description="The round, where the entry names one.")
    seq: int | None = Field(description="The game's row that made the entry, if one did.")
    data: dict[str, Any] = Field(description="The type's own fields (docs/platforms.md).")


class FeedPage(BaseModel):
    """A page of the feed, oldest first."""

    entries: list[FeedEntry]
    next: str = Field(description="The cursor to read on from (the same when nothing is newer).")


# -- webhooks ----------------------------------------------------------------------------------
class WebhookEndpoint(BaseModel):
    """A webhook endpoint (its secret is shown only when it is created)."""

    id: str
    url: str
    event_types: list[str] = Field(description="The entry types it is sent, or ['*'].")
    signing: Literal["v1", "v1a"] = Field(description="v1: HMAC-SHA256; v1a: Ed25519.")
    status: str = Field(description="active, paused or disabled.")
    status_reason: str | None = Field(description="Why it is not active, when it is not.")
    created_at: str
    organiser_id: str | None = Field(description="Its organiser's; null: the platform's.")


class CreatedWebhook(WebhookEndpoint):
    secret: str | None = Field(
        None, description="v1: the signing secret (whsec_…), shown this once; v1a: absent."
    )


class RecoveredDeliveries(BaseModel):
    """What a recover or a resend scheduled again."""

    endpoint_id: str
    entry_id: str | None = Field(None, description="The delivery resent (resend only).")
    resent: int = Field(description="How many deliveries are pending again.")


class WebhookList(BaseModel):
    endpoints: list[WebhookEndpoint] = Field(description="Oldest first.")


class WebhookAttempt(BaseModel):
    entry_id: str
    at: str
    status_code: int | None = Field(description="The receiver's status; null: no answer.")
    error: str | None
    milliseconds: int | None


class NextRetry(BaseModel):
    entry_id: str
    at: str


class WebhookLog(BaseModel):
    """An endpoint and its delivery log."""

    endpoint: WebhookEndpoint
    pending: int
    delivered: int
    failed: int
    next_retry: NextRetry | None
    attempts: list[WebhookAttempt] = Field(description="The last attempts, newest first.")


# -- the record's key, a round's results --------------------------------------------------------
class AnchorKeyDocument(BaseModel):
    """The public key that checks exported records (docs/record.md)."""

    algorithm: Literal["Ed25519"]
    public_key: str = Field(description="Base64 of the 32-byte public key.")
    key_id: str
    format: str = Field(description="The record format it signs.")


class SeatingEntry(BaseModel):
    seq: int
    at: str
    by: str = Field(description="Who sat the seat from then on: human or bot.")
    label: str | None
    token_replaced: bool


class ResultRuling(BaseModel):
    seq: int
    at: str
    seat: str | None
    kind: str
    text: str


class ResultVerdict(BaseModel):
    seq: int
    at: str
    kind: str
    verdict: str


class TableResult(BaseModel):
    """One table's result: its end, late seats, who sat each seat, rulings, verdicts."""

    table: int
    game_id: str
    label: str | None
    players: dict[str, Any]
    finished: bool
    finished_at: str | None
    ending: str | None
    ended_reason: str | None
    late_seats: list[str]
    seats: dict[str, list[SeatingEntry]] = Field(description="Each seat's sitters, in order.")
    rulings: list[ResultRuling]
    verdicts: list[ResultVerdict]
    quarantined: bool


class RoundResults(BaseModel):
    """``GET /v1/rounds/{id}/results`` as JSON."""

    round_id: str
    name: str | None
    tables: list[TableResult] = Field(description="Table 1 first.")


class RoundComparison(BaseModel):
    """``GET /v1/rounds/{id}/comparison`` as JSON: a duplicate round's tables on their one
    deal; tiles, the deal and its number only once ``complete``."""

    round_id: str
    name: str | None
    deal: Literal["duplicate"]
    complete: bool
    withheld: str | None = Field(description="Why tiles are not shown yet; null once complete.")
    deal_seed: str | None = Field(description="The deal number as text; null until complete.")
    hands: dict[str, Any] | None
    tables: list[dict[str, Any]] = Field(description="Table 1 first.")


# -- what a spectator's link lists ---------------------------------------------------------------
class SpectatorEvent(BaseModel):
    """A row as a spectator is sent it: redacted (counts and directions, never a tile)."""

    type: str
    seq: int
    created_at: str


class SpectatorEvents(BaseModel):
    game_id: str
    role: Literal["spectator"]
    delay: int = Field(description="Seconds the link lags behind the table.")
    events: list[SpectatorEvent]
    last_seq: int


class SpectatedRoundTable(BaseModel):
    table: int
    game_id: str
    label: str | None
    players: dict[str, Any]


class SpectatedRound(BaseModel):
    round_id: str
    name: str | None
    delay: int
    tables: list[SpectatedRoundTable] = Field(
        description="Table 1 first; without a delay each also says where it is "
        "(state_labels, finished)."
    )
