"""Session cookies of password mode: signed, checked, void after a password change or
after signing out everywhere, and `Secure` when the page is served over HTTPS."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from itsdangerous import URLSafeTimedSerializer
from sqlalchemy import Engine

from intent_ui.config import AuthConfig
from intent_ui.store import users
from intent_ui.ui.auth import cookie_is_secure, read_sign_in, sign_in_token

AUTH = AuthConfig(mode="password", secret="a" * 40)
PASSWORD = "correct horse battery"


def host(engine: Engine) -> Any:
    return SimpleNamespace(engine=engine)


def test_a_signed_sign_in_token_names_its_user(engine: Engine) -> None:
    alice = users.add_user(engine, "alice", PASSWORD)
    signed_in = read_sign_in(host(engine), AUTH, sign_in_token(AUTH, alice))
    assert signed_in is not None and signed_in.id == alice.id


@pytest.mark.parametrize("token", ["", "alice", '["local", ""]', "x.y.z"])
def test_unsigned_or_garbled_tokens_sign_nobody_in(engine: Engine, token: str) -> None:
    assert read_sign_in(host(engine), AUTH, token) is None


def test_a_token_signed_with_another_secret_signs_nobody_in(engine: Engine) -> None:
    alice = users.add_user(engine, "alice", PASSWORD)
    other = AuthConfig(mode="password", secret="b" * 40)
    assert read_sign_in(host(engine), AUTH, sign_in_token(other, alice)) is None


def test_changing_the_password_ends_older_sign_ins(engine: Engine) -> None:
    alice = users.add_user(engine, "alice", PASSWORD)
    token = sign_in_token(AUTH, alice)
    changed = users.set_password(engine, "alice", "another long password")
    assert read_sign_in(host(engine), AUTH, token) is None
    assert changed is not None
    assert read_sign_in(host(engine), AUTH, sign_in_token(AUTH, changed)) is not None


def test_signing_out_everywhere_ends_every_sign_in_and_a_new_sign_in_works(
    engine: Engine,
) -> None:
    alice = users.add_user(engine, "alice", PASSWORD)
    bob = users.add_user(engine, "bob", "bob's long password")
    phone, laptop, bobs = (sign_in_token(AUTH, u) for u in (alice, alice, bob))
    assert users.end_sign_ins(engine, alice.id)
    assert read_sign_in(host(engine), AUTH, phone) is None
    assert read_sign_in(host(engine), AUTH, laptop) is None
    assert read_sign_in(host(engine), AUTH, bobs) is not None  # only alice's sign-ins end
    again = users.authenticate(engine, "alice", PASSWORD)
    assert again is not None
    assert read_sign_in(host(engine), AUTH, sign_in_token(AUTH, again)) is not None


def test_a_token_naming_another_epoch_signs_nobody_in(engine: Engine) -> None:
    """A token is only as good as its epoch: a forged or stale one does not count, and
    neither does one whose epoch is not a whole number."""
    alice = users.add_user(engine, "alice", PASSWORD)
    serializer = URLSafeTimedSerializer(AUTH.secret or "", salt="intent_ui.session")
    for epoch in (1, True, "0", None):
        token = str(serializer.dumps([alice.id, epoch]))
        assert read_sign_in(host(engine), AUTH, token) is None, epoch
    assert read_sign_in(host(engine), AUTH, str(serializer.dumps([alice.id, 0]))) is not None


def test_ending_the_sign_ins_of_an_unknown_user_says_so(engine: Engine) -> None:
    assert not users.end_sign_ins(engine, "nobody")


@pytest.mark.parametrize(
    ("setting", "origin", "secure"),
    [
        (None, "https://chat.example.com", True),
        (None, "HTTPS://chat.example.com", True),
        (None, "http://chat.example.com", False),
        (None, "http://localhost:3000", False),
        (None, "", False),  # no Origin: not a page served over HTTPS
        (True, "http://localhost:3000", True),
        (False, "https://chat.example.com", False),
    ],
)
def test_the_cookie_is_secure_when_the_page_is_served_over_https_or_as_configured(
    setting: bool | None, origin: str, secure: bool
) -> None:
    assert cookie_is_secure(setting, origin) is secure


def test_a_user_without_a_password_has_no_sign_in(engine: Engine) -> None:
    local = users.get_user(engine, "local")
    assert local is not None
    assert read_sign_in(host(engine), AUTH, sign_in_token(AUTH, local)) is None
