"""`python -m intent_ui users ...`: add, change a password, sign out everywhere, list;
passwords from stdin."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from intent_ui.agent.cli import _parser
from intent_ui.store import users
from intent_ui.store.db import dispose_engines, init_db
from intent_ui.users_cli import run_users_command


@pytest.fixture(autouse=True)
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    url = f"sqlite:///{tmp_path / 'users.db'}"
    monkeypatch.setenv("DB_URL", url)
    yield url
    dispose_engines()


def run(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_users_command(
        _parser().parse_args(["users", *argv]), stdin=io.StringIO(stdin), stdout=out, stderr=err
    )
    return code, out.getvalue(), err.getvalue()


ONE = "first long password"
TWO = "second long password"


def test_add_reads_the_password_from_stdin_and_stores_only_a_hash(db: str) -> None:
    assert run("add", "alice", stdin="s3cret passphrase\n") == (0, "Added alice.\n", "")
    assert users.authenticate(init_db(db), "alice", "s3cret passphrase") is not None


def test_adding_a_taken_name_fails_and_keeps_the_old_password(db: str) -> None:
    run("add", "alice", stdin=f"{ONE}\n")
    code, _, err = run("add", "alice", stdin=f"{TWO}\n")
    assert code == 2 and "already exists" in err
    assert users.authenticate(init_db(db), "alice", ONE) is not None


def test_passwd_changes_the_password(db: str) -> None:
    run("add", "alice", stdin=f"{ONE}\n")
    assert run("passwd", "alice", stdin=f"{TWO}\n")[0] == 0
    assert users.authenticate(init_db(db), "alice", TWO) is not None


def test_passwd_of_an_unknown_user_says_how_to_add_them() -> None:
    code, _, err = run("passwd", "bob", stdin=f"{ONE}\n")
    assert code == 1 and "users add bob" in err


def test_a_short_password_is_refused_with_the_minimum(db: str) -> None:
    code, out, err = run("add", "alice", stdin="s3cret\n")
    assert (code, out) == (2, "")
    assert "at least 12 characters; this one has 6" in err
    run("add", "alice", stdin=f"{ONE}\n")
    code, _, err = run("passwd", "alice", stdin="short\n")
    assert code == 2 and "at least 12 characters" in err
    assert users.authenticate(init_db(db), "alice", ONE) is not None


def test_signout_ends_every_session_of_the_user(db: str) -> None:
    run("add", "alice", stdin=f"{ONE}\n")
    engine = init_db(db)
    before = users.get_user_by_name(engine, "alice")
    assert before is not None
    code, out, err = run("signout", "alice")
    assert (code, err) == (0, "")
    assert "Ended every session of alice" in out
    after = users.get_user_by_name(engine, "alice")
    assert after is not None and after.session_epoch == before.session_epoch + 1


def test_signout_of_an_unknown_or_passwordless_user_says_why(db: str) -> None:
    code, _, err = run("signout", "bob")
    assert code == 1 and "no user named 'bob'" in err and "users list" in err
    users.ensure_user(init_db(db), "carol")  # a user of header mode
    code, _, err = run("signout", "carol")
    assert code == 1 and "no password" in err


def test_an_empty_password_is_refused() -> None:
    code, _, err = run("add", "alice", stdin="\n")
    assert code == 2 and "password cannot be empty" in err


def test_list_shows_who_has_a_password() -> None:
    run("add", "alice", stdin=f"{ONE}\n")
    assert run("list")[1] == "alice\tpassword\nlocal\tno password\n"
