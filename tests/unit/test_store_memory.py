"""DbMemoryStore: the memory tools' entries, kept across restarts."""

from __future__ import annotations

import asyncio

from sqlalchemy import Engine

from intent_ui.agent.tools.memory import MemoryStore
from intent_ui.store.db import dispose_engines, init_db
from intent_ui.store.memory import DbMemoryStore

OWNER = "alice"


def test_satisfies_the_memory_store_protocol(engine: Engine) -> None:
    store: MemoryStore = DbMemoryStore(engine)
    assert callable(store.get_all) and callable(store.set) and callable(store.delete)


async def test_empty_store_has_no_entries(engine: Engine) -> None:
    assert await DbMemoryStore(engine).get_all(OWNER) == {}


async def test_set_then_get_all_sorted_by_key(engine: Engine) -> None:
    store = DbMemoryStore(engine)
    await store.set(OWNER, "tone", "brief")
    await store.set(OWNER, "editor", "vim — always")
    assert await store.get_all(OWNER) == {"editor": "vim — always", "tone": "brief"}
    assert list(await store.get_all(OWNER)) == ["editor", "tone"]


async def test_set_replaces_an_existing_value(engine: Engine) -> None:
    store = DbMemoryStore(engine)
    await store.set(OWNER, "tone", "brief")
    await store.set(OWNER, "tone", "detailed")
    assert await store.get_all(OWNER) == {"tone": "detailed"}


async def test_delete_reports_whether_it_removed_something(engine: Engine) -> None:
    store = DbMemoryStore(engine)
    await store.set(OWNER, "tone", "brief")
    assert await store.delete(OWNER, "tone") is True
    assert await store.delete(OWNER, "tone") is False
    assert await store.get_all(OWNER) == {}


async def test_entries_survive_a_restart(engine: Engine) -> None:
    await DbMemoryStore(engine).set(OWNER, "name", "Ada")
    dispose_engines()
    reopened = init_db(engine.url.render_as_string(hide_password=False))
    assert await DbMemoryStore(reopened).get_all(OWNER) == {"name": "Ada"}


async def test_parallel_sets_of_one_key_keep_one_value(engine: Engine) -> None:
    store = DbMemoryStore(engine)
    values = [f"v{i}" for i in range(8)]
    await asyncio.gather(*(store.set(OWNER, "k", v) for v in values))
    entries = await store.get_all(OWNER)
    assert list(entries) == ["k"] and entries["k"] in values


async def test_each_owner_has_their_own_keys(engine: Engine) -> None:
    store = DbMemoryStore(engine)
    await store.set("alice", "tone", "brief")
    await store.set("bob", "tone", "detailed")
    assert await store.get_all("alice") == {"tone": "brief"}
    assert await store.get_all("bob") == {"tone": "detailed"}
    assert await store.delete("bob", "tone") is True
    assert await store.get_all("alice") == {"tone": "brief"}
    assert await store.delete("bob", "tone") is False
