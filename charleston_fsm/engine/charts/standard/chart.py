"""The National Mah Jongg League's Charleston as a statechart: the flow, one state per step.

Read it beside the rule book (docs/rules.md): one state per step, transitions guarded by
the table's facts (everyone confirmed, someone voted stop, the ruleset's order). Commands
are events; an event a state does not accept is refused, never ignored. The guards,
validators and actions it names are methods of :class:`.table.StandardTable`.
"""

from __future__ import annotations

from statemachine import Event, State, StateChart

from ...seats import Direction
from ...steps import COURTESY_PAIRS, Step, courtesy, standard
from ..shapes import in_each


class StandardCharleston(StateChart):
    """First Charleston, vote, optional Second Charleston, Courtesy Pass, done."""

    allow_event_without_transition = False  # strict: a refused event raises
    catch_errors_as_events = False  # a refusal propagates to the caller untouched

    # 1-3: the First Charleston (mandatory)
    CHARLESTON_P1_R = State("First Charleston: pass Right", initial=True)
    CHARLESTON_P1_A = State("First Charleston: pass Across")
    CHARLESTON_P1_L = State("First Charleston: pass Left")
    # 4: continue or stop
    CHARLESTON_DECIDE_STOP = State("Vote: continue or stop the Charleston")
    # 5-7: the Second Charleston (only if all four continue; order from the ruleset)
    CHARLESTON_P2_L = State("Second Charleston: pass Left")
    CHARLESTON_P2_A = State("Second Charleston: pass Across")
    CHARLESTON_P2_R = State("Second Charleston: pass Right")

    # 8: the Courtesy Pass, each opposite pair on its own
    class COURTESY_PASS(State.Parallel, name="Courtesy Pass (pairs in parallel)"):
        class COURTESY_PASS_PAIR_1(State.Compound, name="Courtesy Pass: East and West"):
            PAIR_1_OFFER = State("East and West offer 0-3", initial=True)
            PAIR_1_CHOOSE = State("East and West choose their tiles")
            PAIR_1_DONE = State("East and West done", final=True)

            PAIR_1_OFFER.to(PAIR_1_CHOOSE, cond="courtesy_counts_free")
            PAIR_1_OFFER.to(PAIR_1_DONE, cond="pair_1_declined", on="record_agreement")
            PAIR_1_OFFER.to(PAIR_1_CHOOSE, cond="pair_1_agreed", on="record_agreement")
            PAIR_1_CHOOSE.to(PAIR_1_DONE, cond="pair_1_confirmed", on="resolve_pass")

            offer_courtesy = PAIR_1_OFFER.to(
                None, cond="from_pair_1", validators="check_offer", on="record_offer"
            )
            confirm_pass = PAIR_1_CHOOSE.to(
                None, cond="from_pair_1", validators="check_confirm", on="record_confirm"
            )
            change_pass = PAIR_1_CHOOSE.to(
                None, cond="from_pair_1", validators="check_change", on="record_change"
            )
            withdraw_pass = PAIR_1_CHOOSE.to(
                None, cond="from_pair_1", validators="check_withdraw", on="record_withdraw"
            )
            place_tiles = in_each(
                (PAIR_1_OFFER, PAIR_1_CHOOSE, PAIR_1_DONE),
                "check_place",
                "record_place",
                cond="from_pair_1",
            )

        class COURTESY_PASS_PAIR_2(State.Compound, name="Courtesy Pass: South and North"):
            PAIR_2_OFFER = State("South and North offer 0-3", initial=True)
            PAIR_2_CHOOSE = State("South and North choose their tiles")
            PAIR_2_DONE = State("South and North done", final=True)

            PAIR_2_OFFER.to(PAIR_2_CHOOSE, cond="courtesy_counts_free")
            PAIR_2_OFFER.to(PAIR_2_DONE, cond="pair_2_declined", on="record_agreement")
            PAIR_2_OFFER.to(PAIR_2_CHOOSE, cond="pair_2_agreed", on="record_agreement")
            PAIR_2_CHOOSE.to(PAIR_2_DONE, cond="pair_2_confirmed", on="resolve_pass")

            offer_courtesy = PAIR_2_OFFER.to(
                None, cond="from_pair_2", validators="check_offer", on="record_offer"
            )
            confirm_pass = PAIR_2_CHOOSE.to(
                None, cond="from_pair_2", validators="check_confirm", on="record_confirm"
            )
            change_pass = PAIR_2_CHOOSE.to(
                None, cond="from_pair_2", validators="check_change", on="record_change"
            )
            withdraw_pass = PAIR_2_CHOOSE.to(
                None, cond="from_pair_2", validators="check_withdraw", on="record_withdraw"
            )
            place_tiles = in_each(
                (PAIR_2_OFFER, PAIR_2_CHOOSE, PAIR_2_DONE),
                "check_place",
                "record_place",
                cond="from_pair_2",
            )

    # 9: the end; East may still declare an Earthly Hand here
    CHARLESTON_DONE = State("Charleston complete")

    # -- the flow: a pass resolves when every player who must act has confirmed --------
    CHARLESTON_P1_R.to(CHARLESTON_P1_A, cond="all_confirmed", on="resolve_pass")
    CHARLESTON_P1_A.to(CHARLESTON_P1_L, cond="all_confirmed", on="resolve_pass")
    # with no tile from any hand nothing moves, and the vote still follows
    CHARLESTON_P1_L.to(CHARLESTON_DECIDE_STOP, cond="all_confirmed", on="resolve_pass")

    CHARLESTON_DECIDE_STOP.to(COURTESY_PASS, cond="any_stop")
    CHARLESTON_DECIDE_STOP.to(CHARLESTON_P2_L, cond=["all_continue", "second_left_first"])
    CHARLESTON_DECIDE_STOP.to(CHARLESTON_P2_A, cond=["all_continue", "second_across_first"])

    CHARLESTON_P2_L.to(
        CHARLESTON_P2_A, cond=["all_confirmed", "second_left_first"], on="resolve_pass"
    )
    CHARLESTON_P2_A.to(
        CHARLESTON_P2_R, cond=["all_confirmed", "second_left_first"], on="resolve_pass"
    )
    CHARLESTON_P2_A.to(
        CHARLESTON_P2_L, cond=["all_confirmed", "second_across_first"], on="resolve_pass"
    )
    CHARLESTON_P2_L.to(
        CHARLESTON_P2_R, cond=["all_confirmed", "second_across_first"], on="resolve_pass"
    )
    CHARLESTON_P2_R.to(COURTESY_PASS, cond=["all_confirmed", "tiles_from_hand"], on="resolve_pass")
    # the Second Right with no tile from any hand ends the Charleston: no Courtesy Pass
    CHARLESTON_P2_R.to(
        CHARLESTON_DONE,
        cond=["all_confirmed", "blind_passes_allowed"],
        unless="tiles_from_hand",
        on=["resolve_pass", "end_without_courtesy"],
    )

    done_state_COURTESY_PASS = COURTESY_PASS.to(CHARLESTON_DONE)

    # -- the players' commands --------------------------------------------------------
    _passes = (
        CHARLESTON_P1_R, CHARLESTON_P1_A, CHARLESTON_P1_L,
        CHARLESTON_P2_L, CHARLESTON_P2_A, CHARLESTON_P2_R,
    )  # fmt: skip
    confirm_pass = Event(in_each(_passes, "check_confirm", "record_confirm"), name="confirm a pass")
    change_pass = Event(in_each(_passes, "check_change", "record_change"), name="change a pass")
    withdraw_pass = Event(
        in_each(_passes, "check_withdraw", "record_withdraw"), name="withdraw a pass"
    )
    vote = Event(
        CHARLESTON_DECIDE_STOP.to(None, validators="check_vote", on="record_vote")
        # a late objection: until the first pass of the Second Charleston resolves, nobody
        # has seen a tile of it, and one stop still skips to the Courtesy Pass
        | CHARLESTON_P2_L.to(
            COURTESY_PASS,
            cond=["late_objection_allowed", "second_left_first"],
            validators="check_late_objection",
            on="record_late_objection",
        )
        | CHARLESTON_P2_A.to(
            COURTESY_PASS,
            cond=["late_objection_allowed", "second_across_first"],
            validators="check_late_objection",
            on="record_late_objection",
        ),
        name="vote continue or stop",
    )
    place_tiles = Event(
        in_each(
            (*_passes, CHARLESTON_DECIDE_STOP, CHARLESTON_DONE),
            "check_place",
            "record_place",
        ),
        name="place received tiles",
    )
    declare_mah_jongg = Event(
        CHARLESTON_P1_R.to(
            CHARLESTON_DONE,
            cond="from_east",
            validators="check_heavenly_hand",
            on="record_declaration",
        )
        | CHARLESTON_DONE.to(
            None, cond="from_east", validators="check_earthly_hand", on="record_declaration"
        ),
        name="declare Mah Jongg",
    )
    # the director's verdict on a pending declaration (NMJL-21): an invalid Heavenly Hand
    # is set aside and the Charleston is played from the First Right; anything else stays
    judge_declaration = Event(
        CHARLESTON_DONE.to(
            CHARLESTON_P1_R,
            cond=["from_director", "heavenly_declared", "judged_invalid"],
            validators="check_judgement",
            on="reopen_after_invalid_heavenly",
        )
        | CHARLESTON_DONE.to(
            None, cond="from_director", validators="check_judgement", on="record_judgement"
        ),
        name="judge the declaration",
    )


#: What each passing state asks of the players (read by the table, drawn on diagrams).
STANDARD_STEPS: dict[str, Step] = {
    "CHARLESTON_P1_R": standard("First Charleston: pass Right", Direction.RIGHT),
    "CHARLESTON_P1_A": standard("First Charleston: pass Across", Direction.ACROSS),
    "CHARLESTON_P1_L": standard("First Charleston: pass Left", Direction.LEFT, blind=True),
    "CHARLESTON_P2_L": standard("Second Charleston: pass Left", Direction.LEFT),
    "CHARLESTON_P2_A": standard("Second Charleston: pass Across", Direction.ACROSS),
    "CHARLESTON_P2_R": standard("Second Charleston: pass Right", Direction.RIGHT, blind=True),
    "PAIR_1_CHOOSE": courtesy(COURTESY_PAIRS[0]),
    "PAIR_2_CHOOSE": courtesy(COURTESY_PAIRS[1]),
}


#: What the table is doing in each top-level state (its substates share it): what a client
#: shows, read from here and never guessed from a state's id (``progress.phase``).
STATE_PHASES: dict[str, str] = {
    "CHARLESTON_P1_R": "pass",
    "CHARLESTON_P1_A": "pass",
    "CHARLESTON_P1_L": "pass",
    "CHARLESTON_DECIDE_STOP": "vote",
    "CHARLESTON_P2_L": "pass",
    "CHARLESTON_P2_A": "pass",
    "CHARLESTON_P2_R": "pass",
    "COURTESY_PASS": "courtesy",
    "CHARLESTON_DONE": "done",
}


#: The rules each state plays out (its guards, validators and actions name theirs with
#: ``@enforces`` on the table); drawn on the diagrams, listed in the rule matrix.
STATE_RULES: dict[str, tuple[str, ...]] = {
    "CHARLESTON_P1_R": ("NMJL-01", "NMJL-14"),
    "CHARLESTON_P1_A": ("NMJL-01",),
    "CHARLESTON_P1_L": ("NMJL-01", "NMJL-07", "HOUSE-02", "NMJL-11"),
    "CHARLESTON_DECIDE_STOP": ("NMJL-02", "NMJL-03"),
    "CHARLESTON_P2_L": ("NMJL-04", "HOUSE-01", "NMJL-05", "HOUSE-04"),
    "CHARLESTON_P2_A": ("NMJL-04", "HOUSE-01", "NMJL-05", "HOUSE-04"),
    "CHARLESTON_P2_R": ("NMJL-04", "HOUSE-01", "NMJL-07", "HOUSE-02", "NMJL-10"),
    "COURTESY_PASS": ("NMJL-12",),
    "PAIR_1_OFFER": ("NMJL-13",),
    "PAIR_1_CHOOSE": ("NMJL-13", "HOUSE-03"),
    "PAIR_2_OFFER": ("NMJL-13",),
    "PAIR_2_CHOOSE": ("NMJL-13", "HOUSE-03"),
    "CHARLESTON_DONE": ("NMJL-15", "NMJL-20", "NMJL-21"),
}
