"""core/proxies.py: the client address behind trusted reverse proxies, walked from the
right of X-Forwarded-For, and the trusted-proxy entries of the configuration."""

from __future__ import annotations

from ipaddress import ip_network

import pytest

from intent_ui.core.proxies import (
    LOOPBACK_PROXIES,
    client_address,
    is_trusted,
    parse_address,
    parse_network,
)

EDGE = (ip_network("10.0.0.0/24"), ip_network("127.0.0.1/32"))
"""An edge proxy on 10.0.0.x in front of a sidecar proxy beside the app."""


def test_an_untrusted_peer_is_the_client_whatever_it_forwards() -> None:
    assert client_address("203.0.113.9", "198.51.100.1", LOOPBACK_PROXIES) == "203.0.113.9"
    assert client_address("203.0.113.9", "127.0.0.1", LOOPBACK_PROXIES) == "203.0.113.9"


def test_a_trusted_peer_speaks_for_the_hop_it_appended() -> None:
    assert client_address("127.0.0.1", "198.51.100.1", LOOPBACK_PROXIES) == "198.51.100.1"


def test_entries_the_client_wrote_left_of_the_proxys_are_ignored() -> None:
    forwarded = "192.0.2.77, 10.9.9.9, 198.51.100.1"
    assert client_address("127.0.0.1", forwarded, LOOPBACK_PROXIES) == "198.51.100.1"


def test_a_chain_of_trusted_proxies_is_walked_to_the_first_untrusted_hop() -> None:
    # client 198.51.100.1 -> edge 10.0.0.5 -> sidecar 127.0.0.1 -> app
    assert client_address("127.0.0.1", "198.51.100.1, 10.0.0.5", EDGE) == "198.51.100.1"
    # A forged entry in front of the edge proxy's changes nothing.
    forged = "10.0.0.7, 198.51.100.1, 10.0.0.5"
    assert client_address("127.0.0.1", forged, EDGE) == "198.51.100.1"


def test_a_hop_not_in_the_chain_stops_the_walk() -> None:
    # 10.0.0.5 is trusted only as the edge; 172.16.0.2 is not, so it is the client.
    forwarded = "198.51.100.1, 172.16.0.2, 10.0.0.5"
    assert client_address("127.0.0.1", forwarded, EDGE) == "172.16.0.2"


def test_when_every_hop_is_trusted_the_left_most_is_the_client() -> None:
    assert client_address("127.0.0.1", "10.0.0.8, 10.0.0.5", EDGE) == "10.0.0.8"


def test_a_trusted_peer_without_the_header_is_the_client() -> None:
    assert client_address("127.0.0.1", "", LOOPBACK_PROXIES) == "127.0.0.1"
    assert client_address("127.0.0.1", " , ", LOOPBACK_PROXIES) == "127.0.0.1"


def test_addresses_come_back_in_one_spelling() -> None:
    forwarded = "[2001:DB8::1]:443"
    assert client_address("127.0.0.1", forwarded, LOOPBACK_PROXIES) == "2001:db8::1"
    assert client_address("127.0.0.1", "198.51.100.1:4711", LOOPBACK_PROXIES) == "198.51.100.1"
    assert client_address("::ffff:203.0.113.9", "", LOOPBACK_PROXIES) == "203.0.113.9"


def test_a_hop_that_is_not_an_address_is_never_trusted() -> None:
    assert client_address("127.0.0.1", "unknown", LOOPBACK_PROXIES) == "unknown"
    assert not is_trusted("localhost", LOOPBACK_PROXIES)
    assert not is_trusted("", LOOPBACK_PROXIES)


def test_loopback_is_trusted_by_default_in_both_families() -> None:
    assert is_trusted("127.0.0.1", LOOPBACK_PROXIES)
    assert is_trusted("::1", LOOPBACK_PROXIES)
    assert is_trusted("::ffff:127.0.0.1", LOOPBACK_PROXIES)  # a dual-stack socket's IPv4 peer
    assert not is_trusted("10.0.0.5", LOOPBACK_PROXIES)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("198.51.100.1", "198.51.100.1"), (" ::1 ", "::1"), ("[::1]:80", "::1"), ("x", None)],
)
def test_parse_address(text: str, expected: str | None) -> None:
    parsed = parse_address(text)
    assert (str(parsed) if parsed is not None else None) == expected


def test_parse_network_reads_addresses_and_networks() -> None:
    assert parse_network("10.0.0.5") == ip_network("10.0.0.5/32")
    assert parse_network(" 10.0.0.0/24 ") == ip_network("10.0.0.0/24")
    assert parse_network("fd00::/8") == ip_network("fd00::/8")


def test_parse_network_says_how_to_write_a_network_with_host_bits() -> None:
    with pytest.raises(ValueError, match=r"write 10\.0\.0\.0/8 for the network, or 10\.0\.0\.1"):
        parse_network("10.0.0.1/8")


def test_parse_network_refuses_a_name() -> None:
    with pytest.raises(ValueError, match=r"'proxy\.local' is not an IP address or network"):
        parse_network("proxy.local")
