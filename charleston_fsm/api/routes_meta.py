"""What needs no token: rulesets and their diagrams, health, and the OpenAPI document."""

from __future__ import annotations

import os
from typing import Annotated, Any

from fastapi import APIRouter, FastAPI, Query
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse, Response

from ..engine.errors import JokerPassed, UnknownRuleset
from ..engine.rulesets import RULESETS, Ruleset
from ..rulebook import RULES
from .deps import NotifierDep, StoreDep
from .logs import log
from .problems import ApiProblem, problem
from .render import DIAGRAM_RESPONSES, diagram
from .schemas import Health, Problem, Ready, RulesetInfo, RulesetList, problem_response, problems

router = APIRouter(tags=["rulesets"])  # under /v1
health = APIRouter(tags=["health"])  # at the root, for probes


# -- rulesets and diagrams ------------------------------------------------------------------
def ruleset_out(ruleset: Ruleset) -> dict[str, Any]:
    family = type(ruleset.defaults)  # each chart family has its own options
    schema = family.model_json_schema()
    props = schema.get("properties", {})
    defs = schema.get("$defs", {})
    defaults = ruleset.defaults.model_dump(mode="json")
    options: dict[str, Any] = {}
    for name in family.model_fields:
        prop = props.get(name, {})
        ref = prop.get("$ref", "").rsplit("/", 1)[-1]
        enum = defs.get(ref, {}).get("enum") if ref else prop.get("enum")
        options[name] = {
            "type": "string" if enum else prop.get("type", "string"),
            "default": defaults[name],
            **({"choices": enum} if enum else {}),
        }
    return {
        "name": ruleset.name,
        "title": ruleset.title,
        "description": ruleset.description,
        "options": options,
        "steps": [
            {
                "state": state_id,
                "label": step.label,
                "participants": [s.value for s in step.participants],
                "direction": step.direction.value if step.direction else None,
                "count": step.count,
                "blind": step.blind,
                "courtesy": step.courtesy,
            }
            for state_id, step in ruleset.steps.items()
        ],
        "links": {"diagram": f"/v1/rulesets/{ruleset.name}/diagram"},
        "joker_rule": {"rule": JokerPassed.rule, "message": JokerPassed.MESSAGE},
        "rules": {r.id: r.statement for r in RULES.values() if ruleset.name in r.rulesets},
        "state_names": {state.id: str(state.name) for state in ruleset.chart.states_map.values()},
        "state_rules": {
            state_id: list(ids)
            for state_id in ruleset.chart.states_map
            if (ids := ruleset.state_rule_ids(state_id))
        },
    }


def known_ruleset(name: str) -> Ruleset:
    """A 404 here, not the 422 of ``get_ruleset``: the ruleset is the resource read."""
    if name not in RULESETS:
        raise ApiProblem(
            404,
            "unknown_ruleset",
            f"There is no ruleset {name!r}; choose one of: {', '.join(RULESETS)}.",
            kind="not_found",
            rule=UnknownRuleset.rule,
        )
    return RULESETS[name]


@router.get(
    "/rulesets",
    summary="Rulesets with their options and defaults",
    response_model=None,
    responses={200: {"model": RulesetList}},
)
def list_rulesets() -> dict[str, Any]:
    return {"rulesets": [ruleset_out(r) for r in RULESETS.values()]}


@router.get(
    "/rulesets/{name}",
    summary="One ruleset",
    response_model=None,
    responses={200: {"model": RulesetInfo}, **problems(404)},
)
def get_ruleset_route(name: str) -> dict[str, Any]:
    return ruleset_out(known_ruleset(name))


@router.get(
    "/rulesets/{name}/diagram",
    summary="The ruleset's state diagram",
    response_class=Response,
    responses={**DIAGRAM_RESPONSES, **problems(400, 404, 503)},
)
def get_ruleset_diagram(
    name: str,
    format: Annotated[str, Query(description="svg, dot or mermaid")] = "svg",
) -> Response:
    from .. import diagrams

    return diagram(diagrams.render, known_ruleset(name).name, format)


# -- health ---------------------------------------------------------------------------------
@health.get(
    "/healthz",
    summary="The process answers",
    response_model=None,
    responses={200: {"model": Health}},
)
def healthz() -> dict[str, Any]:
    return {"status": "ok", "pid": os.getpid()}


@health.get(
    "/readyz",
    summary="Database reachable, schema current",
    response_model=None,
    responses={200: {"model": Ready}, **problems(503)},
)
def readyz(store: StoreDep, notifier: NotifierDep) -> Response:
    try:
        schema = store.core.schema_state()
    except Exception as exc:
        log.warning("database unreachable", extra={"error": type(exc).__name__})
        return problem(503, "database_unreachable", "The database does not answer.", kind="server")
    if not schema.current:
        return problem(503, f"schema_{schema.status}", schema.message, kind="server")
    if not notifier.healthy:
        return problem(
            503,
            "not_listening",
            "The notification listener is not connected.",
            kind="server",
        )
    return JSONResponse(
        {"status": "ready", "schema": schema.status, "notifier": notifier.kind},
    )


# -- the OpenAPI document -------------------------------------------------------------------
#: the routes that take the platform key when one is set (and no token when none is)
PLATFORM_PATHS = ("/v1/games", "/v1/rounds")


def openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document, with errors as they really leave: problem+json, 400 not 422."""
    if app.openapi_schema is None:
        spec = get_openapi(
            title=app.title,
            version=app.version,
            summary=app.summary,
            description=app.description,
            routes=app.routes,
        )
        problem_ref = {"$ref": "#/components/schemas/Problem"}
        for operation in (op for path in spec["paths"].values() for op in path.values()):
            responses = operation.get("responses", {})
            default = responses.get("422", {}).get("content", {}).get("application/json", {})
            if default.get("schema", {}).get("$ref", "").endswith("/HTTPValidationError"):
                del responses["422"]
                responses.setdefault("400", problem_response(400))
            if "requestBody" in operation:
                # api/bodies.py: an encoded body; a text the record cannot keep
                responses.setdefault("415", problem_response(415))
                responses.setdefault("422", problem_response(422))
            # any operation may fail unexpectedly: RequestContext answers it
            responses.setdefault("500", problem_response(500))
            for response in responses.values():
                content = response.get("content", {})
                if "application/problem+json" in content:
                    content.pop("application/json", None)
                    content["application/problem+json"] = {"schema": problem_ref}
        if getattr(app.state, "platform_key", None) is None:
            # no platform key: creating games and rounds takes no token at all
            for path in PLATFORM_PATHS:
                operation = spec["paths"].get(path, {}).get("post")
                if operation is not None and operation.get("security"):
                    operation["security"] = [{}, *operation["security"]]
        schemas = spec.get("components", {}).get("schemas", {})
        for unused in ("HTTPValidationError", "ValidationError"):
            schemas.pop(unused, None)
        if "Problem" not in schemas:
            schemas["Problem"] = Problem.model_json_schema()
        app.openapi_schema = spec
    return app.openapi_schema
