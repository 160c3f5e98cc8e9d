"""Session cookies of password mode: signed, checked, and void after a password change."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from sqlalchemy import Engine

from intent_ui.config import AuthConfig
from intent_ui.store import users
from intent_ui.ui.auth import read_session, sign_session

AUTH = AuthConfig(mode="password", secret="a" * 40)


def host(engine: Engine) -> Any:
    return SimpleNamespace(engine=engine)


def test_a_signed_session_names_its_user(engine: Engine) -> None:
    alice = users.add_user(engine, "alice", "pw")
    signed_in = read_session(host(engine), AUTH, sign_session(AUTH, alice))
    assert signed_in is not None and signed_in.id == alice.id


@pytest.mark.parametrize("token", ["", "alice", '["local", ""]', "x.y.z"])
def test_unsigned_or_garbled_tokens_sign_nobody_in(engine: Engine, token: str) -> None:
    assert read_session(host(engine), AUTH, token) is None


def test_a_token_signed_with_another_secret_signs_nobody_in(engine: Engine) -> None:
    alice = users.add_user(engine, "alice", "pw")
    other = AuthConfig(mode="password", secret="b" * 40)
    assert read_session(host(engine), AUTH, sign_session(other, alice)) is None


def test_changing_the_password_ends_older_sessions(engine: Engine) -> None:
    alice = users.add_user(engine, "alice", "pw")
    token = sign_session(AUTH, alice)
    users.set_password(engine, "alice", "new")
    assert read_session(host(engine), AUTH, token) is None


def test_a_user_without_a_password_has_no_session(engine: Engine) -> None:
    local = users.get_user(engine, "local")
    assert local is not None
    assert read_session(host(engine), AUTH, sign_session(AUTH, local)) is None
