"""Rounds: many tables created in one call, and their listing for the round's director."""

from __future__ import annotations

import secrets
from dataclasses import replace
from typing import Annotated, Any

from fastapi import APIRouter, Header, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from ..store import MAX_TABLES, GameStore, InvalidRound, check_round_size
from ..store.rounds.rounds import numbered
from .auth import bearer_token, new_token, token_hash
from .commands import command_id_of
from .deps import PlatformCredentials, RoundCredentials, StoreDep, TokenFirstRoute, token_first
from .game_setup import TableSetup, table_setup
from .logs import log
from .organiser_keys import organiser_of_round, platform_or_organiser, refuse_other_organisers
from .problems import ApiProblem, unauthorized
from .schemas import MAX_SEED, problems
from .schemas_rounds import (
    CreatedRound,
    CreateRound,
    RoundActBody,
    RoundActResult,
    RoundTableSpec,
    RoundView,
)
from .starts import parse_start, start_setting

router = APIRouter(tags=["rounds"], route_class=TokenFirstRoute)
SPECTATOR_RULE = "SVC-16"


@router.post(
    "/rounds",
    status_code=201,
    summary="Create a round of tables in one call (all or none); returns every token",
    response_model=None,
    responses={201: {"model": CreatedRound}, **problems(400, 401, 403, 408, 413, 422, 503)},
    description=(
        f"Up to {MAX_TABLES} tables, each a create-game request (`tables`), or one spec "
        "and a `count`. The tables are stored in one transaction: a table that cannot be "
        "set up is refused with its number and no table of the round exists. Seats listed "
        "in a table's `bots` are played by the service's auto player from the start "
        "(durable, as in a single game)."
    ),
)
@token_first(platform_or_organiser)
async def create_round(
    body: CreateRound, request: Request, store: StoreDep, _: PlatformCredentials
) -> JSONResponse:
    organiser_id = await run_in_threadpool(platform_or_organiser, request)
    start = parse_start(body.start, single=False)  # the round's, before any table's
    deal_seed = duplicate_seed(body)
    specs = _specs(body)
    if deal_seed is not None:
        specs = [spec.model_copy(update={"seed": deal_seed}) for spec in specs]
    setups = [_numbered_setup(n, spec) for n, spec in enumerate(specs, start=1)]
    if deal_seed is not None:
        check_one_rulebook(setups)
    setups, links = _spectator_links(body, specs, setups)
    token, watch = new_token(), new_token()
    settings = {
        "count": len(specs),
        "labels": [spec.label for spec in specs],
        "bots": [[s.value for s in spec.bots or ()] for spec in specs],
    }
    if start_setting(start) is not None:
        settings["start"] = start_setting(start)
    if deal_seed is not None:
        settings.update(deal="duplicate", deal_seed=str(deal_seed))
    round_id, game_ids = await run_in_threadpool(
        _store_round,
        store,
        setups,
        token,
        body.name,
        settings,
        (watch, body.spectator_delay),
        organiser_id,
    )
    request.state.role = "platform" if organiser_id is None else "organiser"
    log.info("round created", extra={"round_id": round_id, "tables": len(game_ids)})
    tables = [
        {
            **setup.created(game_id),
            "table": number,
            "label": spec.label,
            "bots": [s.value for s in spec.bots or ()],
            "spectator": link,
        }
        for number, (game_id, setup, spec, link) in enumerate(
            zip(game_ids, setups, specs, links, strict=True), start=1
        )
    ]
    base = f"/v1/rounds/{round_id}"
    return JSONResponse(
        {
            "round_id": round_id,
            "name": body.name,
            "organiser_id": organiser_id,
            "token": token,
            "spectator_token": watch,
            "tables": tables,
            "links": {
                "self": base,
                "room": f"/room/{round_id}#token={token}",
                "spectator": f"/watch/round/{round_id}#token={watch}",
                **({"comparison": f"/compare/{round_id}#token={token}"} if deal_seed else {}),
            },
            "deal": body.deal,
            "deal_seed": None if deal_seed is None else str(deal_seed),
        },
        status_code=201,
        headers={"Location": base},
    )


@router.get(
    "/rounds/{round_id}",
    summary="Every table of a round with its state (the round director's token)",
    response_model=None,
    responses={200: {"model": RoundView}, **problems(401, 404, 503)},
)
def get_round(
    round_id: str, request: Request, store: StoreDep, _: RoundCredentials
) -> dict[str, Any]:
    round_director_only(request, round_id)
    return store.standby.rounds.round_listing(round_id).to_dict()


def round_director_only(request: Request, round_id: str) -> None:
    """The round's own director token, or its organiser's key (a 404 for an unknown round
    before any 401)."""
    store = request.app.state.store
    token = bearer_token(request)
    digest = token_hash(token or "")
    opens = store.rounds.round_opens(round_id, digest)
    if token is None:
        raise unauthorized(
            "missing_token", "Send the round's director token as 'Authorization: Bearer <token>'."
        )
    if not opens:
        if organiser_of_round(request, round_id, digest) is not None:
            request.state.role = "organiser"
            return
        refuse_other_organisers(request, digest, f"round {round_id!r}", "not_your_round")
        raise unauthorized(
            "invalid_token",
            "This token does not open this round: a round is listed with the token its "
            "creation returned, not a table's.",
        )
    request.state.role = "round_director"


def _round_guard(request: Request) -> None:
    round_director_only(request, request.path_params["round_id"])


_ACT_RULES = {"start": "SVC-12", "pause": "SVC-11", "resume": "SVC-11"}


_ACT_HELP = (
    "`start`: every held table starts in the same instant; `pause` / `resume`: every "
    "table's clock, in one transaction (all of them or none: a closed page or a lost "
    "connection cannot leave half a round paused). Each table gets its own row "
    "(`game_started`, `clock_paused`, `clock_resumed`, naming the round). A table "
    "that cannot take the act (finished, not started, already paused, no clock) is "
    "left as it is and named in `tables` with its `code`; when no table could, the "
    "answer is 409. `command_id` or `Idempotency-Key` makes a retry safe."
)


def _round_act(
    act: str,
    round_id: str,
    request: Request,
    store: GameStore,
    body: RoundActBody | None,
    idempotency_key: str | None,
) -> dict[str, Any]:
    round_director_only(request, round_id)
    command_id = command_id_of(body.command_id if body else None, idempotency_key)
    request.state.command_id = command_id
    result = store.round_acts.act(round_id, act, command_id)
    if result.done == 0:
        codes = {t.code for t in result.tables}
        why = "; ".join(f"table {t.table}: {(t.detail or '').rstrip('.')}" for t in result.tables)
        done = {"start": "started", "pause": "paused", "resume": "resumed"}[act]
        raise ApiProblem(
            409,
            codes.pop() if len(codes) == 1 and None not in codes else f"round_not_{done}",
            f"No table of the round could be {done} ({why or 'it has no table'}).",
            kind="not_now",
            rule=_ACT_RULES[act],
        )
    log.info("round act", extra={"round_id": round_id, "command": act})
    return {**result.to_dict(), "command_id": command_id}


_ACT_ROUTE: dict[str, Any] = {
    "response_model": None,
    "responses": {200: {"model": RoundActResult}, **problems(400, 401, 404, 409, 503)},
    "description": _ACT_HELP,
}
IdempotencyKey = Annotated[str | None, Header(alias="Idempotency-Key")]


@router.post("/rounds/{round_id}/start", summary="Start every held table at once", **_ACT_ROUTE)
@token_first(_round_guard)
def post_round_start(
    round_id: str,
    request: Request,
    store: StoreDep,
    _: RoundCredentials,
    body: RoundActBody | None = None,
    idempotency_key: IdempotencyKey = None,
) -> dict[str, Any]:
    return _round_act("start", round_id, request, store, body, idempotency_key)


@router.post("/rounds/{round_id}/pause", summary="Pause every table's clock", **_ACT_ROUTE)
@token_first(_round_guard)
def post_round_pause(
    round_id: str,
    request: Request,
    store: StoreDep,
    _: RoundCredentials,
    body: RoundActBody | None = None,
    idempotency_key: IdempotencyKey = None,
) -> dict[str, Any]:
    return _round_act("pause", round_id, request, store, body, idempotency_key)


@router.post("/rounds/{round_id}/resume", summary="Resume every table's clock", **_ACT_ROUTE)
@token_first(_round_guard)
def post_round_resume(
    round_id: str,
    request: Request,
    store: StoreDep,
    _: RoundCredentials,
    body: RoundActBody | None = None,
    idempotency_key: IdempotencyKey = None,
) -> dict[str, Any]:
    return _round_act("resume", round_id, request, store, body, idempotency_key)


def _specs(body: CreateRound) -> list[RoundTableSpec]:
    """The round's tables: the list, or ``count`` copies of one spec with seeds in a row."""
    if (body.tables is None) == (body.table is None) or (body.table is None) != (
        body.count is None
    ):
        raise InvalidRound(
            "Give either 'tables' (one spec per table) or 'table' with 'count', not both "
            "and not neither."
        )
    if body.tables is not None:
        count = len(body.tables)
    else:
        assert body.count is not None
        count = body.count
    check_round_size(count)
    if body.tables is not None:
        specs = body.tables
    else:
        spec = body.table
        assert spec is not None
        if spec.seed is None:
            specs = [spec] * count
        else:
            specs = [spec.model_copy(update={"seed": spec.seed + i}) for i in range(count)]
    for number, spec in enumerate(specs, start=1):
        if spec.start != "now":
            raise InvalidRound(
                f"Table {number}: a round's tables start together: give 'start' for the "
                "round, not for one table."
            )
    return [spec.model_copy(update={"start": body.start}) for spec in specs]


def duplicate_seed(body: CreateRound) -> int | None:
    """The one seed every table of a duplicate round is dealt from (given, or drawn once
    now); ``None`` for a round dealt per table. Refuses a seed that is not a number, a
    seed without ``deal: duplicate`` and a table of a duplicate round with a deal of its own."""
    if body.deal != "duplicate":
        if body.deal_seed is not None:
            raise _duplicate_problem(
                "deal_seed_without_duplicate",
                "'deal_seed' deals every table of a round from one seed: give it with "
                '"deal": "duplicate" (or give each table its own \'seed\').',
            )
        return None
    for number, spec in enumerate(body.tables or [body.table], start=1):
        if spec is not None and (spec.seed is not None or spec.hands is not None):
            which = f"Table {number}" if body.tables is not None else "The table"
            raise _duplicate_problem(
                "duplicate_table_deal",
                f"{which}: a duplicate round deals every table the same tiles from one "
                "seed: give 'deal_seed' for the round, not a 'seed' or 'hands' for a table.",
            )
    given = body.deal_seed
    if given is None:
        return secrets.randbits(62)
    text = str(given)
    if isinstance(given, str) and not (text.isascii() and text.isdigit() and len(text) <= 19):
        raise _duplicate_problem(
            "invalid_deal_seed",
            f"'deal_seed' is a deal number in decimal digits (0 to {MAX_SEED}), not "
            f"{text[:40]!r}; leave it out to draw one at random.",
        )
    if not 0 <= int(text) <= MAX_SEED:
        raise _duplicate_problem(
            "invalid_deal_seed",
            f"'deal_seed' runs from 0 to {MAX_SEED}, not {text[:40]}; leave it out to draw "
            "one at random.",
        )
    return int(text)


def check_one_rulebook(setups: list[TableSetup]) -> None:
    """A duplicate round's tables play one ruleset with one set of options: the same tiles
    under other rules are not the same Charleston, and the comparison would mislead."""
    first = setups[0]
    for number, setup in enumerate(setups[1:], start=2):
        if (setup.ruleset, setup.options) != (first.ruleset, first.options):
            differs = "ruleset" if setup.ruleset != first.ruleset else "options"
            raise _duplicate_problem(
                "duplicate_mixed_rules",
                f"Table {number}: its {differs} differ from table 1's; every table of a "
                "duplicate round plays the same ruleset with the same options (give them "
                "once, in 'table', with 'count').",
            )


def _duplicate_problem(code: str, detail: str) -> ApiProblem:
    return ApiProblem(422, code, detail, kind="setup", rule="SVC-09")


def _spectator_links(
    body: CreateRound, specs: list[RoundTableSpec], setups: list[TableSetup]
) -> tuple[list[TableSetup], list[dict[str, Any]]]:
    """Each table's own spectator link as the round's delay makes it (the table's own
    delay may only be longer; a featured table in ``live_tables`` is live): the setups
    with their link's delay set, and each delay as the answer states it."""
    wrong = sorted({n for n in body.live_tables if not 1 <= n <= len(specs)})
    if wrong:
        raise ApiProblem(
            422,
            "unknown_table",
            f"live_tables names tables {wrong}, but the round's tables are numbered 1 to "
            f"{len(specs)}.",
            kind="setup",
            rule=SPECTATOR_RULE,
        )
    linked, links = [], []
    for number, (spec, setup) in enumerate(zip(specs, setups, strict=True), start=1):
        live = number in body.live_tables
        own = spec.spectator_delay if "spectator_delay" in spec.model_fields_set else 0
        if not live and own < body.spectator_delay and "spectator_delay" in spec.model_fields_set:
            raise ApiProblem(
                422,
                "below_round_delay",
                f"Table {number}: its spectator_delay ({own} s) is shorter than the round's "
                f"({body.spectator_delay} s), which every spectator link of the round keeps. "
                "Leave it out, or name the table in live_tables for a live link.",
                kind="setup",
                rule=SPECTATOR_RULE,
            )
        assert setup.game.spectator is not None  # every table's link is made with it
        spectator = (setup.game.spectator[0], 0 if live else own, live)
        linked.append(replace(setup, game=replace(setup.game, spectator=spectator)))
        delay = 0 if live else max(own, body.spectator_delay)
        links.append({"delay": delay, "live": delay == 0})
    return linked, links


def _numbered_setup(number: int, spec: RoundTableSpec) -> TableSetup:
    try:
        with numbered(number):
            return table_setup(spec)
    except ApiProblem as exc:
        raise ApiProblem(
            exc.status, exc.code, f"Table {number}: {exc.detail}", kind=exc.kind, rule=exc.rule
        ) from None


def _store_round(
    store: GameStore,
    setups: list[TableSetup],
    token: str,
    name: str | None,
    settings: dict[str, Any],
    spectator: tuple[str, int],
    organiser_id: str | None,
) -> tuple[str, list[str]]:
    return store.rounds.create_round(
        [s.game for s in setups],
        token_hash=token_hash(token),
        name=name,
        settings=settings,
        spectator=(token_hash(spectator[0]), spectator[1]),
        organiser_id=organiser_id,
    )
