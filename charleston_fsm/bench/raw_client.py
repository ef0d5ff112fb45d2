"""A light HTTP/1.1 client for the load generator: requests as bytes, answers by httptools.

httpx costs the generator about 1 ms of CPU per request, as much as the server spends on
a command: on two cores a generator that heavy takes the server's CPU and becomes what is
measured. This client keeps ``connections`` keep-alive connections, writes each request
as bytes built once per seat and command (only the length changes nothing), and reads
the answer with httptools (the parser uvicorn uses): the status, and the body only when
the status is not 200 (to say what went wrong). One request at a time per connection;
the bench reports the generator's own CPU per request beside the server's
(``Step.client_cpu_ms``), which is how a run shows the generator was not the bottleneck.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httptools


class _Answer(asyncio.Protocol):
    """One keep-alive connection; :meth:`send` writes a request and awaits its status."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.waiting: asyncio.Future[tuple[int, bytes, dict[str, str]]] | None = None
        self.body: list[bytes] = []
        self.retry_after: dict[str, str] = {}  # the only header kept: a 503's wait
        self.lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        if self.waiting is not None and not self.waiting.done():
            self.waiting.set_exception(ConnectionError(f"connection lost: {exc}"))

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            if self.waiting is not None and not self.waiting.done():
                self.waiting.set_exception(exc)

    # httptools' callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        if name.lower() == b"retry-after":
            self.retry_after = {"Retry-After": value.decode("latin-1")}

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        if self.waiting is not None and not self.waiting.done():
            answer = (self.parser.get_status_code(), b"".join(self.body), self.retry_after)
            self.waiting.set_result(answer)
        self.body = []
        self.retry_after = {}

    async def send(self, raw: bytes) -> tuple[int, bytes, dict[str, str]]:
        assert self.transport is not None
        self.waiting = asyncio.get_running_loop().create_future()
        self.transport.write(raw)
        return await self.waiting


#: an answer later than this fails the request (the step's errors say so)
ANSWER_SECONDS = 60.0


class RawClient:
    """Keep-alive HTTP/1.1 connections to ``host:port``, opened as needed (at most
    ``connections`` at once: a request beyond them waits for one)."""

    def __init__(self, host: str, port: int, connections: int = 512) -> None:
        self.host, self.port = host, port
        self._idle: list[_Answer] = []
        self._slots = asyncio.Semaphore(connections)

    async def request(self, raw: bytes) -> tuple[int, bytes]:
        """Send one request (its bytes); its status and, unless 200, its body."""
        status, body, _ = await self.exchange(raw)
        return status, body

    async def exchange(self, raw: bytes) -> tuple[int, bytes, dict[str, str]]:
        """Send one request (its bytes); its status, its body and its ``Retry-After``
        (a dict of that one header, empty when the answer has none)."""
        async with self._slots:
            conn = None
            while self._idle and conn is None:
                conn = self._idle.pop()
                if conn.lost or conn.transport is None or conn.transport.is_closing():
                    conn = None  # the server closed it while idle (keep-alive timeout)
            if conn is None:
                conn = await self._open()
            try:
                answer = await asyncio.wait_for(conn.send(raw), ANSWER_SECONDS)
            except BaseException:
                if conn.transport is not None:
                    conn.transport.close()
                raise
            if not conn.lost:
                self._idle.append(conn)
            return answer

    async def _open(self) -> _Answer:
        loop = asyncio.get_running_loop()
        _, protocol = await loop.create_connection(_Answer, self.host, self.port)
        return protocol

    async def aclose(self) -> None:
        for conn in self._idle:
            if conn.transport is not None:
                conn.transport.close()
        self._idle.clear()


def post(path: str, body: bytes, headers: dict[str, str], host: str = "127.0.0.1") -> bytes:
    """A POST request's bytes (a JSON body)."""
    lines = [f"POST {path} HTTP/1.1", f"Host: {host}", "Content-Type: application/json"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def get(path: str, host: str = "127.0.0.1") -> bytes:
    """A GET request's bytes."""
    return f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()


def describe(status: int, body: bytes) -> str:
    """What went wrong, for a step's first error."""
    text: Any = body[:200].decode(errors="replace")
    return f"{status}: {text}"
