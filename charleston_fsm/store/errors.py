"""The store's refusals: typed like the engine's, so callers handle one family of errors."""

from __future__ import annotations

from ..engine.errors import CharlestonError, SetupError


class StoreError(CharlestonError):
    """A command the store could not take now; the game is unchanged, a retry may succeed."""

    kind = "not_now"
    code = "store_error"
    rule = "SVC-06"


class GameNotFound(StoreError):
    kind = "not_found"
    code = "game_not_found"
    rule = "SVC-07"


class RoundNotFound(StoreError):
    kind = "not_found"
    code = "round_not_found"
    rule = "SVC-09"


class Conflict(StoreError):
    """Another writer changed the game first (or held it too long); retry the command."""

    code = "conflict"
    rule = "SVC-06"


class CommandIdConflict(StoreError):
    code = "command_id_conflict"
    rule = "SVC-06"


class StoreUnavailable(StoreError):
    """The database failed before the command's commit: nothing was stored."""

    code = "store_unavailable"
    rule = "SVC-06"


class OutcomeUnknown(StoreError):
    """The connection failed during the commit (a ``COMMIT``, or a lone write's one
    statement, which commits as it runs): the command may or may not be stored.

    Never "nothing was stored": the commit may have reached the database before the
    connection died. A retry with the same command id is safe (applied at most once)
    and its answer says what is stored.
    """

    code = "outcome_unknown"
    rule = "SVC-06"


class SchemaNotCurrent(StoreError):
    kind = "setup"
    code = "schema_not_current"
    rule = "SVC-07"


class InvalidGameSetup(SetupError):
    code = "invalid_game_setup"
    rule = "SVC-03"


class GameQuarantined(StoreError):
    """Verify found the game's record broken: nothing is served or accepted until a
    director repairs the record and lifts the quarantine."""

    kind = "quarantined"
    code = "game_quarantined"
    rule = "SVC-08"


class QuarantineNotLifted(StoreError):
    code = "quarantine_not_lifted"
    rule = "SVC-08"


class InvalidRound(SetupError):
    """A round that cannot be made as asked (its size, or one of its tables)."""

    code = "invalid_round"
    rule = "SVC-09"


class OrganiserNotFound(StoreError):
    kind = "not_found"
    code = "organiser_not_found"
    rule = "SVC-05"


class InvalidOrganiser(SetupError):
    """An organiser that cannot be created as asked (its name)."""

    code = "invalid_organiser"
    rule = "SVC-05"
