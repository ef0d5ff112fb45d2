"""Typed refusals.

Every refusal has a stable machine-readable ``code``, the id of the ``rule`` it enforces
(in :mod:`charleston_fsm.rulebook`; ``rule_text`` is its statement) and a ``message``
that says what went wrong and what to do. Where the rule depends on the ruleset (a blind
pass refused in ``house`` or on the wrong step in ``nmjl``) the table raises the refusal
with the right id, one of the class's ``rule`` or ``other_rules``.
``kind`` tells callers how to classify it without the engine knowing about HTTP:
``rule`` (the command breaks a rule), ``not_now`` (the command is not valid in the
current state), ``setup`` (a game cannot be created like that) and ``not_found``
(the game does not exist; raised by the store).

Messages only ever name the acting seat's own tiles or the tile ids it sent, so an
error can be shown to that seat without leaking anyone else's concealed tiles.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from ..rulebook import get_rule, statement

ErrorKind = Literal["rule", "not_now", "setup", "not_found", "quarantined"]


class CharlestonError(Exception):
    """Base of every refusal; the table is left exactly as it was."""

    kind: ClassVar[ErrorKind] = "rule"
    code: ClassVar[str] = "charleston_error"
    rule: ClassVar[str] = ""
    other_rules: ClassVar[tuple[str, ...]] = ()  # ids a raise may name instead of ``rule``

    def __init__(self, message: str, *, rule: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if rule is not None:
            if rule not in (type(self).rule, *self.other_rules):
                raise ValueError(f"{type(self).__name__} does not enforce {get_rule(rule).id}")
            self.rule = rule  # type: ignore[misc]

    @property
    def rule_text(self) -> str:
        """The statement of :attr:`rule` in the rule book."""
        return statement(self.rule)

    def to_dict(self) -> dict[str, str]:
        return {
            "code": self.code,
            "kind": self.kind,
            "rule": self.rule,
            "rule_text": self.rule_text,
            "message": self.message,
        }


class RuleViolation(CharlestonError):
    kind = "rule"


class NotAllowedNow(CharlestonError):
    kind = "not_now"
    code = "not_allowed_now"
    rule = "SVC-01"
    other_rules: ClassVar[tuple[str, ...]] = ("NMJL-02", "NMJL-16")


class SetupError(CharlestonError):
    kind = "setup"


# --- setup -----------------------------------------------------------------------------
class InvalidDeal(SetupError):
    code = "invalid_deal"
    rule = "DEAL-01"


class UnknownRuleset(SetupError):
    code = "unknown_ruleset"
    rule = "SVC-03"


class InvalidOption(SetupError):
    code = "invalid_option"
    rule = "SVC-03"


# --- pass selections ---------------------------------------------------------------------
class WrongCount(RuleViolation):
    code = "wrong_count"
    rule = "PASS-01"
    other_rules = ("PASS-02", "NMJL-07", "NMJL-13", "FW-04")


class JokerPassed(RuleViolation):
    code = "joker_passed"
    rule = "PASS-03"
    MESSAGE: ClassVar[str] = "Jokers cannot be passed during the Charleston."


class TileNotInHand(RuleViolation):
    code = "tile_not_in_hand"
    rule = "PASS-04"


class TileNamedTwice(RuleViolation):
    code = "tile_named_twice"
    rule = "PASS-04"


class BlindPassNotAllowed(RuleViolation):
    code = "blind_pass_not_allowed"
    rule = "NMJL-07"
    other_rules = ("HOUSE-02", "FW-02")


class TilesNotPlaced(RuleViolation):
    code = "tiles_not_placed"
    rule = "PASS-08"


# --- flow ------------------------------------------------------------------------------
class SeatNotInStep(NotAllowedNow):
    code = "seat_not_in_step"
    rule = "PASS-10"


class AlreadyConfirmed(NotAllowedNow):
    code = "already_confirmed"
    rule = "PASS-05"


class NothingConfirmed(NotAllowedNow):
    code = "nothing_confirmed"
    rule = "PASS-05"


class NothingToPlace(NotAllowedNow):
    code = "nothing_to_place"
    rule = "PASS-08"


class AlreadyVoted(NotAllowedNow):
    code = "already_voted"
    rule = "NMJL-02"


class SecondCharlestonMandatory(NotAllowedNow):
    code = "second_charleston_mandatory"
    rule = "NMJL-06"
    other_rules = ("HOUSE-04",)


class OnlyStopNow(NotAllowedNow):
    code = "only_stop_now"
    rule = "NMJL-05"


class AlreadyOffered(NotAllowedNow):
    code = "already_offered"
    rule = "NMJL-13"


class CharlestonOver(NotAllowedNow):
    code = "charleston_over"
    rule = "NMJL-20"


class OnlyEastDeclares(RuleViolation):
    code = "only_east_declares"
    rule = "NMJL-17"


class AlreadyDeclared(NotAllowedNow):
    code = "already_declared"
    rule = "NMJL-15"
    other_rules = ("NMJL-21",)


class EarthlyHandTileCount(RuleViolation):
    code = "earthly_hand_tile_count"
    rule = "NMJL-15"


class DeadHandChallengeRefused(RuleViolation):
    code = "dead_hand_challenge_refused"
    rule = "NMJL-18"


class InvalidCommand(RuleViolation):
    code = "invalid_command"
    rule = "SVC-02"


class HeavenlyHandTooLate(NotAllowedNow):
    code = "heavenly_hand_too_late"
    rule = "NMJL-14"


class NoDeclarationToJudge(NotAllowedNow):
    code = "no_declaration_to_judge"
    rule = "NMJL-21"


class DeclarationAlreadyJudged(NotAllowedNow):
    code = "declaration_already_judged"
    rule = "NMJL-21"


class ReplayMismatch(CharlestonError):
    """A fold of recorded events did not reproduce what was recorded."""

    kind = "setup"
    code = "replay_mismatch"
    rule = "SVC-04"


# --- four_winds: exchanges and Ding Dong ------------------------------------------------
class NotInRuleset(NotAllowedNow):
    code = "not_in_ruleset"
    rule = "SVC-01"


class ExchangeTurn(NotAllowedNow):
    code = "exchange_turn"
    rule = "FW-02"


class ResponderOwnTilesOnly(RuleViolation):
    code = "responder_own_tiles_only"
    rule = "FW-02"


class OnlyEastRequestsDingDong(RuleViolation):
    code = "only_east_requests_ding_dong"
    rule = "FW-06"


class DingDongLimit(NotAllowedNow):
    code = "ding_dong_limit"
    rule = "FW-05"


class DingDongAfterReady(NotAllowedNow):
    code = "ding_dong_after_ready"
    rule = "FW-06"


class DingDongDisabled(NotAllowedNow):
    code = "ding_dong_disabled"
    rule = "FW-07"


class DingDongClosed(NotAllowedNow):
    code = "ding_dong_closed"
    rule = "FW-08"


class DingDongToSelf(RuleViolation):
    code = "ding_dong_to_self"
    rule = "FW-04"


class DingDongToNobody(RuleViolation):
    code = "ding_dong_to_nobody"
    rule = "FW-04"


class DingDongSameReceiver(RuleViolation):
    code = "ding_dong_same_receiver"
    rule = "FW-04"


class NotADirectorCommand(NotAllowedNow):
    code = "director_command"
    rule = "FW-08"


class ClockActed(NotAllowedNow):
    """The clock already acted for this seat in this step (its time ran out)."""

    code = "clock_acted"
    rule = "SVC-10"


class ClockNotRunning(NotAllowedNow):
    code = "clock_not_running"
    rule = "SVC-11"


# --- a round run as a round (issue 26) --------------------------------------------------
class TableNotStarted(NotAllowedNow):
    """The table was created held: nothing is taken until its director starts it."""

    code = "table_not_started"
    rule = "SVC-12"


class AlreadyStarted(NotAllowedNow):
    code = "already_started"
    rule = "SVC-12"


class NotAwaited(NotAllowedNow):
    """A seat arrived at a table that does not wait for it (started, or held for the
    director or a start time)."""

    code = "not_awaited"
    rule = "SVC-12"


class NothingToExtend(NotAllowedNow):
    code = "nothing_to_extend"
    rule = "SVC-13"


class SeatPlayedByBot(NotAllowedNow):
    """A seat the director handed to the service's bot gives no command of its own."""

    code = "seat_played_by_bot"
    rule = "SVC-14"


class SeatNotWithBot(NotAllowedNow):
    code = "seat_not_with_bot"
    rule = "SVC-14"


class SeatAlreadyWithBot(NotAllowedNow):
    code = "seat_already_with_bot"
    rule = "SVC-14"


class AlreadyCalled(NotAllowedNow):
    code = "director_already_called"
    rule = "SVC-15"


class NoOpenCall(NotAllowedNow):
    code = "no_open_call"
    rule = "SVC-15"
