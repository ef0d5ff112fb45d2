"""What the feed and webhook tests share: the secrecy scan of an entry, and a receiver.

The receiver is a real HTTP server (``http.server``, threaded) on 127.0.0.1 that records
every delivery (headers, body, path, when it arrived) and answers as a test tells it to:
204, a status (with headers: ``(429, {"retry-after": "1"})``), or after a delay. It
verifies nothing itself; the tests do, from what it kept.
"""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: the only keys whose values may be numbers in an entry's data (counts, never tiles)
NUMBER_KEYS = frozenset({"table", "tables", "number", "paused_seconds", "last_seq"})
#: keys that would hold tiles, a deal or what makes one
TILE_KEYS = frozenset({"tiles", "deal", "hands", "racks", "rack", "gifts", "seed", "hand"})


def assert_no_tiles(entry: Mapping[str, Any]) -> None:
    """No field of ``entry['data']`` can hold a tile: no tile-shaped key, no list of
    numbers, a number only under a counting key, no tile face as text."""
    faces = {f"{rank}{suit}" for suit in "BCD" for rank in range(1, 10)}

    def walk(value: Any, key: str) -> None:
        assert key not in TILE_KEYS, (key, entry)
        if isinstance(value, Mapping):
            for k, v in value.items():
                walk(v, str(k))
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, bool) or value is None:
            return
        elif isinstance(value, int | float):
            assert key in NUMBER_KEYS, (key, entry)
        else:
            assert str(value) not in faces, (key, entry)

    walk(entry["data"], "data")


@dataclass
class Delivery:
    headers: dict[str, str]
    body: bytes
    path: str = "/hook"  # the request's target, as sent
    arrived: float = field(default_factory=time.time)  # Unix seconds
    #: the sender's end of the connection (address, port): one per connection it opened
    peer: tuple[str, int] | None = None

    @property
    def entry(self) -> dict[str, Any]:
        return json.loads(self.body)  # type: ignore[no-any-return]


@dataclass
class Receiver:
    """A real receiver: ``answer`` decides each request's status (and may sleep)."""

    deliveries: list[Delivery] = field(default_factory=list)
    answer: Callable[[Delivery], int | tuple[int, dict[str, str]]] = lambda _d: 204
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def accepted(self) -> list[Delivery]:
        """The deliveries it answered 2xx, in arrival order."""
        with self.lock:
            return [d for d in self.deliveries if getattr(d, "status", 0) // 100 == 2]

    def wait_for(self, check: Callable[[], bool], seconds: float = 60.0) -> None:
        deadline = time.monotonic() + seconds
        while not check():
            assert time.monotonic() < deadline, "the receiver did not get what was expected"
            time.sleep(0.05)


@contextmanager
def receiver(
    answer: Callable[[Delivery], int | tuple[int, dict[str, str]]] | None = None,
    port: int = 0,
    host: str = "127.0.0.1",
    tls: ssl.SSLContext | None = None,
) -> Iterator[Receiver]:
    """A threaded HTTP server on ``host`` (any 127/8 address on Linux) and ``port`` (0:
    a free one), recording each delivery; HTTPS with ``tls`` (a server context)."""
    got = Receiver()
    if answer is not None:
        got.answer = answer

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length)
            delivery = Delivery(
                {k.lower(): v for k, v in self.headers.items()},
                body,
                self.path,
                peer=self.client_address[:2],
            )
            answered = got.answer(delivery)
            status, extra = answered if isinstance(answered, tuple) else (answered, {})
            delivery.status = status  # type: ignore[attr-defined]
            with got.lock:
                got.deliveries.append(delivery)
            try:
                self.send_response(status)
                for name, value in extra.items():
                    self.send_header(name, value)
                self.send_header("content-length", "0")
                self.end_headers()
            except OSError:
                pass  # the sender gave up waiting (a time-out case)

        def log_message(self, *_args: Any) -> None:
            return

    ThreadingHTTPServer.allow_reuse_address = True
    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    if tls is not None:
        # the handshake is the accepting thread's: a client refusing the certificate
        # fails its own accept only (socketserver drops an OSError there)
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    scheme = "https" if tls is not None else "http"
    got.url = f"{scheme}://{host}:{server.server_address[1]}/hook"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield got
    finally:
        server.shutdown()
        server.server_close()


def by_game(entries: Iterable[Mapping[str, Any]]) -> dict[str | None, list[int | None]]:
    """Each game's entries' seqs, in the order given."""
    games: dict[str | None, list[int | None]] = {}
    for entry in entries:
        games.setdefault(entry["game_id"], []).append(entry["seq"])
    return games
