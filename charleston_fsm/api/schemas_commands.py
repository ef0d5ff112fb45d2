"""The command bodies of the OpenAPI document, derived from the engine's own commands.

A command route reads its body with the project's bounded parser (:mod:`.bodies`,
:mod:`.command_route`) and validates it with the engine's models, so FastAPI is never given
a typed body to parse: the document's request bodies are declared here instead, one
discriminated union per role, built from the very models the engine validates with
(:data:`~charleston_fsm.engine.commands.COMMAND_MODELS` and the director's
:data:`~charleston_fsm.engine.commands.DirectorAnnotation`). A command the engine gains
appears in the document without a second list to keep:

- a seat's body is a chart command no seat is refused (every one but
  :data:`~charleston_fsm.engine.commands.DIRECTOR_COMMANDS`), its ``seat`` optional (the
  token names the seat; another is 403 ``seat_mismatch``);
- the director's body is a chart command no seat gives (``close_ding_dong``,
  ``judge_declaration``: no ``seat``, as the route refuses one) or an annotation
  (``extend_time``, ``hand_to_bot`` … as the engine declares them, ``seat`` and all);
- both take an optional ``command_id`` (:func:`.routes_games.command_id_of`).

:func:`declared_body` names a route's union (its ``openapi_extra``);
``routes_meta.openapi`` puts it in the document.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, create_model

from ..engine.commands import COMMAND_MODELS, DIRECTOR_COMMANDS, DirectorAnnotation
from ..engine.seats import Seat

MAX_COMMAND_ID = 100  # the store keeps "<seat>:<id>" in 128 characters
COMMAND_ID = (
    str | None,
    Field(
        None,
        max_length=MAX_COMMAND_ID,
        description="The client's id of this command (or send the Idempotency-Key header): "
        "sending it again returns the first answer and stores nothing. Made up when absent.",
    ),
)
SEAT_CLAIM = (
    Seat | None,
    Field(
        None,
        description="The token's own seat, if given (the token names it; another seat is "
        "403 seat_mismatch).",
    ),
)

#: every annotation a director sends, by its ``type`` (the engine's union, unrolled)
ANNOTATION_MODELS: dict[str, type[BaseModel]] = {
    m.model_fields["type"].default: m for m in get_args(get_args(DirectorAnnotation)[0])
}


def body_model(model: type[BaseModel], seat: Literal["keep", "drop", "claim"]) -> type[BaseModel]:
    """``model``'s request body, named ``<Model>Command`` in the document: its fields
    and an optional ``command_id``, its ``seat`` kept as the engine declares it
    (``seat="keep"``), left out (``"drop"``) or the token's own, optional (``"claim"``)."""
    fields: dict[str, Any] = {
        name: (info.annotation, info)
        for name, info in model.model_fields.items()
        if name != "seat" or seat == "keep"
    }
    named = model.model_fields["type"]
    # the engine's models default their type; a body must name it (the discriminator)
    fields["type"] = (named.annotation, Field(description="The command."))
    if seat == "claim":
        fields["seat"] = SEAT_CLAIM
    fields["command_id"] = COMMAND_ID
    name = f"{model.__name__}Command"
    return create_model(  # type: ignore[call-overload, no-any-return]
        name,
        __config__=ConfigDict(extra="forbid", title=name),
        __doc__=model.__doc__ or f"The {named.default} command.",
        **fields,
    )


def _union(models: list[type[BaseModel]]) -> TypeAdapter[Any]:
    """One body of ``models``, told apart by ``type`` (a discriminated union)."""
    members = tuple(models)
    return TypeAdapter(Annotated[Union[members], Field(discriminator="type")])  # noqa: UP007


#: what a seat's token sends to POST /v1/games/{id}/commands
SEAT_COMMAND_MODELS = {
    name: body_model(model, "claim")
    for name, model in COMMAND_MODELS.items()
    if name not in DIRECTOR_COMMANDS
}
#: what the director's token sends to POST /v1/games/{id}/director/commands: the chart's
#: commands without a seat, the annotations as the engine declares them
DIRECTOR_COMMAND_MODELS = {
    **{n: body_model(m, "drop") for n, m in COMMAND_MODELS.items() if n in DIRECTOR_COMMANDS},
    **{n: body_model(m, "keep") for n, m in ANNOTATION_MODELS.items()},
}
#: the request bodies routes declare, by their names in the document's components
DECLARED_BODIES: dict[str, TypeAdapter[Any]] = {
    "SeatCommand": _union(list(SEAT_COMMAND_MODELS.values())),
    "DirectorCommand": _union(list(DIRECTOR_COMMAND_MODELS.values())),
}
#: the mark :func:`declared_body` leaves in an operation, for ``routes_meta.openapi``
BODY_MARK = "x-declared-body"


def declared_body(name: str) -> dict[str, Any]:
    """A route's ``openapi_extra`` declaring the union ``name`` of :data:`DECLARED_BODIES` as its
    request body in the document (the endpoint itself takes the body as a dict and
    validates it with the engine)."""
    assert name in DECLARED_BODIES, name
    return {BODY_MARK: name}
