"""Fetching a link sent to the inbox assistant, without letting it reach inside the network.

Only http and https. The host is resolved here and every address it resolves to must be public
(not private, loopback, link-local, shared, reserved or multicast; an IPv4-mapped or NAT64 IPv6
address counts as its IPv4 address, and the other forms carrying one, IPv4-compatible, local-use
NAT64, 6to4 and Teredo, are refused); the connection then goes to the address that was checked, not to
the name, so a second lookup cannot swap in another (DNS rebinding). Redirects are followed by
hand, each hop checked again. Environment proxies are ignored (a proxy would reach what the
check refused). The body is read in pieces up to ``URL_FETCH_MAX_BYTES`` and the whole fetch
must finish within ``URL_FETCH_TIMEOUT_SECONDS``.

``URL_FETCH_ALLOW_LOOPBACK`` (a plain setting, never read from the environment) lets the tests'
local HTTP server be fetched; everything else stays refused even then.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from dataclasses import dataclass

import httpx
from django.conf import settings
from django.utils.translation import gettext

from apps.core.api import ApplicationError

USER_AGENT = "FolderChat/1.0 (saving a page a user sent to their inbox)"
_SCHEMES = {"http": 80, "https": 443}

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# NAT64's well-known prefix: the gateway connects to the IPv4 address in the last 32 bits, so that
# address is judged (an IPv6-only host with DNS64 reaches every IPv4 site this way).
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
# Other IPv6 forms that carry an IPv4 address, refused whatever it is (Python 3.11's is_global
# calls most of them public): IPv4-compatible addresses are deprecated; a local-use NAT64 prefix
# puts the IPv4 address where its operator chose; 6to4 and Teredo name a host behind the IPv4
# router or NAT, which may be this server's own network, so a public IPv4 inside proves nothing.
_IPV4_CARRIERS = tuple(
    ipaddress.IPv6Network(network) for network in ("::/96", "64:ff9b:1::/48", "2002::/16", "2001::/32")
)


class FetchError(ApplicationError):
    """The page could not be fetched; the message says why, for the user."""


@dataclass(frozen=True)
class FetchedPage:
    url: str  # after redirects
    content_type: str  # without parameters, lower case
    body: bytes


def url_fetch(*, url: str) -> FetchedPage:
    """GET ``url`` within the limits above; FetchError with the reason otherwise."""
    deadline = time.monotonic() + settings.URL_FETCH_TIMEOUT_SECONDS
    current = _parse(url)
    for _ in range(settings.URL_FETCH_MAX_REDIRECTS + 1):
        address = address_check(host=current.host, port=current.port or _SCHEMES[current.scheme])
        location, page = _get(current, address, deadline)
        if page is not None:
            return page
        current = _parse(str(current.join(location)))
    raise FetchError(
        gettext("%(url)s redirects more than %(limit)s times; nothing was saved.")
        % {"url": url, "limit": settings.URL_FETCH_MAX_REDIRECTS}
    )


def address_check(*, host: str, port: int) -> Address:
    """The address to connect to: every address ``host`` resolves to must be allowed."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise FetchError(gettext("%(host)s could not be found; nothing was saved.") % {"host": host}) from exc
    addresses = [ipaddress.ip_address(info[4][0]) for info in infos]
    if not addresses:
        raise FetchError(gettext("%(host)s could not be found; nothing was saved.") % {"host": host})
    for address in addresses:
        if not address_allowed(address):
            raise FetchError(
                gettext("%(host)s leads to %(address)s, a private or local address; only public web pages are fetched.")
                % {"host": host, "address": address}
            )
    return addresses[0]


def address_allowed(address: Address) -> bool:
    address = _ipv4_inside(address)
    if address.is_loopback:
        return bool(settings.URL_FETCH_ALLOW_LOOPBACK)
    if any(address in network for network in _IPV4_CARRIERS):
        return False
    return address.is_global and not address.is_multicast


def _ipv4_inside(address: Address) -> Address:
    """The IPv4 address a mapped or well-known NAT64 address leads to (exactly that one), else itself."""
    if not isinstance(address, ipaddress.IPv6Address):
        return address
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF)
    return address


def _parse(url: str) -> httpx.URL:
    try:
        parsed = httpx.URL(url.strip())
    except (httpx.InvalidURL, TypeError) as exc:
        raise FetchError(gettext("%(url)s is not a web address; nothing was saved.") % {"url": url}) from exc
    if parsed.scheme not in _SCHEMES or not parsed.host:
        raise FetchError(gettext("Only http and https links are fetched, not %(url)s.") % {"url": url})
    if parsed.userinfo:
        raise FetchError(gettext("Links with a user name or password in them are not fetched."))
    return parsed


def _get(url: httpx.URL, address: Address, deadline: float) -> tuple[str, FetchedPage | None]:
    """One request to ``address``: (redirect location, None) or ("", the page)."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise FetchError(gettext("%(url)s took too long to answer; nothing was saved.") % {"url": url})
    host_header = url.netloc.decode("ascii")
    # The request goes to the checked address; Host and TLS (SNI and the certificate's name) keep the name.
    pinned = url.copy_with(host=str(address))
    extensions = {"sni_hostname": url.host} if url.scheme == "https" else {}
    headers = {
        "Host": host_header,
        "User-Agent": USER_AGENT,
        "Accept": "text/html,text/plain;q=0.9,*/*;q=0.5",
        # Uncompressed: the size cap then bounds what is held, not a 1000:1 gzip stream.
        "Accept-Encoding": "identity",
    }
    try:
        with (
            httpx.Client(timeout=remaining, follow_redirects=False, trust_env=False) as client,
            client.stream("GET", pinned, headers=headers, extensions=extensions) as response,
        ):
            if response.is_redirect:
                return response.headers.get("location", ""), None
            if response.status_code >= 400:
                raise FetchError(
                    gettext("%(url)s answered %(status)s; nothing was saved.")
                    % {"url": url, "status": response.status_code}
                )
            body = _read(response, url=url, deadline=deadline)
            content_type = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
            return "", FetchedPage(url=str(url), content_type=content_type, body=body)
    except httpx.TimeoutException as exc:
        raise FetchError(gettext("%(url)s took too long to answer; nothing was saved.") % {"url": url}) from exc
    except httpx.HTTPError as exc:
        raise FetchError(
            gettext("%(url)s could not be fetched (%(error)s); nothing was saved.")
            % {"url": url, "error": type(exc).__name__}
        ) from exc


def _read(response: httpx.Response, *, url: httpx.URL, deadline: float) -> bytes:
    limit = settings.URL_FETCH_MAX_BYTES
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise FetchError(
            gettext("%(url)s is %(size)s bytes, more than %(limit)s (URL_FETCH_MAX_BYTES).")
            % {"url": url, "size": f"{int(declared):,}", "limit": f"{limit:,}"}
        )
    pieces: list[bytes] = []
    received = 0
    for piece in response.iter_bytes():
        received += len(piece)
        if received > limit:
            raise FetchError(
                gettext("%(url)s is more than %(limit)s bytes (URL_FETCH_MAX_BYTES); nothing was saved.")
                % {"url": url, "limit": f"{limit:,}"}
            )
        if time.monotonic() > deadline:
            raise FetchError(gettext("%(url)s took too long to send; nothing was saved.") % {"url": url})
        pieces.append(piece)
    return b"".join(pieces)
