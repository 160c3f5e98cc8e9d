"""The actions' address guard: IPv6 forms that lead to an IPv4 address, or to a network
that is not public, are judged by where they lead.

Each of these resolves (or is written) as an IPv6 address that Python's `is_global`
accepts or misnames, so a check of the flags alone lets it through or explains it wrongly.
"""

from __future__ import annotations

import ipaddress

import pytest

from intent_ui.agent.tools.netguard import blocked_reason


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        # 6to4: a relay delivers 2002:AABB:CCDD:: to the IPv4 address AA.BB.CC.DD.
        ("2002:7f00:1::", "a 6to4 address of 127.0.0.1, a loopback address"),
        ("2002:c0a8:101::1", "a 6to4 address of 192.168.1.1, a private-network address"),
        ("2002:a00:1::", "a 6to4 address of 10.0.0.1, a private-network address"),
        ("2002:a9fe:a9fe::", "a 6to4 address of 169.254.169.254, a link-local address"),
        ("2002::", "a 6to4 address of 0.0.0.0, an unspecified address"),
        ("2002:808:808::1", None),
        # Site-local (fec0::/10): deprecated, but still a private network where used.
        ("fec0::1", "a site-local address"),
        ("feff:ffff::1", "a site-local address"),
        # Teredo tunnels and IPv4-compatible addresses: refused whatever they embed.
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "a Teredo tunnel address"),
        ("2001::1", "a Teredo tunnel address"),
        ("::127.0.0.1", "an IPv4-compatible address (deprecated)"),
        ("::8.8.8.8", "an IPv4-compatible address (deprecated)"),
        # IPv4-mapped: the socket connects to the IPv4 address itself.
        ("::ffff:10.0.0.1", "a private-network address"),
        ("::ffff:169.254.169.254", "a link-local address"),
        ("::ffff:8.8.8.8", None),
        # What the special cases must leave alone.
        ("::", "an unspecified address"),
        ("::1", "a loopback address"),
        ("2001:4860:4860::8888", None),
    ],
)
def test_an_ipv6_address_is_judged_by_where_it_leads(address: str, reason: str | None) -> None:
    assert blocked_reason(ipaddress.ip_address(address)) == reason
