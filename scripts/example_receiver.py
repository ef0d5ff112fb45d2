#!/usr/bin/env python3
"""An example webhook receiver for charleston-fsm (docs/platforms.md), standard library only
(plus ``cryptography`` for v1a endpoints).

What a platform's receiver must do, in ~100 lines:

1. check the Standard Webhooks signature over ``{webhook-id}.{webhook-timestamp}.{body}``
   (``v1``: HMAC-SHA256 with the endpoint's ``whsec_`` secret; ``v1a``: Ed25519 with the
   service's public key from ``GET /v1/anchor-key``) and the timestamp (5 minutes);
2. answer 2xx quickly, and answer a ``webhook-id`` it already has with 2xx too (a retry
   of the same entry, never a new one);
3. after downtime, read the feed from the last cursor it kept (``--feed``): webhooks are
   retried for about three days, the feed is kept for ever.

    python scripts/example_receiver.py --port 8081 --secret whsec_...
    python scripts/example_receiver.py --port 8081 --public-key BASE64 --save deliveries/
    python scripts/example_receiver.py --feed http://127.0.0.1:8000 --platform-key KEY \\
        --cursor-file cursor.txt --once
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

TOLERANCE = 300


def signature_ok(headers: dict[str, str], body: bytes, secret: str | None, key: str | None) -> bool:
    msg_id, stamp = headers.get("webhook-id", ""), headers.get("webhook-timestamp", "")
    if not msg_id or not stamp.isdigit() or abs(time.time() - int(stamp)) > TOLERANCE:
        return False
    content = f"{msg_id}.{stamp}.".encode() + body
    for signature in headers.get("webhook-signature", "").split():
        version, _, value = signature.partition(",")
        raw = base64.b64decode(value + "==")
        if version == "v1" and secret:
            mac = hmac.new(base64.b64decode(secret.removeprefix("whsec_")), content, hashlib.sha256)
            if hmac.compare_digest(raw, mac.digest()):
                return True
        if version == "v1a" and key:
            from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

            try:
                Ed25519PublicKey.from_public_bytes(base64.b64decode(key)).verify(raw, content)
                return True
            except Exception:
                continue
    return False


def serve(args: argparse.Namespace) -> None:
    seen: set[str] = set()
    lock = threading.Lock()

    class Receiver(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            if not signature_ok(headers, body, args.secret, args.public_key):
                return self.answer(401)
            msg_id = headers["webhook-id"]
            with lock:
                new = msg_id not in seen
                seen.add(msg_id)
            if new:  # a platform would queue it for its own work here
                entry = json.loads(body)["data"]
                print(
                    f"{entry['type']} game={entry['game_id']} round={entry['round_id']}", flush=True
                )
                if args.save:
                    folder = Path(args.save) / msg_id
                    folder.mkdir(parents=True, exist_ok=True)
                    (folder / "headers.json").write_text(json.dumps(headers))
                    (folder / "body.json").write_bytes(body)
            self.answer(204)

        def answer(self, status: int) -> None:
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *_: object) -> None:
            return

    server = ThreadingHTTPServer((args.host, args.port), Receiver)
    print(f"receiving on http://{args.host}:{args.port}/", flush=True)
    server.serve_forever()


def catch_up(args: argparse.Namespace) -> None:
    """Read the feed from the kept cursor to its end, printing each entry, keeping the cursor."""
    cursor_file = Path(args.cursor_file)
    after = cursor_file.read_text().strip() if cursor_file.exists() else ""
    while True:
        url = f"{args.feed}/v1/feed?limit=500&after={after}"
        request = urllib.request.Request(
            url, headers={"Authorization": f"Bearer {args.platform_key}"}
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            page = json.load(answer)
        for entry in page["entries"]:
            print(f"{entry['cursor']} {entry['type']} game={entry['game_id']}", flush=True)
        after = page["next"]
        cursor_file.write_text(after)
        if not page["entries"]:
            if args.once:
                return
            time.sleep(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8081)
    parser.add_argument("--secret", help="a v1 endpoint's secret (whsec_...)")
    parser.add_argument("--public-key", help="a v1a endpoint's key: GET /v1/anchor-key")
    parser.add_argument(
        "--save", help="a folder to keep each delivery in (headers.json, body.json)"
    )
    parser.add_argument("--feed", help="the service's base URL: read the feed instead of receiving")
    parser.add_argument("--platform-key", default="", help="the platform key (for --feed)")
    parser.add_argument("--cursor-file", default="feed-cursor.txt", help="where the cursor is kept")
    parser.add_argument("--once", action="store_true", help="with --feed: stop at the end")
    args = parser.parse_args()
    if args.feed:
        return catch_up(args)
    if not (args.secret or args.public_key):
        parser.error("give --secret (v1) or --public-key (v1a), or --feed to read the feed")
    serve(args)


if __name__ == "__main__":
    sys.exit(main())
