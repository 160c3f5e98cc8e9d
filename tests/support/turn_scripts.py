"""Whole turns as a run records them: event sequences for the tests (and benchmarks) of
what is built from a turn's events, with arguments streamed in small fragments."""

from __future__ import annotations

import json
from collections.abc import Callable

from intent_ui.core.events import (
    ActivityLabel,
    ApprovalDecided,
    ApprovalRequested,
    ArgsComplete,
    ArgsDelta,
    CallBackgrounded,
    CallSettled,
    CallStarted,
    GoalSelected,
    QuestionAnswered,
    QuestionAsked,
    SubagentStarted,
    TextDelta,
    TurnDone,
    TurnEvent,
)
from intent_ui.core.states import FinalState


class Script:
    """Builds one turn's events; each call stamps the next seq (and a time, 0.1 s on)."""

    def __init__(self) -> None:
        self.events: list[TurnEvent] = []

    @property
    def _seq(self) -> int:
        return len(self.events) + 1

    @property
    def _at(self) -> float:
        return 1000.0 + len(self.events) / 10

    def text(self, text: str, pieces: int = 3) -> Script:
        for piece in _split(text, pieces):
            self.events.append(TextDelta(self._seq, piece))
        return self

    def start(self, call_id: str, group: int, tool: str = "search_code", **kw: object) -> Script:
        kw.setdefault("label_bearing", True)
        self.events.append(CallStarted(self._seq, call_id, tool, group, at=self._at, **kw))  # type: ignore[arg-type]
        return self

    def args(self, call_id: str, arguments: str, size: int = 7) -> Script:
        for i in range(0, len(arguments), size):
            self.events.append(ArgsDelta(self._seq, call_id, arguments[i : i + size]))
        return self

    def complete(self, call_id: str, arguments: str) -> Script:
        self.events.append(ArgsComplete(self._seq, call_id, arguments))
        return self

    def background(self, call_id: str) -> Script:
        self.events.append(CallBackgrounded(self._seq, call_id))
        return self

    def settle(self, call_id: str, state: FinalState = "settled", **kw: object) -> Script:
        self.events.append(CallSettled(self._seq, call_id, state, at=self._at, **kw))  # type: ignore[arg-type]
        return self

    def summary(self, group: int, label: str) -> Script:
        self.events.append(ActivityLabel(self._seq, group, label))
        return self

    def goal(self, goal_id: str, label: str) -> Script:
        self.events.append(GoalSelected(self._seq, goal_id, label))
        return self

    def ask_approval(self, call_id: str, tool_id: str = "delete_file", **kw: object) -> Script:
        self.events.append(ApprovalRequested(self._seq, call_id, tool_id, at=self._at, **kw))  # type: ignore[arg-type]
        return self

    def decide(self, call_id: str, verdict: str = "approved", **kw: object) -> Script:
        self.events.append(ApprovalDecided(self._seq, call_id, verdict, at=self._at, **kw))  # type: ignore[arg-type]
        return self

    def ask(self, call_id: str, question: str, choices: list[str] | None = None) -> Script:
        self.events.append(QuestionAsked(self._seq, call_id, question, choices, at=self._at))
        return self

    def answer(self, call_id: str, answer: str) -> Script:
        self.events.append(QuestionAnswered(self._seq, call_id, answer, at=self._at))
        return self

    def subagent(self, call_id: str, agent: str = "", model: str = "demo") -> Script:
        self.events.append(SubagentStarted(self._seq, call_id, agent, model, at=self._at))
        return self

    def done(self, stop_reason: str = "end_turn", **kw: object) -> Script:
        self.events.append(TurnDone(self._seq, stop_reason, at=self._at, **kw))  # type: ignore[arg-type]
        return self

    def interleave(self, *streams: tuple[str, str], size: int = 5) -> Script:
        """Argument fragments of several calls, round robin, as parallel calls stream."""
        chunks = [
            [(call_id, text[i : i + size]) for i in range(0, len(text), size)]
            for call_id, text in streams
        ]
        while any(chunks):
            for queue in chunks:
                if queue:
                    call_id, piece = queue.pop(0)
                    self.events.append(ArgsDelta(self._seq, call_id, piece))
        return self


def _split(text: str, pieces: int) -> list[str]:
    size = max(1, -(-len(text) // pieces))
    return [text[i : i + size] for i in range(0, len(text), size)]


def intent_args(intent: str, **more: object) -> str:
    return json.dumps({"intent": intent, **more}, ensure_ascii=False)


def parallel_out_of_order() -> list[TurnEvent]:
    """Text, three parallel calls streaming together, settling out of order, a summary,
    more text."""
    a = intent_args("Searching for MCP wiring", query="mcp")
    b = intent_args("Reading the OAuth handler", path="auth.py")
    c = intent_args("Listing the tests", path="tests/")
    s = Script().text("Let me look around.\n").start("a", 0).start("b", 0).start("c", 0)
    s.interleave(("a", a), ("b", b), ("c", c))
    s.complete("a", a).complete("b", b).complete("c", c)
    s.settle("c", output="12 files", outcome="Listed the tests")
    s.settle("a", output="3 matches").settle("b", output="...")
    s.summary(0, "Looked at the MCP and OAuth code")
    return s.text("Found it: the handler skips refresh.").done().events


def rounds_with_text_between() -> list[TurnEvent]:
    """Two rounds with reply text before, between and after them; the first text keeps
    growing after the first call started (one text part, then the group)."""
    first = intent_args("Reading the config", path="config.toml")
    second = intent_args("Checking the migrations", path="migrations/")
    s = Script().goal("research", "Find why the login fails").text("Starting.")
    s.start("r1", 0).args("r1", first).complete("r1", first).settle("r1", output="ok")
    s.text(" The config is fine; next, the migrations.\n\n")
    s.start("r2", 1).args("r2", second).complete("r2", second)
    s.start("r3", 1, tool="read_file", label_bearing=False)
    s.args("r3", '{"path": "a.py"}').complete("r3", '{"path": "a.py"}')
    s.settle("r3", output="...").settle("r2", output="2 pending")
    return s.text("Two migrations are pending.").done().events


def errors_and_cancel() -> list[TurnEvent]:
    """A call fails, another is still streaming when the turn ends with an error."""
    a = intent_args("Fetching the issue", number=17)
    b = intent_args("Fetching the pull request " * 3, number=18)
    s = Script().start("e1", 0).start("e2", 0)
    s.args("e1", a).complete("e1", a).settle("e1", "error", error="404 Not Found")
    s.args("e2", b[:40])
    return s.done(
        "error",
        error="upstream reset\nTraceback (most recent call last):\n x",
        error_kind="provider",
    ).events


def cancelled_turn() -> list[TurnEvent]:
    """The reader stopped the turn while two calls ran."""
    a = intent_args("Scanning the repository")
    s = Script().text("On it.").start("k1", 0).start("k2", 0, tool="read_file", label_bearing=False)
    s.args("k1", a[:30]).args("k2", '{"path": "x')
    return s.done("cancelled").events


def background_harvest() -> list[TurnEvent]:
    """A call goes to the background, the turn ends, its result arrives later."""
    a = intent_args("Running the test suite")
    s = Script().start("bg", 0).args("bg", a).complete("bg", a).background("bg")
    s.start("fg", 0).args("fg", a).complete("fg", a).settle("fg", output="done")
    s.text("The suite runs in the background.").done()
    s.settle("bg", output="421 passed", outcome="Ran the test suite")
    return s.events


def long_intents() -> list[TurnEvent]:
    """Intents past the label cap and past the title window, with emoji, streamed."""
    long = "Reading 🙂 every module of the package, one by one, " * 60  # ~3 KB
    medium = "Tracing the request 🚀 through the middleware stack and back " * 3
    s = Script().text("Reading 👀 the code. ").start("l1", 0).start("l2", 0)
    s.interleave(("l1", intent_args(long, path="a")), ("l2", intent_args(medium, path="b")), size=9)
    s.complete("l1", intent_args(long, path="a")).complete("l2", intent_args(medium, path="b"))
    s.settle("l2", output="ok").settle("l1", output="ok")
    return s.text("Done 🎉 — with 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 too.").done().events


def identical_siblings() -> list[TurnEvent]:
    """Two calls with one intent, told apart by their arguments once these are final."""
    a = intent_args("Searching the codebase", query="oauth")
    b = intent_args("Searching the codebase", query="mcp")
    s = Script().start("s1", 0, server="github").start("s2", 0, server="github")
    s.interleave(("s1", a), ("s2", b)).complete("s1", a).complete("s2", b)
    s.settle("s2", output="1").settle("s1", output="2")
    return s.done().events


def crowded_group(n: int = 42) -> list[TurnEvent]:
    """More live calls than `CALM_AFTER` and cards than `LAZY_AFTER`, in one group."""
    s = Script()
    for i in range(n):
        s.start(f"w{i}", 0, tool="read_file")
    s.interleave(*((f"w{i}", intent_args(f"Reading file {i}", path=f"{i}.py")) for i in range(n)))
    for i in reversed(range(n)):
        s.complete(f"w{i}", intent_args(f"Reading file {i}", path=f"{i}.py"))
        s.settle(f"w{i}", output="ok")
    return s.done().events


def approvals_and_question() -> list[TurnEvent]:
    """Three calls that wait for the user: one approved with rewritten arguments (and a
    new intent), one denied with a reason, then a question answered in the next round."""
    d1 = intent_args("Deleting the staging migrations", path="migrations/staging")
    d2 = intent_args("Deleting the prod migrations", path="migrations/prod")
    q = intent_args("Asking which database to use", question="Which database?")
    edited = intent_args("Deleting the old staging migrations", path="migrations/staging/old")
    s = Script().text("Cleaning up.").start("d1", 0, tool="delete_file")
    s.start("d2", 0, tool="delete_file").interleave(("d1", d1), ("d2", d2))
    s.complete("d1", d1).ask_approval("d1", agent_scope=True)
    s.complete("d2", d2).ask_approval("d2")
    s.decide("d1", arguments=edited).settle("d1", output="Deleted", outcome="Deleted 3 files")
    s.decide("d2", "denied", reason="not the prod ones")
    s.settle("d2", "cancelled", error="The user denied this tool call, so it did not run.")
    s.start("q1", 1, tool="ask_user_question").args("q1", q).complete("q1", q)
    s.ask("q1", "Which database?", ["Postgres", "SQLite"]).answer("q1", "Postgres")
    s.settle("q1", output="Postgres")
    return s.text("Done.").done().events


def stopped_while_waiting() -> list[TurnEvent]:
    """The reader stopped the turn while a call waited for approval (and a question)."""
    d = intent_args("Deleting the build folder", path="build")
    q = intent_args("Asking which branch", question="Which branch?")
    s = Script().start("w1", 0, tool="delete_file").start("w2", 0, tool="ask_user_question")
    s.args("w1", d).complete("w1", d).ask_approval("w1")
    s.args("w2", q).complete("w2", q).ask("w2", "Which branch?")
    return s.done("cancelled").events


def subagent_with_approval() -> list[TurnEvent]:
    """A `subagent` call whose child (the saved agent "Auditor") searches, then asks
    before deleting: the approval waits in the parent turn, is approved, and the child's
    answer settles the parent call."""
    p = intent_args("Delegating the OAuth audit", task="audit the callback router")
    g = intent_args("Searching for the callback router", pattern="callback")
    d = intent_args("Deleting the stale callbacks", path="old_callbacks.py")
    s = Script().start("s1", 0, tool="subagent").args("s1", p).complete("s1", p)
    s.subagent("s1", "Auditor", "demo")
    s.start("s1~c1", 0, tool="grep_search", parent="s1").args("s1~c1", g).complete("s1~c1", g)
    s.settle("s1~c1", output="3 matches", outcome="Found 3 matches for callback")
    s.start("s1~c2", 1, tool="delete_file", parent="s1").args("s1~c2", d).complete("s1~c2", d)
    s.ask_approval("s1~c2").decide("s1~c2").settle("s1~c2", output="Deleted")
    s.settle("s1", output="The audit found 3 callbacks.")
    return s.text("The subagent found 3 callbacks.").done().events


SCRIPTS: dict[str, Callable[[], list[TurnEvent]]] = {
    "parallel_out_of_order": parallel_out_of_order,
    "rounds_with_text_between": rounds_with_text_between,
    "errors_and_cancel": errors_and_cancel,
    "cancelled_turn": cancelled_turn,
    "background_harvest": background_harvest,
    "long_intents": long_intents,
    "identical_siblings": identical_siblings,
    "crowded_group": crowded_group,
    "approvals_and_question": approvals_and_question,
    "stopped_while_waiting": stopped_while_waiting,
    "subagent_with_approval": subagent_with_approval,
}
"""Every recorded-shape turn above, by name."""
