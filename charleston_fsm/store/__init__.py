"""The event store: games as hash-chained event rows, a projection, replay and audit.

See ``docs/architecture.md`` (the contract) and ``docs/store.md`` (schema and queries).
"""

from .audit import AuditReport, Confirmation, PassAudit, Transfer
from .bots import play_bots
from .errors import (
    CommandIdConflict,
    Conflict,
    EventNotFound,
    GameNotFound,
    InvalidGameSetup,
    SchemaNotCurrent,
    StoreError,
    StoreUnavailable,
)
from .game_store import (
    NOTIFY_CHANNEL,
    ExecuteResult,
    GameStore,
    GameSummary,
    StoredEvent,
    Verification,
    alembic_config,
)
from .hashing import hash_token
from .urls import DEFAULT_URL, ENV_VAR, resolve_url

__all__ = [
    "DEFAULT_URL",
    "ENV_VAR",
    "NOTIFY_CHANNEL",
    "AuditReport",
    "CommandIdConflict",
    "Confirmation",
    "Conflict",
    "EventNotFound",
    "ExecuteResult",
    "GameNotFound",
    "GameStore",
    "GameSummary",
    "InvalidGameSetup",
    "PassAudit",
    "SchemaNotCurrent",
    "StoreError",
    "StoreUnavailable",
    "StoredEvent",
    "Transfer",
    "Verification",
    "alembic_config",
    "hash_token",
    "play_bots",
    "resolve_url",
]
