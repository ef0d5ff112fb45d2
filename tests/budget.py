"""How much the repetitive tests repeat: bounded by default (CI's 2 shared cores), whole
with ``CHARLESTON_LONG_TESTS=1``.

Bounded tests still run every kind of case they prove; they only draw fewer random
examples, walk a fixed sample of an exhaustive product, or spread the backends over the
rulesets instead of crossing them. The long form is for a change to the engine, the store
or the API, and for a nightly run: ``CHARLESTON_LONG_TESTS=1 ./dev test``.
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from typing import TypeVar

import pytest

T = TypeVar("T")

#: the long forms: every example, combination and backend x ruleset pair
LONG = os.environ.get("CHARLESTON_LONG_TESTS", "").lower() in ("1", "true", "yes")


def examples(bounded: int, long: int) -> int:
    """Hypothesis ``max_examples``: ``bounded`` by default, ``long`` in the long form."""
    return long if LONG else bounded


def sample(items: Sequence[T], size: int, *, seed: str) -> list[T]:
    """Every item in the long form; else ``size`` of them, the same ones every run (drawn
    with ``seed``), in their original order. The first and last items are always kept:
    products are built so that their ends are the extreme cases."""
    if LONG or size >= len(items):
        return list(items)
    inner = random.Random(seed).sample(range(1, len(items) - 1), max(0, size - 2))
    return [items[i] for i in sorted({0, *inner, len(items) - 1})]


def backends_by(cases: Sequence[str], *, turn: int = 0) -> list[object]:
    """``(db_url, case)`` parameters for a test that plays each case on both backends:
    so in the long form; else each case once, the backends taking turns from ``turn`` (each
    backend and each case still run; two tests with turns 0 and 1 cross them all). The
    engine's rules do not depend on the backend: crossing them repeats the same game.
    Use with ``indirect=["db_url"]``."""
    chosen = []
    for index, case in enumerate(cases):
        one = ("sqlite", "postgres")[(index + turn) % 2]
        backends = ("sqlite", "postgres") if LONG else (one,)
        for backend in backends:
            marks = [pytest.mark.postgres] if backend == "postgres" else []
            chosen.append(pytest.param(backend, case, marks=marks, id=f"{backend}-{case}"))
    return chosen
