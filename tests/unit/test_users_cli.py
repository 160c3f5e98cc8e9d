"""`python -m intent_ui users ...`: add, change a password, list; passwords from stdin."""

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


def test_add_reads_the_password_from_stdin_and_stores_only_a_hash(db: str) -> None:
    assert run("add", "alice", stdin="s3cret pass\n") == (0, "Added alice.\n", "")
    assert users.authenticate(init_db(db), "alice", "s3cret pass") is not None


def test_adding_a_taken_name_fails_and_keeps_the_old_password(db: str) -> None:
    run("add", "alice", stdin="one\n")
    code, _, err = run("add", "alice", stdin="two\n")
    assert code == 2 and "already exists" in err
    assert users.authenticate(init_db(db), "alice", "one") is not None


def test_passwd_changes_the_password(db: str) -> None:
    run("add", "alice", stdin="one\n")
    assert run("passwd", "alice", stdin="two\n")[0] == 0
    assert users.authenticate(init_db(db), "alice", "two") is not None


def test_passwd_of_an_unknown_user_says_how_to_add_them() -> None:
    code, _, err = run("passwd", "bob", stdin="x\n")
    assert code == 1 and "users add bob" in err


def test_an_empty_password_is_refused() -> None:
    code, _, err = run("add", "alice", stdin="\n")
    assert code == 2 and "password cannot be empty" in err


def test_list_shows_who_has_a_password() -> None:
    run("add", "alice", stdin="one\n")
    assert run("list")[1] == "alice\tpassword\nlocal\tno password\n"
