"""Who may speak for the client: only a trusted proxy may name the user (header mode), and
the per-address sign-in limit counts the address that proxy saw, so a forged
X-Forwarded-For neither escapes the limit nor locks someone else out."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from reflex import constants
from reflex.istate.data import RouterData
from sqlalchemy import Engine

from intent_ui.config import AppConfig
from intent_ui.store import users as user_store
from intent_ui.ui import auth as auth_module
from intent_ui.ui.auth import AuthState
from intent_ui.ui.sign_in_throttle import SignInThrottle

PROXY = "127.0.0.1"
"""The sign-in proxy beside the app (trusted by default)."""
ATTACKER = "198.51.100.7"
VICTIM = "192.0.2.10"
ADDRESS_LIMIT = 3
NAME_LIMIT = 100


def make_host(engine: Engine, tmp_path: Path, **config: Any) -> Any:
    app_config = AppConfig.model_validate({"workspace": tmp_path, **config})
    return SimpleNamespace(config=app_config, engine=engine, key=("proxies", str(tmp_path)))


def connected(peer: str, **headers: str) -> AuthState:
    """A state whose socket came from `peer` (the TCP peer) with these handshake headers."""
    state = AuthState()
    state.router = RouterData.from_router_data(
        {
            constants.RouteVar.HEADERS: {k.replace("_", "-"): v for k, v in headers.items()},
            constants.RouteVar.CLIENT_IP: peer,
        }
    )
    return state


# --- header mode --------------------------------------------------------------------------


async def test_the_user_header_from_an_untrusted_peer_is_refused(
    engine: Engine, tmp_path: Path
) -> None:
    host = make_host(engine, tmp_path, auth={"mode": "header"})
    state = connected("203.0.113.9", x_forwarded_user="alice", x_forwarded_for="127.0.0.1")
    assert await state.current_user(host) is None
    assert "203.0.113.9" in state.auth_error
    assert "server.trusted_proxies" in state.auth_error
    assert state.signed_in_as == ""
    assert user_store.get_user_by_name(engine, "alice") is None


async def test_the_user_header_from_the_trusted_proxy_signs_in(
    engine: Engine, tmp_path: Path
) -> None:
    host = make_host(engine, tmp_path, auth={"mode": "header"})
    state = connected(PROXY, x_forwarded_user="alice", x_forwarded_for=VICTIM)
    user_id = await state.current_user(host)
    alice = user_store.get_user_by_name(engine, "alice")
    assert alice is not None and user_id == alice.id
    assert (state.auth_error, state.signed_in_as) == ("", "alice")


async def test_a_configured_proxy_network_may_name_the_user(engine: Engine, tmp_path: Path) -> None:
    host = make_host(
        engine, tmp_path, auth={"mode": "header"}, server={"trusted_proxies": ["10.0.0.0/24"]}
    )
    assert await connected("10.0.0.5", x_forwarded_user="bob").current_user(host) is not None
    # Loopback is no longer trusted once the list is set.
    refused = connected(PROXY, x_forwarded_user="bob")
    assert await refused.current_user(host) is None
    assert "127.0.0.1" in refused.auth_error


async def test_a_trusted_peer_without_the_header_is_still_refused(
    engine: Engine, tmp_path: Path
) -> None:
    host = make_host(engine, tmp_path, auth={"mode": "header"})
    state = connected(PROXY)
    assert await state.current_user(host) is None
    assert "no X-Forwarded-User header" in state.auth_error


# --- the per-address sign-in limit ---------------------------------------------------------


@pytest.fixture
def password_host(
    engine: Engine,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    make_sign_in_throttle: Callable[..., SignInThrottle],
) -> SimpleNamespace:
    """A password-mode host whose sign-ins count failures in this process or in Redis
    (each test runs on both): ADDRESS_LIMIT per address, NAME_LIMIT per name."""
    host = make_host(engine, tmp_path, auth={"mode": "password", "secret": "s" * 40})
    user_store.add_user(engine, "alice", "alice-password")

    async def get_host() -> Any:
        return host

    throttle = make_sign_in_throttle(name_limit=NAME_LIMIT, client_limit=ADDRESS_LIMIT)
    monkeypatch.setattr(auth_module, "get_host", get_host)
    monkeypatch.setattr(auth_module, "sign_in_throttle", lambda: throttle)
    return host


async def sign_in(state: AuthState, name: str, password: str) -> str:
    """What the sign-in form says afterwards ('' when it signed in)."""
    await AuthState.sign_in.fn(state, {"name": name, "password": password})
    return state.auth_error


@pytest.mark.parametrize(
    ("peer", "after_the_forged"),
    [(PROXY, f", {ATTACKER}"), (ATTACKER, "")],
    # Through the proxy, the proxy's entry (the attacker's address) follows the forged
    # ones; reaching the app directly, every entry is forged.
    ids=["forged-in-front-of-the-proxys-entry", "reaching-the-app-directly"],
)
async def test_a_forged_forwarded_for_does_not_escape_the_address_limit(
    password_host: SimpleNamespace, peer: str, after_the_forged: str
) -> None:
    for attempt in range(ADDRESS_LIMIT):
        # Each guess claims another address.
        state = connected(peer, x_forwarded_for=f"203.0.113.{attempt}{after_the_forged}")
        assert "do not match" in await sign_in(state, f"guess-{attempt}", "wrong")
    state = connected(peer, x_forwarded_for=f"203.0.113.99{after_the_forged}")
    assert "Too many failed sign-ins" in await sign_in(state, "alice", "alice-password")


async def test_guessing_behind_the_proxy_does_not_lock_out_other_users(
    password_host: SimpleNamespace,
) -> None:
    for attempt in range(ADDRESS_LIMIT + 2):
        # The guesser even writes the victim's address first: the proxy appends its own.
        state = connected(PROXY, x_forwarded_for=f"{VICTIM}, {ATTACKER}")
        await sign_in(state, f"guess-{attempt}", "wrong")
    # The victim's password is checked (a typo is reported as one), not refused for a wait.
    victim = connected(PROXY, x_forwarded_for=VICTIM)
    assert "do not match" in await sign_in(victim, "alice", "alice-pasword")


async def test_a_guessed_name_waits_from_every_address_and_the_form_says_how_long(
    password_host: SimpleNamespace,
    make_sign_in_throttle: Callable[..., SignInThrottle],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    throttle = make_sign_in_throttle(name_limit=2, client_limit=100)
    monkeypatch.setattr(auth_module, "sign_in_throttle", lambda: throttle)
    for attempt in range(2):
        state = connected(f"198.51.100.{attempt}")
        assert "do not match" in await sign_in(state, " Alice", "wrong")  # one name: alice
    # Not even the right password is checked while the name waits.
    state = connected("198.51.100.50")
    assert await sign_in(state, "alice", "alice-password") == (
        "Too many failed sign-ins; try again in 5 minutes."
    )
