"""The engine: the Charleston's rules as a statechart, with no I/O.

Tiles, seats and steps; commands and events; the shared table and each chart family's
chart (``charts/``); resolution of a pass; views per seat; bots and the clock's policy.
It imports no database, HTTP or command-line library. Importing it enters every ruleset
of the catalogue (:mod:`.rulesets`) in the registry (:mod:`.ruleset`).
"""

from . import rulesets as _catalogue  # noqa: F401  (enters the rulesets in the registry)
