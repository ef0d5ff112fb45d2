"""Typed refusals.

Every refusal has a stable machine-readable ``code``, the ``rule`` it enforces (a line a
player would recognise) and a ``message`` that says what went wrong and what to do.
``kind`` tells callers how to classify it without the engine knowing about HTTP:
``rule`` (the command breaks a rule), ``not_now`` (the command is not valid in the
current state), ``setup`` (a game cannot be created like that) and ``not_found``
(the game does not exist; raised by the store).

Messages only ever name the acting seat's own tiles or the tile ids it sent, so an
error can be shown to that seat without leaking anyone else's concealed tiles.
"""

from __future__ import annotations

from typing import ClassVar, Literal

ErrorKind = Literal["rule", "not_now", "setup", "not_found"]


class CharlestonError(Exception):
    """Base of every refusal; the table is left exactly as it was."""

    kind: ClassVar[ErrorKind] = "rule"
    code: ClassVar[str] = "charleston_error"
    rule: ClassVar[str] = ""

    def __init__(self, message: str, *, rule: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if rule is not None:
            self.rule = rule

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "kind": self.kind, "rule": self.rule, "message": self.message}


class RuleViolation(CharlestonError):
    kind = "rule"


class NotAllowedNow(CharlestonError):
    kind = "not_now"
    code = "not_allowed_now"
    rule = "The statechart decides which commands are valid in each state."


class SetupError(CharlestonError):
    kind = "setup"


# --- setup -----------------------------------------------------------------------------
class InvalidDeal(SetupError):
    code = "invalid_deal"
    rule = "The deal gives East 14 tiles and every other seat 13, each tile once."


class UnknownRuleset(SetupError):
    code = "unknown_ruleset"
    rule = "A game uses one of the published rulesets."


class InvalidOption(SetupError):
    code = "invalid_option"
    rule = "A ruleset's options are fixed at the creation of the game."


# --- pass selections ---------------------------------------------------------------------
class WrongCount(RuleViolation):
    code = "wrong_count"
    rule = "A standard pass is exactly 3 tiles; a courtesy pass 0-3."


class JokerPassed(RuleViolation):
    code = "joker_passed"
    rule = "Jokers are never passed."
    MESSAGE: ClassVar[str] = "Jokers cannot be passed during the Charleston."


class TileNotInHand(RuleViolation):
    code = "tile_not_in_hand"
    rule = "Tiles must be in the player's own hand."


class TileNamedTwice(RuleViolation):
    code = "tile_named_twice"
    rule = "Each tile is named once."


class BlindPassNotAllowed(RuleViolation):
    code = "blind_pass_not_allowed"
    rule = "A blind pass is allowed only on the last pass of each Charleston (nmjl)."


class TilesNotPlaced(RuleViolation):
    code = "tiles_not_placed"
    rule = "A player places received tiles before confirming the next pass."


# --- flow ------------------------------------------------------------------------------
class SeatNotInStep(NotAllowedNow):
    code = "seat_not_in_step"
    rule = "Only the players of the current step act in it."


class AlreadyConfirmed(NotAllowedNow):
    code = "already_confirmed"
    rule = "A confirmed choice is locked; it may be withdrawn or changed until the pass resolves."


class NothingConfirmed(NotAllowedNow):
    code = "nothing_confirmed"
    rule = "Only a confirmed choice can be withdrawn or changed."


class NothingToPlace(NotAllowedNow):
    code = "nothing_to_place"
    rule = "Received tiles are shown apart from the rack until the player places them."


class AlreadyVoted(NotAllowedNow):
    code = "already_voted"
    rule = "Each player votes once: continue or stop."


class AlreadyOffered(NotAllowedNow):
    code = "already_offered"
    rule = "Each player of a pair makes one courtesy offer."


class CharlestonOver(NotAllowedNow):
    code = "charleston_over"
    rule = "Once the Charleston is complete no more tiles are passed."


class OnlyEastDeclares(RuleViolation):
    code = "only_east_declares"
    rule = "Only East may declare a Heavenly or an Earthly Hand."


class AlreadyDeclared(NotAllowedNow):
    code = "already_declared"
    rule = "East declares Mah Jongg once."


class DeadHandChallengeRefused(RuleViolation):
    code = "dead_hand_challenge_refused"
    rule = "A hand cannot be called dead during the Charleston."


class InvalidCommand(RuleViolation):
    code = "invalid_command"
    rule = "A command names a known action and its fields."


class HeavenlyHandTooLate(NotAllowedNow):
    code = "heavenly_hand_too_late"
    rule = "East may declare a Heavenly Hand only before the first pass is confirmed."


class ReplayMismatch(CharlestonError):
    """A fold of recorded events did not reproduce what was recorded."""

    kind = "setup"
    code = "replay_mismatch"
    rule = "A game's state is rebuilt by folding its events through the same chart."
