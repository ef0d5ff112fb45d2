"""Every reachable configuration of a ruleset's chart, explored, with its properties checked.

Tests, hypothesis properties and bot games show the chart right on samples; this package
shows it right *everywhere* a game can go. It drives the real engine (the same
:class:`~charleston_fsm.engine.table.Table`, chart, guards, validators and resolution the
service runs, through the service's own turns) breadth first from a deal, trying every
choice that can change the flow in every configuration it reaches, and checks in each
(:mod:`.properties`, :mod:`.analysis`):

- **playable**: someone (a seat or the director) can act, or the Charleston is over; and
  each seat's ``allowed_commands`` is exactly the set of commands the chart took from it
  there (every candidate is *executed*, not asked of the probe that builds the list);
- **terminating**: with change and withdrawal left out, the graph has no cycle; the
  longest path from the deal is the most commands a game takes without them; and no
  cycle escapes the clock's fairness (:mod:`.fairness`, a failure is a lasso);
- **conservation**: 152 tiles, each once, the wall untouched, every hand its dealt size
  (or, in an asymmetric courtesy, a pair's total kept), no joker ever moved;
- **secrecy**: a seat's view names only tiles it holds; what a command's events tell a
  seat names only tiles it held before or holds after; a spectator is told no tile;
- **the clock**: the clock's firing for a seat, through the turn the store runs
  (:mod:`charleston_fsm.engine.turns`, :mod:`.turn_checks`), is accepted, leads where an
  explored move leads, starts with its ``clock_expired`` row and leaves no deadline
  standing to fire again on the same decision;
- **steps**: every pass row and transfer of a turn names a step the table was in;
- **the rule book's invariants**, by rule id (PASS-03, PASS-06, NMJL-10, NMJL-17, FW-05 ...);
- **the rule book itself** (:mod:`.rule_properties`): every accepted command does what
  the book says it must (where the table goes, who gives what to whom, who may declare),
  judged against the book's schedule and option values (:mod:`.rule_book`), not the
  engine's; and the malformed choices a person can send are refused with their rule's
  code and change nothing (:mod:`.malformed`). A failure reads as numbered steps in
  words, with a regression test (:mod:`.traces`).

Why counts stand for tiles (the abstraction, and why it is sound)
-----------------------------------------------------------------------

A configuration is keyed by the chart's active states and the table's snapshot with
every list of tiles replaced by its length (:func:`.abstraction.abstract_key`): per seat
the rack's and the received tiles' counts and its selection's (count from the hand,
blind count, Ding Dong receivers); the votes, offers, agreed counts, declaration, Ding
Dong count, Ready and closed as they are. Two tables with the same key are treated as
one. That is sound because nothing that decides the flow reads which tile is which:

- the guards (``engine/guards.py``, the families' tables) read the selections' presence
  and sizes, the votes, offers and options; none reads a tile;
- the validators (``engine/checks.py``) read tiles only to refuse a malformed choice: a
  tile named twice, not in the hand, or a joker. The exploration names, by a canonical
  rule, distinct tiles of the seat's own hand that are not jokers
  (:func:`.abstraction.canonical_tiles`), so its choices pass these checks exactly when
  some choice of that size does: a seat always holds more passable tiles than a step asks
  for (at least 11 in the canonical deal, and no pass changes a hand by more than 3);
- resolution (``engine/resolution.py``) decides who gives first from the *counts* given
  from the hand, and forwards blind tiles by arrival order, never by face, so the counts
  each seat keeps depend only on the declarations' counts;
- the one reader of faces, the hand checker that judges a declared hand, returns a
  verdict the chart does not branch on (only the director's verdict, which is explored
  both ways, moves the chart).

Where it matters *which* tiles a seat gives is where they come from: with placing not
required a seat may pass received tiles unplaced, which leaves fewer to place; each
split between rack and received tiles is therefore its own move. Jokers never move
(checked in every configuration), so a seat's joker count is the deal's and the key need
not hold it. The canonical deal (:func:`.abstraction.canonical_deal`) gives every seat a
joker and leaves two in the wall, so "no joker moves" is tested at every seat.

The director's clock commands (pause, resume, extend, hand a seat to the bot) and his
annotations (rulings, answers) never reach the table: ``Table.fold`` skips their rows,
and they change the clock only. A held or paused table withholds every seat's
command until the director resumes, which returns it to the same configuration; they
add no configuration. The clock acting for a seat is checked as a move in its own right.

Which option sets are explored is :mod:`.option_sets`'s argument; where placing is free,
received counts no move can tell apart are merged (:mod:`.reduction`, a bisimulation
quotient); :mod:`.coverage` records the guards and rule ids an exploration exercised.
"""

from .explored import Exploration, Failure
from .graph import explore

__all__ = ["Exploration", "Failure", "explore"]
