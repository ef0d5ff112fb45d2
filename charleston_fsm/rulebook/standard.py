"""The League's Charleston (``nmjl``) and the implementation spec's variant (``house``).

``house`` plays as ``nmjl`` except where a HOUSE rule says otherwise, so the NMJL
rules that both keep name both rulesets.
"""

from __future__ import annotations

from .model import STANDARD, Rule
from .model import Source as S

NMJL = ("nmjl",)
HOUSE = ("house",)

RULES: tuple[Rule, ...] = (
    # -- the First Charleston and the vote ----------------------------------------------
    Rule(
        "NMJL-01",
        "The First Charleston is mandatory: three passes of 3 tiles, to the Right, Across, "
        "then to the Left.",
        STANDARD,
        (
            S("guide", "First Charleston – Mandatory Passes", "First Pass (First Right)"),
            S("flow", "1. Charleston Flow", "Round 1 (mandatory)"),
            S("spec", "Phase 1 — First Charleston", "mandatory; 3 passes"),
        ),
    ),
    Rule(
        "NMJL-02",
        "Once the First Charleston is complete each player votes continue or stop, once; a "
        "single stop skips the Second Charleston and goes to the Courtesy Pass.",
        STANDARD,
        (
            S(
                "guide",
                "Second Charleston – Optional",
                "Any player may object to the second Charleston",
            ),
            S(
                "guide",
                "Stopping the Charleston",
                "only be stopped after the first Charleston is completed",
            ),
            S("flow", "1. Charleston Flow", "If Stopped → move directly to Courtesy Pass."),
        ),
        decision="The table does not wait for the other votes once someone says stop, and a "
        "vote is final. Votes are public.",
    ),
    Rule(
        "NMJL-03",
        "The Second Charleston is played only when all four players vote to continue.",
        STANDARD,
        (
            S(
                "guide",
                "Second Charleston – Optional",
                "requires unanimous agreement from all players",
            ),
        ),
    ),
    Rule(
        "NMJL-04",
        "The Second Charleston passes to the Left, Across, then to the Right, 3 tiles each.",
        NMJL,
        (
            S("guide", "Second Charleston", "First Pass (Second Left)"),
            S("flow", "1. Charleston Flow", "Round 2 (optional, if not stopped)"),
        ),
        decision="The guide and the flow document agree on Left, Across, Right; the "
        "implementation spec's Across, Left, Right is the house ruleset's (HOUSE-01). "
        "Option second_charleston_order.",
    ),
    Rule(
        "NMJL-05",
        "A late objection: after four continues a player may still stop, until the first "
        "pass of the Second Charleston resolves; the choices confirmed in that pass are "
        "dropped, nothing moves, and the table goes to the Courtesy Pass.",
        NMJL,
        (
            S(
                "guide",
                "Second Charleston – Optional",
                "before any player has looked at tiles passed during the First Pass of the "
                "second Charleston",
            ),
        ),
        decision="In the service nobody sees a passed tile before its pass resolves, so the "
        "resolution of that first pass is the moment the guide describes. Only a stop is "
        "taken then; the audit shows who objected and which choices were dropped. Option "
        "late_objection (off in house: HOUSE-04).",
    ),
    Rule(
        "NMJL-06",
        "Once the first pass of the Second Charleston has resolved, the Second Charleston is "
        "mandatory and a stop is refused.",
        NMJL,
        (
            S(
                "guide",
                "Second Charleston – Optional",
                "If the objection occurs after tiles are viewed, the second Charleston "
                "becomes mandatory",
            ),
        ),
    ),
    # -- blind passes -------------------------------------------------------------------
    Rule(
        "NMJL-07",
        "A blind pass is allowed on the last pass of each Charleston only (the First Left and "
        "the Second Right): a player gives 0, 1 or 2 tiles from the hand and forwards the "
        "rest of the 3 from the tiles arriving in that same pass.",
        NMJL,
        (
            S(
                "guide",
                "Third Pass (First Left) with Blind Pass Option",
                "passing 1, 2, or all 3 tiles received",
            ),
            S(
                "guide",
                "Third Pass (Second Right)",
                "may be used if passing fewer than 3 tiles from your hand",
            ),
        ),
        decision="A blind pass is declared as a count (blind) beside the tiles from the "
        "hand; every other step refuses it. Option blind_pass (off in house: HOUSE-02).",
    ),
    Rule(
        "NMJL-08",
        "A player never sees the faces of the tiles forwarded blind, and every player still "
        "gives exactly 3 and ends with as many tiles as before.",
        NMJL,
        (
            S(
                "guide",
                "Third Pass (First Left) with Blind Pass Option",
                "without looking at them (also referred to as “stealing”)",
            ),
        ),
        fact="charleston_fsm.engine.views: a seat sees only the tiles it kept, never the ones it "
        "forwarded unseen",
    ),
    Rule(
        "NMJL-09",
        "All declarations of a blind step resolve together as the table's IOU chain: the "
        "player giving the most tiles from the hand starts, the others follow round the "
        "table in the pass direction until everyone has given 3.",
        NMJL,
        (
            S(
                "guide",
                "Special Scenario – All Players Blind Passing",
                "The player with the greatest number of tiles to pass begins",
            ),
        ),
        decision="Made deterministic: ties go to the earlier seat in turn order (East "
        "first); at each turn a player hands over the own tiles still owed, then forwards "
        "as many waiting tiles as the blind count still asks for, first arrived first "
        "forwarded. Every tile's route is recorded; a tile may travel round the table back "
        "to its owner.",
    ),
    Rule(
        "NMJL-10",
        "When no player gives any tile from the hand on the Second Right, nothing moves, the "
        "Charleston ends at once and the Courtesy Pass is skipped.",
        NMJL,
        (
            S(
                "guide",
                "Special Scenario – No Tiles to Pass During Third Pass (Second Right)",
                "the Charleston immediately ends",
            ),
        ),
    ),
    Rule(
        "NMJL-11",
        "When no player gives any tile from the hand on the First Left, nothing moves and the "
        "vote follows as usual.",
        NMJL,
        (S("guide", "Optional Courtesy Pass", "Always the final pass of the Charleston"),),
        decision="The guide ends the Charleston only for the Second Right; the First "
        "Charleston is mandatory and the Courtesy Pass always comes last, so the First Left "
        "goes on to the vote.",
    ),
    # -- the Courtesy Pass --------------------------------------------------------------
    Rule(
        "NMJL-12",
        "The Courtesy Pass is always the final pass, after a stop or after the Second "
        "Charleston: each opposite pair (East and West, South and North) acts on its own, in "
        "parallel, and the Charleston ends when both pairs are done.",
        STANDARD,
        (
            S(
                "guide",
                "Optional Courtesy Pass",
                "Each opposite pair of players decides independently",
            ),
            S("spec", "Phase 3 — Courtesy Pass", "each pair acts independently"),
        ),
        decision="The Courtesy Pass is one parallel state with a region per pair; the two "
        "pairs never wait for each other.",
    ),
    Rule(
        "NMJL-13",
        "In the Courtesy Pass each player of a pair offers 0 to 3 tiles and the pair "
        "exchanges the smaller count (0: no exchange); then both choose exactly that many "
        "and the pair swaps them at once.",
        NMJL,
        (
            S(
                "guide",
                "Optional Courtesy Pass",
                "determined by the player wanting to pass the fewest tiles",
            ),
            S("flow", "6. Special Cases", "the other side must match that number"),
        ),
        decision="An offer is final once made (offer_courtesy, once per player); when both "
        "have offered the agreed count is recorded. Option courtesy_mode = agreed_min "
        "(house: HOUSE-03).",
    ),
    # -- declarations and challenges ----------------------------------------------------
    Rule(
        "NMJL-14",
        "Heavenly Hand: before any choice of the first pass is confirmed, East may declare "
        "Mah Jongg; the Charleston is then not played and ends at once.",
        STANDARD,
        (S("guide", "Charleston Exception – Heavenly Hand", "the Charleston is not conducted"),),
        decision="A choice confirmed and then withdrawn does not count (nothing was passed); "
        "after a Heavenly Hand no Earthly Hand can follow.",
    ),
    Rule(
        "NMJL-15",
        "Earthly Hand: once the Charleston is complete East may declare Mah Jongg, once, "
        "holding exactly 14 tiles.",
        STANDARD,
        (
            S(
                "guide",
                "East Declaring Mah Jongg (“Earthly Hand”)",
                "at the completion of the Charleston",
            ),
        ),
        decision="An uneven Courtesy Pass (HOUSE-03) can leave East with 11 to 17 tiles; the "
        "declaration is then refused with its own code.",
    ),
    Rule(
        "NMJL-16",
        "Winning during the Charleston does not end it: every pass still happens, and a "
        "declaration in the middle of it is refused.",
        STANDARD,
        (
            S(
                "guide",
                "East Declaring Mah Jongg (“Earthly Hand”)",
                "the Charleston must continue until completion",
            ),
        ),
    ),
    Rule(
        "NMJL-17",
        "Only East may declare Mah Jongg during the Charleston (Heavenly or Earthly Hand).",
        STANDARD,
        (
            S(
                "guide",
                "East Declaring Mah Jongg (“Earthly Hand”)",
                "since they are the only player with 14 tiles",
            ),
        ),
    ),
    Rule(
        "NMJL-18",
        "A hand cannot be called dead during the Charleston: every such challenge is refused.",
        STANDARD,
        (
            S(
                "guide",
                "Dead Hand Challenges",
                "Players cannot declare another player’s hand dead during the Charleston",
            ),
        ),
    ),
    Rule(
        "NMJL-19",
        "A declared hand is recorded for the table or a director to confirm; whether it wins "
        "is judged by a pluggable hand checker.",
        STANDARD,
        (
            S(
                "guide",
                "Purpose of the Charleston",
                "identify potential hands according to the NMJL Card",
            ),
        ),
        decision="The League's yearly card is not shipped: the default checker leaves every "
        "declaration pending.",
        fact="charleston_fsm.engine.hands: HandChecker, pending_confirmation",
    ),
    Rule(
        "NMJL-20",
        "Once the Charleston is complete no more tiles are passed: only placing received "
        "tiles and East's Earthly Hand remain.",
        STANDARD,
        (
            S(
                "guide",
                "closing paragraph",
                "the Charleston concludes and the game officially begins",
            ),
        ),
        decision="CHARLESTON_DONE is the end of the flow but not a final state of the "
        "statechart, because those two commands are still accepted there.",
    ),
    Rule(
        "NMJL-21",
        "A director judges a pending declaration once: valid ends the game with the hand; "
        "an invalid Heavenly Hand is set aside and the Charleston is played from the First "
        "Right as if nothing had been declared; an invalid Earthly Hand leaves the "
        "Charleston complete.",
        STANDARD,
        (
            S(
                "guide",
                "Charleston Exception – Heavenly Hand",
                "the Charleston is not conducted",
            ),
        ),
        decision="judge_declaration {verdict, text} is the director's command (no seat "
        "gives it), a transition of the chart from CHARLESTON_DONE; a second verdict is "
        "refused (declaration_already_judged), and the set-aside hand cannot be declared "
        "again as Heavenly. East may still declare an Earthly Hand at the end.",
    ),
    # -- house: the implementation spec's differences -----------------------------------
    Rule(
        "HOUSE-01",
        "The Second Charleston passes Across, then to the Left, then to the Right.",
        HOUSE,
        (S("spec", "Phase 2 — Second Charleston", "Pass Across: 3 tiles → Across"),),
        decision="Option second_charleston_order = across-left-right.",
    ),
    Rule(
        "HOUSE-02",
        "There is no blind pass: a player who cannot find 3 tiles still gives 3 from the "
        "hand, tiles just received included.",
        HOUSE,
        (
            S(
                "spec",
                "Tile/hand prerequisites",
                "they still must pass 3 (they may include tiles they’d prefer to keep",
            ),
        ),
        decision="Option blind_pass = false.",
    ),
    Rule(
        "HOUSE-03",
        "In the Courtesy Pass the two players of a pair may give different counts, 0 to 3 "
        "each, each what they chose.",
        HOUSE,
        (S("spec", "Courtesy contract", "Permit asymmetric counts (e.g., 2 vs 0)."),),
        decision="No offers are made: each player confirms 0-3 tiles. Hands may end uneven "
        "(15 and 11, say); the 152 tiles are still conserved. Option courtesy_mode = asymmetric.",
    ),
    Rule(
        "HOUSE-04",
        "Objections are taken at the vote only: once all four have voted to continue, the "
        "Second Charleston is played in full and a stop is refused.",
        HOUSE,
        (
            S(
                "spec",
                "Phase 2 — Second Charleston",
                "At any point before starting Phase 2 (i.e., after Pass 3)",
            ),
        ),
        decision="Option late_objection = false.",
    ),
)
