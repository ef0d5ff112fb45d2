"""The tokens one service process remembers, and the watch that makes it forget them.

A role is looked up once per (game, token) and remembered (``deps.authenticate``): the
command path then reads no credential. Credentials change after creation (a seat's token
replaced for a substitute, a spectator's link issued again or revoked, an organiser's
key rotated or revoked), so what a process remembers must go as soon as the change is
committed, in every process:

- the process that made the change forgets the game at once (:meth:`TokenCache.forget`);
- every process runs a :class:`CredentialWatch`: a thread that reads the store's newest
  ``credential_changes`` rows every :data:`WATCH_INTERVAL` seconds (one indexed read)
  and forgets those games, rounds and organisers. It does not rely on notices, which SQLite's
  processes do not exchange and a stopped process may never send: an old token is
  refused on every process within a second of the change's commit. It also tells
  ``on_change`` (the service: its notifier) each game and round it forgot, so the open
  streams of a revoked link, which remembered nothing, look at it and end within that
  second too (a round's link opens its tables' streams, subscribed under the round).

Each poll looks back :data:`~charleston_fsm.store.rounds.credentials.POLL_MARGIN` before the last
one (a change commits a little after the moment it records), so a change is forgotten
more than once, which costs one credential read per token and nothing else.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ..store.rounds.credentials import POLL_MARGIN
from .logs import log

ROLE_CACHE_SIZE = 100_000  # (game id, token digest) -> role, per process
WATCH_INTERVAL = 0.25  # seconds between two reads of the credential changes
RETRY_SECONDS = 2.0  # after a failed read


class TokenCache:
    """(game id, token digest) -> role, spectators' (subject, digest) -> delay, and
    organisers' key digest -> organiser id.

    An organiser's key directing a game is remembered under the game and under the
    organiser (``owner``): rotating or revoking the key forgets it in every game.
    Reads and writes of a dict are atomic in CPython; :meth:`forget` takes a lock so a
    game's index stays whole while it is emptied.
    """

    def __init__(self, size: int = ROLE_CACHE_SIZE) -> None:
        self.size = size
        self._roles: dict[tuple[str, str], str] = {}
        self._spectators: dict[tuple[str, str], int] = {}
        self._of_game: defaultdict[str, set[tuple[str, str]]] = defaultdict(set)
        self._organisers: dict[str, str] = {}  # live key digest -> organiser id
        self._keys_of: defaultdict[str, set[str]] = defaultdict(set)  # organiser -> digests
        self._lock = threading.Lock()

    # the mapping the guards use: (game, digest) -> role
    def get(self, key: tuple[str, str]) -> str | None:
        return self._roles.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._roles

    def __setitem__(self, key: tuple[str, str], role: str) -> None:
        self.remember(key, role)

    def remember(self, key: tuple[str, str], role: str, owner: str | None = None) -> None:
        """Keep ``key``'s role until its game's (or its ``owner``'s) credentials change."""
        with self._lock:
            if len(self._roles) >= self.size:
                self._clear()
            self._roles[key] = role
            self._of_game[key[0]].add(key)
            if owner is not None:
                self._of_game[owner].add(key)

    def organiser(self, digest: str) -> str | None:
        """The organiser whose live key ``digest`` is, if remembered."""
        return self._organisers.get(digest)

    def remember_organiser(self, digest: str, organiser_id: str) -> None:
        with self._lock:
            if len(self._organisers) >= self.size:
                self._organisers.clear()
                self._keys_of.clear()
            self._organisers[digest] = organiser_id
            self._keys_of[organiser_id].add(digest)

    def __len__(self) -> int:
        return len(self._roles)

    def spectator(self, key: tuple[str, str]) -> int | None:
        return self._spectators.get(key)

    def remember_spectator(self, key: tuple[str, str], delay: int) -> None:
        with self._lock:
            if len(self._spectators) >= self.size:
                self._spectators.clear()
            self._spectators[key] = delay

    def forget(self, subjects: set[str]) -> None:
        """Forget every token remembered for these games, rounds or organisers (a round's
        spectator link opens its tables under the table's id: spectators are forgotten
        whole)."""
        with self._lock:
            for subject in subjects:
                for key in self._of_game.pop(subject, ()):
                    self._roles.pop(key, None)
                for digest in self._keys_of.pop(subject, ()):
                    self._organisers.pop(digest, None)
            if subjects:
                self._spectators.clear()

    def clear(self) -> None:
        with self._lock:
            self._clear()

    def _clear(self) -> None:
        self._roles.clear()
        self._of_game.clear()
        self._spectators.clear()
        self._organisers.clear()
        self._keys_of.clear()


class CredentialWatch:
    """A daemon thread: every ``interval`` seconds, forget the tokens of the games and
    rounds whose credentials changed since the last look, and tell ``on_change`` each."""

    def __init__(
        self,
        store: Any,
        cache: TokenCache,
        interval: float = WATCH_INTERVAL,
        on_change: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.cache = cache
        self.interval = interval
        self.on_change = on_change
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._since = datetime.now(UTC) - POLL_MARGIN
        self._told: set[Any] = set()  # the changes told to on_change in the last look

    def start(self) -> None:
        if not hasattr(self.store, "credentials"):
            return
        self._thread = threading.Thread(target=self._run, name="credential-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def look(self) -> set[str]:
        """One look: the games and rounds forgotten."""
        moment = datetime.now(UTC)
        changes = self.store.credentials.changes_since(self._since)
        changed = {subject for subject, _at, _what in changes}
        self.cache.forget(changed)
        self.store.reads.forget_names(changed)  # a substitute's name is the seat's now
        self._since = moment - POLL_MARGIN
        new = changes - self._told  # a look back past the last one sees a change again
        self._told = changes
        if self.on_change is not None:
            for subject in sorted({subject for subject, _at, _what in new}):
                self.on_change(subject)
        return changed

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.look()
            except Exception:  # the database is away: forget everything, look again soon
                self.cache.clear()
                self.store.reads.forget_names()
                log.exception("credential watch: a read failed; trying again shortly")
                self._stop.wait(RETRY_SECONDS)
