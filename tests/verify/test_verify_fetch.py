"""The guarded fetcher against a real HTTP server on 127.0.0.1 (docs/protocol.md section 10, "Fetching").

The default policy refuses loopback, so these tests allow private hosts; where an address
must be refused on a redirect, they inject a classifier that refuses 127.0.0.2 (which Linux
routes to this machine too: only the check keeps the fetch out).
"""

from __future__ import annotations

import ipaddress
import json
import socket
import ssl
import subprocess
import time

import pytest

from rp1_duel.verify.fetch import Fetcher, FetchPolicy, retry_after
from rp1_duel.vocabulary import FetchFailure

from fake_web import HUGE_BYTES, PDF, FakeWeb

LOCAL = FetchPolicy(allow_private_hosts=True)
ONLY_127_0_0_2_REFUSED = ipaddress.ip_address("127.0.0.2")


def fetch(web, path, policy=LOCAL):
    return Fetcher(policy).fetch(web.url(path))


def test_a_page_is_read_with_its_type_charset_and_bytes(web):
    fetched = fetch(web, "/states")
    assert (fetched.status, fetched.error, fetched.content_type, fetched.charset) == (200, None, "text/html", "utf-8")
    assert b"renewed every five minutes" in fetched.body


def test_a_pdf_is_read_as_bytes(web):
    assert fetch(web, "/study.pdf").body == PDF


@pytest.mark.parametrize(
    ("path", "status"),
    [("/missing", 404), ("/gone", 410), ("/forbidden", 403), ("/login", 401), ("/broken-server", 500)],
)
def test_an_error_status_is_recorded_and_no_body_read(web, path, status):
    fetched = fetch(web, path)
    assert (fetched.status, fetched.error, fetched.body) == (status, FetchFailure.HTTP_STATUS, None)


def test_a_servers_reason_phrase_is_kept_printable(web):
    fetched = fetch(web, "/escape")
    assert fetched.status == 404 and fetched.detail.isprintable() and "owned" in fetched.detail


def test_a_redirect_chain_is_followed_to_the_final_url(web):
    fetched = fetch(web, "/redirect/3")
    assert fetched.final_url == web.url("/states") and fetched.status == 200
    assert web.requests == ["/redirect/3", "/redirect/2", "/redirect/1", "/states"]


def test_a_redirect_loop_stops_after_five_redirects(web):
    fetched = fetch(web, "/loop")
    assert fetched.error == FetchFailure.TOO_MANY_REDIRECTS and web.count("/loop") == 6


def test_a_redirect_to_another_scheme_is_refused(web):
    fetched = fetch(web, "/to-ftp")
    assert fetched.error == FetchFailure.REFUSED_SCHEME and fetched.final_url == "ftp://127.0.0.1/file"


def test_a_redirect_to_a_refused_address_is_stopped_before_connecting(web):
    policy = FetchPolicy(refuse=lambda address: "refused by the test" if address == ONLY_127_0_0_2_REFUSED else None)
    fetched = fetch(web, "/to-private", policy)
    assert fetched.error == FetchFailure.REFUSED_ADDRESS, fetched
    assert fetched.final_url == web.url("/states", host="127.0.0.2")
    # Nothing listens on 127.0.0.2: had the fetcher connected, it would be connection_refused.
    assert web.requests == ["/to-private"]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_the_default_policy_refuses_this_machine_after_dns(web, host):
    fetched = Fetcher().fetch(web.url("/states", host=host))
    assert fetched.error == FetchFailure.REFUSED_ADDRESS and fetched.detail is not None
    assert "loopback" in fetched.detail
    assert web.requests == []


@pytest.mark.parametrize(
    "url",
    ["http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/latest", "http://[::ffff:169.254.169.254]/"],
)
def test_metadata_addresses_are_refused_even_with_allow_private_hosts(url):
    assert Fetcher(LOCAL).fetch(url).error == FetchFailure.REFUSED_ADDRESS


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.org/x", "gopher://example.org/"])
def test_only_http_and_https_are_fetched(url):
    assert Fetcher(LOCAL).fetch(url).error == FetchFailure.REFUSED_SCHEME


def test_the_connection_goes_to_the_address_judged_with_the_host_name_in_the_request(web):
    resolved: list[str] = []

    def resolve(host, port):
        resolved.append(host)
        return [ipaddress.ip_address("127.0.0.1")]

    fetched = Fetcher(FetchPolicy(allow_private_hosts=True, resolve=resolve)).fetch(
        f"http://duel-verify.test:{web.port}/echo"
    )
    assert fetched.body is not None, fetched
    seen = json.loads(fetched.body)
    assert resolved == ["duel-verify.test"], "one lookup, whose answer is the address connected to"
    assert seen["host"] == f"duel-verify.test:{web.port}"


def test_requests_name_duel_verify_and_ask_for_no_compression(web):
    seen = json.loads(fetch(web, "/echo").body)
    assert seen["user_agent"].startswith("duel-verify/") and seen["accept_encoding"] == "identity"


def test_a_compressed_answer_is_not_decompressed(web):
    assert fetch(web, "/gzipped").error == FetchFailure.UNSUPPORTED_CONTENT


def resolver(known: set[str]):
    """The system resolver's answers as seen from a machine where only ``known`` names exist."""

    def resolve(host, port):
        if host not in known:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [ipaddress.ip_address("93.184.215.14")]

    return resolve


def test_a_name_that_does_not_exist_is_a_dead_link():
    policy = FetchPolicy(allow_private_hosts=True, resolve=resolver({"example.org"}))
    assert Fetcher(policy).fetch("http://no-such-host.invalid/page").error == FetchFailure.NAME_NOT_FOUND


def test_an_unknown_name_is_no_dead_link_when_the_resolver_knows_no_name_at_all():
    # Offline, or behind a DNS that answers nothing: the cited page may well exist.
    fetched = Fetcher(FetchPolicy(resolve=resolver(set()))).fetch("https://en.wikipedia.org/wiki/Lease")
    assert fetched.error == FetchFailure.DNS_FAILED and "offline" in (fetched.detail or "")


def test_a_closed_port_is_connection_refused():
    with socket.socket() as probe:  # a port that was free a moment ago, and nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert Fetcher(LOCAL).fetch(f"http://127.0.0.1:{port}/states").error == FetchFailure.CONNECTION_REFUSED


@pytest.mark.slow
def test_a_slow_page_times_out(web):
    started = time.monotonic()
    fetched = fetch(web, "/slow", FetchPolicy(allow_private_hosts=True, timeout_seconds=0.5))
    assert fetched.error == FetchFailure.TIMEOUT
    assert time.monotonic() - started < 2


@pytest.mark.slow
def test_a_page_that_trickles_is_cut_at_the_whole_fetchs_deadline(web):
    """A byte every 50 ms keeps every read quick: only a deadline over the whole fetch stops it."""
    started = time.monotonic()
    fetched = fetch(web, "/trickle", FetchPolicy(allow_private_hosts=True, timeout_seconds=1.0))
    assert fetched.error == FetchFailure.TIMEOUT and not fetched.body
    assert time.monotonic() - started < 3


@pytest.mark.parametrize("path", ["/huge", "/huge-declared"])
def test_a_huge_page_is_cut_at_the_size_limit(web, path):
    fetched = fetch(web, path, FetchPolicy(allow_private_hosts=True, max_bytes=HUGE_BYTES // 3))
    assert fetched.error == FetchFailure.TOO_LARGE and fetched.body is None


def test_a_429_is_retried_after_its_retry_after(web):
    waits: list[float] = []
    fetched = fetch(web, "/limited", FetchPolicy(allow_private_hosts=True, sleep=waits.append))
    assert fetched.status == 200 and waits == [0.0] and web.count("/limited") == 2


def test_a_429_that_persists_gives_up_after_three_attempts(web):
    fetched = fetch(web, "/limited-always", FetchPolicy(allow_private_hosts=True, sleep=lambda seconds: None))
    assert (fetched.status, fetched.error) == (429, FetchFailure.HTTP_STATUS) and web.count("/limited-always") == 3
    assert "after 3 attempts" in fetched.detail


def test_a_retry_after_beyond_the_cap_is_not_waited_for(web):
    waits: list[float] = []
    fetched = fetch(web, "/limited-long", FetchPolicy(allow_private_hosts=True, sleep=waits.append))
    assert fetched.status == 429 and waits == [] and web.count("/limited-long") == 1


def test_each_url_is_fetched_once_and_concurrently(web):
    urls = [web.url(f"/hold/{n}") for n in range(6)] * 2
    started = time.monotonic()
    fetched = Fetcher(FetchPolicy(allow_private_hosts=True, per_host=6)).fetch_all(urls)
    assert len(fetched) == 6 and len(web.requests) == 6
    assert web.max_in_flight > 1 and time.monotonic() - started < 6 * 0.2


@pytest.mark.slow
def test_requests_to_one_host_are_capped(web):
    Fetcher(FetchPolicy(allow_private_hosts=True, per_host=2)).fetch_all(web.url(f"/hold/{n}") for n in range(6))
    assert web.max_in_flight == 2


@pytest.mark.slow
def test_requests_to_all_hosts_are_capped(web):
    hosts = [f"host-{n}.test" for n in range(6)]
    policy = FetchPolicy(
        allow_private_hosts=True,
        concurrency=3,
        per_host=1,
        resolve=lambda host, port: [ipaddress.ip_address("127.0.0.1")],
    )
    Fetcher(policy).fetch_all(f"http://{host}:{web.port}/hold/{host}" for host in hosts)
    assert web.max_in_flight == 3


def test_retry_after_reads_seconds_and_http_dates():
    assert retry_after("5") == 5.0
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=lambda: 1445412470.0) == 10.0
    assert retry_after("soon") is None and retry_after(None) is None


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    """A self-signed certificate for the name localhost (and no IP address)."""
    folder = tmp_path_factory.mktemp("tls")
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost",
            "-days",
            "2",
            "-keyout",
            folder / "key.pem",
            "-out",
            folder / "cert.pem",
        ],
        check=True,
        capture_output=True,
    )
    return folder / "cert.pem", folder / "key.pem"


@pytest.fixture
def tls_web(certificate):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    with FakeWeb(tls=context) as server:
        yield server


def trusting(certificate, **changes):
    return FetchPolicy(
        allow_private_hosts=True, ssl_context=ssl.create_default_context(cafile=certificate[0]), **changes
    )


def test_https_checks_the_certificate_for_the_host_name(tls_web, certificate):
    fetched = Fetcher(trusting(certificate)).fetch(tls_web.url("/states", host="localhost"))
    assert fetched.status == 200 and fetched.body is not None
    assert b"renewed every five minutes" in fetched.body


def test_https_refuses_a_certificate_for_another_name(tls_web, certificate):
    fetched = Fetcher(trusting(certificate)).fetch(tls_web.url("/states"))  # 127.0.0.1 is not in the certificate
    assert fetched.error == FetchFailure.CONNECTION_FAILED and fetched.detail is not None
    assert "certificate" in fetched.detail
    assert tls_web.requests == []


def test_https_refuses_a_certificate_nobody_trusts(tls_web):
    fetched = Fetcher(LOCAL).fetch(tls_web.url("/states", host="localhost"))
    assert fetched.error == FetchFailure.CONNECTION_FAILED and fetched.detail is not None
    assert "certificate" in fetched.detail
