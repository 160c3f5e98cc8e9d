"""Share links: one live link per conversation, owner-filtered, revocable for good."""

from __future__ import annotations

from itertools import count

import pytest
from sqlalchemy import Engine

from intent_ui.store import conversations as conv
from intent_ui.store import shares
from intent_ui.store.models import LOCAL_USER_ID, Clock

OWNER = LOCAL_USER_ID
OTHER = "someone-else"


@pytest.fixture
def now() -> Clock:
    ticks = count(1000)
    return lambda: float(next(ticks))


@pytest.fixture
def chat_id(engine: Engine) -> str:
    return conv.create_conversation(engine, endpoint="demo", model="m", owner=OWNER).id


def test_a_link_opens_its_conversation(engine: Engine, chat_id: str) -> None:
    share_id = shares.create_share(engine, chat_id, owner=OWNER)
    assert share_id is not None
    assert shares.find_share(engine, share_id) == chat_id
    assert shares.live_share(engine, chat_id, owner=OWNER) == share_id


def test_a_link_id_is_long_and_url_safe(engine: Engine, chat_id: str) -> None:
    share_id = shares.create_share(engine, chat_id, owner=OWNER)
    assert share_id is not None and len(share_id) >= 32
    assert share_id.replace("-", "").replace("_", "").isalnum()
    assert chat_id not in share_id


def test_sharing_again_hands_out_the_live_link(engine: Engine, chat_id: str) -> None:
    first = shares.create_share(engine, chat_id, owner=OWNER)
    assert shares.create_share(engine, chat_id, owner=OWNER) == first


def test_a_revoked_link_opens_nothing_and_is_never_issued_again(
    engine: Engine, chat_id: str, now: Clock
) -> None:
    first = shares.create_share(engine, chat_id, owner=OWNER, now=now)
    assert first is not None
    assert shares.revoke_share(engine, chat_id, owner=OWNER, now=now) is True
    assert shares.find_share(engine, first) is None
    assert shares.live_share(engine, chat_id, owner=OWNER) is None
    second = shares.create_share(engine, chat_id, owner=OWNER, now=now)
    assert second is not None and second != first
    assert shares.find_share(engine, second) == chat_id
    assert shares.find_share(engine, first) is None


def test_revoking_without_a_live_link_says_so(engine: Engine, chat_id: str) -> None:
    assert shares.revoke_share(engine, chat_id, owner=OWNER) is False


def test_an_unknown_or_blank_link_opens_nothing(engine: Engine, chat_id: str) -> None:
    shares.create_share(engine, chat_id, owner=OWNER)
    assert shares.find_share(engine, "not-a-link") is None
    assert shares.find_share(engine, "") is None


def test_another_user_can_neither_share_read_nor_revoke_the_link(
    engine: Engine, chat_id: str
) -> None:
    assert shares.create_share(engine, chat_id, owner=OTHER) is None
    share_id = shares.create_share(engine, chat_id, owner=OWNER)
    assert share_id is not None
    assert shares.live_share(engine, chat_id, owner=OTHER) is None
    assert shares.revoke_share(engine, chat_id, owner=OTHER) is False
    assert shares.find_share(engine, share_id) == chat_id


def test_an_unknown_conversation_cannot_be_shared(engine: Engine) -> None:
    assert shares.create_share(engine, "nope", owner=OWNER) is None
    assert shares.live_share(engine, "nope", owner=OWNER) is None


def test_deleting_the_conversation_ends_its_link(engine: Engine, chat_id: str) -> None:
    share_id = shares.create_share(engine, chat_id, owner=OWNER)
    assert share_id is not None
    assert conv.delete_conversation(engine, chat_id, owner=OWNER)
    assert shares.find_share(engine, share_id) is None


def test_each_conversation_has_its_own_link(engine: Engine, chat_id: str) -> None:
    other_chat = conv.create_conversation(engine, endpoint="demo", model="m", owner=OWNER).id
    first = shares.create_share(engine, chat_id, owner=OWNER)
    second = shares.create_share(engine, other_chat, owner=OWNER)
    assert first is not None and second is not None and first != second
    shares.revoke_share(engine, chat_id, owner=OWNER)
    assert shares.find_share(engine, second) == other_chat
