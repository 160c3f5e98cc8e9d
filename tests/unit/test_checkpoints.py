"""Checkpoints before workspace-changing calls, and rewinding to before one: what the
workspace held is back, through the protected-files check, and the conversation says so."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select

from intent_ui.agent.checkpoints import ScanLimits, TurnCheckpoints, WorkspaceScanner
from intent_ui.agent.rewind import RewindError, plan_rewind, rewind
from intent_ui.agent.tools.base import Tool
from intent_ui.agent.tools.bash import BashTool
from intent_ui.agent.tools.delete_file import DeleteFileTool
from intent_ui.agent.tools.native import EditFileTool, WriteFileTool
from intent_ui.agent.tools.protected import CODE, ProtectedFiles, ProtectedPath
from intent_ui.agent.tools.registry import app_sandbox
from intent_ui.agent.tools.workspace import Workspace
from intent_ui.config import AppConfig
from intent_ui.core.checkpoints import RewindRecord
from intent_ui.core.events import (
    ArgsComplete,
    CallSettled,
    CallStarted,
    TextDelta,
    TurnDone,
    TurnEvent,
)
from intent_ui.store import checkpoints as checkpoint_store
from intent_ui.store import conversations as conv
from intent_ui.store.checkpoints import CheckpointBlob
from intent_ui.store.models import LOCAL_USER_ID
from tests.support.sandbox import readable_folder, requires_sandbox
from tests.support.store import record_turn


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "app.py").write_text("print('hello')\n")
    (root / "notes.md").write_text("first line\nsecond line\n")
    return Workspace(root, protected=ProtectedFiles(()))


def new_chat(engine: Engine, events: list[TurnEvent]) -> tuple[str, str]:
    """A conversation with one question and the turn `events` answered it with."""
    chat_id = conv.create_conversation(
        engine, owner=LOCAL_USER_ID, endpoint="demo", model="demo"
    ).id
    conv.add_user_message(engine, chat_id, "change the files")
    turn_id = conv.start_assistant_message(engine, chat_id)
    record_turn(engine, turn_id, events)
    return chat_id, turn_id


@pytest.fixture
def chat(engine: Engine) -> tuple[str, str]:
    """(chat id, turn id) of a conversation whose one turn has ended."""
    return new_chat(engine, [TurnDone(1, "end_turn")])


@pytest.fixture
def scanner(workspace: Workspace, engine: Engine) -> WorkspaceScanner:
    return WorkspaceScanner(workspace, engine)


def recorder(scanner: WorkspaceScanner, engine: Engine, chat: tuple[str, str]) -> TurnCheckpoints:
    return TurnCheckpoints(scanner, engine, conversation_id=chat[0], message_id=chat[1])


async def run(checkpoints: TurnCheckpoints, call_id: str, tool: Tool, **args: Any) -> str:
    """Run one call inside its checkpoint, as the run loop does; returns its output."""
    async with checkpoints.around(call_id, tool.name, args):
        result = await tool.call(args)
    assert not result.is_error, result.output
    return result.output


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


async def test_a_write_is_rewound_with_a_diff_of_what_comes_back(
    engine: Engine, workspace: Workspace, scanner: WorkspaceScanner, chat: tuple[str, str]
) -> None:
    before = files(workspace.root)
    checkpoints = recorder(scanner, engine, chat)
    await run(checkpoints, "c1", WriteFileTool(workspace), path="notes.md", content="rewritten\n")
    plan = plan_rewind(scanner, engine, *chat, "c1")
    (planned,) = plan.files
    assert (planned.path, planned.action) == ("notes.md", "restore")
    assert "-rewritten\n" in planned.diff and "+first line\n" in planned.diff

    record = rewind(scanner, engine, *chat, "c1", mode="files")
    assert files(workspace.root) == before
    assert record.restored == ("notes.md",) and record.refused == ()
    # The rewind is a message of the conversation, after the turn; the model reads a note.
    last = conv.messages(engine, chat[0])[-1]
    assert last.role == conv.REWIND_ROLE
    assert RewindRecord.from_json(last.content) == record
    assert "notes.md" in conv.history(engine, chat[0])[-1]["content"]


async def test_a_created_file_goes_and_a_deleted_one_comes_back(
    engine: Engine, workspace: Workspace, scanner: WorkspaceScanner, chat: tuple[str, str]
) -> None:
    before = files(workspace.root)
    checkpoints = recorder(scanner, engine, chat)
    await run(checkpoints, "c1", WriteFileTool(workspace), path="docs/new.md", content="new\n")
    await run(checkpoints, "c2", DeleteFileTool(workspace), path="app.py")
    await run(
        checkpoints,
        "c3",
        EditFileTool(workspace),
        path="notes.md",
        old_string="first",
        new_string="1st",
    )

    # Back to before the deletion: the file comes back, the edit after it is undone, the
    # file created before it stays.
    actions = {f.path: f.action for f in plan_rewind(scanner, engine, *chat, "c2").files}
    assert actions == {"app.py": "restore", "notes.md": "restore"}
    rewind(scanner, engine, *chat, "c2", mode="files")
    assert files(workspace.root) == {**before, "docs/new.md": b"new\n"}

    # Back to before the first call: the created file goes too.
    assert [f.action for f in plan_rewind(scanner, engine, *chat, "c1").files] == ["delete"]
    rewind(scanner, engine, *chat, "c1", mode="files")
    assert files(workspace.root) == before


async def test_contents_are_kept_once_by_their_hash(
    engine: Engine, workspace: Workspace, scanner: WorkspaceScanner, chat: tuple[str, str]
) -> None:
    checkpoints = recorder(scanner, engine, chat)
    for call_id in ("c1", "c2", "c3"):
        # Each write puts back what the file held, so every checkpoint keeps the same text.
        await run(checkpoints, call_id, WriteFileTool(workspace), path="notes.md", content="x")
        (workspace.root / "notes.md").write_text("first line\nsecond line\n")
    with engine.connect() as connection:
        blobs = connection.execute(select(func.count()).select_from(CheckpointBlob)).scalar()
    assert blobs == 1
    records = checkpoint_store.conversation_checkpoints(engine, chat[0])
    shas = {change.before.sha256 for r in records for change in r.changes if change.before}
    assert len(shas) == 1


async def test_a_binary_file_is_restored_byte_for_byte(
    engine: Engine, workspace: Workspace, scanner: WorkspaceScanner, chat: tuple[str, str]
) -> None:
    image = workspace.root / "logo.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x01\x02" + bytes(range(256)))
    before = image.read_bytes()
    await run(recorder(scanner, engine, chat), "c1", DeleteFileTool(workspace), path="logo.png")
    (planned,) = plan_rewind(scanner, engine, *chat, "c1").files
    assert (planned.action, planned.diff) == (
        "restore",
        "Binary file: its content is restored as it was.",
    )
    rewind(scanner, engine, *chat, "c1", mode="files")
    assert image.read_bytes() == before


async def test_a_file_past_the_size_bound_is_listed_but_not_restored(
    engine: Engine, workspace: Workspace, chat: tuple[str, str]
) -> None:
    big = workspace.root / "big.log"
    big.write_bytes(b"a" * 2048)
    scanner = WorkspaceScanner(workspace, engine, limits=ScanLimits(max_file_bytes=1024))
    await run(
        recorder(scanner, engine, chat), "c1", WriteFileTool(workspace), path="big.log", content="b"
    )
    (planned,) = plan_rewind(scanner, engine, *chat, "c1").files
    assert planned.action == "keep" and "larger than 1024 bytes" in planned.reason
    record = rewind(scanner, engine, *chat, "c1", mode="files")
    assert big.read_text() == "b"
    assert record.refused == (("big.log", planned.reason),)


async def test_a_scan_past_the_file_bound_says_what_it_did_not_watch(
    engine: Engine, workspace: Workspace, chat: tuple[str, str]
) -> None:
    scanner = WorkspaceScanner(workspace, engine, limits=ScanLimits(max_files=1))
    shell = FakeShell(workspace.root, "echo changed > notes.md")
    async with recorder(scanner, engine, chat).around("c1", shell.name, {}):
        await shell.call({})
    (record,) = checkpoint_store.conversation_checkpoints(engine, chat[0])
    assert "more than 1 files" in record.note
    # Only app.py (first in path order) was watched: the change to notes.md is missed.
    assert record.changes == ()


async def test_a_restore_is_refused_for_the_apps_own_files(
    engine: Engine, workspace: Workspace, chat: tuple[str, str]
) -> None:
    checkpoints = recorder(WorkspaceScanner(workspace, engine), engine, chat)
    await run(checkpoints, "c1", WriteFileTool(workspace), path="app.py", content="changed\n")
    # The file became one of the app's own since (its configuration moved there).
    guarded = Workspace(
        workspace.root,
        protected=ProtectedFiles((ProtectedPath(workspace.root / "app.py", CODE),)),
    )
    record = rewind(WorkspaceScanner(guarded, engine), engine, *chat, "c1", mode="files")
    assert (workspace.root / "app.py").read_text() == "changed\n"
    ((path, why),) = record.refused
    assert path == "app.py" and "part of Intent UI itself" in why


async def test_rewinding_the_conversation_cuts_the_turn_before_the_call(
    engine: Engine, workspace: Workspace, scanner: WorkspaceScanner
) -> None:
    chat = new_chat(
        engine,
        [
            TextDelta(1, "Looking first. "),
            CallStarted(2, "read", "read_file", 0, label_bearing=True),
            ArgsComplete(3, "read", '{"intent": "Reading the notes", "path": "notes.md"}'),
            CallSettled(4, "read", "settled", output="first line"),
            CallStarted(5, "w", "write_file", 1, label_bearing=True),
            ArgsComplete(6, "w", '{"intent": "Rewriting the notes", "path": "notes.md"}'),
            CallSettled(7, "w", "settled", output="Wrote", outcome="Wrote notes.md"),
            TextDelta(8, "Done."),
            TurnDone(9, "end_turn"),
        ],
    )
    chat_id, turn_id = chat
    checkpoints = recorder(scanner, engine, chat)
    await run(checkpoints, "w", WriteFileTool(workspace), path="notes.md", content="new\n")
    record = rewind(scanner, engine, chat_id, turn_id, "w", mode="all")
    assert record.label == "Wrote notes.md"
    assert (workspace.root / "notes.md").read_text() == "first line\nsecond line\n"

    # The turn has a new version, shown, holding what it did before the call; the old one
    # is its sibling. The rewind follows it; the model reads up to before the call.
    shown = conv.thread(engine, chat_id)
    assert [m.message.role for m in shown] == ["user", "assistant", conv.REWIND_ROLE]
    assert shown[1].siblings[0] == turn_id and shown[1].message.id != turn_id
    sent = conv.history(engine, chat_id)
    calls = [c["name"] for m in sent for c in m.get("tool_calls", [])]
    assert calls == ["read_file"]
    assert "Done." not in str(sent) and "Looking first." in str(sent)
    assert sent[-1]["role"] == "user" and "rewound the conversation" in sent[-1]["content"]


async def test_a_call_without_a_checkpoint_is_refused_with_what_to_do(
    engine: Engine, scanner: WorkspaceScanner, chat: tuple[str, str]
) -> None:
    with pytest.raises(RewindError, match=r"No checkpoint for call 'nope'.*rewind list"):
        plan_rewind(scanner, engine, *chat, "nope")


class FakeShell:
    """A stand-in for `bash_tool` that runs its command on the host (not sandboxed)."""

    name = "bash_tool"

    def __init__(self, root: Path, command: str) -> None:
        self.root, self.command = root, command

    async def call(self, args: dict[str, Any]) -> None:
        os.system(f"cd {self.root} && {self.command}")


@pytest.fixture
def sandbox_root() -> Iterator[Path]:
    with readable_folder() as folder:
        (folder / "notes.md").write_text("TODO write the notes\n")
        folder.chmod(0o777)
        (folder / "notes.md").chmod(0o666)
        yield folder


@requires_sandbox
async def test_a_shell_command_in_a_writable_sandbox_is_rewound(
    engine: Engine, sandbox_root: Path, chat: tuple[str, str]
) -> None:
    config = AppConfig.model_validate(
        {"workspace": sandbox_root, "sandbox": {"write_workspace": True}}
    )
    protected = ProtectedFiles.for_app(config)
    bash = BashTool(app_sandbox(config, protected))
    assert "writable" in bash.definition["description"]
    scanner = WorkspaceScanner(Workspace(sandbox_root, protected=protected), engine)
    before = files(sandbox_root)
    command = "echo done > notes.md && echo new > made.txt"
    await run(recorder(scanner, engine, chat), "sh", bash, command=command)
    assert (sandbox_root / "notes.md").read_text() == "done\n"
    (record,) = checkpoint_store.conversation_checkpoints(engine, chat[0])
    assert {c.path for c in record.changes} == {"notes.md", "made.txt"}
    rewind(scanner, engine, *chat, "sh", mode="files")
    assert files(sandbox_root) == before


def test_a_writable_sandbox_is_refused_over_the_apps_checkout() -> None:
    checkout = Path(__file__).resolve().parents[2]
    config = AppConfig.model_validate({"workspace": checkout, "sandbox": {"write_workspace": True}})
    assert not app_sandbox(config, ProtectedFiles.for_app(config)).writable


async def test_a_turn_on_the_demo_takes_a_checkpoint_before_its_write(
    engine: Engine, workspace: Workspace
) -> None:
    from intent_ui.agent.runtime import AgentRuntime
    from intent_ui.agent.session import TurnRequest, TurnSessions

    config = AppConfig.model_validate(
        {"endpoints": [{"kind": "demo", "pacing_ms": 0}], "workspace": workspace.root}
    )
    chat_id = conv.create_conversation(
        engine, owner=LOCAL_USER_ID, endpoint="demo", model="demo"
    ).id
    async with AgentRuntime(config) as runtime:
        sessions = TurnSessions(engine=engine, runtime=runtime, config=config)
        session = await sessions.start(
            TurnRequest(chat_id, "write rewritten to notes.md", "demo", "demo")
        )
        await session.wait()
    (call,) = session.view.calls()
    assert (workspace.root / "notes.md").read_text() == "rewritten\n"
    (record,) = checkpoint_store.conversation_checkpoints(engine, chat_id)
    assert (record.call_id, record.tool, record.message_id) == (
        call.call_id,
        "write_file",
        session.message_id,
    )
    scanner = WorkspaceScanner(Workspace(workspace.root, protected=ProtectedFiles(())), engine)
    plan = plan_rewind(scanner, engine, chat_id, session.message_id, call.call_id)
    assert plan.label == session.view.card_label(call.call_id)
    rewind(scanner, engine, chat_id, session.message_id, call.call_id, mode="files")
    assert (workspace.root / "notes.md").read_text() == "first line\nsecond line\n"


async def test_contents_past_the_scan_bound_are_watched_but_not_kept(
    engine: Engine, workspace: Workspace, chat: tuple[str, str]
) -> None:
    # app.py (15 bytes) fits, notes.md (23 more) does not.
    scanner = WorkspaceScanner(workspace, engine, limits=ScanLimits(max_scan_bytes=20))
    shell = FakeShell(workspace.root, "echo changed > notes.md")
    async with recorder(scanner, engine, chat).around("c1", shell.name, {}):
        await shell.call({})
    (record,) = checkpoint_store.conversation_checkpoints(engine, chat[0])
    assert "More than 20 bytes" in record.note
    (change,) = record.changes
    assert change.path == "notes.md" and change.before is not None
    assert not change.before.kept
