"""A webhook send connects to the addresses its URL's check judged, never to the name's
answer of the moment (api/webhook_connections.py, api/webhook_urls.py): DNS rebinding
cannot move a request to an address the rule refuses.

Real receivers on 127/8 (``feed_helpers``), real sockets, real TLS. A changing DNS answer
cannot be staged here, so the tests take the two sides apart: a name that does not
resolve at all (or resolves somewhere else) with a checked address is still sent to that
address, named by the name; and through the worker's cache a URL whose address the
operator refuses after its check is sent to the checked address within the window and
refused after it."""

from __future__ import annotations

import datetime as dt
import socket
import ssl
import time
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from feed_helpers import receiver

from charleston_fsm.api import webhook_urls
from charleston_fsm.api.webhook_connections import Connections, default_tls
from charleston_fsm.api.webhook_sender import DeliveryWorker
from charleston_fsm.api.webhook_urls import (
    ALLOW_ENV,
    Destination,
    check_destination,
    check_url,
    check_url_cached,
)
from charleston_fsm.store import GameStore
from charleston_fsm.store.platform.deliveries import Claimed
from charleston_fsm.store.platform.webhooks import InvalidWebhook

BODY = b'{"hello":"receiver"}'
HEADERS = {"content-type": "application/json", "content-length": str(len(BODY))}
#: the names the test certificate is for (no IP address: a handshake that passes was
#: verified against a name)
CERT_NAMES = ("hooks.test", "localhost")


def destination(host: str, port: int, *addresses: str, scheme: str = "http") -> Destination:
    return Destination(f"{scheme}://{host}:{port}/hook?x=1", scheme, host, port, addresses)


def resolves(name: str) -> list[str]:
    try:
        return [str(a[4][0]) for a in socket.getaddrinfo(name, 80, proto=socket.IPPROTO_TCP)]
    except socket.gaierror:
        return []


def test_a_send_goes_to_the_checked_address_and_never_looks_the_name_up_again() -> None:
    assert resolves("hooks.invalid") == []  # RFC 6761: never resolves
    with receiver() as got:
        port = int(got.url.rsplit(":", 1)[1].split("/")[0])
        with pytest.raises(InvalidWebhook, match="does not resolve"):
            check_destination(f"http://hooks.invalid:{port}/hook")
        sent = Connections(default_tls()).post(
            destination("hooks.invalid", port, "127.0.0.1"), BODY, HEADERS, 2.0
        )
        assert sent == (204, None)
        [delivery] = got.accepted()
        assert delivery.headers["host"] == f"hooks.invalid:{port}"
        assert delivery.path == "/hook?x=1" and delivery.body == BODY


def test_a_name_that_answers_elsewhere_now_is_not_followed_and_addresses_go_in_order() -> None:
    """``localhost`` resolves to 127.0.0.1 (a decoy listens there); its checked address
    is 127.0.0.2: the request goes there, as a rebound name's would go to its checked
    public address and not to the private one it answers now."""
    assert "127.0.0.2" not in resolves("localhost")
    with receiver() as decoy:
        port = int(decoy.url.rsplit(":", 1)[1].split("/")[0])
        with receiver(port=port, host="127.0.0.2") as checked:
            conns = Connections(default_tls())
            assert (
                conns.post(destination("localhost", port, "127.0.0.2"), BODY, HEADERS, 2.0)[0]
                == 204
            )
            # nothing listens on 127.0.0.3: the next checked address takes it
            pinned = destination("localhost", port, "127.0.0.3", "127.0.0.2")
            assert Connections(default_tls()).post(pinned, BODY, HEADERS, 2.0)[0] == 204
            assert len(checked.accepted()) == 2 and decoy.deliveries == []
            assert {d.headers["host"] for d in checked.accepted()} == {f"localhost:{port}"}
            with pytest.raises(ConnectionRefusedError):
                conns.post(destination("other.test", port, "127.0.0.3"), BODY, HEADERS, 2.0)


def test_a_kept_alive_connection_is_sent_on_only_while_its_addresses_are_the_checked_ones() -> None:
    with receiver() as first:
        port = int(first.url.rsplit(":", 1)[1].split("/")[0])
        with receiver(port=port, host="127.0.0.2") as second:
            conns = Connections(default_tls())
            for _ in range(2):
                conns.post(destination("hooks.invalid", port, "127.0.0.1"), BODY, HEADERS, 2.0)
            kept = [d.peer for d in first.accepted()]
            assert len(kept) == 2 and kept[0] == kept[1]  # one connection, kept alive
            # a re-check found another address: the kept connection is not sent on
            conns.post(destination("hooks.invalid", port, "127.0.0.2"), BODY, HEADERS, 2.0)
            assert len(first.accepted()) == 2 and len(second.accepted()) == 1
            conns.post(destination("hooks.invalid", port, "127.0.0.1"), BODY, HEADERS, 2.0)
            assert len(first.accepted()) == 3 and first.accepted()[2].peer != kept[0]


# -- https -------------------------------------------------------------------------------------
def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A CA and a server certificate it signed for :data:`CERT_NAMES` (PEM files)."""
    folder = tmp_path_factory.mktemp("tls")
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("charleston test CA"))
        .issuer_name(_name("charleston test CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = (
        x509.CertificateBuilder()
        .subject_name(_name(CERT_NAMES[0]))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName(n) for n in CERT_NAMES]), critical=False
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    files = {"ca": folder / "ca.pem", "cert": folder / "cert.pem", "key": folder / "key.pem"}
    files["ca"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files["cert"].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    files["key"].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return files


def server_tls(certificates: dict[str, Path], names: list[str | None]) -> ssl.SSLContext:
    """The receiver's context, recording the server name each handshake asked for."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificates["cert"], certificates["key"])

    def asked(_sock: Any, name: str | None, _context: ssl.SSLContext) -> None:
        names.append(name)

    context.sni_callback = asked
    return context


def test_https_verifies_the_certificate_for_the_name_while_connecting_to_the_address(
    certificates: dict[str, Path],
) -> None:
    names: list[str | None] = []
    trusting = ssl.create_default_context(cafile=str(certificates["ca"]))
    with receiver(tls=server_tls(certificates, names)) as got:
        port = int(got.url.rsplit(":", 1)[1].split("/")[0])
        pinned = destination("hooks.test", port, "127.0.0.1", scheme="https")
        assert Connections(trusting).post(pinned, BODY, HEADERS, 2.0) == (204, None)
        [delivery] = got.accepted()
        assert delivery.headers["host"] == f"hooks.test:{port}"
        assert names == ["hooks.test"]  # SNI: the name, not the address
        # the same address under a name the certificate is not for, or as itself: refused
        for host in ("other.test", "127.0.0.1"):
            wrong = destination(host, port, "127.0.0.1", scheme="https")
            with pytest.raises(ssl.SSLCertVerificationError, match="match"):
                Connections(trusting).post(wrong, BODY, HEADERS, 2.0)
        # the default context (the system's trust store) does not know this CA: verified
        with pytest.raises(ssl.SSLCertVerificationError, match="certificate verify failed"):
            Connections(default_tls()).post(pinned, BODY, HEADERS, 2.0)
        assert len(got.accepted()) == 1


# -- through the worker and its cache ----------------------------------------------------------
def claimed(url: str) -> Claimed:
    entry = {"id": f"entry-{time.monotonic_ns()}", "type": "game.created", "at": "2026-01-01"}
    return Claimed(1, "endpoint", url, None, 0, entry)


def test_within_the_window_the_send_goes_to_the_checked_address_and_after_it_is_refused(
    sqlite_store: GameStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The operator's allowance of 127.0.0.1 is withdrawn after the check: the stand-in,
    with real configuration, for a name now answering an address the rule refuses."""
    monkeypatch.setattr(webhook_urls, "CHECKED_SECONDS", 1.0)
    monkeypatch.setenv(ALLOW_ENV, "127.0.0.1,::1")
    worker = DeliveryWorker(sqlite_store)
    with receiver() as got:
        url = got.url.replace("127.0.0.1", "localhost")
        assert worker.send(claimed(url), 2.0).status_code == 204
        checked = check_url_cached(url)
        assert checked.host == "localhost" and "127.0.0.1" in checked.addresses
        assert got.accepted()[0].headers["host"] == url.split("/")[2]
        monkeypatch.setenv(ALLOW_ENV, "")
        with pytest.raises(InvalidWebhook):
            check_url(url)  # judged now, it is refused
        assert check_url_cached(url) is checked  # the window: the checked destination
        assert worker.send(claimed(url), 2.0).status_code == 204
        time.sleep(1.1)
        refused = worker.send(claimed(url), 2.0)
        assert refused.status_code is None and "resolves to" in (refused.error or "")
        assert len(got.accepted()) == 2
    worker.stop()


def test_the_worker_verifies_https_with_the_operators_trust_for_the_name(
    sqlite_store: GameStore, certificates: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``SSL_CERT_FILE`` (OpenSSL's) names the CA the default context trusts; the worker
    connects to localhost's checked 127.0.0.1 and verifies the certificate for
    ``localhost``."""
    monkeypatch.setenv(ALLOW_ENV, "127.0.0.1,::1")
    names: list[str | None] = []
    with receiver(tls=server_tls(certificates, names)) as got:
        url = got.url.replace("127.0.0.1", "localhost")
        refused = DeliveryWorker(sqlite_store).send(claimed(url), 2.0)
        assert refused.status_code is None and "CERTIFICATE_VERIFY_FAILED" in (refused.error or "")
        monkeypatch.setenv("SSL_CERT_FILE", str(certificates["ca"]))
        worker = DeliveryWorker(sqlite_store)  # its context reads the trust store now
        assert worker.send(claimed(url), 2.0).status_code == 204
        assert names[-1] == "localhost" and len(got.accepted()) == 1
        worker.stop()
