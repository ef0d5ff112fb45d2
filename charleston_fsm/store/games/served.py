"""The games a process served: their heads, kept so a command needs no read first.

A write continues from the game's :class:`~.append.Head` as this process last left it
(or found it), and the append stores nothing unless the game is still there, so a stale
head costs a lost race and a read, never a wrong write (``writes.py``). The cache is
bounded (least recently used out first) and forgets a game when another process is
heard writing it (``notices.py``), when a write of it fails, and when its race is lost.
Thread-safe: route threads share it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from .append import Head

#: games whose heads one process keeps (a head is the game's snapshot and typed clock,
#: ~4-6 KB in memory): a 1,000-table round fits many times over
SERVED_GAMES = 4096


class ServedGames:
    """A bounded map game id -> :class:`Head`, newest use last."""

    def __init__(self, size: int = SERVED_GAMES) -> None:
        self.size = size
        self._heads: OrderedDict[str, Head] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, game_id: str) -> Head | None:
        with self._lock:
            head = self._heads.get(game_id)
            if head is not None:
                self._heads.move_to_end(game_id)
            return head

    def put(self, game_id: str, head: Head) -> None:
        """Keep ``head`` unless a newer one of the game is kept (threads finish in any
        order: a later seq, or a later epoch at the same seq, wins)."""
        if self.size <= 0:
            return
        with self._lock:
            kept = self._heads.get(game_id)
            if kept is not None and (kept.last_seq, kept.epoch) > (head.last_seq, head.epoch):
                return
            self._heads[game_id] = head
            self._heads.move_to_end(game_id)
            while len(self._heads) > self.size:
                self._heads.popitem(last=False)

    def forget(self, game_id: str, seq: int | None = None) -> None:
        """Drop the game; ``seq``: only if the kept head is older (another process wrote
        rows up to ``seq``; this process's own notice changes nothing)."""
        with self._lock:
            kept = self._heads.get(game_id)
            if kept is not None and (seq is None or kept.last_seq < seq):
                del self._heads[game_id]

    def clear(self) -> None:
        with self._lock:
            self._heads.clear()

    def __len__(self) -> int:
        return len(self._heads)
