"""`python -m intent_ui rewind`: list the checkpoints, show one, restore it, headless, with
clear errors for what cannot be done."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine

from intent_ui.agent.checkpoints import TurnCheckpoints, WorkspaceScanner
from intent_ui.agent.cli import main
from intent_ui.agent.tools.native import WriteFileTool
from intent_ui.agent.tools.protected import ProtectedFiles
from intent_ui.agent.tools.workspace import Workspace
from intent_ui.core.events import ArgsComplete, CallSettled, CallStarted, TurnDone
from intent_ui.store import checkpoints as checkpoint_store
from intent_ui.store import conversations as conv
from intent_ui.store.models import LOCAL_USER_ID
from tests.support.store import record_turn


@pytest.fixture
def setup(engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A workspace whose notes.md a recorded turn rewrote, its checkpoint kept; the
    command line reads this database and a configuration naming that workspace."""
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "notes.md").write_text("kept\n")
    config = tmp_path / "intent_ui.yaml"
    config.write_text(f"workspace: {root}\n")
    monkeypatch.setenv("DB_URL", str(engine.url))
    monkeypatch.setenv("INTENT_UI_CONFIG", str(config))
    chat_id = conv.create_conversation(
        engine, owner=LOCAL_USER_ID, endpoint="demo", model="demo"
    ).id
    conv.add_user_message(engine, chat_id, "rewrite the notes")
    turn_id = conv.start_assistant_message(engine, chat_id)
    record_turn(
        engine,
        turn_id,
        [
            CallStarted(1, "w", "write_file", 0, label_bearing=True),
            ArgsComplete(2, "w", '{"intent": "Rewriting the notes", "path": "notes.md"}'),
            CallSettled(3, "w", "settled", output="Wrote", outcome="Rewrote the notes"),
            TurnDone(4, "end_turn"),
        ],
    )
    return root, chat_id


async def write(engine: Engine, root: Path, chat_id: str) -> str:
    scanner = WorkspaceScanner(Workspace(root, protected=ProtectedFiles(())), engine)
    turn_id = conv.messages(engine, chat_id)[-1].id
    recorder = TurnCheckpoints(scanner, engine, conversation_id=chat_id, message_id=turn_id)
    args = {"path": "notes.md", "content": "changed\n"}
    async with recorder.around("w", "write_file", args):
        await WriteFileTool(scanner.workspace).call(args)
    (record,) = checkpoint_store.conversation_checkpoints(engine, chat_id)
    return record.id


async def test_list_show_and_restore(
    engine: Engine, setup: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    root, chat_id = setup
    checkpoint = await write(engine, root, chat_id)

    assert main(["rewind", "list"]) == 0
    listed = capsys.readouterr().out
    assert checkpoint[:12] in listed and "write_file" in listed
    assert "1 file  Rewind to before: Rewrote the notes" in listed

    assert main(["rewind", "show", checkpoint[:8]]) == 0
    shown = capsys.readouterr().out
    assert "restore: notes.md" in shown and "-changed" in shown and "+kept" in shown
    assert (root / "notes.md").read_text() == "changed\n"

    assert main(["rewind", "restore", checkpoint, "--yes"]) == 0
    assert "files restored: notes.md" in capsys.readouterr().out
    assert (root / "notes.md").read_text() == "kept\n"
    assert conv.messages(engine, chat_id)[-1].role == conv.REWIND_ROLE


async def test_restore_without_a_terminal_needs_yes(
    engine: Engine, setup: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    root, chat_id = setup
    checkpoint = await write(engine, root, chat_id)
    assert main(["rewind", "restore", checkpoint]) == 2
    assert "pass --yes" in capsys.readouterr().err
    assert (root / "notes.md").read_text() == "changed\n"


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("abc", "at least 6 characters"),
        ("ffffffffff", "no checkpoint 'ffffffffff'; `python -m intent_ui rewind list`"),
    ],
)
def test_a_bad_checkpoint_id_says_what_to_do(
    setup: tuple[Path, str], capsys: pytest.CaptureFixture[str], given: str, said: str
) -> None:
    assert main(["rewind", "restore", given, "--yes"]) == 2
    assert said in capsys.readouterr().err


def test_an_empty_store_lists_no_checkpoints(
    setup: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rewind", "list"]) == 0
    assert capsys.readouterr().out == "No checkpoints.\n"
