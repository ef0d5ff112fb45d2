"""Transition shapes the chart families share."""

from __future__ import annotations

from statemachine import State
from statemachine.transition_list import TransitionList


def in_each(
    states: tuple[State, ...], validators: str | list[str], on: str, cond: str | None = None
) -> TransitionList:
    """The same command, accepted in each of ``states`` without leaving it.

    These are targetless transitions: they run their action and change no state. (A
    self-transition would exit and re-enter; inside a parallel region python-statemachine
    3.2 then also re-enters the region's initial state, replaying its eventless moves.)
    """
    transitions = TransitionList()
    for state in states:
        transitions = transitions | state.to(None, validators=validators, on=on, cond=cond)
    return transitions
