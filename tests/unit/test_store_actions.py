"""Imported OpenAPI documents (store.actions)."""

from __future__ import annotations

from sqlalchemy import Engine, inspect

from intent_ui.store import actions as store


def save(
    engine: Engine,
    domain: str = "slack.com",
    title: str = "Slack",
    when: float = 1.0,
    owner: str = "alice",
) -> store.StoredAction:
    return store.save_action_document(
        engine,
        owner=owner,
        encoded_domain=domain.replace(".", "---"),
        domain=domain,
        title=title,
        source=f"{title}.json",
        document={"openapi": "3.0.0", "info": {"title": title}},
        now=lambda: when,
    )


def test_table_is_created_on_first_use(engine: Engine) -> None:
    store.init_action_store(engine)
    assert "action_documents" in inspect(engine).get_table_names()


def test_saved_document_round_trips(engine: Engine) -> None:
    saved = save(engine)
    [listed] = store.list_action_documents(engine, owner="alice")
    assert listed == saved
    assert listed.document == {"openapi": "3.0.0", "info": {"title": "Slack"}}


def test_reimporting_a_domain_replaces_its_document(engine: Engine) -> None:
    first = save(engine, title="Slack")
    second = save(engine, title="Slack v2", when=2.0)
    [listed] = store.list_action_documents(engine, owner="alice")
    assert listed.id == first.id == second.id
    assert listed.title == "Slack v2"


def test_documents_are_listed_oldest_first(engine: Engine) -> None:
    save(engine, "b.io", "B", when=2.0)
    save(engine, "a.io", "A", when=1.0)
    assert [d.title for d in store.list_action_documents(engine, owner="alice")] == ["A", "B"]


def test_delete_removes_a_document(engine: Engine) -> None:
    saved = save(engine)
    assert store.delete_action_document(engine, saved.id, owner="alice") is True
    assert store.list_action_documents(engine, owner="alice") == []
    assert store.delete_action_document(engine, saved.id, owner="alice") is False


def test_documents_belong_to_the_user_who_imported_them(engine: Engine) -> None:
    alices = save(engine, title="Slack", owner="alice")
    bobs = save(engine, title="Bob's Slack", owner="bob", when=2.0)
    assert alices.id != bobs.id  # one document per owner and domain
    assert [d.title for d in store.list_action_documents(engine, owner="alice")] == ["Slack"]
    assert [d.title for d in store.list_action_documents(engine, owner="bob")] == ["Bob's Slack"]
    assert store.delete_action_document(engine, alices.id, owner="bob") is False
    assert [d.id for d in store.list_action_documents(engine, owner=None)] == [alices.id, bobs.id]
