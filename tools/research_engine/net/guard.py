"""The SSRF guard: which URLs the engine may request, and which addresses it may connect to.

`check_url` is a pure decision plus (optionally) one DNS resolution:

1. scheme: only http and https;
2. shape: no userinfo, no backslash or control characters before the query (parser
   differentials between Python's `urlsplit`, WHATWG and httpx live there), a valid port;
3. host: IDNA/UTS-46 mapped to ASCII; any host whose last label is numeric is parsed the
   WHATWG way (decimal, octal `0177`, hex `0x7f`, short forms `127.1`, `2130706433`) and a
   numeric-looking host that does not parse (`7147006462`, `0o177.0.0.1`) is refused;
   IPv6 literals are classified including IPv4-mapped, NAT64 (`64:ff9b::/96`), 6to4 and Teredo
   forms; names such as `localhost`, `*.internal` and single-label intranet names are refused;
4. resolution: every resolved address must be allowed (one bad answer refuses the host).

Loopback, private, link-local, carrier-grade NAT and unique-local addresses are refused
unless the caller opts in: `allow_private` (every such address), `allow_hosts` (exactly the
hosts named, `HOST` or `HOST:PORT`: a local SearXNG or corpus; `parse_allow_host`), or a
narrow `allow_addresses` list of `ip` / `ip:port` (tests). An allowed host is matched on the
URL's normalized host (and port, when the entry names one), at every hop, so a redirect from
it to another private host is still refused. Cloud-metadata addresses (`METADATA_ADDRESSES`,
with the documentation each comes from), unspecified, multicast, broadcast and reserved
addresses are refused always, whatever is allowed. The client connects only to the addresses
a verdict returned (see `client.PinnedBackend`), so DNS rebinding cannot swap them afterwards.

This module never opens a connection.
"""

from __future__ import annotations

import ipaddress
import socket
import string
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from urllib.parse import urlsplit

Resolver = Callable[[str, int], list[str]]
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

ALLOWED_SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}

# Refused whatever the caller allows: instance credentials and control planes live behind these. The one
# list, each address with the documentation that names it.
METADATA_SOURCES: dict[str, str] = {
    # AWS IMDS; also Azure IMDS, GCP, Oracle Cloud, DigitalOcean, OpenStack, IBM Cloud, Hetzner, Linode,
    # Huawei Cloud, Vultr (each provider's "instance metadata" page documents this link-local address).
    "169.254.169.254": "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-data-retrieval.html",
    "fd00:ec2::254": "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-data-retrieval.html",
    # AWS ECS task metadata and task-role credentials.
    "169.254.170.2": "https://docs.aws.amazon.com/AmazonECS/latest/developerguide/task-iam-roles.html",
    # AWS EKS Pod Identity agent (IPv4 and IPv6).
    "169.254.170.23": "https://docs.aws.amazon.com/eks/latest/userguide/pod-id-how-it-works.html",
    "fd00:ec2::23": "https://docs.aws.amazon.com/eks/latest/userguide/pod-id-how-it-works.html",
    # Azure WireServer (VM agent, extensions, health probes): a public address that is the platform.
    "168.63.129.16": "https://learn.microsoft.com/azure/virtual-network/what-is-ip-address-168-63-129-16",
    # Google Cloud metadata server over IPv6.
    "fd20:ce::254": "https://cloud.google.com/compute/docs/metadata/querying-metadata",
    # Alibaba Cloud ECS instance metadata.
    "100.100.100.200": "https://www.alibabacloud.com/help/en/ecs/user-guide/view-instance-metadata",
    # Oracle Cloud Infrastructure legacy metadata endpoint.
    "192.0.0.192": "https://docs.oracle.com/iaas/Content/Compute/Tasks/gettingmetadata.htm",
    # Tencent Cloud CVM instance metadata (metadata.tencentyun.com).
    "169.254.0.23": "https://www.tencentcloud.com/document/product/213/4934",
}
METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in METADATA_SOURCES)
CGNAT = ipaddress.ip_network("100.64.0.0/10")
NAT64_WELL_KNOWN = ipaddress.ip_network("64:ff9b::/96")
NAT64_LOCAL_USE = ipaddress.ip_network("64:ff9b:1::/48")

# Names that only mean something inside a network (RFC 6761, RFC 8375, ICANN's .internal).
INTERNAL_SUFFIXES = (
    ".localhost",
    ".local",
    ".internal",
    ".localdomain",
    ".home.arpa",
    ".lan",
    ".intranet",
    ".corp",
)
INTERNAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
HOST_CHARS = frozenset(string.ascii_lowercase + string.digits + "-._")


@dataclass
class GuardVerdict:
    allowed: bool
    reason: str | None
    code: str | None  # "refused-ssrf" | "refused-scheme" | "unresolved" | None when allowed
    host: str | None
    addresses: list[str] = field(default_factory=list)
    url: str | None = None  # the normalized URL to request (ASCII host, no fragment) when allowed
    port: int | None = None
    private: bool = False  # True when a loopback/private address was allowed by an opt-in
    named: bool = False  # True when that opt-in was this host, named in `allow_hosts`

    def to_dict(self) -> dict:
        return {
            "allowed": self.allowed,
            "reason": self.reason,
            "code": self.code,
            "host": self.host,
            "addresses": list(self.addresses),
            "url": self.url,
            "port": self.port,
            "private": self.private,
            "named": self.named,
        }


def _refuse(reason: str, host: str | None = None, code: str = "refused-ssrf") -> GuardVerdict:
    return GuardVerdict(False, reason, code, host, [])


def default_resolver(host: str, port: int) -> list[str]:
    """All addresses the system resolver gives for host (A and AAAA), in its order, deduplicated."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    out: list[str] = []
    for info in infos:
        addr = str(info[4][0]).split("%", 1)[0]
        if addr not in out:
            out.append(addr)
    return out


# ---------------------------------------------------------------- IPv4 the WHATWG way


def _ipv4_number(part: str) -> int | None:
    """One dotted part as WHATWG's IPv4 number parser reads it; None when it is not a number."""
    if part == "":
        return None
    radix = 10
    if len(part) >= 2 and part[:2] in ("0x", "0X"):
        part, radix = part[2:], 16
    elif len(part) >= 2 and part[0] == "0":
        part, radix = part[1:], 8
    if part == "":
        return 0
    digits = {10: string.digits, 8: "01234567", 16: string.hexdigits}[radix]
    if any(c not in digits for c in part):
        return None
    return int(part, radix)


def _ends_in_number(host: str) -> bool:
    parts = host.split(".")
    if parts[-1] == "":
        if len(parts) == 1:
            return False
        parts = parts[:-1]
    last = parts[-1]
    if last and all(c in string.digits for c in last):
        return True
    return _ipv4_number(last) is not None


def parse_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """WHATWG IPv4 parse of a host that ends in a number; raises ValueError when it cannot be one."""
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts = parts[:-1]
    if len(parts) > 4:
        raise ValueError("more than four dotted parts in a numeric host")
    numbers = []
    for part in parts:
        n = _ipv4_number(part)
        if n is None:
            raise ValueError(f"{part!r} is not an IPv4 number")
        numbers.append(n)
    if any(n > 255 for n in numbers[:-1]):
        raise ValueError("an IPv4 part exceeds 255")
    if numbers[-1] >= 256 ** (5 - len(numbers)):
        raise ValueError("the IPv4 address overflows 32 bits")
    value = numbers[-1]
    for i, n in enumerate(numbers[:-1]):
        value += n * 256 ** (3 - i)
    return ipaddress.IPv4Address(value)


# ---------------------------------------------------------------- address classes


def _embedded_ipv4(addr: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """IPv4 addresses an IPv6 address carries (mapped, NAT64, 6to4, Teredo)."""
    out: list[ipaddress.IPv4Address] = []
    if addr.ipv4_mapped is not None:
        out.append(addr.ipv4_mapped)
    if addr in NAT64_WELL_KNOWN:
        out.append(ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF))
    if addr.sixtofour is not None:
        out.append(addr.sixtofour)
    if addr.teredo is not None:
        out.extend(addr.teredo)
    return out


def address_class(addr: IPAddress) -> tuple[str, bool] | None:
    """(why it is forbidden, whether an explicit private opt-in may allow it); None when public."""
    if addr in METADATA_ADDRESSES:
        return ("cloud-metadata address", False)
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.scope_id:
            addr = ipaddress.IPv6Address(str(addr).split("%", 1)[0])
        for inner in _embedded_ipv4(addr):
            found = address_class(inner)
            if found:
                return (f"{found[0]} embedded in IPv6 {addr}", found[1])
        if addr in NAT64_LOCAL_USE:
            return ("local-use NAT64 address", False)
        if addr in NAT64_WELL_KNOWN:
            return None  # translates to the public IPv4 address checked just above
    if addr.is_unspecified:
        return ("unspecified address", False)
    if addr.is_multicast:
        return ("multicast address", False)
    if addr.is_loopback:
        return ("loopback address", True)
    if addr.is_link_local:
        return ("link-local address", True)
    if isinstance(addr, ipaddress.IPv4Address) and addr in CGNAT:
        return ("carrier-grade NAT address", True)
    if isinstance(addr, ipaddress.IPv4Address) and addr == ipaddress.IPv4Address("255.255.255.255"):
        return ("broadcast address", False)
    if addr.is_reserved:
        return ("reserved address", False)
    if addr.is_private:
        return ("private address", True)
    if not addr.is_global:
        return ("address not globally routable", False)
    return None


def parse_allow_host(entry: str) -> tuple[str, int | None]:
    """(normalized host, port or None) of an `--allow-host` entry `HOST[:PORT]` (`[v6]:PORT` for IPv6);
    ValueError when it is not one."""
    raw = str(entry or "").strip()
    if not raw or any(ord(c) <= 0x20 or c in "/\\@?#" for c in raw):
        raise ValueError(f"{entry!r} is not HOST or HOST:PORT")
    port: int | None = None
    host = raw
    if raw.startswith("["):
        inner, sep, rest = raw[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise ValueError(f"{entry!r} is not [IPv6] or [IPv6]:PORT")
        host, port_text = inner, rest[1:] if rest else None
        try:
            host = str(ipaddress.IPv6Address(host))
        except ValueError as exc:
            raise ValueError(f"{entry!r} has a malformed IPv6 address") from exc
    else:
        if raw.count(":") > 1:
            raise ValueError(f"{entry!r}: write an IPv6 host in brackets, [::1] or [::1]:8080")
        host, sep, after = raw.partition(":")
        port_text = after if sep else None
        normal = _normalize_host(host, host)
        if isinstance(normal, GuardVerdict):
            raise ValueError(f"{entry!r}: {normal.reason}")
        host = normal[0]
    if port_text is not None:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise ValueError(f"{entry!r} has a bad port")
        port = int(port_text)
    return host, port


def _host_allowed(host: str, port: int, allow_hosts: Collection[tuple[str, int | None]]) -> bool:
    return any(host == name and (wanted is None or wanted == port) for name, wanted in allow_hosts)


def _address_allowed(
    addr: IPAddress, port: int, allow_private: bool, allow_addresses: Collection[str]
) -> tuple[bool, str | None, bool]:
    """(allowed, refusal reason, allowed only by an opt-in)."""
    found = address_class(addr)
    if found is None:
        return True, None, False
    why, may_opt_in = found
    text = str(addr)
    listed = (
        text in allow_addresses
        or f"{text}:{port}" in allow_addresses
        or f"[{text}]:{port}" in allow_addresses
    )
    if may_opt_in and (allow_private or listed):
        return True, None, True
    hint = (
        ""
        if not may_opt_in
        else " (allow this host with --allow-host HOST[:PORT], or every private address with --allow-private)"
    )
    return False, f"{why} {text}{hint}", False


# ---------------------------------------------------------------- the check


def _split_host(url: str) -> tuple[str, str, str, int, str] | GuardVerdict:
    """(scheme, host as written, ascii host, port, rest) or a refusal."""
    if not isinstance(url, str) or not url:
        return _refuse("empty URL")
    if any(ord(c) <= 0x20 or ord(c) == 0x7F for c in url):
        return _refuse("whitespace or control characters in the URL")
    without_fragment = url.split("#", 1)[0]
    try:
        parts = urlsplit(without_fragment)
    except ValueError as exc:
        return _refuse(f"malformed URL: {exc}")
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        shown = scheme or "none"
        return _refuse(f"scheme {shown!r} is not allowed (only http and https)", code="refused-scheme")
    if "\\" in without_fragment.split("?", 1)[0]:
        return _refuse("backslash in the URL's authority or path (parsers disagree on it)")
    netloc = parts.netloc
    if not netloc:
        return _refuse("URL has no host")
    if "@" in netloc:
        return _refuse("credentials (userinfo) in the URL are refused")
    raw_host = parts.hostname or ""
    if not raw_host:
        return _refuse("URL has no host")
    try:
        port = parts.port
    except ValueError:
        return _refuse("malformed host or port")
    if port is None:
        port = DEFAULT_PORTS[scheme]
    if not 0 < port < 65536:
        return _refuse(f"port {port} is out of range")
    rest = without_fragment[len(parts.scheme) + 3 + len(netloc) :]
    return scheme, raw_host, netloc, port, rest


def _normalize_host(raw_host: str, netloc: str) -> tuple[str, IPAddress | None] | GuardVerdict:
    """ASCII host (IPv4 canonical dotted quad when numeric) and its address when it is a literal."""
    if "[" in netloc:
        try:
            addr6 = ipaddress.IPv6Address(raw_host)
        except ValueError:
            return _refuse(f"malformed IPv6 literal {raw_host!r}")
        return str(addr6).split("%", 1)[0], addr6
    host = raw_host
    if not host.isascii():
        import idna  # noqa: PLC0415 - third-party, needed only for a non-ASCII host name

        try:
            host = idna.encode(host, uts46=True).decode("ascii")
        except idna.IDNAError as exc:
            return _refuse(f"invalid international host name {raw_host!r}: {exc}", raw_host)
    host = host.lower()
    if host.endswith("."):
        host = host[:-1]
    if not host or host.startswith(".") or ".." in host:
        return _refuse(f"malformed host {raw_host!r}", raw_host)
    if ":" in host:
        return _refuse(f"malformed host {raw_host!r} (IPv6 must be bracketed)", raw_host)
    if _ends_in_number(host):
        try:
            addr4 = parse_ipv4(host)
        except ValueError as exc:
            return _refuse(f"numeric host {raw_host!r} is not a valid IPv4 address: {exc}", raw_host)
        return str(addr4), addr4
    if any(c not in HOST_CHARS for c in host):
        return _refuse(f"host {raw_host!r} has characters a host name cannot have", raw_host)
    return host, None


def _format_url(scheme: str, host: str, port: int, rest: str, is_v6: bool) -> str:
    shown = f"[{host}]" if is_v6 else host
    if port != DEFAULT_PORTS[scheme]:
        shown = f"{shown}:{port}"
    if not rest.startswith("/"):
        rest = "/" + rest  # "" -> "/", "?q" -> "/?q"
    return f"{scheme}://{shown}{rest}"


def check_url(
    url: str,
    *,
    resolve: bool = True,
    allow_private: bool = False,
    resolver: Resolver | None = None,
    allow_addresses: Collection[str] = (),
    allow_hosts: Collection[tuple[str, int | None]] = (),
) -> GuardVerdict:
    """Decide whether `url` may be requested; with `resolve`, also resolve and check every address.

    `allow_hosts` holds `parse_allow_host` pairs: a URL whose host (and port) is one of them may reach a
    private address, as if `allow_private` were given for that host alone."""
    split = _split_host(url)
    if isinstance(split, GuardVerdict):
        return split
    scheme, raw_host, netloc, port, rest = split
    normal = _normalize_host(raw_host, netloc)
    if isinstance(normal, GuardVerdict):
        return normal
    host, literal = normal
    named = not allow_private and bool(allow_hosts) and _host_allowed(host, port, allow_hosts)
    if named:
        allow_private = True  # this host, named by the user; every other host stays guarded
    verdict = _check_host(
        scheme, host, literal, port, rest, resolve, allow_private, resolver, allow_addresses
    )
    verdict.named = named and verdict.allowed and verdict.private
    return verdict


def _check_host(
    scheme: str,
    host: str,
    literal: IPAddress | None,
    port: int,
    rest: str,
    resolve: bool,
    allow_private: bool,
    resolver: Resolver | None,
    allow_addresses: Collection[str],
) -> GuardVerdict:
    target = _format_url(scheme, host, port, rest, isinstance(literal, ipaddress.IPv6Address))
    if literal is not None:
        ok, why, by_opt_in = _address_allowed(literal, port, allow_private, allow_addresses)
        if not ok:
            return _refuse(why or "forbidden address", host)
        return GuardVerdict(True, None, None, host, [str(literal).split("%", 1)[0]], target, port, by_opt_in)

    if not allow_private:
        if host in INTERNAL_NAMES or host.endswith(INTERNAL_SUFFIXES):
            return _refuse(f"host {host!r} names a local or internal network", host)
        if "." not in host:
            return _refuse(f"single-label host {host!r} names an intranet machine", host)
    if not resolve:
        return GuardVerdict(True, None, None, host, [], target, port)

    try:
        addresses = (resolver or default_resolver)(host, port)
    except (OSError, UnicodeError) as exc:
        return GuardVerdict(False, f"host {host!r} could not be resolved: {exc}", "unresolved", host, [])
    if not addresses:
        return GuardVerdict(False, f"host {host!r} resolved to no address", "unresolved", host, [])
    any_opt_in = False
    checked: list[str] = []
    for text in addresses:
        try:
            addr = ipaddress.ip_address(text.split("%", 1)[0])
        except ValueError:
            return _refuse(f"resolver returned a malformed address {text!r}", host)
        ok, why, by_opt_in = _address_allowed(addr, port, allow_private, allow_addresses)
        if not ok:
            return GuardVerdict(False, f"{host} resolves to a {why}", "refused-ssrf", host, list(addresses))
        any_opt_in = any_opt_in or by_opt_in
        checked.append(str(addr))
    return GuardVerdict(True, None, None, host, checked, target, port, any_opt_in)
