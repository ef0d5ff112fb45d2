"""What a rule of the rule book is: an id, a statement, where it comes from, what was decided.

Plain data, no imports of the rest of the package: the engine, the store and the API
all name rules by id, and the rule book must not depend on any of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Status = Literal["implemented", "planned"]

#: The original documents the rules come from, by the short key a :class:`Source` uses.
DOCUMENTS: dict[str, str] = {
    "guide": "The Charleston, the National Mah Jongg League's player guide",
    "spec": "Charleston (NMJL-style): Implementation Spec",
    "flow": "Charleston Flow and UX Requirements",
    "fw-help": "Four Winds help: Charleston and Ding Dong",
    "fw-rules": "Four Winds Rule Collection, American Modern: 4. Miscellaneous rules",
}

#: Every ruleset a rule may belong to.
RULESET_NAMES: tuple[str, ...] = ("nmjl", "house", "four_winds")
STANDARD = ("nmjl", "house")
EVERY = RULESET_NAMES


@dataclass(frozen=True)
class Source:
    """A passage of an original document: which one, which section, a phrase that pins it."""

    document: str
    section: str
    quote: str = ""

    def __post_init__(self) -> None:
        if self.document not in DOCUMENTS:
            raise ValueError(f"unknown document {self.document!r}; known: {', '.join(DOCUMENTS)}")

    @property
    def title(self) -> str:
        return DOCUMENTS[self.document]


@dataclass(frozen=True)
class Rule:
    """One rule: stated in the project's words, traced to its sources and decisions.

    ``fact`` names where a rule lives when no guard, validator or action of the chart
    enforces it (a fact of the tile set, of the seats, of what a view shows).
    """

    id: str
    statement: str
    rulesets: tuple[str, ...]
    sources: tuple[Source, ...] = ()
    decision: str = ""
    status: Status = "implemented"
    fact: str = ""

    @property
    def implemented(self) -> bool:
        return self.status == "implemented"

    @property
    def prefix(self) -> str:
        return self.id.rsplit("-", 1)[0]


@dataclass(frozen=True)
class Chapter:
    """A part of the rule book: the rules whose id starts with one of ``prefixes``."""

    title: str
    intro: str
    prefixes: tuple[str, ...]
