"""The event store: games as hash-chained event rows, a projection, replay and audit.

See ``docs/architecture.md`` (the contract) and ``docs/store.md`` (schema and queries).
"""

from ..ledger.anchors import ANCHOR_EVERY, Anchor, AnchorKey, load_key
from ..ledger.anchors import read_file as read_anchor_file
from ..ledger.anchors import write_file as write_anchor_file
from ..ledger.errors import EventNotFound
from ..ledger.hashing import hash_token
from ..ledger.rows import StoredEvent
from ..ledger.verify import Finding, Verification
from .database.connection_budget import ConnectionBudget
from .database.notices import CHANNEL as NOTIFY_CHANNEL
from .database.schema import SchemaState, SchemaStatus, alembic_config
from .database.urls import DEFAULT_URL, ENV_VAR, resolve_url
from .errors import (
    CommandIdConflict,
    Conflict,
    GameNotFound,
    GameQuarantined,
    InvalidGameSetup,
    InvalidOrganiser,
    InvalidRound,
    OrganiserNotFound,
    OutcomeUnknown,
    QuarantineNotLifted,
    RoundNotFound,
    SchemaNotCurrent,
    StoreError,
    StoreUnavailable,
)
from .evidence.audit import AuditReport, Confirmation, PassAudit, Transfer
from .game_store import GameStore
from .games.bots import play_bots
from .games.new_game import NewGame
from .games.results import ExecuteResult, GameSummary
from .rounds.rounds import MAX_TABLES, RoundListing, RoundTable, check_round_size

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
    "InvalidOrganiser",
    "InvalidRound",
    "NewGame",
    "OrganiserNotFound",
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
