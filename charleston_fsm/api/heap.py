"""A serving process's heap, settled once it has started: collected, then frozen.

Why: CPython's cyclic collector walks every object it tracks in a full (oldest
generation) collection, and every request in flight waits while it does. A ``serve``
process tracks ~200,000 objects once its modules, routes, schemas and store are built,
nearly all of them alive as long as the process is; a full collection walked them all in
~110 ms. Under 200 commands/s over 1,000 tables one came every ~20 s, and that one pause
put the p99 of the whole step over 50 ms (docs/performance.md).

``gc.freeze()`` moves every object tracked now to the collector's permanent generation:
later collections walk only what the service made since (the heads of the games it
serves, requests, streams), which takes a few milliseconds. A frozen object is still
freed by reference counting as usual; only a reference cycle among frozen objects would
outlive its use, which is why the heap is collected once first, while nothing but
start-up objects are in it.

Only a serving process does this (``serve`` sets it, and so do its worker processes
through :data:`FREEZE_HEAP_ENV`): an app built for a test or an embedding program leaves
its host's collector alone.
"""

from __future__ import annotations

import gc
import os
import time

#: ``1``: the app built by ``create_app()`` settles its heap once started (``serve`` sets
#: it for its worker processes)
FREEZE_HEAP_ENV = "CHARLESTON_FREEZE_HEAP"


def wanted(freeze_heap: bool | None) -> bool:
    """The caller's choice, else the environment's."""
    return freeze_heap if freeze_heap is not None else os.environ.get(FREEZE_HEAP_ENV) == "1"


def settle() -> dict[str, float]:
    """Collect every generation once, then freeze what is left; what was done, for the log."""
    start = time.perf_counter()
    collected = gc.collect()
    gc.freeze()
    return {
        "collected": collected,
        "frozen": gc.get_freeze_count(),
        "ms": round((time.perf_counter() - start) * 1e3, 1),
    }
