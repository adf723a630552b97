"""Outbound requests only to the public internet (``retrieval.netguard``).

Real traffic goes only to loopback servers (127.0.0.1, 127.0.0.2). Private, link-local,
metadata and reserved addresses are tried through a stub resolver and an httpx transport that
records what it would connect to and opens no socket: each is refused before it is called."""

from __future__ import annotations

import ipaddress

import httpx
import pytest
from fastapi import FastAPI
from fastapi.responses import PlainTextResponse, RedirectResponse
from llm_helpers import serve

from retrieval.netguard import NetworkPolicy, RefusedAddress, parse_allow, why_not_public
from retrieval.web.fetch import PageFetcher

PUBLIC = "93.184.216.34"
NOT_PUBLIC = {
    "127.0.0.1": "loopback",
    "127.8.9.10": "loopback",
    "::1": "loopback",
    "10.0.0.5": "private",
    "172.16.3.4": "private",
    "192.168.1.1": "private",
    "fd00::5": "private",
    "169.254.169.254": "link-local",  # the cloud metadata service
    "fe80::1": "link-local",
    "224.0.0.1": "multicast",
    "ff02::1": "multicast",
    "240.0.0.1": "reserved",
    "0.0.0.0": "unspecified",
    "::": "unspecified",
    "100.64.0.1": "not globally reachable",  # shared address space (CGNAT)
    "::ffff:127.0.0.1": "loopback (as IPv4 127.0.0.1 inside IPv6)",
    "::ffff:169.254.169.254": "link-local (as IPv4 169.254.169.254 inside IPv6)",
    "64:ff9b::a00:5": "private (as IPv4 10.0.0.5 inside IPv6)",  # NAT64
    "2002:a00:5::1": "private (as IPv4 10.0.0.5 inside IPv6)",  # 6to4
}


@pytest.mark.parametrize("address", sorted(NOT_PUBLIC))
def test_every_kind_of_non_public_address_is_named(address):
    assert why_not_public(ipaddress.ip_address(address)) == NOT_PUBLIC[address]


@pytest.mark.parametrize("address", [PUBLIC, "8.8.8.8", "2606:4700:4700::1111"])
def test_public_addresses_pass(address):
    assert why_not_public(ipaddress.ip_address(address)) is None


class Resolver:
    """A stub DNS: each host answers from its list of answers, one per lookup (the last
    repeats), and every lookup is recorded."""

    def __init__(self, answers: dict[str, list[list[str]]]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append(host)
        queue = self.answers[host]
        return queue.pop(0) if len(queue) > 1 else queue[0]


class Recorder(httpx.BaseTransport):
    """Records the address each request would connect to and its Host header; opens no socket.
    Answers a page, or a redirect where ``redirects`` names one."""

    def __init__(self, redirects: dict[str, str] | None = None) -> None:
        self.sent: list[tuple[str, str, str | None]] = []
        self.redirects = redirects or {}

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        tls_name = request.extensions.get("sni_hostname")
        self.sent.append((request.url.host, request.headers["host"], tls_name))
        target = self.redirects.get(request.url.path)
        if target:
            return httpx.Response(302, headers={"location": target})
        return httpx.Response(200, text="a public page", headers={"content-type": "text/plain"})


HOSTS = {f"h{i}.example": address for i, address in enumerate(sorted(NOT_PUBLIC))}


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_a_host_resolving_to_a_non_public_address_is_refused_before_the_transport(host):
    resolver = Resolver({host: [[HOSTS[host]]]})
    recorder = Recorder()
    fetcher = PageFetcher(
        client=httpx.Client(transport=recorder), policy=NetworkPolicy(resolver=resolver)
    )
    page = fetcher.fetch(f"http://{host}/latest/meta-data/")
    assert page.body is None and page.error.startswith("refused: ")
    assert NOT_PUBLIC[HOSTS[host]] in page.error and "web.allow_networks" in page.error
    assert recorder.sent == []  # nothing was sent anywhere


def test_one_bad_address_among_good_ones_refuses_the_host():
    resolver = Resolver({"mixed.example": [[PUBLIC, "10.0.0.5"]]})
    recorder = Recorder()
    fetcher = PageFetcher(
        client=httpx.Client(transport=recorder), policy=NetworkPolicy(resolver=resolver)
    )
    assert "10.0.0.5" in fetcher.fetch("https://mixed.example/").error
    assert recorder.sent == []


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:127.0.0.1]:8000/",
        "http://[fd00::5]/",
        "http://10.0.0.5/admin",
        "http://0.0.0.0:8080/",
    ],
)
def test_address_literals_are_refused_without_a_lookup(url):
    resolver = Resolver({})
    recorder = Recorder()
    fetcher = PageFetcher(
        client=httpx.Client(transport=recorder), policy=NetworkPolicy(resolver=resolver)
    )
    assert fetcher.fetch(url).error.startswith("refused: ")
    assert recorder.sent == [] and resolver.asked == []


def test_dns_rebinding_connects_to_the_address_that_was_checked():
    """The resolver answers a public address, then loopback: the request goes to the public
    address it checked (one lookup), with the host's name in Host and as the TLS name; the
    next fetch, which sees loopback, is refused."""
    resolver = Resolver({"rebind.example": [[PUBLIC], ["127.0.0.1"]]})
    recorder = Recorder()
    fetcher = PageFetcher(
        client=httpx.Client(transport=recorder), policy=NetworkPolicy(resolver=resolver)
    )
    page = fetcher.fetch("https://rebind.example/page")
    assert page.error is None and page.body == "a public page"
    assert page.final_url == "https://rebind.example/page"
    assert recorder.sent == [(PUBLIC, "rebind.example", "rebind.example")]
    assert resolver.asked == ["rebind.example"]
    again = fetcher.fetch("https://rebind.example/page")
    assert "127.0.0.1" in again.error and "loopback" in again.error
    assert len(recorder.sent) == 1


def test_a_redirect_to_the_metadata_service_is_refused_after_the_first_hop():
    resolver = Resolver({"news.example": [[PUBLIC]], "meta.example": [["169.254.169.254"]]})
    recorder = Recorder(
        redirects={
            "/story": "http://meta.example/latest/meta-data/iam",
            "/direct": "http://169.254.169.254/latest/",
        }
    )
    fetcher = PageFetcher(
        client=httpx.Client(transport=recorder), policy=NetworkPolicy(resolver=resolver)
    )
    for path, target in (("/story", "meta.example"), ("/direct", "169.254.169.254")):
        page = fetcher.fetch(f"http://news.example{path}")
        assert page.body is None and "link-local" in page.error and target in page.final_url
    assert [host for host, _, _ in recorder.sent] == [PUBLIC, PUBLIC]  # the first hops only


def test_allowed_networks_and_hosts_are_reached():
    resolver = Resolver({"searxng.lan": [["192.168.1.20"]], "nas.lan": [["192.168.1.30"]]})
    recorder = Recorder()
    policy = NetworkPolicy(["10.0.0.0/8", "searxng.lan"], resolver=resolver)
    fetcher = PageFetcher(client=httpx.Client(transport=recorder), policy=policy)
    assert fetcher.fetch("http://10.1.2.3:8080/x").error is None
    assert fetcher.fetch("http://searxng.lan/search").error is None
    assert "192.168.1.30" in fetcher.fetch("http://nas.lan/").error
    assert [h for h, _, _ in recorder.sent] == ["10.1.2.3", "192.168.1.20"]


def test_allow_entries_that_are_neither_networks_nor_hosts_are_refused_clearly():
    with pytest.raises(ValueError, match="neither a CIDR network"):
        parse_allow(["10.0.0.0/33"])
    from retrieval.config import WebConfig

    assert WebConfig(allow_networks=["127.0.0.1/32"]).allow_networks == ["127.0.0.1/32"]
    with pytest.raises(ValueError, match="neither a CIDR network"):
        WebConfig(allow_networks=["not a host"])


def test_unresolvable_and_hostless_urls_are_refused_with_the_reason():
    def fail(host, port):
        raise OSError("no such host")

    policy = NetworkPolicy(resolver=fail)
    with pytest.raises(RefusedAddress, match="does not resolve"):
        policy.pin("http://nowhere.invalid/")
    with pytest.raises(RefusedAddress, match="names no host"):
        policy.pin("http:///path")


def _secret_app(secret: str) -> FastAPI:
    app = FastAPI()

    @app.get("/secret")
    async def page() -> PlainTextResponse:
        return PlainTextResponse(secret)

    return app


def _redirecting_app(target: str) -> FastAPI:
    app = FastAPI()

    @app.get("/go")
    async def go() -> RedirectResponse:
        return RedirectResponse(target, status_code=302)

    @app.get("/ok")
    async def ok() -> PlainTextResponse:
        return PlainTextResponse("an allowed page")

    return app


@pytest.mark.integration
def test_real_loopback_servers_on_another_address_are_refused_unless_allowed():
    """127.0.0.1 allowed, a page on 127.0.0.2 (another loopback address) and a redirect chain
    from the allowed server to it: refused, nothing read; allowing 127.0.0.0/8 fetches it."""
    secret = "planted-secret-7d1f"
    with (
        serve(_secret_app(secret), host="127.0.0.2") as other,
        serve(_redirecting_app(f"{other}/secret")) as allowed,
    ):
        fetcher = PageFetcher(retries=0, policy=NetworkPolicy(["127.0.0.1/32"]))
        ok, direct, chain = fetcher.fetch_many(
            [f"{allowed}/ok", f"{other}/secret", f"{allowed}/go"]
        )
        assert ok.body == "an allowed page"
        for page in (direct, chain):
            assert page.body is None and "127.0.0.2 is loopback" in page.error
            assert page.final_url == f"{other}/secret"
        opened = PageFetcher(retries=0, policy=NetworkPolicy(["127.0.0.0/8"]))
        assert opened.fetch(f"{allowed}/go").body == secret


@pytest.mark.integration
def test_https_by_checked_address_keeps_the_certificate_checked_against_the_host(tmp_path):
    """The request goes to the checked address, yet TLS still names and verifies the host:
    a certificate for purr.test is accepted for purr.test and refused for another name."""
    import threading
    import time

    import trustme
    import uvicorn

    from serve.loopback_web import free_port

    ca = trustme.CA()
    cert = ca.issue_cert("purr.test")
    cert.private_key_and_cert_chain_pem.write_to_path(str(tmp_path / "server.pem"))
    port = free_port()
    config = uvicorn.Config(
        _redirecting_app("/ok"),
        host="127.0.0.1",
        port=port,
        log_level="warning",
        ssl_certfile=str(tmp_path / "server.pem"),
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline
        time.sleep(0.01)
    try:
        resolver = Resolver({"purr.test": [["127.0.0.1"]], "other.test": [["127.0.0.1"]]})
        policy = NetworkPolicy(["127.0.0.1/32"], resolver=resolver)
        import ssl

        context = ssl.create_default_context()
        ca.configure_trust(context)
        client = httpx.Client(verify=context)
        fetcher = PageFetcher(client=client, retries=0, policy=policy)
        page = fetcher.fetch(f"https://purr.test:{port}/go")  # redirected to /ok
        assert page.body == "an allowed page" and page.final_url == f"https://purr.test:{port}/ok"
        wrong = fetcher.fetch(f"https://other.test:{port}/ok")
        assert wrong.body is None and "CERTIFICATE_VERIFY_FAILED" in wrong.error
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.mark.integration
def test_a_page_cached_under_a_wider_allow_list_is_not_served_past_a_narrower_one(tmp_path):
    from retrieval.web.cache import CachedFetcher, WebCache

    secret = "cached-secret-42"
    with serve(_secret_app(secret), host="127.0.0.2") as other:
        wide = CachedFetcher(
            WebCache(tmp_path, "rw"), retries=0, policy=NetworkPolicy(["127.0.0.0/8"])
        )
        assert wide.fetch(f"{other}/secret").body == secret
    narrow = CachedFetcher(WebCache(tmp_path, "ro"), policy=NetworkPolicy(["127.0.0.1/32"]))
    page = narrow.fetch(f"{other}/secret")  # read-only: nothing is sent, the server is gone
    assert page.body is None and "127.0.0.2 is loopback" in page.error
    replay = CachedFetcher(WebCache(tmp_path, "ro"), policy=NetworkPolicy(["127.0.0.0/8"]))
    assert replay.fetch(f"{other}/secret").body == secret
