"""The store's refusals: typed like the engine's, so callers handle one family of errors."""

from __future__ import annotations

from ..errors import CharlestonError, SetupError


class StoreError(CharlestonError):
    """A command the store could not take now; the game is unchanged, a retry may succeed."""

    kind = "not_now"
    code = "store_error"
    rule = "Every accepted command is stored in full or not at all."


class GameNotFound(StoreError):
    kind = "not_found"
    code = "game_not_found"
    rule = "Commands go to a game that exists."


class Conflict(StoreError):
    """Another writer changed the game first (or held it too long); retry the command."""

    code = "conflict"
    rule = "Commands to one game are applied one at a time, each to the latest state."


class CommandIdConflict(StoreError):
    code = "command_id_conflict"
    rule = "A command id names one command; a retry must send the same command again."


class StoreUnavailable(StoreError):
    """The database connection failed during the command; nothing was stored."""

    code = "store_unavailable"
    rule = "Every accepted command is stored in full or not at all."


class SchemaNotCurrent(StoreError):
    kind = "setup"
    code = "schema_not_current"
    rule = "The database schema is migrated to the version this code expects."


class InvalidGameSetup(SetupError):
    code = "invalid_game_setup"
    rule = "Players and credentials name the four seats or the director."


class EventNotFound(StoreError):
    kind = "not_found"
    code = "event_not_found"
    rule = "A game's events are numbered from 1 to its last seq."
