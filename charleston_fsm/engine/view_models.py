"""The views as a typed contract: what a seat's screen and a director's screen hold.

These models only describe; :mod:`charleston_fsm.engine.views` decides what goes in them (it is
the secrecy boundary). They are the schema of the views in the OpenAPI document, so a
client can generate its types and grey out its buttons without guessing. Every closed
vocabulary (seats, chart states, tile faces, commands, ruleset names) is a literal or an
enum built from the engine's own definitions, so the schema follows the engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from .charts.four_winds import FourWindsOptions
from .clock_options import ClockOptions
from .commands import CommandName
from .hands import Verdict
from .rulesets import RULESETS, Options
from .seats import Direction, Seat
from .steps import COURTESY_PAIRS
from .tiles import FACES, TILE_COUNT

if TYPE_CHECKING:
    StateId = str
    Face = str
    RulesetName = str
    PairName = str
    Phase = str
else:
    #: every state id of every ruleset's chart
    StateId = Literal[
        tuple(dict.fromkeys(s.id for r in RULESETS.values() for s in r.chart.states_map.values()))
    ]
    #: a tile face code (``5B``, ``RD``, ``J`` …; see :mod:`charleston_fsm.engine.tiles`)
    Face = Literal[tuple(dict.fromkeys(FACES))]
    RulesetName = Literal[tuple(RULESETS)]
    #: a courtesy pair by name (``east-west``)
    PairName = Literal[tuple("-".join(s.value for s in pair) for pair in COURTESY_PAIRS)]
    #: what the table is doing (``progress``): every phase of every ruleset's chart
    Phase = Literal[tuple(dict.fromkeys(p for r in RULESETS.values() for p in r.phases.values()))]

TileId = Annotated[int, Field(ge=0, lt=TILE_COUNT, description="A tile's id (0-151).")]
Count = Annotated[int, Field(ge=0, le=3)]
VoteChoice = Literal["continue", "stop"]


class _View(BaseModel):
    """Closed objects: a field the model does not name is an error, never passed along."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, validate_by_name=True, serialize_by_alias=True
    )


class Tile(_View):
    """One physical tile: its id and its face."""

    id: TileId
    face: Face = Field(description="Its face: 1B-9B, 1C-9C, 1D-9D, EW SW WW NW, RD GD WD, F, J.")


class Declaration(_View):
    """East's Mah Jongg declaration (Heavenly before the first pass, Earthly after)."""

    seat: Seat = Field(description="Who declared (always East).")
    kind: Literal["heavenly", "earthly"] = Field(description="Which window it was declared in.")
    verdict: Verdict = Field(
        description="pending: a person confirms the hand; valid/invalid: a hand checker or "
        "the director did."
    )
    judged: bool = Field(
        False,
        description="True once the director judged it (judge_declaration): the verdict is "
        "final. An invalid Heavenly Hand is then set aside and the Charleston played.",
    )


class ActiveStep(_View):
    """A passing step in progress, as everyone at the table sees it (no tiles)."""

    state: StateId = Field(description="The chart state of the step.")
    label: str = Field(description="The step's name, e.g. First Charleston: pass Right.")
    participants: list[Seat] = Field(description="The seats that pass in this step.")
    confirmed: list[Seat] = Field(description="Participants whose choice is confirmed.")
    awaiting: list[Seat] = Field(description="Participants the step still waits for.")


class DingDongFacts(_View):
    """Ding Dong at the table (``four_winds``): public to every seat."""

    this_round: bool = Field(description="Whether this deal's round plays Ding Dong at all.")
    requested: int = Field(ge=0, description="How many Ding Dongs East has requested so far.")
    max: int = Field(ge=1, description="The most Ding Dongs the game allows in a deal.")
    ready: Seat | None = Field(description="Who declared Ready (no Ding Dong after it).")
    closed: bool = Field(description="True once the platform or director closed the window.")


class Ending(_View):
    """How the Charleston ended, in words read from the table's facts (the record's own
    ``ended_reason`` stays as written)."""

    how: Literal[
        "all_passes",
        "stopped",
        "no_courtesy",
        "heavenly",
        "exchanges",
        "ready",
        "closed",
        "nothing_played",
    ] = Field(
        description="all_passes, stopped (a vote or a late objection stopped the Second "
        "Charleston), no_courtesy (the Second Right moved no tile), heavenly (East's "
        "Heavenly Hand), and in four_winds exchanges, ready, closed, nothing_played."
    )
    by: list[Seat] = Field(description="The seats the words name (who voted stop, who was Ready).")
    text: str = Field(
        description="The ending for people, with players' names and East's declaration and "
        "its verdict, e.g. 'Stopped by a vote: Bea (South) voted to stop, …'."
    )


class GameFacts(_View):
    """The table's public facts: the same for every seat and for the director."""

    ruleset: RulesetName = Field(description="The ruleset (GET /v1/rulesets).")
    options: Options | FourWindsOptions = Field(
        description="The game's options, fixed at creation (each chart family has its own)."
    )
    state: list[StateId] = Field(
        description="The active chart states, outermost first (several during the Courtesy Pass)."
    )
    state_labels: list[str] = Field(description="The names of the active leaf states, for people.")
    phase: Phase = Field(
        description="What the table is doing, from the chart (a client reads this, never a "
        "state id): pass (a pass or a Four Winds exchange), vote, courtesy, "
        "ding_dong_window, ding_dong, done."
    )
    pass_number: int | None = Field(
        ge=1,
        description="Which pass of the Charleston is under way, from 1 (the Courtesy Pass "
        "counts once); null outside a pass (the vote, a Ding Dong, the end).",
    )
    pass_total: int | None = Field(
        ge=0,
        description="The most passes the Charleston can have from here: 7 in nmjl until a "
        "stop, then 4; 6 in four_winds; null once it is over.",
    )
    players: dict[Seat, str] = Field(
        default_factory=dict,
        description="Players' names by seat, as the game was created with them; a seat "
        "without a name is missing (call it by its wind).",
    )
    finished: bool = Field(description="True once the Charleston is complete.")
    ended_reason: str | None = Field(
        description="Why the Charleston ended, as the record wrote it; null while it runs."
    )
    ending: Ending | None = Field(
        None, description="How the Charleston ended, for people; null while it runs."
    )
    passes_resolved: int = Field(ge=0, description="How many passes have resolved so far.")
    declaration: Declaration | None = Field(description="East's declaration, if any.")
    hand_sizes: dict[Seat, int] = Field(
        min_length=4,
        description="How many tiles each seat holds (rack and received tiles), every seat.",
    )
    votes: dict[Seat, VoteChoice] | None = Field(
        None,
        description="The votes cast so far (a late objection shows as stop); null in a "
        "ruleset without a vote (four_winds).",
    )
    ding_dong: DingDongFacts | None = Field(
        None, description="Ding Dong so far (four_winds); null in other rulesets."
    )
    steps: list[ActiveStep] = Field(description="The passing steps in progress (none at a vote).")


class Selection(_View):
    """The seat's own confirmed choice for the current pass."""

    tiles: list[Tile] = Field(description="The tiles chosen from the seat's hand.")
    blind: Count = Field(description="How many arriving tiles it forwards unseen.")
    locked: Literal[True] = Field(
        description="Always true: a confirmed choice stays until changed or withdrawn."
    )
    to: list[Seat] | None = Field(
        None, description="A Ding Dong's receivers, one per tile in order; null for a pass."
    )


class SeatStep(_View):
    """What the seat's current pass asks of it: enough to grey out buttons without guessing."""

    label: str = Field(description="The step's name for people.")
    direction: Direction | None = Field(
        description="Where the pass goes, from the seats; null when each tile names its "
        "receiver (a Ding Dong)."
    )
    to: Seat | None = Field(
        description="The seat that receives this seat's tiles; null in a Ding Dong."
    )
    from_: Seat | None = Field(
        alias="from", description="The seat this seat receives tiles from; null in a Ding Dong."
    )
    count: Count | None = Field(
        description="Exactly how many tiles to give (from the hand plus blind); null: count_range."
    )
    count_range: tuple[Literal[0], Literal[3]] | None = Field(
        description="[0, 3] when the seat chooses its own count (an uneven courtesy); else null."
    )
    blind_allowed: bool = Field(description="Whether some of the tiles may be forwarded unseen.")
    blind_max: Count = Field(
        description="Up to how many arriving tiles may be forwarded unseen (0: no blind pass)."
    )
    passable: list[TileId] = Field(
        description="The ids of the seat's tiles a pass may name (its hand without jokers)."
    )
    confirmed: bool = Field(description="Whether the seat has confirmed its choice.")


class SeatCourtesy(_View):
    """The seat's Courtesy Pass pair: offers and the agreed count are public to the pair."""

    pair: tuple[Seat, Seat] = Field(description="The courtesy pair this seat belongs to.")
    offers: dict[Seat, Count] = Field(description="The offers made so far within the pair.")
    agreed: Count | None = Field(description="The count the pair agreed; null until agreed.")


ClockKindName = Literal["confirm_pass", "vote", "courtesy", "place_tiles", "bot"]


class Extension(_View):
    """Time the director added to a deadline, and why."""

    seconds: float = Field(description="Seconds added to this deadline so far.")
    reason: str | None = Field(description="The director's reason, if given.")


class Gate(_View):
    """The start gate: a table created held waits for its director (or its start time)."""

    held: bool = Field(False, description="True until the table starts: nothing is taken.")
    start_at: str | None = Field(
        None,
        description="When a held table starts by itself (ISO 8601, UTC); null: when "
        "the director starts it.",
    )
    started_at: str | None = Field(
        None, description="When a table created held was started; null otherwise."
    )
    awaiting: list[Seat] | None = Field(
        None,
        description="A table created to start when all its players are there: the seats "
        "(a person plays) that have not opened their page yet; it starts when the last "
        "does. Null: it waits for no seat (the director, or its start time).",
    )


class SeatClock(Gate):
    """The seat's own deadline (never another seat's); kind and times null when none."""

    kind: ClockKindName | None = Field(description="What the seat is timed for, if anything.")
    seconds: float | None = Field(description="The time it was given for it.")
    due_at: str | None = Field(description="When its time runs out (ISO 8601, UTC).")
    flagged: bool = Field(False, description="Its time ran out and it was flagged late.")
    extended: Extension | None = Field(
        None, description="Time the director added to this deadline, and why."
    )
    paused: bool = Field(description="True while the director has paused the clock.")
    late: bool = Field(description="True once this seat's time ran out in this game.")
    bot: bool = Field(
        False,
        description="True while the service's bot plays this seat (the director "
        "handed it over): the seat gives no command of its own.",
    )
    called_at: str | None = Field(
        None, description="When this seat called the director, while the call is open."
    )


class Deadline(_View):
    """One seat's deadline, as the director sees it."""

    kind: ClockKindName = Field(description="What the seat is timed for (bot: a bot seat).")
    seconds: float = Field(description="The time it was given for it.")
    due_at: str = Field(description="ISO 8601, UTC; moved by the paused time on resume.")
    flagged: bool = Field(description="Its time ran out and the seat was only flagged late.")
    extended: Extension | None = Field(
        None, description="Time the director added to this deadline, and why."
    )


class Call(_View):
    """A seat's open call to the director."""

    at: str = Field(description="When the seat called (ISO 8601, UTC).")
    reason: str | None = Field(description="The caller's reason: for the director only.")


class DirectorClock(Gate):
    """The game's clock: options, bot seats, every deadline, and the seats that ran late."""

    paused: bool = Field(description="True while the director has paused the clock.")
    options: ClockOptions | None = Field(
        description="The clock options fixed at creation; null when only bots are on."
    )
    bots: list[Seat] = Field(description="Seats the service's auto player plays.")
    pace: float = Field(
        0.0, ge=0, description="Seconds a bot seat thinks over a decision, on average."
    )
    deadlines: dict[Seat, Deadline] = Field(description="Every awaited seat's deadline.")
    late: list[Seat] = Field(description="Seats whose time ran out (flagged or auto-played).")
    calls: dict[Seat, Call] = Field(
        default_factory=dict, description="Open calls to the director, by seat."
    )
    seated: dict[Seat, str] = Field(
        default_factory=dict,
        description="The name the director gave whoever sits a seat now (a substitute).",
    )


class SeatView(_View):
    """One seat's screen: its own tiles, its step, and the table's public facts."""

    seat: Seat = Field(description="The seat this view belongs to.")
    game: GameFacts = Field(description="The table's public facts.")
    rack: list[Tile] = Field(description="The tiles on the seat's rack.")
    received: list[Tile] = Field(
        description="Tiles received and not yet placed (beside the rack); only those it kept."
    )
    must_place_first: bool = Field(
        description="True when received tiles must be placed (place_tiles) before the next pass."
    )
    selection: Selection | None = Field(description="The seat's confirmed choice, if any.")
    step: SeatStep | None = Field(
        description="The pass this seat takes part in now; null when it has none (vote, done)."
    )
    courtesy: SeatCourtesy | None = Field(
        None, description="The seat's Courtesy Pass pair; null in a ruleset without one."
    )
    allowed_commands: list[CommandName] = Field(
        description="Exactly the commands this seat could give now with some valid argument."
    )
    clock: SeatClock | None = Field(
        None, description="The seat's own deadline; null when the game has no clock or bots."
    )


class DirectorSelection(_View):
    """A seat's confirmed choice, as the director sees it."""

    tiles: list[Tile] = Field(description="The tiles chosen from the seat's hand.")
    blind: Count = Field(description="How many arriving tiles it forwards unseen.")
    to: list[Seat] | None = Field(
        None, description="A Ding Dong's receivers, one per tile in order; null for a pass."
    )


class DirectorSeat(_View):
    """Everything one seat holds and has chosen."""

    rack: list[Tile] = Field(description="The tiles on the seat's rack.")
    received: list[Tile] = Field(description="Received tiles not yet placed.")
    selection: DirectorSelection | None = Field(description="Its confirmed choice, if any.")
    offer: Count | None = Field(None, description="Its courtesy offer, if made.")


class Wall(_View):
    """The tiles not dealt (their ids stay with the director's audit)."""

    count: int = Field(ge=0, description="How many tiles are in the wall.")


class DirectorView(_View):
    """Everything at the table, for a tournament director."""

    game: GameFacts = Field(description="The table's public facts.")
    seats: dict[Seat, DirectorSeat] = Field(
        min_length=4, description="Every seat's tiles and choices."
    )
    courtesy_agreed: dict[PairName, Count] = Field(
        default_factory=dict, description="The count each courtesy pair agreed, by pair."
    )
    wall: Wall = Field(description="The wall.")
    clock: DirectorClock | None = Field(
        None, description="The game's clock; null when the game has no clock or bots."
    )


class AddedTime(_View):
    """Time the director added to a deadline, as a spectator sees it: never why."""

    seconds: float = Field(description="Seconds added to this deadline so far.")


class SpectatorDeadline(_View):
    """An awaited seat's deadline, as a spectator sees the table's clock."""

    kind: ClockKindName = Field(description="What the seat is timed for (bot: a bot seat).")
    seconds: float = Field(description="The time it was given for it.")
    due_at: str = Field(description="ISO 8601, UTC.")
    flagged: bool = Field(description="Its time ran out and the seat was only flagged late.")
    extended: AddedTime | None = Field(
        None, description="Time the director added (the director's reason is not shown)."
    )


class SpectatorClock(Gate):
    """The table's clock as the room sees it: no options, no caller's reasons."""

    paused: bool = Field(description="True while the director has paused the clock.")
    deadlines: dict[Seat, SpectatorDeadline] | None = Field(
        description="Every awaited seat's deadline; null behind a delay (a deadline would "
        "tell what happened since)."
    )
    late: list[Seat] = Field(description="Seats whose time ran out.")
    called: list[Seat] = Field(description="Seats with an open call to the director.")


class AsOf(_View):
    """Which moment of the table a spectator's view shows."""

    seq: int = Field(ge=1, description="The last row of the game shown.")
    at: str = Field(description="When that row was written (ISO 8601, UTC).")
    delay: int = Field(ge=0, description="The link's delay in seconds (0: live).")


class SpectatorView(_View):
    """A table as a spectator at a real table sees it: seats, tile counts, confirmations,
    votes, the clock, the end; never a tile."""

    game: GameFacts = Field(description="The table's public facts (no tile is among them).")
    bots: list[Seat] = Field(description="Seats the service's bot plays.")
    clock: SpectatorClock | None = Field(
        None, description="The clock; null when the game has no clock, bots or start gate."
    )
    as_of: AsOf = Field(description="The moment shown (behind the link's delay).")
