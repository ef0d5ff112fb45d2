"""The commands a player can give; each is one event of the chart.

Commands are pydantic models so that the HTTP layer and the event store validate and
serialise them with the same definitions as the engine.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from .seats import Seat


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
    tiles: list[int]
    blind: int = 0


class ChangePass(_Command):
    """Replace a confirmed choice before the pass resolves."""

    type: Literal["change_pass"] = "change_pass"
    tiles: list[int]
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


Command = Annotated[
    ConfirmPass
    | ChangePass
    | WithdrawPass
    | PlaceTiles
    | Vote
    | OfferCourtesy
    | DeclareMahJongg
    | ChallengeDeadHand,
    Field(discriminator="type"),
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
    )
}

#: The event type a command leaves in the record when it is accepted.
ACCEPTED_AS: dict[str, str] = {
    "confirm_pass": "pass_confirmed",
    "change_pass": "pass_changed",
    "withdraw_pass": "pass_withdrawn",
    "place_tiles": "tiles_placed",
    "vote": "vote_cast",
    "offer_courtesy": "courtesy_offered",
    "declare_mah_jongg": "mah_jongg_declared",
}
COMMAND_OF: dict[str, str] = {v: k for k, v in ACCEPTED_AS.items()}


def parse_command(data: dict) -> Command:
    return COMMAND_ADAPTER.validate_python(data)
