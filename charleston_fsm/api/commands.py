"""What every command route shares: the command id, the command, the retry, the answer.

A seat's command (``routes_games.post_command``), the director's, the seats' own
requests (hand over, leave) and the spectators' and rounds' acts read a command id the
same way (:func:`command_id_of`), and the commands that reach the store are retried and
answered the same way (:func:`execute_with_retries`, :func:`command_answer`). They live
here, apart from any route module, so a route module imports no other route module.
"""

from __future__ import annotations

import contextlib
import random
import time
import uuid
from typing import Any

from fastapi import Request
from pydantic import ValidationError

from ..engine.commands import Command, parse_command
from ..engine.errors import InvalidCommand
from ..engine.free_text import text_refusal
from ..engine.seats import Seat
from ..store import Conflict, ExecuteResult, GameStore, OutcomeUnknown
from .deps import SEAT_RULE, seat_only
from .logs import log
from .problems import ApiProblem, bad_request, command_headers, forbidden, validation_detail
from .render import event_out
from .responses import FastJSONResponse
from .schemas_commands import MAX_COMMAND_ID

MAX_RACE_RETRIES = 6
DIRECTOR_PLAYS = "The director's token cannot send commands."


def command_guard(request: Request) -> None:
    """A seat's token of this game, checked before the body is read. Until the body is
    read, the only command id a refusal can name is an ``Idempotency-Key`` header's."""
    key = request.headers.get("Idempotency-Key")
    if key:
        with contextlib.suppress(ApiProblem):
            request.state.command_id = command_id_of(None, key)
    seat_only(request, request.path_params["game_id"], DIRECTOR_PLAYS)


def command_request(
    request: Request, game_id: str, body: dict[str, Any], idempotency_key: str | None
) -> tuple[Seat, Command, str]:
    """The seat, the command and its id a command request names (no store is read: the
    token's role is known once its guard has run)."""
    body = dict(body)
    sent_id = body.pop("command_id", None)
    # Every answer names the command id (problems via request.state) once the body is
    # read, which is after the token is checked; a malformed id is refused.
    try:
        command_id = command_id_of(sent_id, idempotency_key)
    except ApiProblem as malformed:  # refused after the token check, and naming no id
        request.state.command_id = None
        seat_only(request, game_id, DIRECTOR_PLAYS)
        raise malformed from None
    request.state.command_id = command_id
    seat = seat_only(request, game_id, DIRECTOR_PLAYS)
    role = seat.value
    claimed = body.pop("seat", None)
    if claimed is not None and claimed != role:
        raise forbidden(
            "seat_mismatch",
            f"This token is {role}'s; it cannot act for {claimed!s:.10}.",
            SEAT_RULE,
        )
    request.state.command = str(body.get("type", ""))[:40]
    return seat, command_from({**body, "seat": role}), command_id


def command_from(body: dict[str, Any]) -> Command:
    """The engine command a request body names (a 422 ``invalid_command`` if none)."""
    try:
        return parse_command(body)
    except ValidationError as exc:
        raise InvalidCommand(
            f"Not a valid command: {validation_detail(list(exc.errors()))}."
        ) from None


def command_answer(
    store: GameStore,
    game_id: str,
    command_id: str,
    result: ExecuteResult,
    seat: Seat | None,
) -> FastJSONResponse:
    """The answer to a stored command (a seat's, or the director's when ``seat`` is None)."""
    role = seat.value if seat else "director"
    # Committed: from here on, a failure must not read as "nothing was stored".
    try:
        events = list(result.events)
        answer = {
            "game_id": game_id,
            "command_id": command_id,
            "duplicate": bool(result.duplicate),
            "events": [event_out(e, role) for e in events],
            # the committed table and clock, no re-read
            "view": store.reads.view_of(
                result.snapshot, seat, result.clock, store.reads.players(game_id)
            ),
        }
    except Exception:
        log.exception("answer failed after the commit")
        raise OutcomeUnknown(
            "The command was stored, but the service failed while building the answer. "
            "Send the same command with the same command id again to get it: it is "
            "applied at most once."
        ) from None
    headers = command_headers(command_id)
    if result.duplicate:
        headers["Idempotent-Replayed"] = "true"
    return FastJSONResponse(answer, headers=headers)


def command_id_of(sent: Any, idempotency_key: str | None) -> str:
    """The client's id from the body or ``Idempotency-Key`` (a made-up one without)."""
    if sent is not None and not isinstance(sent, str):
        # never read as text: 7 and "7" would be one id to the store and two to a client
        raise bad_request(
            "invalid_command_id",
            f'command_id must be a JSON string (such as "c-1"), not {_json_kind(sent)}.',
        )
    command_id = sent
    if idempotency_key and command_id and idempotency_key != command_id:
        raise bad_request(
            "command_id_mismatch", "The Idempotency-Key header and command_id differ."
        )
    command_id = command_id or idempotency_key or f"auto-{uuid.uuid4().hex}"
    if len(command_id) > MAX_COMMAND_ID:
        raise bad_request(
            "invalid_command_id", f"A command id has at most {MAX_COMMAND_ID} characters."
        )
    if (refusal := text_refusal(command_id, one_line=True)) is not None:
        raise bad_request("invalid_command_id", f"A command id {refusal}.")
    return command_id


def _json_kind(value: Any) -> str:
    """What JSON calls a value's type, for a refusal that names it without quoting it."""
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    return "an array" if isinstance(value, list) else "an object"


def execute_with_retries(
    store: GameStore, game_id: str, command: Command, command_id: str
) -> ExecuteResult:
    """``store.writes.execute``, sent again while other commands of the game win the race.

    Nothing was stored for a lost race (the store's contract for ``Conflict``).
    """
    for attempt in range(MAX_RACE_RETRIES):
        try:
            return store.writes.execute(game_id, command, command_id=command_id)
        except Conflict:
            time.sleep(random.uniform(0.002, 0.01) * 2**attempt)
    return store.writes.execute(game_id, command, command_id=command_id)
