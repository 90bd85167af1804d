"""Which addresses a cited page may not be fetched from: pure, and the one place that says so.

A model chooses the URLs, and a page it names could be a service that only this machine can
reach: the cloud's metadata endpoint, a router, a database's HTTP port. So an address is
refused unless it is a public one, judged after DNS resolution and at every redirect
(docs/protocol.md section 10, "Fetching"). ``--allow-private-hosts`` lifts the rule for
loopback and private networks; metadata, multicast and unspecified addresses stay refused.
"""

from __future__ import annotations

import ipaddress
from typing import Final

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Cloud instance metadata services: credentials live there. Refused even with --allow-private-hosts.
METADATA: Final = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, Oracle, DigitalOcean, OpenStack
        "169.254.170.2",  # AWS ECS task metadata
        "169.254.170.23",  # AWS EKS pod identity
        "fd00:ec2::254",  # AWS over IPv6
        "fd00:ec2::23",
        "100.100.100.200",  # Alibaba Cloud
    )
)
_PRIVATE: Final = tuple(ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))
_SHARED: Final = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT: inside a provider's network
_UNIQUE_LOCAL: Final = ipaddress.ip_network("fc00::/7")
_NAT64: Final = ipaddress.ip_network("64:ff9b::/96")
_IPV4_COMPATIBLE: Final = ipaddress.ip_network("::/96")


def refusal(address: IPAddress, *, allow_private: bool = False) -> str | None:
    """Why a page at ``address`` is not fetched, or None when it may be."""
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        reason = refusal(embedded, allow_private=allow_private)
        return None if reason is None else f"{address} embeds {reason}"
    if address in METADATA:
        return f"{address} is a cloud metadata address"
    if address.is_unspecified or address.is_multicast or address == ipaddress.IPv4Address("255.255.255.255"):
        return f"{address} is not an address of one host"
    if allow_private:
        return None
    kind = _private_kind(address)
    return None if kind is None else f"{address} is {kind}"


def _private_kind(address: IPAddress) -> str | None:
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if address.version == 6 and address in _UNIQUE_LOCAL:
        return "a unique-local address"
    if address.version == 4 and address in _SHARED:
        return "a shared (carrier-grade NAT) address"
    if any(address in network for network in _PRIVATE):
        return "a private address"
    if address.version == 6 and address.is_site_local:
        return "a site-local address"
    # Reserved and special-purpose blocks (documentation, benchmarking, 240/4, …): no public page lives there.
    if address.is_reserved or address.is_private or not address.is_global:
        return "a reserved address"
    return None


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries to reach it: mapped, NAT64, 6to4, Teredo or compatible forms."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64 or (address in _IPV4_COMPATIBLE and int(address) > 1):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None
