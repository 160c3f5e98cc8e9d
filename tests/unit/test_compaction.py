"""Compaction: past the budget, old tool bodies give way to one ledger line per call,
pinned ahead of everything the model reads."""

from __future__ import annotations

import json
from collections.abc import Sequence

from intent_ui.core.compaction import (
    LEDGER_HEADER,
    MESSAGE_OVERHEAD_TOKENS,
    CompactionMark,
    ContextBudget,
    Entry,
    TurnEntry,
    UserEntry,
    build_history,
    history_tokens,
    ledger_lines,
    touched,
)
from intent_ui.core.events import TurnEvent
from intent_ui.core.history import turn_history
from intent_ui.core.turn import TurnView
from tests.support.turn_scripts import (
    Script,
    cancelled_turn,
    errors_and_cancel,
    intent_args,
    parallel_out_of_order,
)


def chars(text: str) -> int:
    """A tokenizer stand-in whose counts a reader can check: one token per character."""
    return len(text)


def turn(events: Sequence[TurnEvent]) -> TurnView:
    return TurnView.replay(events)


def read_turn(path: str, *, output: str = "x" * 400) -> TurnView:
    """One round reading `path` (a long result), then a short reply."""
    args = intent_args(f"Reading {path}", path=path)
    s = Script().text("Reading.").start("r", 0, tool="read_file").complete("r", args)
    s.settle("r", output=output, outcome=f"Read {path}")
    return turn(s.text(f"{path} is fine.").done().events)


def test_each_call_is_one_line_intent_outcome_status_and_what_it_touched() -> None:
    assert ledger_lines(turn(parallel_out_of_order())) == [
        "search_code [success]: Searching for MCP wiring · queries: mcp",
        "search_code [success]: Reading the OAuth handler · files: auth.py",
        "search_code [success]: Listing the tests → Listed the tests · files: tests/",
    ]


def test_an_error_keeps_its_message_and_a_cancelled_call_its_partial_intent() -> None:
    assert ledger_lines(turn(errors_and_cancel())) == [
        "search_code [error]: Fetching the issue → 404 Not Found",
        "search_code [cancelled]: Fetching the pull request Fe",
    ]
    # A call without an intent (not label-bearing) still has its line.
    assert ledger_lines(turn(cancelled_turn()))[1] == "read_file [cancelled]"


def test_a_call_that_never_finished_reads_as_interrupted() -> None:
    args = json.dumps({"command": "pytest -q"})
    s = Script().start("b", 0, tool="bash_tool", label_bearing=False).complete("b", args)
    assert ledger_lines(turn(s.events)) == ["bash_tool [interrupted] · commands: pytest -q"]


def test_a_call_is_named_as_the_model_called_it() -> None:
    args = intent_args("Searching GitHub", query="oauth")
    s = Script().start("g", 0, tool="search", called_as="search_mcp_github").complete("g", args)
    s.settle("g", output="3 hits", outcome="Found 3 hits")
    assert ledger_lines(turn(s.events)) == [
        "search_mcp_github [success]: Searching GitHub → Found 3 hits · queries: oauth"
    ]


def test_touched_names_files_commands_and_queries_from_the_arguments() -> None:
    args = {
        "intent": "Running the tests in src",
        "command": "cd src &&\npytest -q",
        "paths": ["src/a.py", "src/b.py", 7],
        "query": "",
        "content": "a whole file is not a thing it touched",
    }
    assert touched(args) == [
        ("files", ["src/a.py", "src/b.py"]),
        ("commands", ["cd src && pytest -q"]),
    ]
    assert touched(json.dumps(args)) == touched(args)
    assert touched("{not json") == [] and touched("[1]") == []


def test_under_the_budget_the_history_is_the_turns_as_they_were() -> None:
    first = read_turn("a.py")
    entries: list[Entry] = [UserEntry("check a.py"), TurnEntry(first)]
    built = build_history(entries, ContextBudget(10_000, chars))
    assert built.messages == [{"role": "user", "content": "check a.py"}, *turn_history(first)]
    assert built.compacted == ()
    assert built.tokens == history_tokens(built.messages, chars)


def test_past_the_budget_tool_bodies_give_way_to_the_ledger_pinned_first() -> None:
    entries: list[Entry] = [
        UserEntry("check a.py"),
        TurnEntry(read_turn("a.py")),
        UserEntry("and b.py"),
        TurnEntry(read_turn("b.py")),
    ]
    built = build_history(entries, ContextBudget(300, chars))
    assert built.compacted == (
        "read_file [success]: Reading a.py → Read a.py · files: a.py",
        "read_file [success]: Reading b.py → Read b.py · files: b.py",
    )
    assert built.messages == [
        {"role": "system", "content": "\n".join([LEDGER_HEADER, *built.compacted])},
        {"role": "user", "content": "check a.py"},
        {"role": "assistant", "content": "Reading.\n\na.py is fine."},
        {"role": "user", "content": "and b.py"},
        {"role": "assistant", "content": "Reading.\n\nb.py is fine."},
    ]
    assert built.tokens is not None and built.tokens <= 600
    assert not any("tool_calls" in m or m["role"] == "tool" for m in built.messages)


def test_a_recorded_compaction_stays_and_a_later_one_adds_its_lines_below() -> None:
    old = ("read_file [success]: Reading a.py → Read a.py · files: a.py",)
    entries: list[Entry] = [
        UserEntry("check a.py"),
        TurnEntry(read_turn("a.py")),
        CompactionMark(old),
        UserEntry("and b.py"),
        TurnEntry(read_turn("b.py")),
    ]
    # Under the budget: the turn before the mark stays compacted, the one after it whole.
    roomy = build_history(entries, ContextBudget(100_000, chars))
    assert roomy.compacted == ()
    assert roomy.messages[0] == {"role": "system", "content": f"{LEDGER_HEADER}\n{old[0]}"}
    assert roomy.messages[2] == {"role": "assistant", "content": "Reading.\n\na.py is fine."}
    assert roomy.messages[4:] == turn_history(read_turn("b.py"))
    # Past it: the next turn is compacted, its line below the earlier one, the block first.
    tight = build_history([*entries, UserEntry("now c.py")], ContextBudget(300, chars))
    assert tight.compacted == ("read_file [success]: Reading b.py → Read b.py · files: b.py",)
    assert tight.messages[0]["content"].split("\n") == [LEDGER_HEADER, *old, *tight.compacted]
    assert [m["role"] for m in tight.messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    # Without a budget, the recorded compaction is still what the model reads.
    assert build_history(entries).messages == roomy.messages


def test_turns_without_calls_are_not_compacted_whatever_their_size() -> None:
    chat = turn(Script().text("y" * 500).done().events)
    entries: list[Entry] = [UserEntry("talk"), TurnEntry(chat)]
    built = build_history(entries, ContextBudget(10, chars))
    assert built.compacted == ()
    assert built.messages == [{"role": "user", "content": "talk"}, *turn_history(chat)]


def test_without_a_budget_nothing_is_counted_or_compacted() -> None:
    built = build_history([UserEntry("hi"), TurnEntry(read_turn("a.py"))])
    assert built.tokens is None and built.compacted == ()


def test_the_count_includes_calls_names_and_arguments() -> None:
    message = {
        "role": "assistant",
        "content": "ok",
        "tool_calls": [{"id": "c", "name": "read_file", "arguments": '{"path": "a"}'}],
    }
    assert history_tokens([message], chars) == MESSAGE_OVERHEAD_TOKENS + 2 + 9 + 13
    assert history_tokens([{"role": "user", "content": "hi"}], chars) == (
        MESSAGE_OVERHEAD_TOKENS + 2
    )
