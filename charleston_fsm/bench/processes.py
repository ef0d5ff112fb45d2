"""Throughput of several processes that start together (the store's and the floor's)."""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable, Sequence
from typing import Any


def run_for(barrier: Any, seconds: float, step: Callable[[], object]) -> int:
    """Call ``step`` for ``seconds`` once every process has reached ``barrier`` (each has
    imported and connected by then, however slow); the calls made."""
    barrier.wait()
    end = time.monotonic() + seconds
    done = 0
    while time.monotonic() < end:
        step()
        done += 1
    return done


def rate_of(
    worker: Callable[..., int], jobs: Sequence[tuple[Any, ...]], seconds: float
) -> tuple[float, list[int]]:
    """Calls/s of ``worker(*job, barrier, seconds)``, one spawned process per job."""
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager, context.Pool(len(jobs)) as pool:
        barrier = manager.Barrier(len(jobs))
        counts = pool.starmap(worker, [(*job, barrier, seconds) for job in jobs])
    return sum(counts) / seconds, counts
