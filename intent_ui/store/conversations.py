"""Conversations and their messages: CRUD, the display list, and the provider history.

An assistant message is one whole turn: its text plus every tool-call round it ran, kept
as its event log (`intent_ui.store.turns`). `history()` replays each turn and unfolds it
into the neutral provider shape with `intent_ui.core.history.turn_history`, the rules the
run loop follows between rounds too: per group (one provider round), an assistant
message with the text that came before it and its `tool_calls`, then one `tool` message
per call; trailing text last. Past an endpoint's context budget the older turns are
compacted: their calls give way to ledger lines, recorded in a `compaction` message.

A conversation is a tree of messages, of which the page shows one path
(`intent_ui.store.models.Message`): a reply regenerated is a sibling of the old reply, a
message edited and sent again a sibling of the old message, and a turn continued after
Stop a child of the stopped one. From the first message, the path follows the chosen
child of each message (the newest when none is marked). `messages`, `history` and
`search_conversations` read that path only; a new message goes at its end unless the
caller names its parent; `choose_branch` shows another sibling, and with it the branch
below it as it was last shown.

The model reads a continued turn as the stopped reply, then a user message
`CONTINUE_PROMPT` that the conversation does not store or show, then the continuation.

Every function that names a conversation by id takes its `owner` (a user id) and treats
another user's conversation as absent; the functions that read or write its messages are
called only with an id that an owner-checked function returned.

A call that never finished (interrupted, cancelled, or still marked running) still gets a
`tool` result, as an error, because providers reject a tool call without a result.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, TypeVar

from sqlalchemy import Engine, delete, exists, or_, update
from sqlmodel import Session, col, select

from intent_ui.core.checkpoints import RewindRecord
from intent_ui.core.compaction import (
    CompactionMark,
    ContextBudget,
    Entry,
    TurnEntry,
    UserEntry,
    build_history,
)
from intent_ui.core.history import CONTINUE_PROMPT
from intent_ui.core.turn import TurnView
from intent_ui.store.checkpoints import CheckpointRow, forget_unused_blobs
from intent_ui.store.dashboard import forget_turn_calls
from intent_ui.store.db import NotFoundError, add_row, open_session, owned_row, store_errors
from intent_ui.store.models import Clock, Conversation, Message, ShareLink, TurnEventRow
from intent_ui.store.turns import load_events

__all__ = [
    "COMPACTION_ROLE",
    "DEFAULT_TITLE",
    "REWIND_ROLE",
    "TITLE_CHARS",
    "ThreadMessage",
    "add_rewind",
    "add_user_message",
    "choose_branch",
    "compaction_lines",
    "create_conversation",
    "delete_conversation",
    "get_conversation",
    "get_message",
    "history",
    "list_conversations",
    "messages",
    "path_end",
    "rename_conversation",
    "search_conversations",
    "start_assistant_message",
    "thread",
    "title_from",
    "turn_ids",
    "update_conversation",
]

DEFAULT_TITLE = "New chat"

COMPACTION_ROLE = "compaction"
"""The role of a message that records a compaction (see `history`): not sent to the
model as a message, listed in the chat as a divider."""
REWIND_ROLE = "rewind"
"""A rewind (`core.checkpoints.RewindRecord` as JSON, `add_rewind`): shown in the thread;
the model reads its note, since the workspace changed under it."""

TITLE_CHARS = 60
"""The most characters of the first message a new conversation's title takes."""

_UNSET: Any = object()
_PATH_END: Any = object()  # "after the shown path's last message"


def title_from(text: str) -> str:
    """The title a conversation gets from its first message: the first line, cut."""
    lines = text.strip().splitlines()
    return (lines[0][:TITLE_CHARS].strip() if lines else "") or DEFAULT_TITLE


@store_errors("create the conversation")
def create_conversation(
    engine: Engine,
    *,
    owner: str,
    endpoint: str,
    model: str,
    title: str = DEFAULT_TITLE,
    agent_id: str | None = None,
    now: Clock = time.time,
) -> Conversation:
    """Create and return a conversation; a blank title becomes `DEFAULT_TITLE`."""
    stamp = now()
    return add_row(
        engine,
        Conversation(
            owner_id=owner,
            title=title.strip() or DEFAULT_TITLE,
            endpoint=endpoint,
            model=model,
            agent_id=agent_id,
            created_at=stamp,
            updated_at=stamp,
        ),
    )


@store_errors("read the conversation")
def get_conversation(engine: Engine, conversation_id: str, *, owner: str) -> Conversation | None:
    """The conversation; None when it does not exist or belongs to someone else."""
    with open_session(engine) as session:
        return owned_row(session, Conversation, conversation_id, owner)


@store_errors("list the conversations")
def list_conversations(
    engine: Engine, *, owner: str, limit: int | None = None
) -> list[Conversation]:
    """The owner's conversations, most recently active first."""
    statement = (
        select(Conversation)
        .where(col(Conversation.owner_id) == owner)
        .order_by(col(Conversation.updated_at).desc(), col(Conversation.created_at).desc())
    )
    if limit is not None:
        statement = statement.limit(max(limit, 0))
    with open_session(engine) as session:
        return list(session.exec(statement))


SEARCH_MAX_CHARS = 200
"""The longest text `search_conversations` looks for."""

SEARCH_LIMIT = 50
"""The most conversations one search returns."""


@store_errors("search the conversations")
def search_conversations(
    engine: Engine, query: str, *, owner: str, limit: int = SEARCH_LIMIT
) -> list[Conversation]:
    """The owner's conversations whose title or any message of the shown path contains
    `query`, ignoring case, most recently active first, at most `limit`; a blank query
    lists them all (up to `limit`). `%`, `_` and `\\` in the query match themselves.

    A reply's text is searchable once its turn has ended (its summary holds it); a
    branch the conversation does not show is not searched. SQLite folds case for ASCII
    letters only; PostgreSQL for every script. Raises ValueError for a query longer than
    `SEARCH_MAX_CHARS`.
    """
    needle = query.strip()
    if len(needle) > SEARCH_MAX_CHARS:
        raise ValueError(
            f"A conversation search is at most {SEARCH_MAX_CHARS} characters; "
            f"this one has {len(needle)}: shorten it."
        )
    newest_first = (col(Conversation.updated_at).desc(), col(Conversation.created_at).desc())
    owned = select(Conversation).where(col(Conversation.owner_id) == owner)
    if not needle:
        with open_session(engine) as session:
            return list(session.exec(owned.order_by(*newest_first).limit(max(limit, 0))))
    pattern = "%" + re.sub(r"([\\%_])", r"\\\1", needle) + "%"
    by_title = col(Conversation.title).ilike(pattern, escape="\\")
    matching = col(Message.content).ilike(pattern, escape="\\")
    in_messages = exists().where(col(Message.conversation_id) == Conversation.id, matching)
    statement = (
        select(Conversation, by_title)
        .where(col(Conversation.owner_id) == owner, or_(by_title, in_messages))
        .order_by(*newest_first)
    )
    found: list[Conversation] = []
    with open_session(engine) as session:
        candidates = [
            (conversation, bool(titled)) for conversation, titled in session.exec(statement)
        ]
        # Those found by a message only count when that message is on the shown path,
        # which SQL cannot follow portably: read their trees, a batch at a time, until
        # there are enough.
        for start in range(0, len(candidates), _SEARCH_BATCH):
            batch = candidates[start : start + _SEARCH_BATCH]
            shown = _shown_matches(
                session, [str(c.id) for c, titled in batch if not titled], matching
            )
            found.extend(c for c, titled in batch if titled or str(c.id) in shown)
            if len(found) >= limit:
                break
    return found[: max(limit, 0)]


_SEARCH_BATCH = 200


def _shown_matches(session: Session, conversation_ids: list[str], matching: Any) -> set[str]:
    """Which of the conversations have a message matching `matching` on their shown path."""
    if not conversation_ids:
        return set()
    within = col(Message.conversation_id).in_(conversation_ids)
    hits = set(session.exec(select(Message.id).where(within, matching)))
    links: dict[str, list[_Link]] = {}
    rows = session.exec(
        select(Message.conversation_id, Message.id, Message.parent_id, Message.chosen)
        .where(within)
        .order_by(col(Message.position))
    )
    for conversation_id, message_id, parent_id, chosen in rows:
        links.setdefault(conversation_id, []).append(_Link(message_id, parent_id, chosen))
    return {
        conversation_id
        for conversation_id, tree in links.items()
        if any(link.id in hits for link in _shown(tree))
    }


@store_errors("rename the conversation")
def rename_conversation(
    engine: Engine, conversation_id: str, title: str, *, owner: str, now: Clock = time.time
) -> Conversation | None:
    """Set the title; None when the conversation does not exist or is someone else's.

    Raises ValueError for a blank title (the UI keeps the old one).
    """
    if not title.strip():
        raise ValueError("A conversation title cannot be blank; type at least one character.")
    return update_conversation(engine, conversation_id, owner=owner, title=title, now=now)


@store_errors("update the conversation")
def update_conversation(
    engine: Engine,
    conversation_id: str,
    *,
    owner: str,
    title: str | None = None,
    endpoint: str | None = None,
    model: str | None = None,
    agent_id: str | None = _UNSET,
    now: Clock = time.time,
) -> Conversation | None:
    """Change the given fields (`agent_id=None` detaches the agent); None when not found
    or someone else's."""
    with open_session(engine) as session:
        conversation = owned_row(session, Conversation, conversation_id, owner)
        if conversation is None:
            return None
        if title is not None and title.strip():
            conversation.title = title.strip()
        if endpoint is not None:
            conversation.endpoint = endpoint
        if model is not None:
            conversation.model = model
        if agent_id is not _UNSET:
            conversation.agent_id = agent_id
        conversation.updated_at = now()
        session.add(conversation)
        session.commit()
        return conversation


@store_errors("delete the conversation")
def delete_conversation(engine: Engine, conversation_id: str, *, owner: str) -> bool:
    """Delete a conversation with its messages, their event logs and dashboard copies,
    its checkpoints and the file contents no other checkpoint keeps, and its share links;
    False when not found or someone else's."""
    message_ids = select(Message.id).where(Message.conversation_id == conversation_id)
    # Explicit deletes rather than relying on ON DELETE CASCADE, which SQLite only
    # honours on connections that enabled foreign keys (e.g. not on `rx.session()`).
    with engine.begin() as connection:
        owned = connection.execute(
            select(Conversation.id).where(
                col(Conversation.id) == conversation_id, col(Conversation.owner_id) == owner
            )
        ).first()
        if owned is None:
            return False
        connection.execute(
            delete(TurnEventRow).where(col(TurnEventRow.message_id).in_(message_ids))
        )
        forget_turn_calls(connection, message_ids)  # off the intents dashboard too
        connection.execute(
            delete(CheckpointRow).where(col(CheckpointRow.conversation_id) == conversation_id)
        )
        connection.execute(delete(Message).where(col(Message.conversation_id) == conversation_id))
        connection.execute(
            delete(ShareLink).where(col(ShareLink.conversation_id) == conversation_id)
        )
        result = connection.execute(
            delete(Conversation).where(col(Conversation.id) == conversation_id)
        )
    if result.rowcount > 0:
        forget_unused_blobs(engine)
    return result.rowcount > 0


@store_errors("save the message")
def add_user_message(
    engine: Engine,
    conversation_id: str,
    content: str,
    *,
    parent_id: str | None = _PATH_END,
    now: Clock = time.time,
) -> str:
    """Add a user message after `parent_id` (by default the shown path's last message;
    None: a new first message) and show it; returns its id. Raises NotFoundError for an
    unknown chat or parent.

    A new first message beside an old one (the first message edited) takes the title
    with it, unless the conversation was renamed.
    """
    return _append_message(engine, conversation_id, "user", content, "complete", now, parent_id)


@store_errors("start the reply")
def start_assistant_message(
    engine: Engine,
    conversation_id: str,
    *,
    parent_id: str | None = _PATH_END,
    now: Clock = time.time,
) -> str:
    """Add an empty assistant message with status `streaming` after `parent_id` (by
    default the shown path's last message) and show it; returns its id. Its parent is the
    user message it answers, or the stopped turn it continues.

    Its turn's session appends the events with `intent_ui.store.turns.EventLog`.
    """
    return _append_message(engine, conversation_id, "assistant", "", "streaming", now, parent_id)


@store_errors("record the rewind")
def add_rewind(
    engine: Engine,
    conversation_id: str,
    record: RewindRecord,
    *,
    parent_id: str | None = _PATH_END,
    now: Clock = time.time,
) -> str:
    """Add a rewind after `parent_id` (by default the shown path's last message) and show
    it; returns its id. A message sent next goes after it."""
    content = record.to_json()
    return _append_message(
        engine, conversation_id, REWIND_ROLE, content, "complete", now, parent_id
    )


@dataclass(frozen=True, slots=True)
class ThreadMessage:
    """A message of the shown path, with the ids of its siblings (itself among them),
    oldest first: the versions the page flips between."""

    message: Message
    siblings: tuple[str, ...]


@store_errors("read the messages")
def thread(engine: Engine, conversation_id: str) -> list[ThreadMessage]:
    """The shown path, first message first, each message with its siblings."""
    with open_session(engine) as session:
        rows = _rows(session, conversation_id)
    children = _children(rows)
    return [
        ThreadMessage(message, tuple(str(m.id) for m in children[message.parent_id]))
        for message in _shown(rows)
    ]


@store_errors("read the messages")
def messages(engine: Engine, conversation_id: str) -> list[Message]:
    """The shown path's messages in order, for display (a turn's events: `load_events`)."""
    with open_session(engine) as session:
        return _shown(_rows(session, conversation_id))


@store_errors("read the messages")
def path_end(engine: Engine, conversation_id: str) -> str | None:
    """The id of the shown path's last message; None for a conversation without any."""
    shown = messages(engine, conversation_id)
    return str(shown[-1].id) if shown else None


@store_errors("read the message")
def get_message(engine: Engine, conversation_id: str, message_id: str) -> Message | None:
    """The message, on any branch; None when it is not one of the conversation's."""
    with open_session(engine) as session:
        found = session.get(Message, message_id)
    return found if found is not None and found.conversation_id == conversation_id else None


@store_errors("read the turns")
def turn_ids(engine: Engine, conversation_id: str) -> frozenset[str]:
    """The ids of every assistant turn of the conversation, on every branch."""
    statement = select(Message.id).where(
        col(Message.conversation_id) == conversation_id, col(Message.role) == "assistant"
    )
    with open_session(engine) as session:
        return frozenset(str(message_id) for message_id in session.exec(statement))


@store_errors("switch the branch")
def choose_branch(engine: Engine, conversation_id: str, message_id: str) -> bool:
    """Show `message_id` instead of its siblings (and below it, the branch as it was
    last shown); False when it is not one of the conversation's messages.

    Showing another first message takes the title with it, unless it was renamed."""
    with open_session(engine) as session:
        rows = _rows(session, conversation_id)
        target = next((m for m in rows if m.id == message_id), None)
        if target is None:
            return False
        siblings = _children(rows)[target.parent_id]
        if target.parent_id is None:
            _title_follows(session, conversation_id, _pick(siblings), target)
        for sibling in siblings:
            sibling.chosen = sibling is target
            session.add(sibling)
        session.commit()
    return True


@store_errors("read the conversation history")
def history(
    engine: Engine,
    conversation_id: str,
    *,
    through: str | None = _PATH_END,
    budget: ContextBudget | None = None,
    now: Clock = time.time,
) -> list[dict[str, Any]]:
    """The conversation as provider messages in the neutral shape of `ChatRequest`: the
    shown path, or the path from the first message to `through` (None: nothing), which
    is what a turn regenerated, edited or continued there reads. Raises NotFoundError
    when `through` is not one of the conversation's messages.

    Turns before a recorded compaction read compacted, their ledger first
    (`intent_ui.core.compaction`). When the history outgrows `budget`, the turns not
    compacted yet are compacted too. Read up to the shown path's end (`through` its last
    message, or left out), that compaction is recorded as a `COMPACTION_ROLE` message
    after it (content: the ledger lines, one per line), which becomes the path's end:
    a message added next goes after it (`path_end`), every later history keeps it, and
    the chat shows where it happened. Read up to an earlier message (an edit, a
    regeneration), it is not recorded, since a message there would take the place of
    that message's siblings: the next history at the path's end compacts and records."""
    with open_session(engine) as session:
        rows = _rows(session, conversation_id)
    shown = _shown(rows)
    path = shown if through is _PATH_END else _ancestry(rows, through)
    entries: list[Entry] = []
    previous: Message | None = None
    for message in path:
        if message.role == "user":
            entries.append(UserEntry(message.content))
        elif message.role == "assistant":
            if previous is not None and previous.role == "assistant":
                entries.append(UserEntry(CONTINUE_PROMPT))
            entries.append(TurnEntry(TurnView.replay(load_events(engine, message.id))))
        elif message.role == COMPACTION_ROLE:
            entries.append(CompactionMark(compaction_lines(message.content)))
            continue
        elif message.role == REWIND_ROLE:
            entries.append(UserEntry(RewindRecord.from_json(message.content).model_note()))
        previous = message
    built = build_history(entries, budget)
    if built.compacted and path and path[-1].id == shown[-1].id:
        content = "\n".join(built.compacted)
        end = str(path[-1].id)
        _append_message(engine, conversation_id, COMPACTION_ROLE, content, "complete", now, end)
    return built.messages


def compaction_lines(content: str) -> tuple[str, ...]:
    """The ledger lines a `COMPACTION_ROLE` message recorded (its content, one per line)."""
    return tuple(content.split("\n")) if content else ()


# --- the tree -----------------------------------------------------------------------------


class _Node(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def parent_id(self) -> str | None: ...
    @property
    def chosen(self) -> bool: ...


class _Link(NamedTuple):
    """A message's place in the tree, without its content."""

    id: str
    parent_id: str | None
    chosen: bool


N = TypeVar("N", bound=_Node)


def _rows(session: Session, conversation_id: str) -> list[Message]:
    """Every message of the conversation, on every branch, oldest first."""
    statement = (
        select(Message)
        .where(Message.conversation_id == conversation_id)
        .order_by(col(Message.position))
    )
    return list(session.exec(statement))


def _children(nodes: Iterable[N]) -> dict[str | None, list[N]]:
    """Each message's children (None's: the first messages), in the order given."""
    children: dict[str | None, list[N]] = {}
    for node in nodes:
        children.setdefault(node.parent_id, []).append(node)
    return children


def _pick(siblings: Sequence[N]) -> N:
    """The sibling shown: the newest chosen one, else the newest."""
    return next((node for node in reversed(siblings) if node.chosen), siblings[-1])


def _shown(nodes: Sequence[N]) -> list[N]:
    """The shown path: from the first messages, each level's chosen one."""
    children = _children(nodes)
    path: list[N] = []
    seen: set[str] = set()
    parent: str | None = None
    while siblings := children.get(parent):
        node = _pick(siblings)
        if node.id in seen:  # a loop no write of this module makes: stop, do not hang
            break
        seen.add(node.id)
        path.append(node)
        parent = node.id
    return path


def _ancestry(nodes: Sequence[N], message_id: str | None) -> list[N]:
    """The path from the first message to `message_id` (None: empty)."""
    by_id = {node.id: node for node in nodes}
    if message_id is not None and message_id not in by_id:
        raise NotFoundError(
            f"No message {message_id!r} in this conversation: it was deleted; reload the page."
        )
    path: list[N] = []
    seen: set[str] = set()
    current = message_id
    while current is not None and current in by_id and current not in seen:
        seen.add(current)
        path.append(by_id[current])
        current = by_id[current].parent_id
    path.reverse()
    return path


def _title_follows(session: Session, conversation_id: str, old: Message, new: Message) -> None:
    """The title taken from the first message `old` becomes `new`'s, as `new` takes its
    place; a title the user chose stays."""
    conversation = session.get(Conversation, conversation_id)
    if (
        conversation is not None
        and old.role == new.role == "user"
        and conversation.title == title_from(old.content)
    ):
        conversation.title = title_from(new.content)
        session.add(conversation)


def _append_message(
    engine: Engine,
    conversation_id: str,
    role: str,
    content: str,
    status: str,
    now: Clock,
    parent_id: str | None,
) -> str:
    stamp = now()
    with open_session(engine) as session:
        conversation = session.get(Conversation, conversation_id)
        if conversation is None:
            raise NotFoundError(
                f"No conversation {conversation_id!r}: it was deleted or never created; "
                "start a new chat."
            )
        rows = _rows(session, conversation_id)
        if parent_id is _PATH_END:
            shown = _shown(rows)
            parent_id = str(shown[-1].id) if shown else None
        elif parent_id is not None and not any(m.id == parent_id for m in rows):
            raise NotFoundError(
                f"No message {parent_id!r} in this conversation: it was deleted; reload the page."
            )
        siblings = _children(rows).get(parent_id, [])
        message = Message(
            conversation_id=conversation_id,
            position=max((m.position for m in rows), default=-1) + 1,
            role=role,
            content=content,
            status=status,
            parent_id=parent_id,
            chosen=True,
            created_at=stamp,
            updated_at=stamp,
        )
        if siblings and parent_id is None:
            _title_follows(session, conversation_id, _pick(siblings), message)
        for sibling in siblings:
            if sibling.chosen:
                sibling.chosen = False
                session.add(sibling)
        session.add(message)
        session.execute(
            update(Conversation)
            .where(col(Conversation.id) == conversation_id)
            .values(updated_at=stamp)
        )
        session.commit()
        return message.id
