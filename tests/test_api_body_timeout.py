"""A body that never arrives (issue 30 R8): answered 408 after the documented time (the
setting is short here), its connection closed, nothing done; a client that leaves before
its body came is one info line, not an error. Raw sockets against a real ``serve``."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import httpx
from api_helpers import Game, running

ANSWER_SECONDS = 60  # a busy machine answers late; the 408 itself comes after 1 s


def _exchange(port: int, head: str, sent: bytes) -> tuple[int, dict[str, str], bytes, float]:
    """Send ``head`` and part of a body, then wait: the answer's status, headers, body,
    and how long it took; the server must close the connection after it."""
    with socket.create_connection(("127.0.0.1", port), timeout=ANSWER_SECONDS) as sock:
        started = time.monotonic()
        sock.sendall(head.encode() + b"\r\n" + sent)
        received = b""
        while chunk := sock.recv(65536):  # until the server closes (a timeout fails)
            received += chunk
        took = time.monotonic() - started
    raw_head, _, body = received.partition(b"\r\n\r\n")
    status_line, *lines = raw_head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines)}
    return int(status_line.split()[1]), headers, body, took


def _problem(headers: dict[str, str], body: bytes) -> dict[str, Any]:
    assert headers["content-type"].startswith("application/problem+json"), headers
    return json.loads(body)  # type: ignore[no-any-return]


def test_a_command_whose_body_never_arrives_gets_408_and_nothing_is_done(
    sqlite_url: str, tmp_path: Path
) -> None:
    with running(sqlite_url, tmp_path, args=["--body-timeout", "1"]) as server:
        game = Game.create(server, seed=5)
        before = game.clients["director"].get(game.path("/events")).json()["events"]
        body = json.dumps({"type": "confirm_pass", "tiles": game.plain("east")}).encode()
        head = (
            f"POST {game.path('/commands')} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {game.tokens['east']}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body) + 50}\r\n"
        )
        status, headers, answer, took = _exchange(server.port, head, body)
        assert status == 408, answer
        assert took >= 1.0
        problem = _problem(headers, answer)
        assert problem["code"] == "body_timeout"
        assert "did not arrive within 1 s" in problem["detail"]
        assert "--body-timeout" in problem["detail"]
        assert headers.get("connection") == "close"
        after = game.clients["director"].get(game.path("/events")).json()["events"]
        assert after == before  # the command was never run
        game.close()

        # a chunked body whose last chunk never comes, on a route FastAPI reads
        head = (
            "POST /v1/games HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\n"
        )
        status, headers, answer, _ = _exchange(server.port, head, b'4\r\n{"se\r\n')
        assert status == 408, answer
        assert _problem(headers, answer)["code"] == "body_timeout"
        assert not [line for line in server.log_lines() if line["level"] == "error"]


def test_a_client_leaving_before_its_body_came_is_one_info_line(
    sqlite_url: str, tmp_path: Path
) -> None:
    with running(sqlite_url, tmp_path, args=["--body-timeout", "60"]) as server:
        game = Game.create(server, seed=6)
        for path, extra in (
            (game.path("/commands"), f"Authorization: Bearer {game.tokens['east']}\r\n"),
            ("/v1/games", ""),
        ):
            with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
                sock.sendall(
                    f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}"
                    "Content-Type: application/json\r\nContent-Length: 400\r\n\r\n"
                    '{"type": '.encode()
                )
                time.sleep(0.2)  # not an assertion: the request is under way, then it leaves
        deadline = time.monotonic() + ANSWER_SECONDS
        left: list[dict[str, Any]] = []
        while time.monotonic() < deadline and len(left) < 2:
            left = [
                line
                for line in server.log_lines()
                if line["msg"] == "client left before sending its whole request"
            ]
            time.sleep(0.2)
        game.close()
        assert sorted((line["level"], line["path"]) for line in left) == [
            ("info", "/v1/games"),
            ("info", game.path("/commands")),
        ]
        text = server.log_path.read_text()
        assert "unhandled error" not in text and "Traceback" not in text
        assert "ClientDisconnect" not in text


def test_event_streams_outlive_the_body_timeout(sqlite_url: str, tmp_path: Path) -> None:
    """A GET sends no body, so the body timeout never applies to it: the game's stream
    and the feed's, each held across three 1 s body-timeout periods, still deliver what
    comes after, and nothing is logged as an error (the feed's stream once was cut at
    the deadline, two error lines each time: issue 36)."""
    env = {"CHARLESTON_FEED_HEARTBEAT": "60"}  # no heartbeat: only the deadline could act
    with running(sqlite_url, tmp_path, args=["--body-timeout", "1"], env=env) as server:
        game = Game.create(server, seed=7)
        director = {"Authorization": f"Bearer {game.tokens['director']}"}
        streams = {
            "game": (f"{server.base_url}{game.path('/stream')}", director, "pass_confirmed"),
            "feed": (f"{server.base_url}/v1/feed/stream", {}, "game.step_reached"),
        }
        opened = {
            name: httpx.stream("GET", url, headers=headers, timeout=ANSWER_SECONDS)
            for name, (url, headers, _) in streams.items()
        }
        answers = {name: stream.__enter__() for name, stream in opened.items()}
        try:
            assert {a.status_code for a in answers.values()} == {200}
            lines = {name: answer.iter_lines() for name, answer in answers.items()}
            started = time.monotonic()
            while time.monotonic() - started < 3.5:  # three deadlines pass meanwhile
                time.sleep(0.1)  # not an assertion of timing: holding the streams open
            for seat in ("east", "south", "west", "north"):
                body = {"type": "confirm_pass", "tiles": game.plain(seat)}
                assert game.command(seat, body).status_code == 200
            for name, (_, _, wanted) in streams.items():
                seen = []
                for line in lines[name]:  # what came after the deadlines, on the same stream
                    seen.append(line)
                    if line == f"event: {wanted}":
                        break
                assert f"event: {wanted}" in seen, (name, seen)
        finally:
            for stream in opened.values():
                stream.__exit__(None, None, None)
        game.close()
        logged = server.log_lines()
        assert not [line for line in logged if line["level"] == "error"], logged
        assert not [line for line in logged if line.get("status") == 408]
