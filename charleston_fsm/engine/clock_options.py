"""A game's clock options: seconds per kind of decision, and what happens on expiry.

Apart from :mod:`charleston_fsm.engine.clocks` so that the view models and the API schemas can
name them without importing the auto player.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ClockKind = Literal["confirm_pass", "vote", "courtesy", "place_tiles"]
MAX_SECONDS = 24 * 3600


class ClockOptions(BaseModel):
    """Seconds per kind of decision (``None``: no limit) and what happens on expiry."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    confirm_pass: float | None = Field(
        None, gt=0, le=MAX_SECONDS, description="Seconds to confirm a pass, exchange or gift."
    )
    vote: float | None = Field(None, gt=0, le=MAX_SECONDS, description="Seconds to vote.")
    courtesy: float | None = Field(
        None, gt=0, le=MAX_SECONDS, description="Seconds to offer, then choose, courtesy tiles."
    )
    place_tiles: float | None = Field(
        None, gt=0, le=MAX_SECONDS, description="Seconds to place received tiles."
    )
    on_expiry: Literal["auto_play", "flag_late"] = Field(
        "auto_play",
        description="auto_play: the auto player acts for the seat; flag_late: only flag it.",
    )
