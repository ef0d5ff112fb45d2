"""The event store: games as hash-chained event rows, a projection, replay and audit.

See ``docs/architecture.md`` (the contract) and ``docs/store.md`` (schema and queries).
"""

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
    "CommandIdConflict",
    "Conflict",
    "EventNotFound",
    "ExecuteResult",
    "GameNotFound",
    "GameStore",
    "GameSummary",
    "InvalidGameSetup",
    "SchemaNotCurrent",
    "StoreError",
    "StoreUnavailable",
    "StoredEvent",
    "Verification",
    "alembic_config",
    "hash_token",
    "resolve_url",
]
