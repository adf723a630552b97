"""Outbound requests only to the public internet: the check every result URL and redirect passes.

A search engine's results are not the server's own choice: a result (or a redirect from one)
may point at ``http://127.0.0.1:…``, a cloud metadata service (``169.254.169.254``) or a host on
the server's own network, and whatever such a page says would come back to the caller as
evidence (server-side request forgery). ``NetworkPolicy.pin(url)``:

- resolves the URL's host once (``resolver``, ``socket.getaddrinfo`` by default);
- refuses it when *any* address is loopback, private (RFC 1918, IPv6 ULA), shared (CGNAT),
  link-local, multicast, reserved, unspecified, documentation or benchmarking, or an IPv4 form
  of these inside IPv6 (IPv4-mapped, NAT64, 6to4, Teredo), unless ``allow`` names it;
- returns a ``Pin``: the URL rewritten to the checked address, with the ``Host`` header and the
  TLS server name (SNI, and so certificate checking) of the original host. The request connects
  to the address that was checked, so a DNS server that answers differently the second time
  (rebinding) is never asked a second time.

``allow`` (``web.allow_networks``) names private networks (``10.0.0.0/8``) or hosts
(``searxng.lan``) that may be reached: a SearXNG on the LAN, the loopback servers of tests.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Sequence[str]]

_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class RefusedAddress(ValueError):
    """A URL whose host is not on the public internet (and not allowed by name or network)."""


@dataclass(frozen=True)
class Pin:
    """Where a request for ``url`` goes: ``connect_url`` (the host replaced by the checked
    ``address``), with ``host`` in the Host header and as the TLS server name."""

    url: str
    connect_url: str
    host: str
    address: str

    @property
    def headers(self) -> dict[str, str]:
        """The Host header of the original host; over TLS also ``Connection: close``: a pool
        keys connections by address, and a kept connection would carry one host's verified
        TLS name to another host at the same address."""
        parts = urlsplit(self.url)
        host = f"{_bracket(self.host)}:{parts.port}" if parts.port else _bracket(self.host)
        return {"Host": host, "Connection": "close"} if parts.scheme == "https" else {"Host": host}

    @property
    def extensions(self) -> dict[str, str]:
        """httpx request extensions: the TLS server name of the original host (https only)."""
        return {"sni_hostname": self.host} if urlsplit(self.url).scheme == "https" else {}


def system_resolver(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (IPv4 and IPv6), in the resolver's order."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    seen: list[str] = []
    for *_, sockaddr in infos:
        a = str(sockaddr[0]).split("%")[0]  # an IPv6 zone ("fe80::1%eth0") names no other host
        if a not in seen:
            seen.append(a)
    return seen


def why_not_public(address: Address) -> str | None:
    """Why ``address`` is not a public internet address, or None when it is.

    >>> why_not_public(ipaddress.ip_address("169.254.169.254"))
    'link-local'
    >>> why_not_public(ipaddress.ip_address("::ffff:10.0.0.5"))
    'private (as IPv4 10.0.0.5 inside IPv6)'
    >>> why_not_public(ipaddress.ip_address("93.184.216.34")) is None
    True
    """
    if isinstance(address, ipaddress.IPv6Address):
        inner = _embedded_ipv4(address)
        if inner is not None:
            why = why_not_public(inner)
            return f"{why} (as IPv4 {inner} inside IPv6)" if why else None
    for what, test in (
        ("unspecified", address.is_unspecified),
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("reserved", address.is_reserved),
        ("private", address.is_private),
    ):
        if test:
            return what
    if not address.is_global:  # shared (100.64/10, CGNAT) and the rest IANA marks non-global
        return "not globally reachable"
    return None


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 form carries (mapped, NAT64, 6to4, Teredo's client), if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    return None


def parse_allow(entries: Iterable[str]) -> tuple[tuple[Network, ...], frozenset[str]]:
    """``web.allow_networks`` entries as (networks, host names); a bare address is a /32 or
    /128, anything that is not an address or network is a host name.

    >>> nets, hosts = parse_allow(["127.0.0.1/32", "10.0.0.0/8", "SearXNG.lan", "::1"])
    >>> [str(n) for n in nets], sorted(hosts)
    (['127.0.0.1/32', '10.0.0.0/8', '::1/128'], ['searxng.lan'])
    """
    nets: list[Network] = []
    hosts: set[str] = set()
    for raw in entries:
        entry = raw.strip()
        if not entry:
            continue
        try:
            nets.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            if "/" in entry or " " in entry:
                raise ValueError(
                    f"web.allow_networks entry {entry!r} is neither a CIDR network "
                    "(10.0.0.0/8, ::1/128) nor a host name; fix or remove it"
                ) from None
            hosts.add(entry.lower().rstrip("."))
    return tuple(nets), frozenset(hosts)


class NetworkPolicy:
    """Which hosts outbound requests may reach (see the module doc). Thread-safe."""

    def __init__(self, allow: Iterable[str] = (), resolver: Resolver | None = None) -> None:
        self.networks, self.hosts = parse_allow(allow)
        self.resolver = resolver or system_resolver

    def _allowed(self, address: Address) -> bool:
        return any(address in n for n in self.networks if n.version == address.version)

    def refuses_offline(self, url: str) -> str | None:
        """Why ``url`` is refused, judged without a DNS lookup (for a page answered from the
        cache, which was checked when it was fetched): its host is an address that is not
        public and not allowed, or ``localhost``. None: nothing against it offline.

        >>> NetworkPolicy().refuses_offline("http://127.0.0.2:8000/secret")
        '127.0.0.2 is loopback: not on the public internet'
        >>> NetworkPolicy(["127.0.0.0/8"]).refuses_offline("http://127.0.0.2/") is None
        True
        """
        host = (urlsplit(url).hostname or "").rstrip(".").lower()
        if host in self.hosts:
            return None
        if host == "localhost" or host.endswith(".localhost"):
            return f"{host} is loopback: not on the public internet"
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return None
        why = why_not_public(address)
        if why and not self._allowed(address):
            return f"{host} is {why}: not on the public internet"
        return None

    def pin(self, url: str) -> Pin:
        """Where a request for ``url`` may connect; raises ``RefusedAddress`` with the reason."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise RefusedAddress(f"not an http(s) URL: {parts.scheme or 'no scheme'}")
        host = (parts.hostname or "").rstrip(".")
        if not host:
            raise RefusedAddress("the URL names no host")
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            raise RefusedAddress("the URL's port is not a number in 0-65535") from None
        try:
            literal: Address | None = ipaddress.ip_address(host)
        except ValueError:
            literal = None
        if literal is not None:
            addresses = [str(literal)]
        else:
            try:
                addresses = list(self.resolver(host, port))
            except (OSError, UnicodeError) as e:
                raise RefusedAddress(f"{host} does not resolve ({type(e).__name__})") from None
            if not addresses:
                raise RefusedAddress(f"{host} resolves to no address")
        if literal is None and host.lower() in self.hosts:
            return _pin(url, parts, host, addresses[0])
        for a in addresses:
            address = ipaddress.ip_address(a)
            why = why_not_public(address)
            if why and not self._allowed(address):
                via = "" if literal is not None else f" resolves to {a}, which"
                raise RefusedAddress(
                    f"{host}{via} is {why}: not on the public internet (allow it with "
                    f'--set "web.allow_networks=[{_as_network(address)}]" if it should be reached)'
                )
        return _pin(url, parts, host, addresses[0])


def _as_network(address: Address) -> str:
    return f"{address}/{32 if address.version == 4 else 128}"


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _pin(url: str, parts, host: str, address: str) -> Pin:
    netloc = _bracket(address) + (f":{parts.port}" if parts.port else "")
    connect = urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))
    return Pin(url, connect, host, address)
