"""Judging a declared hand: pluggable, because the League's yearly card is not shipped.

A declaration is always recorded; the checker's verdict says whether the service could
confirm it. The default checker leaves it ``pending`` for the table or a director.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

Verdict = Literal["pending", "valid", "invalid"]


class HandChecker(Protocol):
    def __call__(self, tiles: Sequence[int]) -> Verdict: ...


def pending_confirmation(tiles: Sequence[int]) -> Verdict:
    """No card loaded: a person confirms the hand."""
    return "pending"
