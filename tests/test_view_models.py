"""The view models: their vocabularies follow the engine, and the documented examples hold."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import get_args

import pytest
from engine_helpers import E, confirm, plain_deal, run
from pydantic import BaseModel, ValidationError

from charleston_fsm.engine import view_models
from charleston_fsm.engine.commands import COMMAND_MODELS, CommandName
from charleston_fsm.engine.rulesets import RULESETS
from charleston_fsm.engine.table import Table
from charleston_fsm.engine.tiles import FACES
from charleston_fsm.engine.views import seat_view

API_DOC = Path(__file__).resolve().parent.parent / "docs" / "api.md"
EXAMPLE = re.compile(r"<!-- view-example: (\w+) -->\n```json\n(.*?)\n```", re.S)


def doc_examples(text: str) -> dict[str, str]:
    return dict(EXAMPLE.findall(text))


def test_the_vocabularies_follow_the_engine() -> None:
    assert set(get_args(CommandName)) == set(COMMAND_MODELS)
    state_ids = set(get_args(view_models.StateId))
    for ruleset in RULESETS.values():
        assert {s.id for s in ruleset.chart.states_map.values()} <= state_ids, ruleset.name
    assert set(get_args(view_models.Face)) == set(FACES)
    assert set(get_args(view_models.RulesetName)) == set(RULESETS)


def test_the_documented_views_validate_against_the_models() -> None:
    examples = doc_examples(API_DOC.read_text())
    assert set(examples) == {"SeatView", "DirectorView"}
    for name, text in examples.items():
        model: type[BaseModel] = getattr(view_models, name)
        view = model.model_validate_json(text, strict=True)
        assert view.model_dump(mode="json") == json.loads(text), name  # nothing dropped


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('"blind_max": 3', '"blind_max": "3"'),  # retyped
        ('"blind_max": 3,', ""),  # removed
        ('"blind_max": 3', '"blind_max": 3, "peek": []'),  # a field the model does not name
        ('"to": "north"', '"to": "nowhere"'),  # not a seat
    ],
)
def test_a_drifted_example_is_caught(old: str, new: str) -> None:
    text = doc_examples(API_DOC.read_text())["SeatView"]
    assert old in text
    with pytest.raises(ValidationError):
        view_models.SeatView.model_validate_json(text.replace(old, new, 1), strict=True)


def test_the_step_tells_a_client_what_it_may_pass() -> None:
    table = Table(plain_deal(), "nmjl")
    step = seat_view(table, E)["step"]
    assert step["count"] == 3 and step["count_range"] is None
    assert (step["blind_allowed"], step["blind_max"]) == (False, 0)
    assert step["passable"] == table.passable(E) and 144 not in step["passable"]  # the joker
    run(table, confirm(E, [0, 1, 2]))
    assert seat_view(table, E)["step"]["confirmed"] is True
