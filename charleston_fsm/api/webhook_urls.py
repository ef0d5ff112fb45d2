"""The webhook URL rule: what a URL may hold, and which destinations the service sends to.

A webhook makes the service send requests where a client says, so the rule is applied at
registration (``POST /v1/webhooks``: 422 ``invalid_webhook``) and again before every send
(a name may resolve elsewhere later; a URL that passed is checked again every
:data:`CHECKED_SECONDS`, and a process remembers at most :data:`CHECKED_MOST` checks).

**What a check gives: a** :class:`Destination`. The URL as sent, and the addresses its
host resolved to when they were judged. The sender connects to those addresses and no
others (``webhook_connections.py``): it never asks the resolver again. A name whose
answer changes between the check and the connection (DNS rebinding: a public address
for the check, ``127.0.0.1`` or ``169.254.169.254`` a moment later) would otherwise send
the request where the rule refuses. The name stays what the request says it goes to:
the ``Host`` header, and for ``https`` the TLS server name and the certificate's check.

**What a URL may hold.** ``http`` or ``https``, a host, an optional port (1–65535), a
path and a query; at most :data:`MAX_URL` characters. No control character (C0, DEL,
C1), no space and no lone surrogate anywhere: those are refused, never cleaned up (a
``CR LF`` in a URL is a header injection waiting for a sender that does not refuse it).
No user name or password (the sender would not send them). A ``%`` starts two hex
digits. Anything else non-ASCII is **encoded**, and the encoded URL is what is stored,
shown and sent: the host by IDNA 2008 with UTS 46 mapping (``bücher.example`` →
``xn--bcher-kva.example``; a name IDNA refuses is refused), the path and query by UTF-8
percent-encoding (``/café`` → ``/caf%C3%A9``). A fragment is dropped (it is never sent).

**Which destinations (SSRF).** A host whose every address is public: loopback, private
(10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16: cloud metadata;
fe80::/10), carrier-grade NAT, multicast, reserved, documentation and unspecified
addresses are refused. An IPv6 address that carries an IPv4 address is judged by that
IPv4 address: IPv4-mapped ``::ffff:a.b.c.d``, IPv4-translated ``::ffff:0:a.b.c.d``,
IPv4-compatible ``::a.b.c.d``, NAT64 ``64:ff9b::a.b.c.d``, 6to4 ``2002:AABB:CCDD::``
(``ipaddress``' ``sixtofour``) and Teredo ``2001::/32`` (``teredo``: server and client)
are refused when the IPv4 address is not public (Teredo and the local-use NAT64 prefix
``64:ff9b:1::/48`` are not public themselves, whatever they carry). The operator may allow
destinations in ``CHARLESTON_WEBHOOK_ALLOW`` (comma-separated hosts, addresses or
networks: ``127.0.0.1,10.1.0.0/16,hooks.internal``), as the tests do for their receiver;
an allowed IPv4 address also allows the IPv6 forms that carry it. Every address is
judged, and only the judged ones are connected to (see "What a check gives" above): the
rule holds for the address the request goes to, not only for the name's first answer.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote, urlsplit, urlunsplit

import idna

from ..store.platform.webhooks import MAX_URL, InvalidWebhook

ALLOW_ENV = "CHARLESTON_WEBHOOK_ALLOW"
#: how long a URL found allowed stays so before it is checked again (its name resolved)
CHECKED_SECONDS = 30.0

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
#: C0 controls and space, DEL, C1 controls, and the surrogates (alone in a str, they
#: cannot be encoded at all: PostgreSQL and every HTTP library would fail on them)
_FORBIDDEN = re.compile("[\x00-\x20\x7f-\x9f\ud800-\udfff]")
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
#: an ASCII host name as DNS has them (the underscore is common in practice)
_HOST_NAME = re.compile(r"[a-z0-9_](?:[a-z0-9_.-]{0,251}[a-z0-9_.])?")
#: what percent-encoding leaves as it is in a path or query (RFC 3986's unreserved,
#: sub-delims, ``:@/?`` and an existing ``%XX``)
_SAFE = "!$&'()*+,;=:@/?%-._~"

#: IPv6 prefixes whose low 32 bits are an IPv4 address (``ipv4_mapped`` covers
#: ``::ffff:0:0/96``; ``sixtofour`` and ``teredo`` are the stdlib's own properties)
_CARRYING = (
    ipaddress.IPv6Network("64:ff9b::/96"),  # NAT64, RFC 6052
    ipaddress.IPv6Network("::ffff:0:0:0/96"),  # IPv4-translated (SIIT), RFC 2765
    ipaddress.IPv6Network("::/96"),  # IPv4-compatible (deprecated), RFC 4291
)
#: never public, whatever they carry: local-use NAT64 (RFC 8215) and Teredo (RFC 4380)
_NEVER = (ipaddress.IPv6Network("64:ff9b:1::/48"), ipaddress.IPv6Network("2001::/32"))


def allow_list() -> list[str]:
    return [part.strip() for part in (os.environ.get(ALLOW_ENV) or "").split(",") if part.strip()]


def carried_ipv4(ip: IPAddress) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries (maps, embeds, tunnels); none for IPv4."""
    if isinstance(ip, ipaddress.IPv4Address):
        return []
    found: list[ipaddress.IPv4Address] = []
    if ip.ipv4_mapped is not None:
        found.append(ip.ipv4_mapped)
    if ip.sixtofour is not None:
        found.append(ip.sixtofour)
    if ip.teredo is not None:
        found.extend(ip.teredo)
    # ``::`` and ``::1`` are the unspecified and loopback addresses, not IPv4-compatible
    if any(ip in net for net in _CARRYING) and int(ip) > 1:
        found.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return found


def is_public(ip: IPAddress) -> bool:
    """Whether the service may send to ``ip`` without the operator's allowance."""
    if ip.is_multicast or any(ip in net for net in _NEVER if ip.version == 6):
        return False
    carried = carried_ipv4(ip)
    if carried:
        # judged by the IPv4 address: the stdlib calls IPv4-mapped and -compatible forms
        # private (or public) whatever they carry, and 6to4 and NAT64 public
        return all(is_public(v4) for v4 in carried)
    return ip.is_global


def _allowed(host: str, ip: IPAddress, allowed: Sequence[str]) -> bool:
    candidates = [ip, *carried_ipv4(ip)]
    for item in allowed:
        if item.lower() == host.lower():
            return True
        try:
            net = ipaddress.ip_network(item, strict=False)
        except ValueError:
            continue
        if any(c.version == net.version and c in net for c in candidates):
            return True
    return is_public(ip)


def _refuse(url: str, why: str) -> InvalidWebhook:
    return InvalidWebhook(f"The webhook URL {url[:200]!a} {why}")


def normalise_url(url: str) -> str:
    """``url`` as it is stored and sent (ASCII: IDNA host, percent-encoded path), or
    :class:`InvalidWebhook` saying which part of the rule it breaks."""
    if len(url) > MAX_URL:
        raise InvalidWebhook(f"A webhook URL is at most {MAX_URL} characters.")
    bad = _FORBIDDEN.search(url)
    if bad is not None:
        raise _refuse(
            url,
            f"holds {bad.group()!a} at character {bad.start()}: a URL holds no control "
            "character (CR, LF, NUL, C0 or C1), no space and no lone surrogate; "
            "percent-encode what the path needs.",
        )
    if _BAD_PERCENT.search(url):
        raise _refuse(url, "has a '%' not followed by two hex digits (percent-encoding).")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise _refuse(url, f"cannot be parsed ({exc}).") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise _refuse(url, "is not http:// or https:// with a host.")
    if parts.username is not None or parts.password is not None:
        raise _refuse(
            url,
            "carries a user name or password; the sender would not send them. Put "
            "what the receiver checks in the path or query, or check the signature.",
        )
    if port == 0:
        raise _refuse(url, "has port 0.")
    host = _ascii_host(url, parts.hostname)
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    path = quote(parts.path, safe=_SAFE)
    query = quote(parts.query, safe=_SAFE)
    return urlunsplit((scheme, netloc, path, query, ""))


def _ascii_host(url: str, host: str) -> str:
    """The host as sent (lower case): an IP address as written, a name in IDNA."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        if isinstance(ip, ipaddress.IPv6Address) and ip.scope_id is not None:
            raise _refuse(url, "names an IPv6 zone (a link-local interface): refused.")
        return host  # as written (lower case): the sender connects to what it says
    if "%" in host or ":" in host:
        raise _refuse(url, "has a host that is not an address or a name (a zone? an encoding?).")
    name = host.rstrip(".")
    if not name.isascii():
        try:
            name = idna.encode(name, uts46=True).decode("ascii")
        except idna.IDNAError as exc:
            raise _refuse(url, f"has a host IDNA refuses ({exc}).") from None
    name = name.lower()
    if not _HOST_NAME.fullmatch(name) or any(len(label) > 63 for label in name.split(".")):
        raise _refuse(url, f"has a host {name!r} that is not a DNS name.")
    return name


@dataclass(frozen=True)
class Destination:
    """A webhook URL as checked: what the request names, and where it may go.

    ``url`` is the URL as stored and sent (:func:`normalise_url`); ``host`` its host as
    the request names it (an IDNA name, or an IP address without brackets) and ``port``
    its port (the scheme's when the URL has none). ``addresses`` are the ones the host
    resolved to when they were judged, in the resolver's order: the only ones the sender
    connects to."""

    url: str
    scheme: str
    host: str
    port: int
    addresses: tuple[str, ...]

    @property
    def target(self) -> str:
        """The request's target: the path (``/`` when empty) and the query."""
        parts = urlsplit(self.url)
        return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def check_destination(url: str) -> Destination:
    """``url``'s :class:`Destination`, once every address its host resolves to is
    allowed; else :class:`InvalidWebhook` (see the module docstring)."""
    normal = normalise_url(url)
    parts = urlsplit(normal)
    host = parts.hostname or ""
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        found = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (OSError, ValueError) as exc:
        raise InvalidWebhook(f"The webhook host {host!r} does not resolve ({exc}).") from None
    allowed = allow_list()
    addresses: list[str] = []
    for *_, sockaddr in found:
        address = str(sockaddr[0]).split("%")[0]
        if not _allowed(host, ipaddress.ip_address(address), allowed):
            raise InvalidWebhook(
                f"The webhook host {host!r} resolves to {address}, a private, loopback, "
                "link-local or reserved address (or an IPv6 form carrying one): the service "
                f"sends only to public ones unless the operator allows it in {ALLOW_ENV}."
            )
        if address not in addresses:
            addresses.append(address)
    return Destination(normal, parts.scheme, host, port, tuple(addresses))


def check_url(url: str) -> str:
    """The URL as stored and sent (:func:`normalise_url`), once every address its host
    resolves to is allowed (:func:`check_destination`): what registration stores."""
    return check_destination(url).url


#: the most URLs :func:`check_url_cached` holds at once: the sender's endpoints come and go,
#: and a process that sends to many over its life keeps only the recent ones
CHECKED_MOST = 1024

#: url -> (when its check runs out, its :class:`Destination`), in the order checked; the
#: lock makes a thread's sweep and eviction see the dict as a whole (the sender's pool
#: checks URLs from several threads)
_checked: dict[str, tuple[float, Destination]] = {}
_checked_lock = threading.Lock()


def check_url_cached(url: str) -> Destination:
    """:func:`check_destination`, at most once every :data:`CHECKED_SECONDS` per URL that
    passed. Within the window a send goes to the addresses checked then, whatever the name
    resolves to meanwhile; after it the name is resolved and judged again, so a name that
    moved to a refused address is refused.

    The cache holds at most :data:`CHECKED_MOST` URLs and serves none past its window:
    each check it stores first drops every entry whose window ended, then the oldest
    entries while it is full (a URL no longer sent to goes with the next check of any).
    A check runs outside the lock (it resolves a name, and a slow resolver must not hold
    every other send), so two threads may check one URL at once; the one that finishes
    last is kept."""
    now = time.monotonic()
    with _checked_lock:
        checked = _checked.get(url)
    if checked is not None and checked[0] > now:
        return checked[1]
    destination = check_destination(url)
    with _checked_lock:
        _checked.pop(url, None)  # stored again at the end: the newest
        for ended in [u for u, (until, _) in _checked.items() if until <= now]:
            del _checked[ended]
        while len(_checked) >= CHECKED_MOST:
            del _checked[next(iter(_checked))]  # the oldest checked
        _checked[url] = (now + CHECKED_SECONDS, destination)
    return destination


def cached_urls() -> list[str]:
    """The URLs :func:`check_url_cached` holds now, oldest checked first (what the cache
    keeps, for diagnostics and its tests)."""
    with _checked_lock:
        return list(_checked)
