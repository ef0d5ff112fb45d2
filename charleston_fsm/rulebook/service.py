"""The service's own rules: how games are created, addressed and stored.

None comes from the rule documents; they are decisions of the project, listed so that
every refusal the service gives names a rule of this book.
"""

from __future__ import annotations

from .model import EVERY, Rule

DECIDED = "A decision of the service."

RULES: tuple[Rule, ...] = (
    Rule(
        "SVC-01",
        "A command is taken only where the statechart accepts it now; anything else is "
        "refused with the commands the seat can give instead, never ignored.",
        EVERY,
        decision=DECIDED,
    ),
    Rule(
        "SVC-02",
        "A request follows the OpenAPI document: a command names a known action and its fields.",
        EVERY,
        decision=DECIDED,
    ),
    Rule(
        "SVC-03",
        "A game is created with one of the published rulesets, its options, and a deal "
        "from a seed or from explicit hands; all are fixed for the game.",
        EVERY,
        decision=DECIDED + " Any option may be overridden at creation, never later.",
    ),
    Rule(
        "SVC-04",
        "A game's state is rebuilt by folding its recorded events through the same chart, "
        "and must reproduce every recorded event.",
        EVERY,
        decision=DECIDED,
    ),
    Rule(
        "SVC-05",
        "Every request names its seat, the director or the platform with a bearer token; a "
        "seat's token acts only for that seat, and only the director reads every hand.",
        EVERY,
        decision=DECIDED + " Games are created by the platform, with its key when one is set.",
        fact="charleston_fsm.api: auth and deps check the token of every request",
    ),
    Rule(
        "SVC-06",
        "Every accepted command is stored in full or not at all, one at a time per game; a "
        "command id names one command, so a retry with the same id is answered, not repeated.",
        EVERY,
        decision=DECIDED,
        fact=(
            "charleston_fsm.store: the one write path "
            "(store/games/writes.py, store/games/append.py)"
        ),
    ),
    Rule(
        "SVC-07",
        "Commands and reads go to a game and events that exist, on a database migrated to "
        "the schema this code expects.",
        EVERY,
        decision=DECIDED,
        fact="charleston_fsm.store: GameStore",
    ),
    Rule(
        "SVC-08",
        "A game whose record fails verify is quarantined: nothing is served from it or "
        "accepted for it until a director repairs the record and lifts the quarantine, which "
        "verifies the record again first.",
        EVERY,
        decision=DECIDED
        + " Tamper evidence: the hash chain, the recorded head and signed anchors.",
        fact="charleston_fsm.store: verify and quarantine (store/evidence/tamper.py)",
    ),
    Rule(
        "SVC-09",
        "A round's tables are created in one call, all of them or none, at most 500; the "
        "round's own director token lists them, and each table keeps its own tokens.",
        EVERY,
        decision=DECIDED + " A bad table names its number, and no table of the round is made.",
        fact="charleston_fsm.store: Rounds.create_round (store/rounds/rounds.py)",
    ),
    Rule(
        "SVC-10",
        "A seat whose time ran out is acted for by the clock (or only flagged late, as the "
        "game's clock options say), once; a late command of that seat for what the clock "
        "already did in that step is refused.",
        EVERY,
        decision=DECIDED + " Clocks are off unless a game is created with them.",
        fact="charleston_fsm.engine.clocks, the store's clock worker and clock writer "
        "(store/games/clock_worker.py, Writes.act_for_seat)",
    ),
    Rule(
        "SVC-11",
        "A director may pause and resume a game's clock, or every table's of a round in one "
        "act (resuming moves every deadline by the paused time), and record rulings; each "
        "is a row of the game's hash chain and changes no tile.",
        EVERY,
        decision=DECIDED,
        fact="charleston_fsm.engine.annotations and the annotation writer (Writes.annotate)",
    ),
    Rule(
        "SVC-12",
        "A game or round created held waits for its director: seats see their racks, but "
        "no clock runs and no command is taken until the director starts it, or its start "
        "time comes, or (a single game created so) every seat a person plays has opened "
        "its page; a round's tables start in the same instant, each exactly once.",
        EVERY,
        decision=DECIDED + " Games start at creation unless created held.",
        fact=(
            "charleston_fsm.engine.time_control, the clock worker's start "
            "(store/games/clock_worker.py)"
        ),
    ),
    Rule(
        "SVC-13",
        "A director may add time to a seat's current deadline, or to every awaited seat's "
        "of a table; the seat sees its new deadline and why.",
        EVERY,
        decision=DECIDED,
        fact="charleston_fsm.engine.time_control (extended)",
    ),
    Rule(
        "SVC-14",
        "A director hands a seat to the service's bot and back, or to a substitute with a "
        "new token (the old one then opens nothing); a seat the bot plays gives no command "
        "of its own; who sat each seat when is recorded.",
        EVERY,
        decision=DECIDED,
        fact="charleston_fsm.engine.seating, the credentials (store/rounds/credentials.py)",
    ),
    Rule(
        "SVC-15",
        "A seat may call the director, with a reason only the director reads; the director "
        "answers each call once, with a ruling or cleared.",
        EVERY,
        decision=DECIDED,
        fact="charleston_fsm.engine.calls",
    ),
    Rule(
        "SVC-16",
        "A spectator sees a table as a spectator at a real table would (seats, tile counts, "
        "confirmations, votes, passes as counts and directions, the clock, rulings, the end) "
        "and never a concealed tile; a delay is applied by the service; a revoked link "
        "opens nothing.",
        EVERY,
        decision=DECIDED,
        fact="charleston_fsm.engine.spectators (the spectator's secrecy boundary)",
    ),
)
