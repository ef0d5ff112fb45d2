"""What each seat may see, and what a director sees.

This is the secrecy boundary of the whole service: every payload that leaves for a seat
(view, event listing, stream) is built here. The views' shapes are the typed models of
:mod:`charleston_fsm.engine.view_models` (the OpenAPI contract); this module decides what goes
in them. A seat sees its own rack, its received
tiles, its own choices, and public table talk (votes, offers, who has confirmed, how many
tiles everyone holds). It never sees another seat's concealed tiles, and a blind
forwarder never sees the tiles it forwarded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .events import ANNOTATION_TYPES, DIRECTOR_ONLY_FIELDS, Event
from .progress import progress
from .seats import SEATS, Direction, Seat, seat_name
from .table import Table
from .tiles import face
from .view_models import (
    ActiveStep,
    DirectorSeat,
    DirectorSelection,
    DirectorView,
    GameFacts,
    SeatStep,
    SeatView,
    Selection,
    Tile,
    Wall,
)

PUBLIC_EVENTS = frozenset(
    {
        "pass_withdrawn",
        "vote_cast",
        "courtesy_offered",
        "courtesy_agreed",
        "state_changed",
        "charleston_ended",
        "mah_jongg_declared",
        "declaration_judged",
        "ding_dong_requested",
        "ready_declared",
        "ding_dong_closed",
        # they name seats, kinds and times, never a tile; a call's reason is left out
        *(ANNOTATION_TYPES - DIRECTOR_ONLY_FIELDS.keys()),
    }
)


def _tiles(tiles: Iterable[int]) -> list[Tile]:
    """Tiles as plain data: the enclosing model validates them into :class:`Tile` in one
    call, several times faster than a constructor per tile."""
    return [{"id": t, "face": face(t)} for t in tiles]  # type: ignore[misc]


def game_facts(table: Table, players: Mapping[str, str] | None = None) -> GameFacts:
    """The table's public facts: the same for every seat, the director and a spectator."""
    leaves = [s for s in table.active_states if not s.states]
    where = progress(table)
    return GameFacts(
        ruleset=table.ruleset.name,
        options=table.options,
        state=table.configuration,
        state_labels=[s.name for s in leaves],
        phase=where.phase,
        pass_number=where.pass_number,
        pass_total=where.pass_total,
        players=dict(players or {}),
        finished=table.finished,
        ended_reason=table.ended_reason,
        ending=table.ending(seat_name(players)),
        passes_resolved=table.passes_resolved,
        declaration=table.declaration,
        hand_sizes={s: len(table.hand(s)) for s in SEATS},
        **table.public_facts(),
        steps=[
            ActiveStep(
                state=state_id,
                label=step.label,
                participants=list(step.participants),
                confirmed=[s for s in step.participants if s in table.selections],
                awaiting=[s for s in step.participants if s not in table.selections],
            )
            for state_id, step in table.active_steps()
        ],
    )


def seat_view_model(
    table: Table,
    seat: Seat,
    clock: Mapping[str, Any] | None = None,
    withheld: frozenset[str] = frozenset(),
    players: Mapping[str, str] | None = None,
) -> SeatView:
    """One seat's screen: its own tiles, its step, and the table's public facts.

    ``withheld``: commands the game's clock refuses the seat now (``clocks.withheld``),
    left out of ``allowed_commands``; ``players``: the names the game was created with.
    """
    step = table.requirement(seat)
    selection = table.selections.get(seat)
    seat_step = None
    if step is not None:
        count = table.required_count(seat, step)
        blind_max = table.blind_max(step)
        target = step.target(seat)
        seat_step = SeatStep(
            label=step.label,
            direction=_direction(seat, target),
            to=target,
            from_=step.source(seat),
            count=count,
            count_range=(0, 3) if count is None else None,
            blind_allowed=blind_max > 0,
            blind_max=blind_max,
            passable=table.passable(seat),
            confirmed=selection is not None,
        )
    return SeatView(
        seat=seat,
        game=game_facts(table, players),
        rack=_tiles(table.racks[seat]),
        received=_tiles(table.received[seat]),
        must_place_first=bool(table.received[seat]) and table.options.require_placing,
        selection=(
            Selection(
                tiles=_tiles(selection.tiles),
                blind=selection.blind,
                locked=True,
                to=list(selection.targets) or None,
            )
            if selection
            else None
        ),
        step=seat_step,
        **table.seat_facts(seat),
        allowed_commands=[c for c in table.allowed_commands(seat) if c not in withheld],
        clock=clock,
    )


def _direction(seat: Seat, target: Seat | None) -> Direction | None:
    """Right, across or left, from the seats (``None`` when each tile names its receiver)."""
    if target is None:
        return None
    return next(d for d in Direction if seat.toward(d) is target)


def seat_view(
    table: Table,
    seat: Seat,
    clock: Mapping[str, Any] | None = None,
    withheld: frozenset[str] = frozenset(),
    players: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """:func:`seat_view_model` as JSON-ready data (what every caller sends or reads).

    ``clock``: the seat's own deadline (``clocks.seat_clock``), when the game has one;
    ``withheld``: what that clock refuses the seat now (``clocks.withheld``);
    ``players``: the players' names (the game's setup).
    """
    return seat_view_model(table, seat, clock, withheld, players).model_dump(mode="json")


def director_view_model(
    table: Table,
    clock: Mapping[str, Any] | None = None,
    players: Mapping[str, str] | None = None,
) -> DirectorView:
    """Everything at the table, for a tournament director."""
    return DirectorView(
        game=game_facts(table, players),
        seats={
            s: DirectorSeat(
                rack=_tiles(table.racks[s]),
                received=_tiles(table.received[s]),
                selection=(
                    DirectorSelection(
                        tiles=_tiles(table.selections[s].tiles),
                        blind=table.selections[s].blind,
                        to=list(table.selections[s].targets) or None,
                    )
                    if s in table.selections
                    else None
                ),
                **table.director_seat_facts(s),
            )
            for s in SEATS
        },
        **table.director_facts(),
        wall=Wall(count=len(table.wall)),
        clock=clock,
    )


def director_view(
    table: Table,
    clock: Mapping[str, Any] | None = None,
    players: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """:func:`director_view_model` as JSON-ready data (``clock``: ``clocks.director_clock``;
    ``players``: the players' names)."""
    return director_view_model(table, clock, players).model_dump(mode="json")


def redact(event: Event, seat: Seat | None) -> dict[str, Any]:
    """The event as ``seat`` may see it; ``None`` is the director, who sees it whole."""
    data = event.to_dict()
    if seat is None or event.type in PUBLIC_EVENTS:
        return data
    p = event.payload
    own = event.seat is seat
    if event.type in ("pass_confirmed", "pass_changed"):
        if not own:
            data["payload"] = {"count": len(p["tiles"]) + p["blind"], "blind": p["blind"]}
    elif event.type == "ding_dong_given":
        if not own:
            data["payload"] = {"count": len(p["gifts"])}
    elif event.type == "tiles_placed":
        if not own:
            data["payload"] = {"count": len(p["tiles"])}
    elif event.type == "tiles_transferred":
        total = len(p["from_hand"]) + len(p["forwarded"])
        shown: dict[str, Any] = {"step": p["step"], "receiver": p["receiver"], "count": total}
        if own:
            shown["from_hand"] = p["from_hand"]
            shown["forwarded_count"] = len(p["forwarded"])
        elif p["receiver"] == seat.value:
            shown["kept"] = p["kept"]
            # which of the kept tiles the giver forwarded unseen (the receiver holds them)
            shown["kept_blind"] = [t for t in p["kept"] if t in p["forwarded"]]
            shown["forwarded_on_count"] = total - len(p["kept"])
        data["payload"] = shown
    elif event.type == "pass_resolved":
        data["payload"] = {k: v for k, v in p.items() if k != "routes"}
    elif event.type in DIRECTOR_ONLY_FIELDS:
        hidden = DIRECTOR_ONLY_FIELDS[event.type]
        data["payload"] = {k: v for k, v in p.items() if k not in hidden}
    else:  # an event type this module does not know: show nothing but its name
        data["payload"] = {}
    return data
