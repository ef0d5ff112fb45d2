"""The webhook URL rule (api/webhook_urls.py), form by form, and over HTTP: every hostile
URL and secret a 4xx that changes nothing, never a 5xx; a non-ASCII URL stored encoded
and delivered to a real receiver; rotation, resend, recover and the delivery log through
the API of a real ``serve`` process."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_helpers import running
from feed_helpers import receiver
from standardwebhooks import Webhook

from charleston_fsm.api import webhook_urls
from charleston_fsm.api.webhook_urls import (
    ALLOW_ENV,
    cached_urls,
    check_url,
    check_url_cached,
    normalise_url,
)
from charleston_fsm.store.platform.webhooks import InvalidWebhook

#: destinations refused without the operator's allowance: (URL, why), the IPv4 forms
#: first, then each IPv6 form that carries a private IPv4 address
REFUSED_DESTINATIONS = [
    ("http://127.0.0.1:9/x", "loopback"),
    ("http://127.1/", "loopback, short form"),
    ("http://2130706433/", "loopback, one number"),
    ("http://0x7f000001/", "loopback, hex"),
    ("http://017700000001/", "loopback, octal"),
    ("http://localhost/x", "loopback by name"),
    ("http://0.0.0.0/", "unspecified"),
    ("http://10.1.2.3/x", "private 10/8"),
    ("http://172.16.5.4/", "private 172.16/12"),
    ("http://192.168.0.10/", "private 192.168/16"),
    ("http://169.254.169.254/latest/meta-data", "link-local: cloud metadata"),
    ("http://100.64.0.1/", "carrier-grade NAT"),
    ("http://224.0.0.1/", "multicast"),
    ("http://240.0.0.1/", "reserved"),
    ("http://255.255.255.255/", "broadcast"),
    ("http://192.0.2.1/", "documentation"),
    ("http://198.18.0.1/", "benchmarking"),
    ("http://[::1]/x", "IPv6 loopback"),
    ("http://[::]/", "IPv6 unspecified"),
    ("http://[fe80::1]/", "IPv6 link-local"),
    ("http://[fc00::1]/", "IPv6 unique local"),
    ("http://[fd12:3456::1]/", "IPv6 unique local (fd)"),
    ("http://[ff02::1]/", "IPv6 multicast"),
    ("http://[2001:db8::1]/", "IPv6 documentation"),
    ("http://[::ffff:127.0.0.1]/", "IPv4-mapped loopback"),
    ("http://[::ffff:a9fe:a9fe]/", "IPv4-mapped metadata"),
    ("http://[::ffff:10.0.0.1]/", "IPv4-mapped private"),
    ("http://[::ffff:0:a9fe:a9fe]/", "IPv4-translated metadata"),
    ("http://[::127.0.0.1]/", "IPv4-compatible loopback"),
    ("http://[::a9fe:a9fe]/", "IPv4-compatible metadata"),
    ("http://[::10.0.0.1]/", "IPv4-compatible private"),
    ("http://[64:ff9b::a9fe:a9fe]/", "NAT64 metadata"),
    ("http://[64:ff9b::127.0.0.1]/", "NAT64 loopback"),
    ("http://[64:ff9b::192.168.1.1]/", "NAT64 private"),
    ("http://[64:ff9b:1::808:808]/", "local-use NAT64"),
    ("http://[64:ff9b:1::a9fe:a9fe]/", "local-use NAT64 metadata"),
    ("http://[2002:a9fe:a9fe::1]/", "6to4 metadata"),
    ("http://[2002:7f00:1::1]/", "6to4 loopback"),
    ("http://[2002:c0a8:101::1]/", "6to4 private"),
    ("http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "Teredo"),
    ("http://[2001:0:a9fe:a9fe::1]/", "Teredo, metadata server"),
    ("http://[fe80::1%25eth0]/", "IPv6 zone"),
]
#: URLs refused for what they hold, whatever the allowance
REFUSED_URLS = [
    ("http://127.0.0.1/a\r\nX-Injected: 1", "CR LF"),
    ("http://127.0.0.1/\nx", "LF"),
    ("http://127.0.0.1/\x00", "NUL"),
    ("http://127.0.0.1/\ud800", "lone surrogate"),
    ("http://127.0.0.1/\udfff", "lone low surrogate"),
    ("http://127.0.0.1/\x1b[31m", "ESC (C0)"),
    ("http://127.0.0.1/\x7f", "DEL"),
    ("http://127.0.0.1/\x85", "NEL (C1)"),
    ("http://127.0.0.1/\x9b", "CSI (C1)"),
    ("http://127.0.0.1/a b", "space"),
    ("http://127.0.0.1\t/", "tab"),
    ("http://127.0.0.1/%zz", "bad percent-encoding"),
    ("http://127.0.0.1/%", "lone percent"),
    ("http://[::1/", "unclosed bracket"),
    ("http://127.0.0.1:99999/", "port out of range"),
    ("http://127.0.0.1:0/", "port 0"),
    ("http://127.0.0.1:x/", "port not a number"),
    ("http://user:pass@127.0.0.1/", "credentials"),
    ("http://%31%32%37.0.0.1/", "percent-encoded host"),
    ("http://xn--a.example/", "bad punycode"),
    ("http://a..b/", "empty label"),
    ("http://" + "a" * 64 + ".example/", "label past 63"),
    ("http://127.0.0.1/" + "a" * 2000, "longer than 2000"),
    ("ftp://example.com/x", "scheme"),
    ("javascript:alert(1)", "scheme"),
    ("file:///etc/passwd", "scheme"),
    ("http:///x", "no host"),
    ("not a url", "not a URL"),
    ("", "empty"),
]


@pytest.mark.parametrize(("url", "why"), REFUSED_DESTINATIONS)
def test_a_private_destination_is_refused_in_every_form(
    url: str, why: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ALLOW_ENV, raising=False)
    with pytest.raises(InvalidWebhook):
        check_url(url)


@pytest.mark.parametrize(("url", "why"), REFUSED_URLS)
def test_a_url_holding_what_no_url_may_is_refused_even_where_allowed(
    url: str, why: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ALLOW_ENV, "127.0.0.1,::1,0.0.0.0/0")
    with pytest.raises(InvalidWebhook):
        check_url(url)


def test_ipv6_forms_carrying_a_public_ipv4_are_judged_by_it_and_allowances_carry_over(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(ALLOW_ENV, raising=False)
    for url in (
        "http://8.8.8.8/",
        "http://[::ffff:8.8.8.8]/",  # IPv4-mapped (the stdlib calls the form private)
        "http://[64:ff9b::8.8.8.8]/",  # NAT64
        "http://[2002:808:808::1]/",  # 6to4
        "http://[2606:4700:4700::1111]/",
    ):
        assert check_url(url) == url
    monkeypatch.setenv(ALLOW_ENV, "127.0.0.1")
    check_url("http://[::ffff:127.0.0.1]:9/x")  # the allowed IPv4 in its mapped form
    with pytest.raises(InvalidWebhook):
        check_url("http://[::ffff:10.0.0.1]/")


def test_a_non_ascii_url_is_encoded_host_by_idna_path_by_percent() -> None:
    assert normalise_url("http://host/café") == "http://host/caf%C3%A9"
    assert (
        normalise_url("HTTP://Bücher.Example:8080/ä/ö?q=ü&r=%41#frag")
        == "http://xn--bcher-kva.example:8080/%C3%A4/%C3%B6?q=%C3%BC&r=%41"
    )
    assert normalise_url("http://[::FFFF:8.8.8.8]/") == "http://[::ffff:8.8.8.8]/"
    assert normalise_url("https://example.com") == "https://example.com"


# -- the cache of checks (check_url_cached) ---------------------------------------------------
@pytest.fixture
def empty_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache of its own (the process's may hold other tests' URLs) and loopback allowed:
    URLs on 127.0.0.1 are checked for real, with no DNS."""
    monkeypatch.setattr(webhook_urls, "_checked", {})
    monkeypatch.setenv(ALLOW_ENV, "127.0.0.1")


def hook(n: int) -> str:
    return f"http://127.0.0.1:9/hook/{n}"


def test_the_cache_forgets_a_url_once_its_window_ended(
    empty_cache: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(webhook_urls, "CHECKED_SECONDS", 0.3)
    first = check_url_cached(hook(1))
    check_url_cached(hook(2))
    assert cached_urls() == [hook(1), hook(2)]
    assert check_url_cached(hook(1)) is first  # within the window: the check then
    time.sleep(0.35)
    check_url_cached(hook(3))  # the next check stored sweeps the ended ones
    assert cached_urls() == [hook(3)]
    again = check_url_cached(hook(1))
    assert again is not first and again == first  # checked afresh, to the same answer
    assert cached_urls() == [hook(3), hook(1)]


def test_the_cache_holds_at_most_its_bound_the_oldest_checked_go_first(
    empty_cache: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(webhook_urls, "CHECKED_MOST", 3)
    checked = [check_url_cached(hook(n)) for n in range(5)]
    assert cached_urls() == [hook(2), hook(3), hook(4)]
    assert check_url_cached(hook(4)) is checked[4]
    assert check_url_cached(hook(0)) is not checked[0]  # dropped: checked again
    assert cached_urls() == [hook(3), hook(4), hook(0)]


def test_the_senders_threads_never_take_the_cache_past_its_bound(
    empty_cache: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Eight threads check 1600 URLs (each twice) while one watches the cache's size."""
    monkeypatch.setattr(webhook_urls, "CHECKED_MOST", 16)
    sizes: list[int] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            sizes.append(len(cached_urls()))

    def send(n: int) -> None:
        assert check_url_cached(hook(n)).addresses == ("127.0.0.1",)
        assert check_url_cached(hook(n)).url == hook(n)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(send, range(1600)))
    finally:
        done.set()
        watcher.join()
    assert sizes and max(sizes) <= 16
    assert len(cached_urls()) == 16


# -- over HTTP ---------------------------------------------------------------------------------
KEY = "platform-key-for-the-webhook-url-test"
ENV = {
    "CHARLESTON_PLATFORM_KEY": KEY,
    # the receiver listens on 127.0.0.2: every 127.0.0.1 form of the table stays refused
    "CHARLESTON_WEBHOOK_ALLOW": "127.0.0.2",
    "CHARLESTON_WEBHOOK_RETRY_SCALE": "0.00001",  # the whole schedule in about 3 s
    "CHARLESTON_WEBHOOK_TIMEOUT": "2",
}
HOSTILE_SECRETS = [
    "whsec_\x00",
    "whsec_\ud800",
    "whsec_" + "A" * 5000,
    "whsec_é",
    "whsec_\r\n",
    "secret",
    "whsec_" + "QUFB" * 2,  # 6 bytes: too short
    "",
]


def post(client: httpx.Client, path: str, body: dict[str, Any]) -> httpx.Response:
    """POST ``body`` as JSON with every non-ASCII character escaped (a lone surrogate
    cannot be UTF-8, so httpx's own encoding would fail before sending)."""
    return client.post(path, content=json.dumps(body), headers={"content-type": "application/json"})


def test_over_http_hostile_urls_and_secrets_are_4xx_a_non_ascii_url_is_delivered_and_the_acts_work(
    db_url: str, tmp_path: Path
) -> None:
    answers = {"mode": 204}
    with (
        receiver(lambda _d: answers["mode"], host="127.0.0.2") as got,
        running(db_url, tmp_path, env=ENV) as server,
        server.client(KEY) as client,
    ):
        for url, why in REFUSED_DESTINATIONS + REFUSED_URLS:
            made = post(client, "/v1/webhooks", {"url": url})
            assert made.status_code == 422, (why, made.text)
            assert made.json()["code"] == "invalid_webhook", why
        for secret in HOSTILE_SECRETS:
            made = post(client, "/v1/webhooks", {"url": got.url, "secret": secret})
            assert made.status_code == 422, (secret[:20], made.text)
        assert client.get("/v1/webhooks").json()["endpoints"] == []

        # a non-ASCII URL: stored encoded, and delivered there
        made = client.post(
            "/v1/webhooks",
            json={"url": got.url.replace("/hook", "/café"), "event_types": ["game.created"]},
        )
        assert made.status_code == 201, made.text
        endpoint = made.json()
        assert endpoint["url"] == got.url.replace("/hook", "/caf%C3%A9")
        old = endpoint["secret"]
        created = client.post("/v1/games", json={"seed": 3})
        assert created.status_code == 201
        got.wait_for(lambda: len(got.accepted()) == 1)
        [first] = got.accepted()
        assert first.path == "/caf%C3%A9"
        Webhook(old).verify(first.body, first.headers)

        # rotation: both secrets sign during the grace
        rotated = client.post(
            f"/v1/webhooks/{endpoint['id']}/rotate-secret", json={"grace_seconds": 3600}
        )
        assert rotated.status_code == 200, rotated.text
        new = rotated.json()["secret"]
        assert new != old and rotated.json()["previous_secret_until"] is not None
        for bad in ({"grace_seconds": -1}, {"grace_seconds": 10**9}, {"secret": "\ud800"}):
            refused = post(client, f"/v1/webhooks/{endpoint['id']}/rotate-secret", bad)
            assert refused.status_code in (400, 422), refused.text
        client.post("/v1/games", json={"seed": 4})
        got.wait_for(lambda: len(got.accepted()) == 2)
        second = got.accepted()[1]
        assert len(second.headers["webhook-signature"].split(" ")) == 2
        for secret in (old, new):
            Webhook(secret).verify(second.body, second.headers)

        # resend one by its webhook-id; an unknown or hostile id: 404, never 5xx
        resent = client.post(f"/v1/webhooks/{endpoint['id']}/resend/{first.headers['webhook-id']}")
        assert resent.status_code == 202, resent.text
        got.wait_for(lambda: len(got.accepted()) == 3)
        assert got.accepted()[2].headers["webhook-id"] == first.headers["webhook-id"]
        for entry_id in ("0" * 32, "%00", "x" * 300, "%F0%9F%98%80"):
            missing = client.post(f"/v1/webhooks/{endpoint['id']}/resend/{entry_id}")
            assert missing.status_code == 404, (entry_id, missing.text)

        # recover: only what was given up, in the window
        answers["mode"] = 500
        since = datetime.now(UTC) - timedelta(seconds=1)
        client.post("/v1/games", json={"seed": 5})
        log_url = f"/v1/webhooks/{endpoint['id']}"
        deadline = time.monotonic() + 60
        while client.get(log_url).json()["failed"] < 1:
            assert time.monotonic() < deadline, "the delivery was never given up"
            time.sleep(0.2)
        answers["mode"] = 204
        before = len(got.accepted())
        recovered = client.post(f"{log_url}/recover", json={"since": since.isoformat()})
        assert recovered.status_code == 202 and recovered.json()["resent"] == 1
        got.wait_for(lambda: len(got.accepted()) == before + 1)
        for bad in ({"since": "yesterday"}, {"since": "\x00"}, {}):
            assert post(client, f"{log_url}/recover", bad).status_code == 400

        # the delivery log: each attempt's time, status, duration and error
        log = client.get(log_url).json()
        assert log["failed"] == 0 and log["delivered"] == 3  # three entries, all delivered
        attempts = log["attempts"]
        assert {a["status_code"] for a in attempts} == {204, 500}
        fields = {"at", "status_code", "milliseconds", "error", "entry_id"}
        assert all(fields <= set(a) for a in attempts)
