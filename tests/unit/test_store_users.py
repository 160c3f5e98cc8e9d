"""Users: the local user, header users created on sight, password users, and the
migration that gave every older row to the local user."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from alembic import command
from sqlalchemy import Engine, create_engine, text

from intent_ui.store import actions, agents, users
from intent_ui.store import conversations as conv
from intent_ui.store.db import dispose_engines, init_db, migration_config
from intent_ui.store.memory import DbMemoryStore
from intent_ui.store.models import LOCAL_USER_ID


def test_a_fresh_database_has_the_local_user(engine: Engine) -> None:
    local = users.get_user(engine, LOCAL_USER_ID)
    assert local is not None and local.name == "local" and local.password_hash is None


def test_ensure_user_creates_once_then_returns_the_same_user(engine: Engine) -> None:
    alice = users.ensure_user(engine, "  alice ")
    assert alice.name == "alice"
    assert users.ensure_user(engine, "alice").id == alice.id
    assert [u.name for u in users.list_users(engine)] == ["alice", "local"]


@pytest.mark.parametrize("name", ["", "   ", "a\tb", "x" * (users.MAX_USER_NAME_CHARS + 1)])
def test_bad_user_names_are_refused(engine: Engine, name: str) -> None:
    with pytest.raises(ValueError, match="user name"):
        users.ensure_user(engine, name)


def test_a_password_user_signs_in_with_their_password_only(engine: Engine) -> None:
    alice = users.add_user(engine, "alice", "correct horse")
    assert alice.password_hash is not None and "correct horse" not in alice.password_hash
    assert alice.password_hash.startswith("$argon2")
    signed_in = users.authenticate(engine, "alice", "correct horse")
    assert signed_in is not None and signed_in.id == alice.id
    assert users.authenticate(engine, "alice", "wrong") is None
    assert users.authenticate(engine, "nobody", "correct horse") is None


def test_a_user_without_a_password_cannot_sign_in(engine: Engine) -> None:
    users.ensure_user(engine, "bob")
    assert users.authenticate(engine, "bob", "") is None
    assert users.authenticate(engine, "local", "anything") is None


ONE = "first long password"
TWO = "second long password"


def test_adding_a_taken_name_says_how_to_change_the_password(engine: Engine) -> None:
    users.add_user(engine, "alice", ONE)
    with pytest.raises(users.UserExistsError, match="users passwd alice"):
        users.add_user(engine, "alice", TWO)
    assert users.authenticate(engine, "alice", ONE) is not None


def test_set_password_replaces_the_old_one(engine: Engine) -> None:
    users.add_user(engine, "alice", ONE)
    assert users.set_password(engine, "alice", TWO) is not None
    assert users.authenticate(engine, "alice", ONE) is None
    assert users.authenticate(engine, "alice", TWO) is not None
    assert users.set_password(engine, "nobody", TWO) is None


def test_an_empty_password_is_refused(engine: Engine) -> None:
    with pytest.raises(ValueError, match="password cannot be empty"):
        users.add_user(engine, "alice", "")


@pytest.mark.parametrize("password", ["x", "eleven char"])
def test_a_password_shorter_than_twelve_characters_is_refused(
    engine: Engine, password: str
) -> None:
    with pytest.raises(ValueError, match=f"at least 12 characters; this one has {len(password)}"):
        users.add_user(engine, "alice", password)
    assert users.get_user_by_name(engine, "alice") is None
    users.add_user(engine, "alice", "twelve chars")  # exactly the minimum
    with pytest.raises(ValueError, match="at least 12 characters"):
        users.set_password(engine, "alice", password)
    assert users.authenticate(engine, "alice", "twelve chars") is not None


def test_ending_sign_ins_and_a_new_password_raise_the_epoch(engine: Engine) -> None:
    alice = users.add_user(engine, "alice", ONE)
    assert alice.session_epoch == 0
    assert users.end_sign_ins(engine, alice.id)
    assert users.set_password(engine, "alice", TWO) is not None
    found = users.get_user_by_name(engine, " alice ")
    assert found is not None and found.session_epoch == 2


def test_rows_from_before_users_belong_to_the_local_user(
    new_database: Callable[[], str],
) -> None:
    url = new_database()
    old = create_engine(url)
    with old.begin() as connection:
        command.upgrade(migration_config(connection), "0001_initial")
        connection.execute(
            text(
                "INSERT INTO conversations (id, title, endpoint, model, created_at, updated_at)"
                " VALUES ('c1', 'Old chat', 'demo', 'demo', 1, 1)"
            )
        )
        connection.execute(
            text(
                "INSERT INTO agents (id, name, instructions, tools_json, tool_options_json,"
                " created_at, updated_at) VALUES ('a1', 'Old agent', '', '[]', '{}', 1, 1)"
            )
        )
        connection.execute(
            text("INSERT INTO memory_entries (key, value, updated_at) VALUES ('tone', 'brief', 1)")
        )
        # The imported-actions table as the app created it before users existed.
        connection.execute(
            text(
                "CREATE TABLE action_documents (id VARCHAR NOT NULL PRIMARY KEY,"
                " encoded_domain VARCHAR NOT NULL, domain VARCHAR NOT NULL, title TEXT NOT NULL,"
                " source TEXT NOT NULL, document_json TEXT NOT NULL, created_at FLOAT NOT NULL)"
            )
        )
        connection.execute(
            text(
                "CREATE UNIQUE INDEX ix_action_documents_encoded_domain"
                " ON action_documents (encoded_domain)"
            )
        )
        connection.execute(
            text(
                "INSERT INTO action_documents VALUES"
                " ('d1', 'pets---example', 'pets.example', 'Pets', 'pets.json', '{}', 1)"
            )
        )
    old.dispose()
    engine = init_db(url)
    try:
        assert [c.id for c in conv.list_conversations(engine, owner=LOCAL_USER_ID)] == ["c1"]
        assert [a.id for a in agents.list_agents(engine, owner=LOCAL_USER_ID)] == ["a1"]
        assert agents.list_agents(engine, owner="alice") == []
        memory = DbMemoryStore(engine)
        assert asyncio.run(memory.get_all(LOCAL_USER_ID)) == {"tone": "brief"}
        assert asyncio.run(memory.get_all("alice")) == {}
        assert [d.id for d in actions.list_action_documents(engine, owner=LOCAL_USER_ID)] == ["d1"]
        # Another user may now import the same domain.
        actions.save_action_document(
            engine,
            owner="alice",
            encoded_domain="pets---example",
            domain="pets.example",
            title="Pets",
            source="pets.json",
            document={},
            now=lambda: 2.0,
        )
        assert len(actions.list_action_documents(engine, owner=None)) == 2
    finally:
        dispose_engines()


def test_downgrade_keeps_the_local_users_rows_and_upgrades_again(
    new_database: Callable[[], str],
) -> None:
    url = new_database()
    engine = init_db(url)
    conv.create_conversation(engine, owner=LOCAL_USER_ID, endpoint="demo", model="m")
    memory = DbMemoryStore(engine)
    asyncio.run(memory.set(LOCAL_USER_ID, "tone", "brief"))
    asyncio.run(memory.set("alice", "tone", "alice's"))
    dispose_engines()
    plain = create_engine(url)
    with plain.begin() as connection:
        command.downgrade(migration_config(connection), "0002_event_log")
        rows = connection.execute(text("SELECT key, value FROM memory_entries")).all()
    plain.dispose()
    assert [tuple(r) for r in rows] == [("tone", "brief")]
    engine = init_db(url)
    try:
        assert len(conv.list_conversations(engine, owner=LOCAL_USER_ID)) == 1
        assert asyncio.run(DbMemoryStore(engine).get_all(LOCAL_USER_ID)) == {"tone": "brief"}
    finally:
        dispose_engines()


@dataclass(frozen=True)
class Preference:
    """A display setting each user keeps: how the store reads and writes it, its default,
    a value to choose, another to start from, one it refuses and the choices it names."""

    name: str
    get: Callable[[Engine, str], str]
    set: Callable[[Engine, str, str], bool]
    default: str
    chosen: str
    other: str
    refused: str
    choices: str


PREFERENCES = (
    Preference(
        "density",
        users.user_density,
        users.set_density,
        default="full",
        chosen="header",
        other="intents",
        refused="tiny",
        choices="full, intents, header",
    ),
    Preference(
        "theme",
        users.user_theme,
        users.set_theme,
        default="system",
        chosen="dark",
        other="light",
        refused="sepia",
        choices="light, dark, system",
    ),
)


@pytest.fixture(params=PREFERENCES, ids=lambda preference: preference.name)
def preference(request: pytest.FixtureRequest) -> Preference:
    return request.param


def test_a_user_starts_at_the_default_and_keeps_the_one_chosen(
    engine: Engine, preference: Preference
) -> None:
    alice = users.ensure_user(engine, "alice")
    assert preference.get(engine, alice.id) == preference.default
    assert preference.set(engine, alice.id, preference.chosen)
    assert preference.get(engine, alice.id) == preference.chosen
    assert preference.get(engine, LOCAL_USER_ID) == preference.default  # per user
    (other,) = (p for p in PREFERENCES if p is not preference)
    assert other.get(engine, alice.id) == other.default  # each setting is its own


def test_an_unknown_value_is_refused_and_nothing_changes(
    engine: Engine, preference: Preference
) -> None:
    preference.set(engine, LOCAL_USER_ID, preference.other)
    with pytest.raises(ValueError, match=f"use one of {preference.choices}"):
        preference.set(engine, LOCAL_USER_ID, preference.refused)
    assert preference.get(engine, LOCAL_USER_ID) == preference.other


def test_the_setting_of_an_unknown_user_is_the_default(
    engine: Engine, preference: Preference
) -> None:
    assert not preference.set(engine, "nobody", preference.chosen)
    assert preference.get(engine, "nobody") == preference.default
