"""The commands a player can give; each is one event of the chart.

Commands are pydantic models so that the HTTP layer and the event store validate and
serialise them with the same definitions as the engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, model_validator
from pydantic_core import PydanticCustomError

from .free_text import KEPT, ONE_LINE
from .seats import Seat
from .tiles import HAND_SIZE

#: no pass names more tiles than a rack holds (East's 14): a longer list is malformed
PassTiles = Annotated[list[int], Field(max_length=max(HAND_SIZE.values()))]


class _Command(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    seat: Seat

    @property
    def event(self) -> str:
        """The chart event this command sends."""
        return self.type  # type: ignore[attr-defined, no-any-return]


class ConfirmPass(_Command):
    """Choose and confirm the tiles of the current pass; ``blind`` of them come unseen."""

    type: Literal["confirm_pass"] = "confirm_pass"
    tiles: PassTiles
    blind: int = 0


class ChangePass(_Command):
    """Replace a confirmed choice before the pass resolves."""

    type: Literal["change_pass"] = "change_pass"
    tiles: PassTiles
    blind: int = 0


class WithdrawPass(_Command):
    type: Literal["withdraw_pass"] = "withdraw_pass"


class PlaceTiles(_Command):
    """Move the received tiles from beside the rack into it."""

    type: Literal["place_tiles"] = "place_tiles"


class Vote(_Command):
    type: Literal["vote"] = "vote"
    choice: Literal["continue", "stop"]


class OfferCourtesy(_Command):
    type: Literal["offer_courtesy"] = "offer_courtesy"
    count: int


class DeclareMahJongg(_Command):
    type: Literal["declare_mah_jongg"] = "declare_mah_jongg"


class ChallengeDeadHand(_Command):
    type: Literal["challenge_dead_hand"] = "challenge_dead_hand"
    target: Seat


class RequestDingDong(_Command):
    """East asks for a Ding Dong (``four_winds``)."""

    type: Literal["request_ding_dong"] = "request_ding_dong"


class Gift(BaseModel):
    """One Ding Dong tile and the player it goes to."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    tile: int
    to: Seat | None = None


class GiveDingDong(_Command):
    """A player's Ding Dong: one tile to each of the three others, each named."""

    type: Literal["give_ding_dong"] = "give_ding_dong"
    gifts: list[Gift]


class DeclareReady(_Command):
    """A player declares Ready: no Ding Dong may be requested any more (``four_winds``)."""

    type: Literal["declare_ready"] = "declare_ready"


class CloseDingDong(_Command):
    """The platform or the director closes the Ding Dong window (no seat gives it)."""

    type: Literal["close_ding_dong"] = "close_ding_dong"
    seat: Seat | None = None  # type: ignore[assignment]


MAX_JUDGEMENT_TEXT = 2000


class JudgeDeclaration(_Command):
    """The director's verdict on East's pending declaration (no seat gives it).

    ``valid`` ends the game with the hand; ``invalid`` sets it aside (NMJL-21).
    """

    type: Literal["judge_declaration"] = "judge_declaration"
    seat: Seat | None = None  # type: ignore[assignment]
    verdict: Literal["valid", "invalid"]
    text: Annotated[str, Field(min_length=1, max_length=MAX_JUDGEMENT_TEXT), KEPT]


Command = Annotated[
    ConfirmPass
    | ChangePass
    | WithdrawPass
    | PlaceTiles
    | Vote
    | OfferCourtesy
    | DeclareMahJongg
    | ChallengeDeadHand
    | RequestDingDong
    | GiveDingDong
    | DeclareReady
    | CloseDingDong
    | JudgeDeclaration,
    Field(discriminator="type"),
]
#: The name of a command (its ``type``), as clients list and send them.
CommandName = Literal[
    "confirm_pass",
    "change_pass",
    "withdraw_pass",
    "place_tiles",
    "vote",
    "offer_courtesy",
    "declare_mah_jongg",
    "challenge_dead_hand",
    "request_ding_dong",
    "give_ding_dong",
    "declare_ready",
    "close_ding_dong",
    "judge_declaration",
]
COMMAND_ADAPTER: TypeAdapter[Command] = TypeAdapter(Command)
COMMAND_MODELS: dict[str, type[_Command]] = {
    m.model_fields["type"].default: m
    for m in (
        ConfirmPass,
        ChangePass,
        WithdrawPass,
        PlaceTiles,
        Vote,
        OfferCourtesy,
        DeclareMahJongg,
        ChallengeDeadHand,
        RequestDingDong,
        GiveDingDong,
        DeclareReady,
        CloseDingDong,
        JudgeDeclaration,
    )
}


def command_of(name: str, data: Mapping[str, Any]) -> Command:
    """The command ``name`` validated by its own model (the discriminator need not be
    read: the caller knows the name). Each model of ``COMMAND_MODELS`` is one member of
    the ``Command`` union, which the dictionary's type cannot say."""
    return COMMAND_MODELS[name].model_validate(data)  # type: ignore[return-value]


class PauseClock(BaseModel):
    """The director stops the game's clock (recorded: a ``clock_paused`` row)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    type: Literal["pause_clock"] = "pause_clock"


class ResumeClock(BaseModel):
    """The director restarts it; every deadline moves by the paused time."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    type: Literal["resume_clock"] = "resume_clock"


MAX_RULING_TEXT = 2000
#: a ruling's words (engine/free_text.py: as every text the record keeps)
RulingText = Annotated[str, Field(min_length=1, max_length=MAX_RULING_TEXT), KEPT]


class RecordRuling(BaseModel):
    """A director's ruling: a row of the chain that changes no tile."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    type: Literal["record_ruling"] = "record_ruling"
    kind: Literal["note", "warning", "penalty", "void"]
    text: RulingText
    seat: Seat | None = None


MAX_EXTENSION = 3600  # seconds one extension adds at most
MAX_REASON = 200  # characters of an extension's or a call's reason
MAX_LABEL = 64  # characters of the name a director gives whoever sits a seat

#: a short reason the store keeps, and a name (one line), checked as a ruling's text
Reason = Annotated[str, Field(min_length=1, max_length=MAX_REASON), KEPT]
Label = Annotated[str, Field(min_length=1, max_length=MAX_LABEL), ONE_LINE]
MAX_PLAYER_ID = 128  # characters of a platform's own id of a player
#: the pydantic error type of a player id that is text but not a plain one (the API: 422)
INVALID_PLAYER_ID = "invalid_player_id"


def player_id_text(text: str) -> str:
    """A platform's player id: opaque to the service, so only bounded and plain: 1 to
    :data:`MAX_PLAYER_ID` printable ASCII characters, no space (it goes into CSV cells,
    feed entries and webhooks as it is)."""
    if not text or len(text) > MAX_PLAYER_ID or not all("!" <= c <= "~" for c in text):
        raise PydanticCustomError(
            INVALID_PLAYER_ID,
            f"must be a player id of 1 to {MAX_PLAYER_ID} printable ASCII characters, "
            "without spaces (the platform's own id, e.g. 'p-1042')",
        )
    return text


#: the platform's own id of whoever sits a seat (kept in the record, results and the feed)
PlayerId = Annotated[str, AfterValidator(player_id_text)]


class StartGame(BaseModel):
    """The director opens a held table's start gate: its clock runs from now."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    type: Literal["start_game"] = "start_game"


class ExtendTime(BaseModel):
    """The director adds seconds to a seat's current deadline (no seat: every awaited
    seat's of the table)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    type: Literal["extend_time"] = "extend_time"
    seconds: Annotated[int, Field(ge=1, le=MAX_EXTENSION, strict=True)]
    seat: Seat | None = None
    reason: Reason | None = None


class HandToBot(BaseModel):
    """The director hands a seat to the service's bot (durable: the clock plays it)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    type: Literal["hand_to_bot"] = "hand_to_bot"
    seat: Seat


class HandBack(BaseModel):
    """The director hands a bot's seat back to a person (``label``: who, if named)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    type: Literal["hand_back"] = "hand_back"
    seat: Seat
    label: Label | None = None


class AnswerCall(BaseModel):
    """The director answers a seat's call: a ruling (``kind`` and ``text``) or cleared."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    type: Literal["answer_call"] = "answer_call"
    seat: Seat
    answer: Literal["ruling", "cleared"]
    kind: Literal["note", "warning", "penalty", "void"] | None = None
    text: RulingText | None = None

    @model_validator(mode="after")
    def _ruling_has_words(self) -> AnswerCall:
        if self.answer == "ruling" and (self.kind is None or self.text is None):
            raise ValueError("a ruling answer needs its kind and text")
        if self.answer == "cleared" and self.kind is not None:
            raise ValueError("a cleared answer has no ruling kind")
        return self


class CallDirector(BaseModel):
    """A seat calls the director, with a reason only the director reads."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    type: Literal["call_director"] = "call_director"
    seat: Seat
    reason: Reason | None = None


DirectorAnnotation = Annotated[
    PauseClock
    | ResumeClock
    | RecordRuling
    | StartGame
    | ExtendTime
    | HandToBot
    | HandBack
    | AnswerCall,
    Field(discriminator="type"),
]
DIRECTOR_ANNOTATION_ADAPTER: TypeAdapter[DirectorAnnotation] = TypeAdapter(DirectorAnnotation)
#: Director commands that annotate the chain instead of going through the chart.
ANNOTATION_COMMANDS = frozenset(
    {
        "pause_clock",
        "resume_clock",
        "record_ruling",
        "start_game",
        "extend_time",
        "hand_to_bot",
        "hand_back",
        "answer_call",
    }
)

#: Commands that no seat gives: the platform or the director does.
DIRECTOR_COMMANDS = frozenset({"close_ding_dong", "judge_declaration", *ANNOTATION_COMMANDS})

#: The event type a command leaves in the record when it is accepted.
ACCEPTED_AS: dict[str, str] = {
    "confirm_pass": "pass_confirmed",
    "change_pass": "pass_changed",
    "withdraw_pass": "pass_withdrawn",
    "place_tiles": "tiles_placed",
    "vote": "vote_cast",
    "offer_courtesy": "courtesy_offered",
    "declare_mah_jongg": "mah_jongg_declared",
    "request_ding_dong": "ding_dong_requested",
    "give_ding_dong": "ding_dong_given",
    "declare_ready": "ready_declared",
    "close_ding_dong": "ding_dong_closed",
    "judge_declaration": "declaration_judged",
}
COMMAND_OF: dict[str, str] = {v: k for k, v in ACCEPTED_AS.items()}


def parse_command(data: dict) -> Command:
    return COMMAND_ADAPTER.validate_python(data)
