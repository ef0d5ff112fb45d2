"""The standard family's options: where the rule documents disagree (nmjl, house)."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class SecondCharlestonOrder(StrEnum):
    """The order of the Second Charleston's three passes."""

    LEFT_ACROSS_RIGHT = "left-across-right"
    ACROSS_LEFT_RIGHT = "across-left-right"


class CourtesyMode(StrEnum):
    """How a courtesy pair settles how many tiles each gives."""

    AGREED_MIN = "agreed_min"  # the pair exchanges the smaller of the two offers
    ASYMMETRIC = "asymmetric"  # each player gives what they chose, 0-3


class Options(BaseModel):
    """The choices on which the rule documents disagree (``nmjl``, ``house``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_enum_values=False)

    second_charleston_order: SecondCharlestonOrder = Field(
        SecondCharlestonOrder.LEFT_ACROSS_RIGHT,
        description="The order of the Second Charleston's passes.",
    )
    blind_pass: bool = Field(
        True,
        description="Whether the last pass of each Charleston may forward arriving tiles unseen.",
    )
    late_objection: bool = Field(
        True,
        description="Whether a stop is taken after four continues, until the Second "
        "Charleston's first pass resolves.",
    )
    courtesy_mode: CourtesyMode = Field(
        CourtesyMode.AGREED_MIN,
        description="agreed_min: a pair exchanges the smaller offer; asymmetric: each gives "
        "what it chose, 0-3.",
    )
    require_placing: bool = Field(
        True, description="Whether received tiles must be placed before the next pass."
    )
