"""``URLFirewall``: which URLs the browsing skills may fetch.

Every request and every redirect hop goes through ``await firewall.check(url)``, which returns
``None`` or raises ``URLNotAllowed`` with the reason. The order of the checks:

1. only ``http`` and ``https``; a URL that does not parse, has no host or has a backslash or
   a control character in its authority is refused;
2. the host is normalised (lowercase, one trailing dot dropped, IDNA to ASCII, the short,
   integer, hex and octal IPv4 forms that ``inet_aton`` accepts turned into dotted quads);
3. the deny list, then the allow list (when it is not empty). A domain rule covers its
   subdomains (``example.com`` matches ``a.example.com``, never ``badexample.com``); a rule
   may carry a scheme, a port and a path prefix (``https://example.com/docs``), which are
   compared as parts, never as a string prefix; ``10.0.0.0/8`` style rules match addresses;
   A path is compared after percent-decoding and dot-segment removal (``/app/%2e%2e/x`` is
   ``/x``), and where a rule with a path may apply (its scheme, port and host), a URL whose
   path hides a ``.``, ``/`` or ``\\`` in an encoding (``..%2f``, ``.%2e``, ``%5c``) is
   refused (``url_path.py``);
4. the host name ``localhost`` (and ``*.localhost``) and, **after DNS resolution**, every
   address the host resolves to: loopback, private, link-local, carrier-grade NAT, unspecified,
   multicast, reserved, IPv6 unique-local and site-local addresses, and IPv6 forms that embed
   one of those (IPv4-mapped, IPv4-compatible, 6to4, Teredo, NAT64) are refused unless the host
   or the address matches ``allow_private``. An ``allow_private`` rule keeps its scheme, port
   and path when it is matched against an address: ``127.0.0.1:8000`` opens port 8000 of that
   address (also reached as ``localhost:8000`` or through a name resolving to it) and no other
   port; ``http://127.0.0.1:8000/app`` also holds the scheme and the path. A rule with a scheme
   and no port means that scheme's default port (``http://127.0.0.1`` is port 80 only); a rule
   with neither (``127.0.0.1``) covers every port of the address, as before. A CIDR rule
   (``10.0.0.0/8``) covers every port of its addresses.

The resolver is injectable (``async resolver(host, port) -> list[str]``); the default uses the
event loop's ``getaddrinfo``. A name that does not resolve (or not within
``resolve_timeout_s``) raises ``HostUnresolved``, a ``BrowserError``: a network problem ("cannot
resolve host x (no network?)"), not a refusal, and its message names the host, not the URL.

``approve(url)`` returns the addresses it checked (an ``Approval``); both backends connect
to those and to nothing else (``pinning.py``; Chromium's route through ``route_fetch.py``), so
a DNS server that answers differently a moment later (rebinding) cannot move the connection.
``check(url)`` is ``approve`` without the answer, for a check before anything is fetched.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

import httpx

from skillrt.exceptions import HostUnresolved, URLNotAllowed
from skillrt.skills.browsing.url_path import canonical_path, path_problem

__all__ = [
    "DEFAULT_PORTS",
    "Approval",
    "Resolver",
    "URLFirewall",
    "default_resolver",
    "normalize_host",
]

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""``async resolver(host, port) -> [address, ...]``."""

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

ALLOWED_SCHEMES = frozenset({"http", "https"})
DEFAULT_PORTS = {"http": 80, "https": 443}
_NUMERIC_LABEL = re.compile(r"^(0[xX][0-9a-fA-F]*|[0-9]+)$")
_BAD_AUTHORITY = re.compile(r"[\\\x00-\x20\x7f]")
_CGNAT = ipaddress.IPv4Network("100.64.0.0/10")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_SITE_LOCAL = ipaddress.IPv6Network("fec0::/10")
_ULA = ipaddress.IPv6Network("fc00::/7")
_IPV4_COMPAT = ipaddress.IPv6Network("::/96")


async def default_resolver(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to, through the event loop's ``getaddrinfo``."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return sorted({str(info[4][0]) for info in infos})


def _parse_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address a host denotes in any form ``inet_aton`` accepts, else None.

    Raises ValueError when the host looks numeric (its last label is a number, as the URL
    standard decides) but is not a valid address, e.g. ``1.2.3.256`` or ``0x1.2.3.4.5``.
    """
    labels = host.split(".")
    if not labels or not _NUMERIC_LABEL.match(labels[-1]):
        return None
    if not all(_NUMERIC_LABEL.match(label) for label in labels):
        raise ValueError(f"malformed numeric host {host!r}")
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        raise ValueError(f"malformed IPv4 address {host!r}") from None


def normalize_host(host: str) -> str:
    """Lowercase, drop one trailing dot, IDNA-encode and canonicalise IP literals.

    ``127.1``, ``0x7f000001`` and ``2130706433`` all become ``127.0.0.1``; ``[::1]`` becomes
    ``::1``; ``Bücher.Example.`` becomes ``xn--bcher-kva.example``. Raises ValueError for a
    host that cannot be a host.
    """
    host = host.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if ":" in host:
        return str(ipaddress.IPv6Address(host.split("%", 1)[0]))
    if host.endswith("."):
        host = host[:-1]
    if not host or ".." in host or host.startswith("."):
        raise ValueError(f"malformed host {host!r}")
    v4 = _parse_ipv4(host)
    if v4 is not None:
        return str(v4)
    if not host.isascii():
        host = httpx.URL(f"http://{host}/").raw_host.decode("ascii")
    if not re.fullmatch(r"[a-z0-9_.-]+", host):
        raise ValueError(f"malformed host {host!r}")
    return host


def _ip(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _embedded_ipv4(addr: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    """An IPv4 address carried inside an IPv6 one, with the name of the form."""
    if addr.ipv4_mapped is not None:
        return "IPv4-mapped IPv6", addr.ipv4_mapped
    if addr.sixtofour is not None:
        return "6to4", addr.sixtofour
    if addr.teredo is not None:
        return "Teredo", addr.teredo[1]
    if addr in _NAT64 or addr in _NAT64_LOCAL:
        return "NAT64", ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
    if addr in _IPV4_COMPAT and int(addr) > 1:
        return "IPv4-compatible IPv6", ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
    return None


def address_problem(addr: IPAddress) -> str | None:
    """Why an address is not public (``"loopback address"``, ...), or None when it is."""
    if isinstance(addr, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(addr)
        if embedded is not None:
            form, v4 = embedded
            inner = address_problem(v4)
            if inner is not None or addr.ipv4_mapped is not None:
                return f"{form} address of {v4}" + (f" ({inner})" if inner else "")
        if addr in _ULA:
            return "unique local IPv6 address (fc00::/7)"
        if addr in _SITE_LOCAL:
            return "site-local IPv6 address (fec0::/10)"
    checks: list[tuple[bool, str]] = [
        (addr.is_unspecified, "unspecified address"),
        (addr.is_loopback, "loopback address"),
        (addr.is_link_local, "link-local address"),
        (addr.is_multicast, "multicast address"),
        (isinstance(addr, ipaddress.IPv4Address) and addr in _CGNAT, "CGNAT address"),
        (addr.is_reserved, "reserved address"),
        (addr.is_private, "private address"),
        (not addr.is_global, "non-global address"),
    ]
    for hit, reason in checks:
        if hit:
            return reason
    return None


@dataclass(frozen=True, slots=True)
class Approval:
    """What the firewall approved for one URL: its host, port and the addresses to connect to."""

    host: str
    port: int
    addresses: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Rule:
    """One allow/deny/allow_private entry, parsed."""

    text: str
    scheme: str | None = None
    host: str | None = None  # a domain (covers subdomains) or a canonical IP
    port: int | None = None
    path: str | None = None  # a path prefix, matched on segment boundaries
    network: IPNetwork | None = None

    @classmethod
    def parse(cls, text: str, *, default_port: bool = False) -> _Rule:
        """Read a rule; with ``default_port``, ``http://host`` means port 80 (443 for https)."""
        raw = text.strip()
        if not raw:
            raise ValueError("empty rule")
        if "://" not in raw:
            try:
                return cls(text, network=ipaddress.ip_network(raw, strict=False))
            except ValueError:
                pass
            if raw.startswith("*."):
                raw = raw[2:]
            raw = "http://" + raw
            scheme = None
        else:
            scheme = raw.split("://", 1)[0].lower()
        url = httpx.URL(raw)
        canonical = canonical_path(url.raw_path.decode("ascii"))
        path = canonical if canonical != "/" else None
        port = url.port
        if port is None and scheme is not None and default_port:
            port = DEFAULT_PORTS.get(scheme)
        return cls(text, scheme, normalize_host(url.host), port, path)

    def matches(self, scheme: str, host: str, port: int, path: str) -> bool:
        if self.network is not None:
            addr = _ip(host)
            return addr is not None and _in_network(addr, self.network)
        if not self._matches_parts(scheme, port, path):
            return False
        rule_host = self.host or ""
        if _ip(rule_host) is not None:
            return host == rule_host
        return host == rule_host or host.endswith("." + rule_host)

    def matches_address(self, addr: IPAddress, scheme: str, port: int, path: str) -> bool:
        """Whether a resolved address is covered: its scheme, port and path must match too."""
        if self.network is not None:
            return _in_network(addr, self.network)
        return (
            self.host is not None
            and _ip(self.host) == addr
            and self._matches_parts(scheme, port, path)
        )

    def matches_origin(self, scheme: str, port: int) -> bool:
        """Whether the rule's scheme and port (when it has them) are these."""
        return (self.scheme is None or self.scheme == scheme) and (
            self.port is None or self.port == port
        )

    def _matches_parts(self, scheme: str, port: int, path: str) -> bool:
        if self.scheme is not None and self.scheme != scheme:
            return False
        if self.port is not None and self.port != port:
            return False
        if self.path is not None:
            prefix = self.path.rstrip("/")
            if path != prefix and not path.startswith(prefix + "/"):
                return False
        return True


def _in_network(addr: IPAddress, network: IPNetwork) -> bool:
    if addr.version == network.version:
        return addr in network
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return addr.ipv4_mapped in network
    return False


def _parse_rules(rules: Iterable[str], kind: str) -> list[_Rule]:
    parsed = []
    for text in rules:
        try:
            parsed.append(_Rule.parse(text, default_port=kind == "allow_private"))
        except (ValueError, httpx.InvalidURL) as exc:
            raise ValueError(f"browser.{kind}: cannot read rule {text!r}: {exc}") from None
    return parsed


class URLFirewall:
    """Allow/deny lists plus a private-address guard, checked on every request and hop."""

    def __init__(
        self,
        allow: Iterable[str] = (),
        deny: Iterable[str] = (),
        allow_private: Iterable[str] = (),
        *,
        resolver: Resolver = default_resolver,
        resolve_timeout_s: float = 10.0,
    ) -> None:
        self.allow = _parse_rules(allow, "allow")
        self.deny = _parse_rules(deny, "deny")
        self.allow_private = _parse_rules(allow_private, "allow_private")
        self._resolver = resolver
        self._resolve_timeout_s = resolve_timeout_s
        rules = (*self.allow, *self.deny, *self.allow_private)
        self._path_rules = [rule for rule in rules if rule.path is not None]

    async def check(self, url: str) -> None:
        """Return when ``url`` may be fetched; raise ``URLNotAllowed`` (with why) when not."""
        await self.approve(url)

    async def approve(self, url: str) -> Approval:
        """Check ``url`` and return the addresses its host resolved to, all of them approved.

        Connect to these addresses and to nothing else (``pinning.PinnedTransport``): asking
        DNS again could give another answer. Raises ``URLNotAllowed`` or ``HostUnresolved``.
        """
        scheme, host, port, path = self._split(url)
        for rule in self.deny:
            if rule.matches(scheme, host, port, path):
                raise URLNotAllowed(url, f"denied by rule {rule.text!r}")
        if self.allow and not any(r.matches(scheme, host, port, path) for r in self.allow):
            raise URLNotAllowed(url, "not in the allow list")
        named = self._private_ok(scheme, host, port, path)
        literal = _ip(host)
        if host == "localhost" or host.endswith(".localhost"):  # loopback by definition (RFC 6761)
            addresses: list[IPAddress] = [ipaddress.IPv4Address("127.0.0.1")]
        elif literal is not None:
            addresses = [literal]
        else:
            addresses = await self._resolve(url, host, port)
        for addr in addresses:
            for rule in self.deny:
                if rule.network is not None and rule.matches_address(addr, scheme, port, path):
                    raise URLNotAllowed(url, f"{addr} denied by rule {rule.text!r}")
            if named:  # an allow_private rule names this host: any address it resolves to
                continue
            problem = address_problem(addr)
            covered = (r.matches_address(addr, scheme, port, path) for r in self.allow_private)
            if problem and not any(covered):
                where = "" if literal is not None else f"{host} resolves to {addr}, "
                raise URLNotAllowed(url, f"{where}{problem}")
        return Approval(host, port, tuple(str(a) for a in addresses))

    def _split(self, url: str) -> tuple[str, str, int, str]:
        scheme = url.split(":", 1)[0].strip().lower() if ":" in url else ""
        if scheme not in ALLOWED_SCHEMES:
            shown = f"{scheme}:" if scheme else "(none)"
            raise URLNotAllowed(url, f"scheme {shown} is not allowed (only http and https)")
        rest = url.split(":", 1)[1]
        authority = re.split(r"[/?#]", rest.lstrip("/"), maxsplit=1)[0]
        if not rest.startswith("//") or _BAD_AUTHORITY.search(authority):
            raise URLNotAllowed(url, "malformed URL authority")
        try:
            parsed = httpx.URL(url)
            host = normalize_host(parsed.host)
        except (httpx.InvalidURL, ValueError) as exc:
            raise URLNotAllowed(url, f"malformed URL: {exc}") from None
        port = parsed.port or DEFAULT_PORTS[scheme]
        raw_path = parsed.raw_path.decode("ascii", errors="replace")
        if self._path_decides(scheme, host, port):  # it must read the same to us and the server
            problem = path_problem(raw_path)
            if problem is not None:
                raise URLNotAllowed(url, f"{problem} (a path rule is in force)")
        return scheme, host, port, canonical_path(raw_path)

    def _path_decides(self, scheme: str, host: str, port: int) -> bool:
        """Whether a rule with a path may apply to this scheme, host and port (a rule naming an
        address may apply to any name, which could resolve to it)."""
        for rule in self._path_rules:
            if not rule.matches_origin(scheme, port):
                continue
            rule_host = rule.host or ""
            if _ip(rule_host) is not None:
                if _ip(host) is None or host == rule_host:
                    return True
            elif host == rule_host or host.endswith("." + rule_host):
                return True
        return False

    def _private_ok(self, scheme: str, host: str, port: int, path: str) -> bool:
        """Whether an allow_private rule names this host (not just one of its addresses)."""
        return any(
            r.network is None and r.matches(scheme, host, port, path) for r in self.allow_private
        )

    async def _resolve(self, url: str, host: str, port: int) -> list[IPAddress]:
        try:
            async with asyncio.timeout(self._resolve_timeout_s):
                found = await self._resolver(host, port)
        except (OSError, TimeoutError) as exc:
            raise HostUnresolved(host, url, str(exc) or "timed out") from None
        addresses = [a for a in (_ip(str(x).split("%", 1)[0]) for x in found) if a is not None]
        if not addresses:
            raise URLNotAllowed(url, f"{host} resolves to no address")
        return addresses
