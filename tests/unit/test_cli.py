"""`python -m intent_ui run ...` as a real subprocess over a temporary workspace."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
MESSAGE = "find where OAuth and MCP are handled"


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("INTENT_UI_CONFIG", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")
    }
    env["INTENT_UI_DEMO_PACING_MS"] = "0"
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run(
        [sys.executable, "-m", "intent_ui", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "auth.py").write_text(
        "# OAuth callback router\ndef oauth_callback():\n    return 'OAuth ok'\n"
    )
    (folder / "src" / "mcp_client.py").write_text("# MCP wiring\nMCP_SERVERS = {}\n")
    (folder / "README.md").write_text("Handles OAuth.\n")
    return folder


@pytest.fixture
def config(tmp_path: Path, workspace: Path) -> Path:
    file = tmp_path / "intent_ui.yaml"
    file.write_text(f"endpoints:\n  - kind: demo\nworkspace: {workspace}\n")
    return file


def records(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def test_json_run_streams_two_growing_labels_that_settle_on_outcomes(
    tmp_path: Path, config: Path
) -> None:
    done = run_cli("run", MESSAGE, "--json", "--config", str(config), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    events = records(done.stdout)
    assert {"type", "seq", "call_id", "tool", "state", "label", "header", "text"} <= set(events[0])
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(set(seqs))

    starts = [e for e in events if e["type"] == "call_started"]
    assert [e["tool"] for e in starts] == ["grep_search", "grep_search"]
    ids = [e["call_id"] for e in starts]
    intents = ["Searching for OAuth handling", "Searching for MCP handling"]
    for call_id, intent in zip(ids, intents, strict=True):
        streamed = [
            e["label"]
            for e in events
            if e["call_id"] == call_id and e["type"] == "args_delta" and e["state"] == "streaming"
        ]
        partial = [label for label in dict.fromkeys(streamed) if intent.startswith(label)]
        assert len(partial) >= 4, streamed  # the label grows as the intent streams
        assert partial[-1] == intent

    settled = {e["call_id"]: e for e in events if e["type"] == "call_settled"}
    assert settled[ids[0]]["state"] == "settled"
    assert settled[ids[0]]["label"] == "Found 4 matches for OAuth"
    assert settled[ids[1]]["label"] == "Found 2 matches for MCP"

    # The header tracks the live edge: it showed the second intent while it streamed...
    second = [e for e in events if e["call_id"] == ids[1] and e["type"] == "args_delta"]
    assert second[-1]["header"] == intents[1]
    # ...and ends on the outcome of whichever call settled last.
    last_settled = max(settled.values(), key=lambda e: e["seq"])
    assert last_settled["header"] == last_settled["label"]

    done_event = events[-1]
    assert done_event["type"] == "turn_done"
    assert done_event["stop_reason"] == "end_turn"
    reply = "".join(e["text"] for e in events if e["type"] == "text_delta")
    assert "I found 4 matches for OAuth" in reply


def test_capability_off_shows_default_labels(tmp_path: Path, workspace: Path) -> None:
    file = tmp_path / "off.yaml"
    file.write_text(f"endpoints:\n  - kind: demo\nworkspace: {workspace}\ncapabilities: []\n")
    done = run_cli("run", MESSAGE, "--json", "--config", str(file), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    events = records(done.stdout)
    labels = {e["label"] for e in events if e["call_id"]}
    assert labels == {"Running grep_search", "Ran grep_search"}
    final_header = [e["header"] for e in events if e["type"] == "call_settled"][-1]
    assert final_header == "Used 2 tools"


def test_plain_output_prints_one_line_per_change_then_the_reply(
    tmp_path: Path, config: Path
) -> None:
    done = run_cli("run", MESSAGE, "--config", str(config), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "  ✓ Found 4 matches for OAuth" in lines
    assert "  ✓ Found 2 matches for MCP" in lines
    assert any(line.startswith("▸ Searching for MCP") for line in lines)
    assert lines[-1].startswith("I found 4 matches for OAuth")
    assert "\x1b[" not in done.stdout  # no ANSI when stdout is not a terminal


def test_a_broken_config_exits_2_naming_the_key(tmp_path: Path) -> None:
    file = tmp_path / "broken.yaml"
    file.write_text("endpoints:\n  - kind: gpt\n")
    done = run_cli("run", "hi", "--config", str(file), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert "endpoints[0].kind" in line
    assert "'gpt'" in line


def test_an_unknown_endpoint_exits_2(tmp_path: Path, config: Path) -> None:
    done = run_cli("run", "hi", "--config", str(config), "--endpoint", "nope", cwd=tmp_path)
    assert done.returncode == 2
    assert "Unknown endpoint 'nope'" in done.stderr


def test_a_provider_failure_exits_1_with_the_message(tmp_path: Path, workspace: Path) -> None:
    file = tmp_path / "down.yaml"
    file.write_text(
        "endpoints:\n  - kind: openai\n    base_url: http://127.0.0.1:9/v1\n"
        f"    api_key: x\n    models: [m]\nworkspace: {workspace}\n"
    )
    done = run_cli("run", "hi", "--json", "--config", str(file), cwd=tmp_path)
    assert done.returncode == 1
    assert records(done.stdout)[-1]["stop_reason"] == "error"
    (line,) = done.stderr.strip().splitlines()
    assert "127.0.0.1:9" in line


def test_no_arguments_prints_usage(tmp_path: Path) -> None:
    done = run_cli(cwd=tmp_path)
    assert done.returncode == 0
    assert "usage:" in done.stdout
    assert "run" in done.stdout


def openai_config(tmp_path: Path, workspace: Path, base_url: str) -> Path:
    file = tmp_path / "openai.yaml"
    file.write_text(
        f"endpoints:\n  - kind: openai\n    base_url: {base_url}\n"
        f"    api_key: x\n    models: [m]\nworkspace: {workspace}\n"
    )
    return file


@pytest.mark.parametrize("json_output", [False, True], ids=["plain", "json"])
def test_a_lone_surrogate_in_the_reply_prints_everything_as_a_replacement_character(
    tmp_path: Path, workspace: Path, json_output: bool
) -> None:
    from tests.support.sse_server import ReplayServer, Script

    # JSON escapes for lone surrogates, as a provider may send them.
    delta = '{"choices": [{"index": 0, "delta": {"content": "before \\ud800 after"}}]}'
    finish = '{"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}'
    events = [f"data: {delta}\n\n", f"data: {finish}\n\n", "data: [DONE]\n\n"]
    with ReplayServer([Script.sse(events)]) as server:
        file = openai_config(tmp_path, workspace, f"{server.base_url}/v1")
        flags = ["--json"] if json_output else []
        done = run_cli("run", "hi", *flags, "--config", str(file), cwd=tmp_path)
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr
    if json_output:
        assert records(done.stdout)[-1]["reply"] == "before \ufffd after"
    else:
        assert done.stdout.strip() == "before \ufffd after"


HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b[31m"


def test_escape_sequences_in_a_reply_never_reach_the_terminal(
    tmp_path: Path, workspace: Path
) -> None:
    from tests.support.sse_server import ReplayServer, Script
    from tests.support.wire import openai_chunks

    events = openai_chunks(text=f"{HOSTILE}Found it.\x9b0m\nSecond line", finish_reason="stop")
    with ReplayServer([Script.sse(events)]) as server:
        file = openai_config(tmp_path, workspace, f"{server.base_url}/v1")
        done = run_cli("run", "hi", "--config", str(file), cwd=tmp_path)
        server.enqueue(Script.sse(events))
        as_json = run_cli("run", "hi", "--json", "--config", str(file), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Found it.\nSecond line\n"
    # JSON keeps the reply faithful, every control character escaped.
    assert records(as_json.stdout)[-1]["reply"].startswith(f"{HOSTILE}Found it.\x9b0m")
    assert not any(char in as_json.stdout for char in "\x1b\x07\x9b")


def test_escape_sequences_in_a_provider_error_never_reach_the_terminal(
    tmp_path: Path, workspace: Path
) -> None:
    from tests.support.sse_server import ReplayServer, Script

    body = {"error": {"message": f"{HOSTILE}bad model\x07 name"}}
    with ReplayServer([Script.json(400, body)]) as server:
        file = openai_config(tmp_path, workspace, f"{server.base_url}/v1")
        done = run_cli("run", "hi", "--json", "--config", str(file), cwd=tmp_path)
    assert done.returncode == 1
    assert "bad model name" in done.stderr
    for stream in (done.stdout, done.stderr):
        assert not any(char in stream for char in "\x1b\x07\x9b")


def test_a_reply_cut_off_by_max_tokens_exits_3_and_says_so(tmp_path: Path, workspace: Path) -> None:
    from tests.support.sse_server import ReplayServer, Script
    from tests.support.wire import openai_chunks

    events = openai_chunks(text="The answer is", finish_reason="length")
    with ReplayServer([Script.sse(events)]) as server:
        file = openai_config(tmp_path, workspace, f"{server.base_url}/v1")
        done = run_cli("run", "hi", "--config", str(file), cwd=tmp_path)
    assert done.returncode == 3
    assert done.stdout.strip() == "The answer is"  # what arrived is still shown
    assert "max_tokens" in done.stderr


def test_the_help_documents_the_exit_codes(tmp_path: Path) -> None:
    done = run_cli("run", "--help", cwd=tmp_path)
    assert done.returncode == 0
    for line in ("0 ", "1 ", "2 ", "3 ", "130 "):
        assert line in done.stdout
    assert "max_tokens" in done.stdout


def test_a_terminal_that_cannot_show_unicode_still_gets_the_whole_turn(
    tmp_path: Path, config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONIOENCODING", "ascii")
    done = run_cli("run", MESSAGE, "--config", str(config), cwd=tmp_path)
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "  ? Found 4 matches for OAuth" in lines  # the ✓ it cannot encode is replaced
    assert lines[-1].startswith("I found 4 matches for OAuth")


def test_json_lines_stay_short_while_a_very_long_intent_streams() -> None:
    from intent_ui.agent.cli import event_record
    from intent_ui.core.events import ArgsDelta, CallStarted
    from intent_ui.core.turn import TurnView

    view = TurnView()
    view.apply(CallStarted(1, "c", "read_file", 0, label_bearing=True))
    sizes = []
    text = '{"intent": "' + "Reading carefully " * 1_200
    for seq, char in enumerate(text, start=2):
        event = ArgsDelta(seq, "c", char)
        view.apply(event)
        sizes.append(len(json.dumps(event_record(view, event))))
    assert max(sizes) < 600  # before: each line carried the whole intent so far (20 KB)
    last = event_record(view, event)
    assert last["label"].startswith("Reading carefully") and last["label"].endswith("…")


def test_a_chosen_goal_is_a_json_line_naming_the_goal() -> None:
    from intent_ui.agent.cli import event_record
    from intent_ui.core.events import GoalSelected
    from intent_ui.core.turn import TurnView

    view = TurnView()
    event = GoalSelected(1, "research", "Find things in the code")
    view.apply(event)
    line = json.loads(json.dumps(event_record(view, event)))
    assert line["type"] == "goal_selected"  # before: "goalselected", and no goal in it
    assert (line["goal_id"], line["label"]) == ("research", "Find things in the code")


def test_piped_lines_mark_each_ending_and_keep_live_calls_open() -> None:
    import io

    from intent_ui.agent.cli import _PlainRenderer
    from intent_ui.core.states import CALL_STATES
    from intent_ui.core.turn import TurnView
    from tests.support.turn_events import events_reaching

    view = TurnView()
    out = io.StringIO()
    renderer = _PlainRenderer(view, out, "en")
    for group, state in enumerate(CALL_STATES):
        for event in events_reaching(state, state, group=group, first_seq=10 * group + 1):
            view.apply(event)
    renderer.show(event)
    assert out.getvalue().splitlines() == [
        "  … Running read_file",
        "  … Running read_file",
        "  … Running read_file",
        "  ✓ Ran read_file",
        "  ✗ Failed: Ran read_file",
        "  ⊘ Cancelled: Running read_file",
    ]


# --- the live view on a terminal ----------------------------------------------------------

_CSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
LONG_INTENTS = (
    "Reading the configuration file carefully, line by line",
    "設定ファイルを一行ずつ丁寧に読んでいます",  # two columns a character
)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _last_frame(output: str) -> list[str]:
    """The lines the terminal shows once the live view ended: rich redraws each frame
    from the start of its first line (a carriage return, then cursor moves)."""
    return [line.rstrip() for line in _CSI.sub("", output).split("\r")[-1].splitlines()]


def _two_long_calls(view: Any, renderer: Any) -> None:
    from intent_ui.core.events import ArgsComplete, ArgsDelta, CallSettled, CallStarted

    events = [
        CallStarted(1, "a", "read_file", 0, label_bearing=True),
        CallStarted(2, "b", "read_file", 0, label_bearing=True),
        ArgsDelta(3, "a", json.dumps({"intent": LONG_INTENTS[0]})),
        ArgsDelta(4, "b", json.dumps({"intent": LONG_INTENTS[1]}, ensure_ascii=False)),
        ArgsComplete(5, "a", json.dumps({"intent": LONG_INTENTS[0]})),
        CallSettled(6, "a", "settled"),
    ]
    for event in events:
        view.apply(event)
        renderer.show(event)


def test_a_narrow_terminal_shows_each_call_on_one_line_cut_with_an_ellipsis() -> None:
    from rich.cells import cell_len
    from rich.console import Console

    from intent_ui.agent.cli import _LiveRenderer
    from intent_ui.core.turn import TurnView

    out = io.StringIO()
    view = TurnView()
    renderer = _LiveRenderer(view, Console(file=out, width=40, force_terminal=True), "en")
    _two_long_calls(view, renderer)
    renderer.close()
    header, settled, live = _last_frame(out.getvalue())
    assert header.startswith("▸ 設定ファイル")
    assert settled.startswith("  ✓ Reading the configuration")
    assert live.startswith("  ") and live[4:].startswith("設定ファイル")
    for line in (header, settled, live):
        # Cut where the 40 columns end, never wrapped onto a second line.
        assert cell_len(line) <= 40 and line.endswith("…"), line


def test_the_live_view_gives_the_cursor_back_when_the_turn_fails() -> None:
    import argparse

    from intent_ui.agent.cli import _consume

    class Broken(Exception):
        pass

    async def failing_turn() -> Any:
        from intent_ui.core.events import CallStarted

        yield CallStarted(1, "a", "read_file", 0)
        raise Broken

    out = _Terminal()
    with pytest.raises(Broken):
        asyncio.run(_consume(failing_turn(), argparse.Namespace(json=False, lang="en"), out))
    hide, show = "\x1b[?25l", "\x1b[?25h"
    assert hide in out.getvalue()
    assert out.getvalue().rindex(show) > out.getvalue().rindex(hide)
    assert _last_frame(out.getvalue())[0].endswith("Running read_file")


def test_a_short_terminal_shows_the_newest_calls_then_all_of_them() -> None:
    from rich.console import Console

    from intent_ui.agent.cli import _LiveRenderer
    from intent_ui.core.turn import TurnView
    from tests.support.turn_events import events_reaching

    out = io.StringIO()
    view = TurnView()
    renderer = _LiveRenderer(view, Console(file=out, width=40, height=4, force_terminal=True), "en")
    for group in range(6):
        for event in events_reaching("settled", f"c{group}", group=group, first_seq=10 * group + 1):
            view.apply(event)
            renderer.show(event)
    renderer._live.refresh()  # draw now, not when the refresh thread next wakes
    assert _last_frame(out.getvalue()) == ["⋮", "✓ Ran read_file", "✓ Ran read_file"]
    renderer.close()
    assert _last_frame(out.getvalue()) == ["✓ Ran read_file"] * 6


def test_a_json_line_cut_while_streaming_never_splits_an_emoji() -> None:
    from intent_ui.agent.cli import event_record
    from intent_ui.core.events import ArgsDelta, CallStarted
    from intent_ui.core.turn import TurnView
    from tests.support.graphemes import FAMILY

    view = TurnView()
    view.apply(CallStarted(1, "c", "read_file", 0, label_bearing=True))
    event = ArgsDelta(2, "c", json.dumps({"intent": "Reading " + FAMILY * 200}))
    view.apply(event)
    # 120 characters as a reader counts them: "Reading ", 111 families and the ellipsis.
    assert event_record(view, event)["label"] == "Reading " + FAMILY * 111 + "…"
