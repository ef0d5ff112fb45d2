"""Rules every ruleset shares: seats and directions, the tile set, the deal, every pass."""

from __future__ import annotations

from .model import EVERY, STANDARD, Rule
from .model import Source as S

RULES: tuple[Rule, ...] = (
    # -- seats and directions -----------------------------------------------------------
    Rule(
        "SEAT-01",
        "The four seats in turn order are East (the dealer), South, West, North.",
        EVERY,
        (S("flow", "3. Passing Directions", "East → South → West → North → East"),),
        fact="charleston_fsm.engine.seats: SEATS, the order every rotation is computed from",
    ),
    Rule(
        "SEAT-02",
        "Right of a seat is the next seat in turn order, Left the previous one, Across the "
        "seat two away; in a pass to the Right everyone gives Right and receives from the Left.",
        EVERY,
        (
            S("flow", "3. Passing Directions", "Right = clockwise neighbor."),
            S(
                "spec",
                "Phase 1",
                "each player selects 3 tiles → neighbor on the Right; receives 3 from Left",
            ),
        ),
    ),
    Rule(
        "SEAT-03",
        "Where a tile goes is computed from the seats; a command never names its receiver.",
        EVERY,
        (
            S(
                "spec",
                "Validations",
                "Enforce direction mapping (Right/Across/Left) from seat positions.",
            ),
        ),
        decision="A command that names a receiver does not even parse (commands forbid unknown "
        "fields).",
        fact="charleston_fsm.engine.commands: the command models have no receiver field",
    ),
    # -- the tile set and the deal ------------------------------------------------------
    Rule(
        "TILE-01",
        "The American set has 152 tiles: Bams, Cracks and Dots 1-9 four of each (108), four "
        "Winds and three Dragons four of each (28; the White Dragon is also called Soap), "
        "8 Flowers and 8 Jokers.",
        EVERY,
        decision="The documents take the set for granted; the service fixes the standard "
        "American set of 152 tiles.",
    ),
    Rule(
        "TILE-02",
        "Every physical tile has its own id (0-151); two tiles of one face are different tiles.",
        EVERY,
        decision="Choices, transfers and audits name tiles by id, so a tile can be followed "
        "through every pass. Ids run in the order Bams 1B-9B, Cracks 1C-9C, Dots 1D-9D, "
        "Winds EW SW WW NW, Dragons RD GD WD, Flowers F, Jokers J; logs and reports write "
        "face and id, e.g. 5B#17.",
        fact="charleston_fsm.engine.tiles: tile ids index FACES",
    ),
    Rule(
        "DEAL-01",
        "The deal gives East 14 tiles and every other seat 13, each tile once; the rest is "
        "the wall.",
        EVERY,
        (
            S("spec", "Tile/hand prerequisites", "Each player starts with 13 tiles; East has 14."),
            S(
                "guide",
                "Charleston Exception – Heavenly Hand",
                "East is the only player holding 14 tiles",
            ),
        ),
    ),
    # -- every pass ---------------------------------------------------------------------
    Rule(
        "PASS-01",
        "A standard pass is exactly 3 tiles; any other count is refused.",
        EVERY,
        (
            S("spec", "Tile/hand prerequisites", "a player must pass exactly 3 tiles"),
            S("flow", "2. Rules for Passing", "Standard passes = exactly 3 tiles."),
        ),
    ),
    Rule(
        "PASS-02",
        "A courtesy pass is 0 to 3 tiles; more is refused.",
        STANDARD,
        (
            S("spec", "Validations", "Courtesy pass: reject counts > 3."),
            S("flow", "2. Rules for Passing", "Courtesy pass = 0–3 tiles."),
        ),
    ),
    Rule(
        "PASS-03",
        'Jokers are never passed; the refusal reads "Jokers cannot be passed during the '
        'Charleston."',
        EVERY,
        (
            S(
                "spec",
                "Validations",
                'rulesError("Jokers cannot be passed during the Charleston.")',
            ),
            S("flow", "2. Rules for Passing", "No jokers may be passed"),
        ),
    ),
    Rule(
        "PASS-04",
        "A pass names tiles of the player's own hand, each tile once.",
        EVERY,
        (S("spec", "Per-pass contract", "Select exactly 3 tiles (IDs) from hand"),),
        decision="A tile id outside the hand, or named twice, is refused with its own code.",
    ),
    Rule(
        "PASS-05",
        "All players choose at the same time; a confirmed choice is locked, and may be "
        "withdrawn or changed until the pass resolves.",
        EVERY,
        (
            S(
                "flow",
                "2. Rules for Passing",
                "All players select tiles simultaneously in each phase.",
            ),
            S("spec", "Per-pass contract", "Lock selection on confirm"),
            S(
                "guide",
                "Passing Tiles – Procedure and Timing",
                "Players may change their passed tiles only if the recipient hasn't looked",
            ),
        ),
        decision="Nobody sees a passed tile before the pass resolves, so a choice may be "
        "changed (change_pass) or withdrawn (withdraw_pass) until then; confirming twice is "
        "refused.",
    ),
    Rule(
        "PASS-06",
        "Nothing moves until every player who must act has confirmed; then every transfer "
        "of the step happens at once, in one step.",
        EVERY,
        (
            S(
                "flow",
                "5. Control & State",
                "Only after all confirm are tiles removed and redistributed.",
            ),
            S("spec", "Per-pass contract", "execute transfers simultaneously"),
        ),
    ),
    Rule(
        "PASS-07",
        "Every hand receives exactly what was sent to it, and no tile is lost or created.",
        EVERY,
        (
            S(
                "spec",
                "Per-pass contract",
                "After transfer, hands receive exactly 3 incoming tiles.",
            ),
        ),
        decision="Every transfer is recorded with its giver, receiver and tiles, and the "
        "152 tiles are conserved through every pass.",
    ),
    Rule(
        "PASS-08",
        "Received tiles lie apart from the rack until the player places them, and are placed "
        "before the player confirms the next pass.",
        EVERY,
        (
            S(
                "flow",
                "4. UI / Experience Requirements",
                "Player must place them into the rack before proceeding.",
            ),
        ),
        decision="Placing is one command (place_tiles, all received tiles at once). The "
        "option require_placing (on in every ruleset) may be turned off; received tiles then "
        "count as part of the hand.",
    ),
    Rule(
        "PASS-09",
        "The direction and the count a pass asks for are always shown to the player.",
        EVERY,
        (
            S(
                "spec",
                "UX suggestions (optional)",
                "Show pass direction and count requirement prominently.",
            ),
        ),
        fact="charleston_fsm.engine.views: a seat's view carries its step (direction, receiver, "
        "count, blind allowance)",
    ),
    Rule(
        "PASS-10",
        "Only the players of the current step act in it.",
        EVERY,
        (S("spec", "Phase 3 — Courtesy Pass", "between opposite players only"),),
        decision="A seat whose courtesy pair is done, or that is not in the pair of a "
        "command, is refused (seat_not_in_step).",
    ),
    Rule(
        "PASS-11",
        "Passed tiles stay face down: a player sees its own tiles and the public facts of "
        "the table, never another player's concealed tiles.",
        EVERY,
        (
            S(
                "guide",
                "The Charleston",
                "All tiles passed during any Charleston phase must remain face-down.",
            ),
        ),
        decision="Views, events, errors and logs are redacted per seat; only the director "
        "sees every hand.",
        fact="charleston_fsm.engine.views: seat_view and redact are the only way tiles leave "
        "for a seat",
    ),
)
