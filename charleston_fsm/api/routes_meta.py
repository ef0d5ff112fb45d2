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
from .schemas import Problem, problem_response, problems
from .schemas_commands import BODY_MARK, DECLARED_BODIES
from .schemas_meta import Health, Ready, RulesetInfo, RulesetList

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
    ready = {"status": "ready", "schema": schema.status, "notifier": notifier.kind}
    standbys = getattr(store, "standbys", None)
    if standbys is not None:  # each standby's lag, and why one is not read (the primary is)
        ready["reads"] = standbys.report()
    return JSONResponse(ready)


# -- the OpenAPI document -------------------------------------------------------------------
#: the schemes of ``organiser_keys.platform_or_organiser``'s routes (api/deps.py), which
#: let anyone through when the service has no platform key
PLATFORM_OR_ORGANISER = ({"PlatformKey": []}, {"OrganiserKey": []})


def openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document, with errors as they really leave: problem+json, 400 not 422;
    the command bodies the routes declare (:mod:`.schemas_commands`); and the security
    this service's own settings give each route."""
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
                optional_body(operation["requestBody"])
                # api/bodies.py: an encoded body; a text the record cannot keep
                responses.setdefault("415", problem_response(415))
                responses.setdefault("422", problem_response(422))
            # any operation may fail unexpectedly: RequestContext answers it
            responses.setdefault("500", problem_response(500))
            for response in responses.values():
                content = response.get("content", {})
                if "application/problem+json" in content or "text/event-stream" in content:
                    # FastAPI's default media type, beside what really leaves
                    content.pop("application/json", None)
                if "application/problem+json" in content:
                    content["application/problem+json"] = {"schema": problem_ref}
            if getattr(app.state, "platform_key", None) is None:
                # no platform key: these routes take no token at all (anyone is the platform)
                security = operation.get("security", [])
                if all(scheme in security for scheme in PLATFORM_OR_ORGANISER):
                    operation["security"] = [{}, *security]
        schemas = spec.setdefault("components", {}).setdefault("schemas", {})
        declare_bodies(spec)
        for unused in ("HTTPValidationError", "ValidationError"):
            schemas.pop(unused, None)
        if "Problem" not in schemas:
            schemas["Problem"] = Problem.model_json_schema()
        app.openapi_schema = spec
    return app.openapi_schema


def optional_body(body: dict[str, Any]) -> None:
    """An optional body (``body: Model | None = None``) as the object it is when sent:
    FastAPI says "the model or null", and a client generated from that sends a body
    even when it has none to send; leaving the body out is how a client says none."""
    if body.get("required"):
        return
    media = body.get("content", {}).get("application/json", {})
    kinds = media.get("schema", {}).get("anyOf", [])
    if len(kinds) == 2 and {"type": "null"} in kinds:
        media["schema"] = next(kind for kind in kinds if kind != {"type": "null"})


def declare_bodies(spec: dict[str, Any]) -> None:
    """Each operation's :func:`~.schemas_commands.declared_body` as its request body's
    schema, a component of that name (the endpoint takes the body as a dict: the
    project's own parser and the engine's models read it, never FastAPI)."""
    schemas = spec["components"]["schemas"]
    for operation in (op for path in spec["paths"].values() for op in path.values()):
        name = operation.pop(BODY_MARK, None)
        if name is None:
            continue
        union = DECLARED_BODIES[name].json_schema(ref_template="#/components/schemas/{model}")
        for part, schema in {**union.pop("$defs", {}), name: union}.items():
            if schemas.setdefault(part, schema) != schema:
                raise RuntimeError(f"two schemas are named {part} in the OpenAPI document")
        body = operation["requestBody"]["content"]["application/json"]
        body["schema"] = {"$ref": f"#/components/schemas/{name}"}
