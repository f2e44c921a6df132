"""A link sent to the inbox is fetched and saved as the page's main text, never from inside the network.

Every test here guards the socket layer: the resolver answers from a table and a connection to
anything but this test's own loopback server fails the test, so a check that lets an address
through fails instead of sending. The loopback server itself is reachable only because these
tests set URL_FETCH_ALLOW_LOOPBACK (a plain setting, not read from the environment).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from apps.inbox.fetch import FetchError, address_check, url_fetch
from apps.inbox.save import inbox_note_save
from apps.library.models import File, Folder
from tests.support.documents import pdf_bytes
from tests.support.inbox_runs import answer, send, typed
from tests.support.page_server import Page, PageServer

ARTICLE = b"""<!doctype html><html><head><title>Renewing a passport by mail</title></head><body>
<nav><a href="/">Home</a> | <a href="/travel">Travel</a> | <a href="/about">About us</a></nav>
<article><h1>Renewing a passport by mail</h1>
<p>Adults can renew a passport by mail when the old one was issued within the last fifteen years.
Send form DS-82, the old passport, one photo and the fee of 130 dollars to the address on the form.</p>
<p>Routine service takes six to eight weeks; expedited service costs 60 dollars more.</p></article>
<footer>Copyright 2026 Example Travel. Cookie settings.</footer></body></html>"""


class Guard:
    """Resolver table and connect guard: what the code under test asked for, and nothing sent."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, server_port: int | None) -> None:
        self.names: dict[str, list[str]] = {}
        self.connects: list[tuple[str, int]] = []
        real_connect = socket.create_connection

        def getaddrinfo(host, port, *args, **kwargs):
            addresses = self.names.get(host, [host])  # a literal address resolves to itself
            return [
                (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
                for a in addresses
            ]

        def create_connection(address, *args, **kwargs):
            self.connects.append(address[:2])
            if server_port is None or tuple(address[:2]) != ("127.0.0.1", server_port):
                raise AssertionError(f"the fetch connected to {address}")
            return real_connect(address, *args, **kwargs)

        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
        monkeypatch.setattr(socket, "create_connection", create_connection)


@pytest.fixture
def page_server() -> Iterator[PageServer]:
    server = PageServer()
    yield server
    server.close()


@pytest.fixture
def guard(monkeypatch, page_server: PageServer, settings) -> Guard:
    settings.URL_FETCH_ALLOW_LOOPBACK = True
    return Guard(monkeypatch, page_server.port)


@pytest.mark.parametrize(
    ("url", "addresses"),
    [
        ("http://127.0.0.1/", None),
        ("http://localhost:8000/admin", ["127.0.0.1"]),
        ("http://[::1]/", None),
        ("http://169.254.169.254/latest/meta-data/", None),  # cloud metadata: link-local
        ("http://[fe80::1]/", None),
        ("http://10.0.0.5/", None),
        ("http://printer.lan/", ["192.168.1.20"]),
        ("http://intranet.example/", ["172.16.4.4"]),
        ("http://cgnat.example/", ["100.64.0.9"]),
        ("http://mapped.example/", ["::ffff:10.0.0.1"]),
        ("http://two-faced.example/", ["93.184.216.34", "10.0.0.1"]),  # one bad address is enough
        ("http://0.0.0.0:8000/", None),
    ],
)
def test_private_loopback_and_link_local_addresses_are_refused_before_connecting(
    monkeypatch, settings, url: str, addresses: list[str] | None
) -> None:
    settings.URL_FETCH_ALLOW_LOOPBACK = False
    guard = Guard(monkeypatch, server_port=None)
    if addresses:
        guard.names[url.split("/")[2].split(":")[0]] = addresses

    with pytest.raises(FetchError, match="private or local address"):
        url_fetch(url=url)
    assert guard.connects == []


def _teredo(client: str) -> str:
    """A Teredo address (server 65.54.227.120) whose client is ``client``: stored inverted."""
    inverted = int(ipaddress.IPv4Address(client)) ^ 0xFFFFFFFF
    return str(ipaddress.IPv6Address((0x2001_0000_4136_E378_8000_63BF << 32) | inverted))


# An IPv6 address that carries an IPv4 one: mapped and well-known NAT64 addresses reach exactly
# the IPv4 inside, so they are judged by it (NAT64 is how an IPv6-only host reaches an IPv4 site).
# The rest are refused whatever they carry: IPv4-compatible addresses are deprecated, a local-use
# NAT64 prefix puts the IPv4 where its operator chose, and 6to4 and Teredo name a host behind the
# IPv4 router or NAT, which may be this server's own network.
EMBEDDED_IPV4 = [
    ("mapped", "::ffff:{}"),
    ("ipv4-compatible", "::{}"),
    ("nat64", "64:ff9b::{}"),
    ("nat64-local-use", "64:ff9b:1::{}"),
    ("6to4", None),
    ("teredo", None),
]
ALLOWED_WHEN_PUBLIC = {"mapped", "nat64"}


def _embedding(form: str, template: str | None, ipv4: str) -> str:
    if form == "6to4":
        return str(ipaddress.IPv6Address((0x2002 << 112) | (int(ipaddress.IPv4Address(ipv4)) << 80)))
    if form == "teredo":
        return _teredo(ipv4)
    assert template is not None
    return str(ipaddress.IPv6Address(template.format(ipv4)))


@pytest.mark.parametrize(("form", "template"), EMBEDDED_IPV4, ids=[form for form, _ in EMBEDDED_IPV4])
@pytest.mark.parametrize("inside", ["127.0.0.1", "10.0.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1"])
def test_an_ipv6_address_carrying_a_private_ipv4_is_refused_before_connecting(
    monkeypatch, settings, form: str, template: str | None, inside: str
) -> None:
    settings.URL_FETCH_ALLOW_LOOPBACK = False
    guard = Guard(monkeypatch, server_port=None)
    guard.names["wrapped.example"] = [_embedding(form, template, inside)]

    with pytest.raises(FetchError, match="private or local address"):
        url_fetch(url="http://wrapped.example/")
    assert guard.connects == []


@pytest.mark.parametrize(("form", "template"), EMBEDDED_IPV4, ids=[form for form, _ in EMBEDDED_IPV4])
def test_an_ipv6_address_carrying_a_public_ipv4_is_judged_by_its_form(
    monkeypatch, form: str, template: str | None
) -> None:
    guard = Guard(monkeypatch, server_port=None)
    wrapped = _embedding(form, template, "8.8.8.8")
    guard.names["wrapped.example"] = [wrapped]

    if form in ALLOWED_WHEN_PUBLIC:
        assert address_check(host="wrapped.example", port=80) == ipaddress.ip_address(wrapped)
    else:
        with pytest.raises(FetchError, match="private or local address"):
            address_check(host="wrapped.example", port=80)
    assert guard.connects == []


@pytest.mark.parametrize(
    "literal", ["64:ff9b::7f00:1", "64:ff9b::a00:1", "2002:7f00:1::", "2002:c0a8:101::", "::7f00:1"]
)
def test_the_reported_literals_are_refused(monkeypatch, literal: str) -> None:
    guard = Guard(monkeypatch, server_port=None)
    with pytest.raises(FetchError, match="private or local address"):
        url_fetch(url=f"http://[{literal}]/")
    assert guard.connects == []


@pytest.mark.parametrize("url", ["ftp://example.com/file.txt", "file:///etc/passwd", "gopher://example.com/"])
def test_only_http_and_https_are_fetched(monkeypatch, url: str) -> None:
    guard = Guard(monkeypatch, server_port=None)
    with pytest.raises(FetchError, match="Only http and https"):
        url_fetch(url=url)
    assert guard.connects == []


def test_allowing_loopback_for_tests_still_refuses_private_addresses(guard: Guard) -> None:
    guard.names["intranet.example"] = ["10.1.2.3"]
    with pytest.raises(FetchError, match="private or local address"):
        url_fetch(url="http://intranet.example/")
    assert guard.connects == []


def test_a_redirect_is_checked_again_before_it_is_followed(guard: Guard, page_server: PageServer) -> None:
    page_server.pages["/go"] = Page(status=302, headers={"Location": "http://169.254.169.254/latest/meta-data/"})

    with pytest.raises(FetchError, match=r"169\.254\.169\.254, a private or local address"):
        url_fetch(url=page_server.url("/go"))
    assert guard.connects == [("127.0.0.1", page_server.port)]


def test_the_connection_goes_to_the_checked_address_with_the_name_as_host(
    guard: Guard, page_server: PageServer
) -> None:
    guard.names["travel.example"] = ["127.0.0.1"]
    page_server.pages["/passport"] = Page(body=ARTICLE)

    page = url_fetch(url=f"http://travel.example:{page_server.port}/passport")

    assert page.content_type == "text/html" and page.body == ARTICLE
    assert page_server.requests == [("/passport", f"travel.example:{page_server.port}")]


def test_size_and_time_are_capped(guard: Guard, page_server: PageServer, settings) -> None:
    settings.URL_FETCH_MAX_BYTES = 1000
    settings.URL_FETCH_TIMEOUT_SECONDS = 0.5
    page_server.pages["/big"] = Page(body=b"x" * 1001, content_type="text/plain")
    page_server.pages["/slow"] = Page(body=b"late", content_type="text/plain", delay=2.0)

    with pytest.raises(FetchError, match="URL_FETCH_MAX_BYTES"):
        url_fetch(url=page_server.url("/big"))
    with pytest.raises(FetchError, match="took too long"):
        url_fetch(url=page_server.url("/slow"))


@pytest.fixture
def folder(db, tmp_path: Path, user) -> Folder:
    (tmp_path / "inbox").mkdir()
    return Folder.objects.create(owner=user, source="local", external_id=str(tmp_path), name="Travel")


@pytest.fixture
def no_tasks(monkeypatch) -> None:
    monkeypatch.setattr("apps.library.enqueue.index_files", lambda *args, **kwargs: None)
    monkeypatch.setattr("apps.organize.enqueue.suggest_organization", lambda *args: None)


def test_a_page_is_saved_as_its_main_text_with_title_and_address(
    guard: Guard,
    page_server: PageServer,
    folder: Folder,
    no_tasks,
) -> None:
    page_server.pages["/old"] = Page(status=301, headers={"Location": "/passport"})
    page_server.pages["/passport"] = Page(body=ARTICLE)

    path = inbox_note_save(folder=folder, text="", url=page_server.url("/old"))

    assert path == "inbox/Renewing a passport by mail.md"
    note = (Path(folder.external_id) / path).read_text()
    assert note.startswith(f"# Renewing a passport by mail\n\nSaved from <{page_server.url('/passport')}> on ")
    assert "Send form DS-82" in note and "expedited service costs 60 dollars" in note
    assert "Cookie settings" not in note and "About us" not in note  # navigation and footer left out
    assert File.objects.get(folder=folder, path=path).status == "pending"  # indexing queued, no sync awaited


def test_a_linked_pdf_is_saved_as_the_file(guard: Guard, page_server: PageServer, folder: Folder, no_tasks) -> None:
    page_server.pages["/forms/ds-82.pdf"] = Page(body=pdf_bytes(["Form DS-82"]), content_type="application/pdf")

    path = inbox_note_save(folder=folder, text="", url=page_server.url("/forms/ds-82.pdf"))

    assert path == "inbox/ds-82.pdf"
    assert (Path(folder.external_id) / path).read_bytes().startswith(b"%PDF")


@pytest.mark.django_db(transaction=True)
def test_a_link_sent_to_the_assistant_is_saved_and_a_refused_one_explained(
    guard: Guard,
    page_server: PageServer,
    folder: Folder,
    no_tasks,
) -> None:
    page_server.pages["/passport"] = Page(body=ARTICLE)

    run, _ = send(folder, page_server.url("/passport"))

    (saved,) = typed(run, "file")
    assert saved.content["path"] == "inbox/Renewing a passport by mail.md"
    assert answer(run).content["text"].startswith("Saved to inbox/Renewing a passport by mail.md.")

    refused, _ = send(folder, "http://169.254.169.254/latest/meta-data/")
    assert "private or local address" in answer(refused).content["text"]
    assert sorted(p.name for p in (Path(folder.external_id) / "inbox").iterdir()) == ["Renewing a passport by mail.md"]
