"""Connections to webhook receivers: to the addresses the URL rule checked, and no others.

``http.client`` looks a connection's host up itself when it connects. Between the URL
rule's check (``webhook_urls.py``) and that moment a name's answer can change (DNS
rebinding: a public address for the check, ``127.0.0.1`` or ``169.254.169.254`` for the
connection), and the request would go where the rule refuses. So the connections here
open their TCP socket to a :class:`~.webhook_urls.Destination`'s checked addresses, in
the resolver's order (the next when one does not take the connection, as
``socket.create_connection`` does), and never look the name up.

The receiver is still named by its host: the ``Host`` header (``host[:port]``), and for
``https`` the TLS server name (SNI) and the name the certificate is verified against.
Verification is the context's: :func:`default_tls` (the system's trust store, which
OpenSSL's ``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` point elsewhere) unless the caller gives
its own; it is never turned off.

A kept-alive connection is sent on again only while its URL's checked addresses are the
ones it was opened to: a re-check that finds others closes it and opens a new one.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import sys
import threading
from collections.abc import Sequence

from .webhook_urls import Destination


def default_tls() -> ssl.SSLContext:
    """The sender's TLS context: certificates verified against the system's trust store,
    the host name checked; HTTP/1.1 offered by ALPN (what ``http.client`` speaks)."""
    context = ssl.create_default_context()
    context.set_alpn_protocols(["http/1.1"])
    return context


def open_socket(addresses: Sequence[str], port: int, timeout: float | None) -> socket.socket:
    """A TCP socket connected to the first of ``addresses`` that takes the connection,
    tried in order (each within ``timeout``); the first failure when none does."""
    if not addresses:
        raise OSError("the webhook host has no checked address to connect to")
    failures: list[OSError] = []
    for address in addresses:
        ip = ipaddress.ip_address(address)
        family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            sock.settimeout(timeout)
            sock.connect((address, port))
        except OSError as exc:
            sock.close()
            failures.append(exc)
            continue
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock
    raise failures[0]


class PinnedHTTPConnection(http.client.HTTPConnection):
    """HTTP to ``destination``'s checked addresses; the requests name its host."""

    def __init__(self, destination: Destination, timeout: float) -> None:
        super().__init__(destination.host, destination.port, timeout=timeout)
        self.addresses = destination.addresses

    def connect(self) -> None:
        sys.audit("http.client.connect", self, self.host, self.port)
        self.sock = open_socket(self.addresses, self.port, self.timeout)


class PinnedHTTPSConnection(http.client.HTTPSConnection):
    """HTTPS to ``destination``'s checked addresses: the TLS handshake sends its host as
    the server name and verifies the certificate for that name (``tls``'s check), not for
    the address connected to."""

    def __init__(self, destination: Destination, timeout: float, tls: ssl.SSLContext) -> None:
        super().__init__(destination.host, destination.port, timeout=timeout, context=tls)
        self.addresses = destination.addresses
        self.tls = tls

    def connect(self) -> None:
        sys.audit("http.client.connect", self, self.host, self.port)
        sock = open_socket(self.addresses, self.port, self.timeout)
        try:
            self.sock = self.tls.wrap_socket(sock, server_hostname=self.host)
        except BaseException:
            sock.close()
            raise


Kept = tuple[tuple[str, ...], http.client.HTTPConnection]


class Connections(threading.local):
    """One sending thread's kept-alive connections: one per (scheme, host, port), with
    the checked addresses it was opened to."""

    def __init__(self, tls: ssl.SSLContext) -> None:
        self.tls = tls
        self.open: dict[tuple[str, str, int], Kept] = {}

    def post(
        self, destination: Destination, body: bytes, headers: dict[str, str], timeout: float
    ) -> tuple[int, str | None]:
        """POST ``body`` to ``destination``; the status and the ``Retry-After`` header."""
        for attempt in range(2):  # a kept-alive connection the receiver closed: once more
            conn = self._connection(destination, timeout)
            try:
                conn.request("POST", destination.target, body=body, headers=headers)
                response = conn.getresponse()
                response.read()
                if response.will_close:
                    self._close(destination)
                return response.status, response.getheader("retry-after")
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self._close(destination)
                if attempt == 1:
                    raise
            except BaseException:
                self._close(destination)
                raise
        raise AssertionError("unreachable")

    def _connection(self, destination: Destination, timeout: float) -> http.client.HTTPConnection:
        """The kept-alive connection to ``destination`` if it was opened to the addresses
        checked now; else a new one (not connected yet: ``request`` connects)."""
        key = (destination.scheme, destination.host, destination.port)
        kept = self.open.get(key)
        if kept is not None and kept[0] == destination.addresses:
            return kept[1]
        if kept is not None:
            kept[1].close()  # opened to addresses that are no longer the checked ones
        conn: http.client.HTTPConnection
        if destination.scheme == "https":
            conn = PinnedHTTPSConnection(destination, timeout, self.tls)
        else:
            conn = PinnedHTTPConnection(destination, timeout)
        self.open[key] = (destination.addresses, conn)
        return conn

    def _close(self, destination: Destination) -> None:
        kept = self.open.pop((destination.scheme, destination.host, destination.port), None)
        if kept is not None:
            kept[1].close()
