"""Rewinding to before a call: what would change, and putting it back (docs/rewind.md).

`plan_rewind` compares the workspace as it is now with how it was before the call
(`core.checkpoints.target_states` over the conversation's checkpoints from that call on)
and lists each file that would change, with a diff. `rewind` does it: every file goes
through the workspace's protected-files check (`Workspace.writable`) before it is
written or deleted, so a rewind can change no file a tool could not. It is then recorded
as a message of the conversation (`store.conversations.add_rewind`), which the thread
shows and the model reads. With `mode="all"` the conversation goes back too: the call's
turn gets a new version (a sibling, the branch machinery of docs/branches.md) holding
what it did before that call, and the conversation goes on from there; the old version
stays a flip away.

The web app (`ui/rewind_state.py`) and `python -m intent_ui rewind` (`rewind_cli.py`)
both call these. Blocking: run them in a thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import Engine

from intent_ui.agent.checkpoints import WorkspaceScanner
from intent_ui.agent.tools.protected import ProtectedPathError
from intent_ui.agent.tools.workspace import OutsideWorkspaceError
from intent_ui.core.checkpoints import (
    FileState,
    RewindMode,
    RewindRecord,
    target_states,
    text_diff,
)
from intent_ui.core.events import CallStarted, TurnDone, TurnEvent
from intent_ui.core.sanitize import sanitize_label
from intent_ui.core.turn import TurnView
from intent_ui.store import checkpoints as checkpoint_store
from intent_ui.store import conversations as conv_store
from intent_ui.store.checkpoints import CheckpointRecord
from intent_ui.store.turns import EventLog, load_events

__all__ = [
    "REWIND_TOOL",
    "REWOUND",
    "PlannedFile",
    "RewindError",
    "RewindPlan",
    "call_label",
    "checkpoints_of",
    "plan_rewind",
    "rewind",
]

REWIND_TOOL = "rewind"
"""How a refused restore names itself in the protected-files message."""
REWOUND = "rewound"
"""The stop reason of a turn's version cut before a call (`rewind(mode="all")`)."""


class RewindError(ValueError):
    """A rewind that cannot be done: the message says what and what to do."""


@dataclass(frozen=True, slots=True)
class PlannedFile:
    """A file the rewind would change: `action` is `restore` (write its old content),
    `delete` (the call created it) or `keep` (it cannot be restored: `reason`)."""

    path: str
    action: str
    diff: str
    reason: str = ""


@dataclass(frozen=True, slots=True)
class RewindPlan:
    checkpoint: CheckpointRecord
    label: str
    files: tuple[PlannedFile, ...]
    notes: tuple[str, ...]


def call_label(engine: Engine, message_id: str, call_id: str) -> str:
    """The call's card label as its turn shows it (one line, capped)."""
    view = TurnView.replay(load_events(engine, message_id))
    if view.call(call_id) is None:
        return call_id
    return sanitize_label(view.card_label(call_id)).text


def checkpoints_of(engine: Engine, conversation_id: str) -> list[CheckpointRecord]:
    """The conversation's checkpoints, oldest first."""
    return checkpoint_store.conversation_checkpoints(engine, conversation_id)


def _find(records: list[CheckpointRecord], message_id: str, call_id: str) -> int:
    for index, record in enumerate(records):
        if (record.message_id, record.call_id) == (message_id, call_id):
            return index
    known = ", ".join(record.call_id for record in records) or "none"
    raise RewindError(
        f"No checkpoint for call '{call_id}' in this conversation (calls with one: {known}). "
        "Only calls of write_file, edit_file, delete_file, bash_tool and run_tools_with_code "
        "that ran have one; list them with `python -m intent_ui rewind list`."
    )


def plan_rewind(
    scanner: WorkspaceScanner, engine: Engine, conversation_id: str, message_id: str, call_id: str
) -> RewindPlan:
    """What rewinding to before the call `call_id` of the turn `message_id` would change in
    the workspace, now."""
    records = checkpoints_of(engine, conversation_id)
    at = _find(records, message_id, call_id)
    later = records[at:]
    target = target_states([record.changes for record in later])
    current = scanner.scan(sorted(target), keep=False).files
    contents = scanner.contents(_shas(target))
    files = []
    for path in sorted(target):
        goal, here = target[path], current.get(path)
        if _same(goal, here):
            continue
        files.append(_planned(scanner, path, goal, here, contents))
    notes = tuple(dict.fromkeys(record.note for record in later if record.note))
    label = call_label(engine, records[at].message_id, call_id)
    return RewindPlan(records[at], label, tuple(files), notes)


def _same(goal: FileState | None, here: FileState | None) -> bool:
    if goal is None or here is None:
        return goal is here
    return goal.sha256 is not None and goal.sha256 == here.sha256


def _planned(
    scanner: WorkspaceScanner,
    path: str,
    goal: FileState | None,
    here: FileState | None,
    contents: dict[str, bytes],
) -> PlannedFile:
    now = _read(scanner, path) if here is not None else None
    if goal is None:
        return PlannedFile(path, "delete", text_diff(path, now, None))
    if goal.sha256 is None or goal.sha256 not in contents:
        limit = scanner.limits.max_file_bytes
        return PlannedFile(
            path,
            "keep",
            "",
            f"its content before the call was not kept (larger than {limit} bytes)",
        )
    return PlannedFile(path, "restore", text_diff(path, now, contents[goal.sha256]))


def _read(scanner: WorkspaceScanner, path: str) -> bytes | None:
    try:
        return scanner.workspace.resolve(path).read_bytes()
    except (OSError, OutsideWorkspaceError):
        return None


def rewind(
    scanner: WorkspaceScanner,
    engine: Engine,
    conversation_id: str,
    message_id: str,
    call_id: str,
    *,
    mode: RewindMode,
    now: Callable[[], float] = time.time,
) -> RewindRecord:
    """Restore the workspace to before the call (and with `mode="all"` the conversation
    too) and record the rewind in the conversation. Raises `RewindError` when the call has
    no checkpoint or a turn is running in the conversation."""
    streaming = [m for m in conv_store.messages(engine, conversation_id) if m.status == "streaming"]
    if streaming:
        raise RewindError(
            "A turn is running in this conversation; stop it or wait for it, then rewind."
        )
    plan = plan_rewind(scanner, engine, conversation_id, message_id, call_id)
    target = _target(engine, conversation_id, message_id, call_id)
    contents = scanner.contents(_shas(target))
    restored: list[str] = []
    refused: list[tuple[str, str]] = [(f.path, f.reason) for f in plan.files if f.action == "keep"]
    for planned in plan.files:
        if planned.action == "keep":
            continue
        try:
            path = scanner.workspace.writable(planned.path, tool=REWIND_TOOL)
            goal = target[planned.path]
            if goal is None:
                path.unlink(missing_ok=True)
            else:
                assert goal.sha256 is not None
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(contents[goal.sha256])
        except (ProtectedPathError, OutsideWorkspaceError, OSError, KeyError) as exc:
            refused.append((planned.path, str(exc) or type(exc).__name__))
            continue
        restored.append(planned.path)
    record = RewindRecord(
        call_id, plan.checkpoint.message_id, plan.label, mode, tuple(restored), tuple(refused)
    )
    parent: str | None = None
    if mode == "all":
        parent = _cut_turn(engine, conversation_id, plan.checkpoint.message_id, call_id, now)
        conv_store.add_rewind(engine, conversation_id, record, parent_id=parent, now=now)
    else:
        conv_store.add_rewind(engine, conversation_id, record, now=now)
    return record


def _target(
    engine: Engine, conversation_id: str, message_id: str, call_id: str
) -> dict[str, FileState | None]:
    records = checkpoints_of(engine, conversation_id)
    at = _find(records, message_id, call_id)
    return target_states([record.changes for record in records[at:]])


def _shas(target: dict[str, FileState | None]) -> list[str]:
    return [s.sha256 for s in target.values() if s is not None and s.sha256 is not None]


def _cut_turn(
    engine: Engine, conversation_id: str, message_id: str, call_id: str, now: Callable[[], float]
) -> str:
    """A new version of the turn holding what it did before `call_id`: the calls that
    started before it (with how they ended) and the text before it. Returns its id."""
    turn = conv_store.get_message(engine, conversation_id, message_id)
    if turn is None:
        raise RewindError(f"The turn {message_id} of this call is gone; reload the page.")
    events = load_events(engine, message_id)
    cut = next((e.seq for e in events if isinstance(e, CallStarted) and e.call_id == call_id), None)
    if cut is None:
        raise RewindError(f"The turn has no call '{call_id}'.")
    kept_calls = {e.call_id for e in events if isinstance(e, CallStarted) and e.seq < cut}
    kept: list[TurnEvent] = []
    for event in events:
        if isinstance(event, TurnDone):
            continue
        owner = getattr(event, "call_id", None)
        if (owner is not None and owner in kept_calls) or (owner is None and event.seq < cut):
            kept.append(event)
    # Its own stop reason: a version that ends before any call is not an empty answer.
    done = TurnDone(max((e.seq for e in events), default=0) + 1, REWOUND, at=now())
    new_id = conv_store.start_assistant_message(
        engine, conversation_id, parent_id=turn.parent_id, now=now
    )
    log = EventLog(engine, new_id, now=now)
    for event in kept:
        # Each fragment keeps its own row: the replay is the original's, event by event.
        log.append(event, label_moved=True)
    log.append(done)
    log.finish(TurnView.replay([*kept, done]), done)
    if not log.flush():
        raise RewindError("The conversation could not be rewound: the store refused the turn.")
    return new_id
