"""The address a request came from when reverse proxies stand in between.

Each proxy appends the address it took the connection from to `X-Forwarded-For`, so the
header lists the hops from the client outwards. Only what the trusted proxies wrote can
be believed: everything to the left of their entries was written by whoever connected
first, the client included. So the walk starts at the TCP peer and moves from the right
while the hop is a trusted proxy; the first hop that is not one is the client, as the
last trusted proxy saw it. A peer that is not a trusted proxy is the client itself,
whatever it wrote in the header. (uvicorn's ProxyHeadersMiddleware walks the same way.)

Pure: addresses in, an address out.
"""

from __future__ import annotations

from collections.abc import Sequence
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address, ip_network

__all__ = [
    "LOOPBACK_PROXIES",
    "Address",
    "Network",
    "client_address",
    "is_trusted",
    "parse_address",
    "parse_network",
]

Address = IPv4Address | IPv6Address
Network = IPv4Network | IPv6Network

LOOPBACK_PROXIES: tuple[Network, ...] = (ip_network("127.0.0.0/8"), ip_network("::1/128"))
"""Proxies on this machine only: the default, and what a proxy beside the app uses."""


def parse_network(text: str) -> Network:
    """`10.0.0.5` (one address) or `10.0.0.0/24` (a network); ValueError says what is wrong."""
    try:
        return ip_network(text.strip())
    except ValueError as exc:
        if "has host bits set" in str(exc):
            network = ip_network(text.strip(), strict=False)
            raise ValueError(
                f"'{text}' has bits set past its /{network.prefixlen} prefix; write {network} "
                f"for the network, or {text.strip().partition('/')[0]} for one address"
            ) from None
        raise ValueError(
            f"'{text}' is not an IP address or network, e.g. 10.0.0.5, 10.0.0.0/24 or ::1"
        ) from None


def parse_address(text: str) -> Address | None:
    """An address as a hop writes it, or None when it is not one.

    Accepts a bare address, one with a port (`203.0.113.5:4711`, `[2001:db8::1]:443`, as
    some load balancers write them), and reads an IPv4-mapped IPv6 address (what a
    dual-stack socket reports for an IPv4 peer) as the IPv4 address it maps.
    """
    text = text.strip()
    if text.startswith("["):
        text = text[1 : text.find("]")] if "]" in text else ""
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        address = ip_address(text)
    except ValueError:
        return None
    if isinstance(address, IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def is_trusted(address: str, trusted: Sequence[Network]) -> bool:
    """Whether `address` is one of the trusted proxies (never for a non-address)."""
    parsed = parse_address(address)
    return parsed is not None and any(parsed in network for network in trusted)


def client_address(peer: str, forwarded_for: str, trusted: Sequence[Network]) -> str:
    """The client's address: `peer` (the TCP peer) unless it is a trusted proxy, then the
    right-most `forwarded_for` hop that is not one (the left-most when all are).

    A hop that is an address comes back in its canonical spelling (no port, IPv4-mapped
    IPv6 as IPv4), so one client cannot pass for many by spelling its address
    differently; a hop that is not an address comes back as written.
    """
    if not is_trusted(peer, trusted):
        return _canonical(peer)
    hops = [hop.strip() for hop in forwarded_for.split(",") if hop.strip()]
    for hop in reversed(hops):
        if not is_trusted(hop, trusted):
            return _canonical(hop)
    return _canonical(hops[0]) if hops else _canonical(peer)


def _canonical(text: str) -> str:
    address = parse_address(text)
    return str(address) if address is not None else text.strip()
