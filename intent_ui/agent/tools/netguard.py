"""Outbound HTTP for OpenAPI actions that cannot be turned against the server's own network.

An OpenAPI import fetches a URL a user typed, and an imported action calls whatever server
its document names: without a guard, either reaches `127.0.0.1`, the cloud metadata
address `169.254.169.254` or a database on the private network, from inside the server.

`guarded_client()` refuses those addresses at the one place that cannot be fooled: the
TCP connect. Its network backend resolves the host, checks every address `getaddrinfo`
returns (loopback, link-local, private, unspecified, multicast, reserved, site-local,
anything not globally routable) and connects to the address it checked, so neither a redirect nor a
DNS answer that changes between check and connect gets through. An IPv6 address that
carries an IPv4 one is judged by where it leads: an IPv4-mapped one (`::ffff:10.0.0.1`) and
a 6to4 one (`2002:0a00:0001::`, which a relay delivers to `10.0.0.1`) as the IPv4 address
inside, while the tunnel and transition forms nobody serves an API on (Teredo `2001::/32`,
IPv4-compatible `::a.b.c.d`) are refused whole. Environment proxies are
not used (a proxy would make the connect go to the proxy, out of the guard's sight).

`actions.allow_private_networks: true` in the configuration turns the guard off, for APIs
that really are on the local network.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

__all__ = ["BlockedAddressError", "blocked_reason", "guarded_client", "read_capped"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_ALLOW_HINT = (
    "set actions.allow_private_networks: true in intent_ui.yaml if this API really is on "
    "your own network"
)


_TEREDO = ipaddress.IPv6Network("2001::/32")
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")


class BlockedAddressError(httpx.ConnectError):
    """The host resolves to an address actions may not reach (a connect-time refusal)."""


def blocked_reason(address: IPAddress) -> str | None:
    """Why actions may not connect to `address` ("a loopback address"), or None if public."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        elif address.sixtofour is not None:
            inner = blocked_reason(address.sixtofour)
            return inner and f"a 6to4 address of {address.sixtofour}, {inner}"
        elif address in _TEREDO:
            return "a Teredo tunnel address"
        elif address.is_site_local:
            return "a site-local address"
        elif address in _IPV4_COMPATIBLE and int(address) > 1:  # not :: or ::1
            return "an IPv4-compatible address (deprecated)"
    checks = (
        (address.is_unspecified, "an unspecified address"),
        (address.is_loopback, "a loopback address"),
        (address.is_link_local, "a link-local address"),
        (address.is_multicast, "a multicast address"),
        (address.is_reserved, "a reserved address"),
        (address.is_private, "a private-network address"),
        (not address.is_global, "an address that is not publicly routable"),
    )
    return next((reason for hit, reason in checks if hit), None)


class _GuardedBackend(httpcore.AsyncNetworkBackend):
    """Resolves, vets every address, then connects to a vetted one (never re-resolving)."""

    def __init__(self) -> None:
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise httpx.ConnectError(f"cannot resolve {host}: {exc}") from None
        addresses = list(dict.fromkeys(ipaddress.ip_address(info[4][0]) for info in infos))
        for address in addresses:
            reason = blocked_reason(address)
            if reason is not None:
                what = (
                    f"it is {reason}"
                    if str(address) == host
                    else (f"it resolves to {address}, {reason}")
                )
                raise BlockedAddressError(
                    f"refused to connect to {host}: {what}; actions may only reach "
                    f"public addresses ({_ALLOW_HINT})"
                )
        if not addresses:
            raise httpx.ConnectError(f"cannot resolve {host}: no addresses")
        return await self._inner.connect_tcp(
            str(addresses[0]),
            port,
            timeout=timeout,
            local_address=local_address,
            socket_options=socket_options,
        )

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise BlockedAddressError(f"refused to connect to the local socket {path}")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class _GuardedTransport(httpx.AsyncHTTPTransport):
    def __init__(self) -> None:
        super().__init__(trust_env=False)
        # httpx offers no parameter for the network backend; its pool is the one place
        # connections are opened, so the guard replaces the pool with a guarded one.
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(trust_env=False),
            network_backend=_GuardedBackend(),
        )


def guarded_client(*, allow_private_networks: bool, timeout: float) -> httpx.AsyncClient:
    """An httpx client for actions: private addresses refused unless explicitly allowed."""
    if allow_private_networks:
        return httpx.AsyncClient(timeout=timeout, follow_redirects=True)
    return httpx.AsyncClient(
        timeout=timeout, follow_redirects=True, transport=_GuardedTransport(), trust_env=False
    )


async def read_capped(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """At most `limit` bytes of a streamed response body, and whether there was more.

    Reading stops at the limit, so a huge (or endless) body never sits in memory whole.
    """
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limit:
            return bytes(body[:limit]), True
    return bytes(body), False
