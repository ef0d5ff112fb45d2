"""Clock workers racing on one database, for the clock tests (threads and processes).

A plain module (not a test file) so that spawned processes can import the worker.
"""

from __future__ import annotations

import time

from charleston_fsm.store import GameStore


def fire_until_quiet(url: str, game_ids: list[str], seconds: float = 60) -> list[tuple[str, int]]:
    """Fire due deadlines until every game is finished with nothing due; what it wrote."""
    store = GameStore(url)
    written: list[tuple[str, int]] = []
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            written += store.clock_worker.fire_due_clocks()
            views = [store.reads.view(g) for g in game_ids]
            if all(v["game"]["finished"] and not v["clock"]["deadlines"] for v in views):
                return written
            time.sleep(0.02)
        raise TimeoutError(f"the clocks did not finish the games within {seconds} s")
    finally:
        store.dispose()
