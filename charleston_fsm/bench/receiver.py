"""The bench's webhook receiver: a threaded ``http.server`` on 127.0.0.1 answering 204.

Run as its own process (``python -m charleston_fsm.bench.receiver``) so the sender and
the receiver do not share a GIL. It imports the standard library only: it is listening
within a fraction of a second even on a loaded machine. (It used to be a ``spawn``
child of the bench, which imports the module of its target, and with it the whole
service: under a load average of 9 that took longer than the 30 s the bench waited,
and the bench then sent to port 0.) It prints its port on one line, then serves until
it is terminated or its standard input closes (the bench that started it is gone).
"""

from __future__ import annotations

import socketserver
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # kept-alive connections, as a real receiver's

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(204)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *_: Any) -> None:
        return


class _Server(ThreadingHTTPServer):
    request_queue_size = 64  # the worker's senders connect at once

    def server_bind(self) -> None:
        # HTTPServer's own also looks up the host's name (``getfqdn``): a DNS wait for
        # nothing on a machine whose resolver does not answer
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = "127.0.0.1", self.server_address[1]


def main() -> None:
    server = _Server(("127.0.0.1", 0), _Handler)
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # returns when the bench closes the pipe, or exits


if __name__ == "__main__":
    main()
