"""The depth bound of every request body (``api/bodies.py``), read from the bytes: it
agrees with the parsed value's depth for any JSON, brackets, quotes and escapes inside
strings included, and reads hostile bytes in one pass (no parser, no recursion)."""

from __future__ import annotations

import json
from typing import Any

from budget import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from charleston_fsm.api.bodies import MAX_DEPTH, nests_too_deep

TRICKY = st.text(st.sampled_from('[]{}"\\ab\n\u00e9'), max_size=8)
LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), TRICKY)


def depth(value: Any) -> int:
    """How deep arrays and objects nest in a parsed value (a walk, not recursion)."""
    deepest, pending = 0, [(value, 0)]
    while pending:
        item, level = pending.pop()
        if isinstance(item, dict | list):
            level += 1
            deepest = max(deepest, level)
            pending.extend((v, level) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


@st.composite
def nested_values(draw: st.DrawFn) -> Any:
    """A JSON value nested around the bound, with tricky strings at every level."""
    value: Any = draw(LEAVES)
    for _ in range(draw(st.integers(0, MAX_DEPTH + 3))):
        key, other = draw(TRICKY), draw(LEAVES)
        value = draw(st.sampled_from([[value, other], {key: value, "k": other}, [other, value]]))
    return value


@settings(max_examples=examples(300, 3000), deadline=None)
@given(value=nested_values(), ascii_only=st.booleans())
def test_the_depth_read_from_bytes_is_the_parsed_depth(value: Any, ascii_only: bool) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only).encode()
    assert nests_too_deep(raw) == (depth(json.loads(raw)) > MAX_DEPTH)


def test_hostile_bytes_are_read_in_one_pass() -> None:
    """Bodies that made a regular expression for strings backtrack (unclosed escaped
    quotes) or a parser recurse (tens of thousands deep) get their answer."""
    assert nests_too_deep(b"[" * 32000 + b"]" * 32000)
    assert not nests_too_deep(b'["' + b"[" * 40 + b'"]')  # brackets in a string
    assert not nests_too_deep(b'"\\' * 32000 + b"[" * 10)  # never closed: text to the end
    assert nests_too_deep(b'["\\\\"' + b"[" * 33 + b"]" * 33 + b"]")  # an escaped backslash
    assert not nests_too_deep(b'["\\"' + b"[" * 33 + b'"]')  # an escaped quote
