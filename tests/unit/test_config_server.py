"""The `server:` section: where the app listens, the pages that may drive it, the proxies
that may speak for the client; its defaults and every error message."""

from __future__ import annotations

from ipaddress import ip_network
from pathlib import Path

import pytest

from intent_ui.config import AppConfig, ConfigError, load_config


@pytest.fixture(autouse=True)
def _no_config_in_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def load(tmp_path: Path, text: str) -> AppConfig:
    path = tmp_path / "intent_ui.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(path, env={})


def error_of(tmp_path: Path, text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text)
    return str(caught.value)


def test_by_default_the_app_listens_on_loopback_and_trusts_only_loopback() -> None:
    server = load_config(env={}).server
    assert server.bind == "127.0.0.1"
    assert server.allowed_origins == ()
    assert server.trusted_proxies == (ip_network("127.0.0.0/8"), ip_network("::1/128"))


def test_the_section_reads_every_key(tmp_path: Path) -> None:
    server = load(
        tmp_path,
        "server:\n"
        "  bind: 0.0.0.0\n"
        "  allowed_origins: [HTTPS://Chat.Example.com/, 'http://intranet:8080']\n"
        "  trusted_proxies: [10.0.0.5, 10.1.0.0/16, '::1']\n",
    ).server
    assert server.bind == "0.0.0.0"
    assert server.allowed_origins == ("https://chat.example.com", "http://intranet:8080")
    assert server.trusted_proxies == (
        ip_network("10.0.0.5/32"),
        ip_network("10.1.0.0/16"),
        ip_network("::1/128"),
    )


def test_bind_must_be_an_ip_address(tmp_path: Path) -> None:
    message = error_of(tmp_path, "server: {bind: localhost}\n")
    assert "server.bind: 'localhost' is not an IP address to listen on; use 127.0.0.1" in message


def test_a_wildcard_origin_is_refused(tmp_path: Path) -> None:
    message = error_of(tmp_path, "server: {allowed_origins: ['https://ok.example', '*']}\n")
    assert "server.allowed_origins[1]: '*' would let every web page drive the app" in message


def test_an_origin_with_a_path_is_refused(tmp_path: Path) -> None:
    message = error_of(tmp_path, "server: {allowed_origins: ['https://chat.example.com/app']}\n")
    assert "server.allowed_origins[0]: 'https://chat.example.com/app' is more than an origin" in (
        message
    )


def test_a_proxy_that_is_not_an_address_is_refused(tmp_path: Path) -> None:
    message = error_of(tmp_path, "server: {trusted_proxies: [127.0.0.1, proxy.local]}\n")
    assert "server.trusted_proxies[1]: 'proxy.local' is not an IP address or network" in message


def test_a_network_with_host_bits_says_how_to_write_it(tmp_path: Path) -> None:
    message = error_of(tmp_path, "server: {trusted_proxies: [10.0.0.1/8]}\n")
    assert "server.trusted_proxies[0]: '10.0.0.1/8' has bits set past its /8 prefix; write " in (
        message
    )


def test_a_single_proxy_must_still_be_a_list(tmp_path: Path) -> None:
    message = error_of(tmp_path, "server: {trusted_proxies: 10.0.0.5}\n")
    assert "server.trusted_proxies: expected a list, e.g. trusted_proxies: [127.0.0.1" in message


def test_unknown_server_keys_name_the_allowed_ones(tmp_path: Path) -> None:
    message = error_of(tmp_path, "server: {trusted_proxy: [10.0.0.5]}\n")
    assert "server.trusted_proxy: unknown key; did you mean 'trusted_proxies'?" in message


def test_header_mode_without_a_trusted_proxy_is_refused(tmp_path: Path) -> None:
    message = error_of(tmp_path, "auth: {mode: header}\nserver: {trusted_proxies: []}\n")
    assert "server.trusted_proxies: empty, so no proxy may name the user" in message
