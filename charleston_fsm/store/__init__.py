"""The event store: games as hash-chained event rows, a projection, replay and audit.

See ``docs/architecture.md`` (the contract) and ``docs/store.md`` (schema and queries).
"""

from .anchors import ANCHOR_EVERY, Anchor, AnchorKey, load_key
from .anchors import read_file as read_anchor_file
from .anchors import write_file as write_anchor_file
from .audit import AuditReport, Confirmation, PassAudit, Transfer
from .bots import play_bots
from .connection_budget import ConnectionBudget
from .errors import (
    CommandIdConflict,
    Conflict,
    EventNotFound,
    GameNotFound,
    GameQuarantined,
    InvalidGameSetup,
    InvalidRound,
    OutcomeUnknown,
    QuarantineNotLifted,
    RoundNotFound,
    SchemaNotCurrent,
    StoreError,
    StoreUnavailable,
)
from .game_store import GameStore
from .hashing import hash_token
from .notices import CHANNEL as NOTIFY_CHANNEL
from .results import ExecuteResult, GameSummary
from .rounds import MAX_TABLES, RoundListing, RoundTable, check_round_size
from .rows import StoredEvent
from .schema import SchemaState, SchemaStatus, alembic_config
from .urls import DEFAULT_URL, ENV_VAR, resolve_url
from .verify import Finding, Verification

__all__ = [
    "ANCHOR_EVERY",
    "DEFAULT_URL",
    "ENV_VAR",
    "MAX_TABLES",
    "NOTIFY_CHANNEL",
    "Anchor",
    "AnchorKey",
    "AuditReport",
    "CommandIdConflict",
    "Confirmation",
    "Conflict",
    "ConnectionBudget",
    "EventNotFound",
    "ExecuteResult",
    "Finding",
    "GameNotFound",
    "GameQuarantined",
    "GameStore",
    "GameSummary",
    "InvalidGameSetup",
    "InvalidRound",
    "OutcomeUnknown",
    "PassAudit",
    "QuarantineNotLifted",
    "RoundListing",
    "RoundNotFound",
    "RoundTable",
    "SchemaNotCurrent",
    "SchemaState",
    "SchemaStatus",
    "StoreError",
    "StoreUnavailable",
    "StoredEvent",
    "Transfer",
    "Verification",
    "alembic_config",
    "check_round_size",
    "hash_token",
    "load_key",
    "play_bots",
    "read_anchor_file",
    "resolve_url",
    "write_anchor_file",
]
