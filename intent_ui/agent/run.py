"""The agent run loop: one user message in, a stream of `TurnEvent`s out.

`run_turn(...)` returns a `TurnRun`. Iterate it (or `run.events()`) to drive the turn;
once `TurnDone` has gone out, `run.new_messages` holds the neutral messages to append to
the conversation history (the user message first), built by `core.history` with the
rules a stored turn is read back by.

How a turn goes (all pinned by `tests/unit/test_run_loop.py`):

- The capability pipeline shapes the tool definitions once per turn (intent before
  background, so `intent` stays first; docs/capabilities.md) under the model-facing
  names; its `intent_tool_names` is the server-side label gate carried in every
  `CallStarted.label_bearing` (docs/labels.md). Given the runtime's `RequestCache`, a turn
  over the same tools and options as an earlier one reuses its frozen definitions and
  the pipeline's result (`request_cache.py`; pinned by `tests/unit/test_request_cache.py`).
- Each round streams the provider. One monotonic `seq` counter stamps every event of the
  turn; each round that opens a tool call gets the next group index.
- `ToolCallEnd` (the provider's end-of-call signal) emits `ArgsComplete` and starts that
  tool at once, so parallel calls run concurrently. Only the tool's result settles a call.
- Before a label-bearing tool runs, the intent is read and stripped (and
  `run_in_background` too when that capability is on): no tool sees a parameter it did not
  declare. A business `intent` of a tool without a label passes through untouched.
- A call that must wait for a person (an approval, `ask_user_question`) waits in the
  turn's `Pauses` before it runs (`pauses.py`), outside its timeout. Given `resume` (a
  `core.resume.ResumePoint`: the turn waited when its server stopped), the turn starts
  at that round instead of the user's words: its settled calls as they ended, its
  waiting calls admitted again (`resume.py` starts such turns).
- Every foreground call is bounded by `tool_timeout` (the `tool_timeout_s` setting): past
  it the call settles as `error` and its task is cancelled. A tool blocked in a worker
  thread cannot be killed (Python has no way to), so the thread is abandoned (see
  `tools.worker`); the turn goes on either way.
- A tool's result is made sendable where it enters (`_invoke`): a lone surrogate in its
  texts (a file name that is not UTF-8, a search result's JSON) becomes U+FFFD, so the
  next request, the summarizer and the card all carry the same text.
- Failures are events, never exceptions: a tool that raises settles as `error`; an unknown
  tool gets a card and an error result; a provider error settles unfinished calls as
  `error` and ends the turn with `TurnDone("error")`; `max_tokens` settles cut-off calls;
  a stop request (the `stop` event, `TurnRun.stop()`, or cancelling the task) cancels the
  stream and the tools and settles what was unfinished as `cancelled`.
- `run_in_background: true` answers the model with a handle at once (`CallBackgrounded`);
  the real result settles the call when it arrives, and the turn waits for it (bounded)
  before `TurnDone`; a timeout settles it as `error`.
- With goals (an `IntentRegistry` of the agent's goals), the first round offers only the
  registry's `select_intent` tool. The loop answers that call itself, as it answers
  `tool_search`: a valid choice emits `GoalSelected` and, from the next round, offers only
  the tools the goal delegates to (`tools_for_goal` over `families`) plus the host
  machinery; an unknown goal gets an error result listing the goals, and the model may
  choose again. A call to a tool outside the chosen goal (or before any goal) is refused
  with an error result naming what to do instead. With `scopes`, the choice's result also
  lists the scopes serving the goal (the material it works on).
- A `subagent` call runs a child turn inside the call (`subagents.py`): its events join
  this turn's, under the call. A self-spawned child (`inherited`) gets this turn's
  shaped tools with the labels and background flags stripped.
- A code-only tool (`allowed_callers`) is never offered, and a direct call to one is
  refused; `run_tools_with_code` runs bound to the turn's code bridge, whose inner calls
  are unlabelled and emit no events (`code_calls.py`).
- With `checkpoints`, a call of a tool that changes the workspace runs inside its
  checkpoint: what it may change is scanned before and after, and what changed is
  recorded for a rewind (`checkpoints.py`, docs/rewind.md).
- With a `Summarizer`, each group of two or more calls (the groups with a header)
  gets a summary once all its calls settled, computed concurrently with the next
  round and emitted before `TurnDone`.

- Output references: each call's raw output is kept (up to ~400 KB) under
  `tool<i>turn<n>` (its place in the turn's `n`-th response). A `{{tool<i>turn<n>}}` in a
  later call's string arguments is filled in just before that call runs, after its label
  is stripped, so never into an intent; what is streamed, stored and read back keeps the
  placeholder, and a filled-in output written back into the call's outcome or error
  becomes its placeholder again (docs/capabilities.md, Output references).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from intent_ui.agent.activity import Summarizer, SummaryEntry
from intent_ui.agent.code_calls import CodeCalls
from intent_ui.agent.pauses import Pauses
from intent_ui.agent.providers.base import (
    ChatRequest,
    Provider,
    StreamEnd,
    TextChunk,
    ToolCallArgs,
    ToolCallBegin,
    ToolCallEnd,
    unique_call_id,
)
from intent_ui.agent.providers.errors import failure_kind
from intent_ui.agent.request_cache import RequestCache
from intent_ui.agent.subagents import Subagents
from intent_ui.agent.tool_search import TOOL_SEARCH_NAME, ToolSearch
from intent_ui.agent.tools.base import Tool, ToolResult
from intent_ui.agent.tools.registry import ToolIndex
from intent_ui.config import DEFAULT_TOOL_TIMEOUT_S
from intent_ui.core.capabilities import apply_capabilities, inherit_for_self_spawn
from intent_ui.core.capabilities.background import (
    CHECK_BACKGROUND_TASK_NAME,
    RUN_IN_BACKGROUND_CAPABILITY,
    is_background_requested,
    strip_run_in_background_arg,
)
from intent_ui.core.capabilities.intent import (
    TOOL_INTENTS_CAPABILITY,
    read_intent,
    remove_intent_param,
    strip_intent,
)
from intent_ui.core.capabilities.output_references import (
    REFERENCE_NOTE_MIN_CHARS,
    OutputReferences,
    reference_key,
    reference_note,
)
from intent_ui.core.capabilities.selection import canonical_tool_options
from intent_ui.core.capabilities.strict import to_strict_tool
from intent_ui.core.events import (
    ActivityLabel,
    ArgsComplete,
    ArgsDelta,
    CallBackgrounded,
    CallSettled,
    CallStarted,
    GoalSelected,
    SeqCounter,
    TextDelta,
    TurnDone,
    TurnEvent,
)
from intent_ui.core.failures import FailureKind
from intent_ui.core.goals import goal_line
from intent_ui.core.header import GROUP_HEADER_MIN_CALLS
from intent_ui.core.history import CANCELLED_RESULT, HistoryCall, call_result, round_messages
from intent_ui.core.registry import (
    SELECT_INTENT_TOOL_NAME,
    IntentRegistry,
    RegistryError,
    ScopeDescription,
    ScopeRegistry,
    tools_for_goal,
)
from intent_ui.core.resume import ResumePoint
from intent_ui.core.states import FinalState
from intent_ui.core.text import scrub_decoded, scrub_fields

if TYPE_CHECKING:
    from intent_ui.agent.checkpoints import TurnCheckpoints

__all__ = [
    "BACKGROUND_TIMEOUT_ERROR",
    "CUT_OFF_ERROR",
    "TurnRun",
    "run_turn",
]

CUT_OFF_ERROR = "Cut off: the model hit max_tokens while writing the arguments"
BACKGROUND_TIMEOUT_ERROR = "Timed out in background"
DEFAULT_BACKGROUND_TIMEOUT = 120.0
DEFAULT_SUMMARY_TIMEOUT = 30.0


@dataclass(slots=True)
class _Call:
    """One tool call of the turn, from `ToolCallBegin` to its settlement."""

    call_id: str
    name: str
    tool: Tool | None
    group: int
    carries_intent: bool
    chunks: list[str] = field(default_factory=list)
    ended: bool = False
    args: dict[str, Any] | None = None
    args_problem: str | None = None
    task: asyncio.Task[None] | None = None
    backgrounded: bool = False
    final_state: FinalState | None = None
    """None while the call is in flight."""
    model_result: ToolResult | None = None
    """The handle the model got for a call run in the background (None for the others)."""
    final_result: ToolResult | None = None
    settlement: CallSettled | None = None
    """The call's settlement as the log stores it: what the history sends back."""
    reference: str = ""
    """Its output reference key (`tool<i>turn<n>`)."""
    references_used: tuple[str, ...] = ()
    """The output references substituted into its arguments."""

    @property
    def arguments(self) -> str:
        """The argument text so far (fragments are joined once, when asked for)."""
        if len(self.chunks) > 1:
            self.chunks[:] = ["".join(self.chunks)]
        return self.chunks[0] if self.chunks else ""


@dataclass(slots=True)
class _Round:
    """What one provider response produced."""

    index: int = 0
    group: int | None = None
    calls: list[_Call] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    stop_reason: str | None = None
    recorded: bool = False


class TurnRun:
    """One running turn. Iterate it once for the events; read `new_messages` after."""

    def __init__(
        self,
        *,
        provider: Provider,
        model: str,
        history: Sequence[Mapping[str, Any]],
        user_message: str,
        tools: Sequence[Tool],
        tool_options: Mapping[str, Any] | None,
        capabilities: frozenset[str],
        system: str | None,
        strict: bool = False,
        max_tokens: int = 4096,
        max_rounds: int = 8,
        stop: asyncio.Event | None = None,
        summarizer: Summarizer | None = None,
        background_timeout: float = DEFAULT_BACKGROUND_TIMEOUT,
        summary_timeout: float = DEFAULT_SUMMARY_TIMEOUT,
        seq: SeqCounter | None = None,
        tool_timeout: float = DEFAULT_TOOL_TIMEOUT_S,
        goals: IntentRegistry | None = None,
        families: Mapping[str, str] | None = None,
        scopes: ScopeRegistry | None = None,
        request_cache: RequestCache | None = None,
        pauses: Pauses | None = None,
        subagents: Subagents | None = None,
        inherited: bool = False,
        checkpoints: TurnCheckpoints | None = None,
        resume: ResumePoint | None = None,
    ) -> None:
        self._provider = provider
        self._model = model
        self._history = [dict(m) for m in history]
        self._user_message = user_message
        self._system = system
        self._strict = strict
        self._max_tokens = max_tokens
        self._max_rounds = max(1, max_rounds)
        self._stop = stop
        self._summarizer = summarizer
        self._background_timeout = background_timeout
        self._summary_timeout = summary_timeout
        self._tool_timeout = tool_timeout
        self._capabilities = frozenset(capabilities)

        self._index = ToolIndex(tools)
        self._tools: dict[str, Tool] = {}
        for tool in self._index:
            self._tools.setdefault(self._index.model_name(tool), tool)
        definitions: list[Mapping[str, Any]] = [
            {**dict(tool.definition), "name": name}
            if request_cache is None
            else request_cache.definition(tool, name)
            for name, tool in self._tools.items()
        ]
        action_ids = [tool.tool_id for tool in self._tools.values() if tool.kind == "action"]
        options = canonical_tool_options(tool_options or {}, action_ids)
        self.pauses = (pauses or Pauses()).bind(
            options, self._emit, self._next_seq, self._settle, self._settle_as
        )
        tool_ids = {name: tool.tool_id for name, tool in self._tools.items()}
        shape = apply_capabilities if request_cache is None else request_cache.capabilities.apply
        shaped = shape(
            definitions,
            options,
            capabilities=self._capabilities,
            tool_ids=tool_ids,
            strict=strict,
        )
        if inherited:
            shaped = inherit_for_self_spawn(shaped)
            capabilities = self._capabilities = self._capabilities - {
                TOOL_INTENTS_CAPABILITY,
                RUN_IN_BACKGROUND_CAPABILITY,
            }
        self._subagents = (
            None if subagents is None else subagents.attach(self._emit, self._next_seq, self.pauses)
        )
        # Code-only tools stay out of what the model is offered; the runner calls them.
        self._code = CodeCalls(
            shaped.definitions,
            shaped.registry,
            self._tools,
            invoke=lambda tool, name, args: _invoke(tool, name, args, timeout=tool_timeout),
            refuse=lambda name, tool: (
                self.pauses.code_refusal(name, tool)
                or (None if self._goals is None else self._outside_goal(name, tool))
            ),
        )
        # A cached result is frozen JSON (`core.frozen`: dicts and lists that refuse
        # changes), shared with later turns and ready for a request body as it is; the
        # pipeline's own result may hold read-only constants, copied into plain values.
        self.definitions: list[dict[str, Any]] = self._code.offered(
            [_plain(d) for d in shaped.definitions]
            if request_cache is None
            else cast(list[dict[str, Any]], list(shaped.definitions))
        )
        """The tool definitions the model is offered (after the capability pipeline)."""
        self.intent_tool_names: frozenset[str] = frozenset(shaped.intent_tool_names)
        """The label gate: tools whose calls carry an intent."""
        # Deferred tools wait in the registry until `tool_search` finds them; the
        # registry entries already went through the same injection, intent first.
        self._search = ToolSearch(
            *self._code.searchable(shaped.registry, shaped.deferred_names),
            tool_options=options,
            tool_ids=tool_ids,
            intents=TOOL_INTENTS_CAPABILITY in capabilities,
            strict=strict,
        )
        if self._search.offered:
            self.definitions.append(_plain(self._search.definition()))
            if TOOL_INTENTS_CAPABILITY in capabilities:
                self.intent_tool_names = self.intent_tool_names | {TOOL_SEARCH_NAME}
        self.background_tool_names: frozenset[str] = (
            frozenset(shaped.background_tool_names)
            if RUN_IN_BACKGROUND_CAPABILITY in capabilities
            else frozenset()
        )

        # Turn-level goals: the first round offers only the selection tool; the goal's
        # tools replace it once the model has chosen (`_select_goal`).
        self._goals = (
            goals
            if goals is not None and any(goal.advertised for goal in goals.describe())
            else None
        )
        self._families = dict(families or {})
        self._scopes = scopes
        self.goal: str | None = None
        """The id of the goal the model chose for this turn (None before, or without goals)."""
        self._goal_tool_ids: frozenset[str] = frozenset()
        self._all_definitions = self.definitions
        if self._goals is not None:
            select: Any = self._goals.with_intent()
            if TOOL_INTENTS_CAPABILITY in capabilities:
                self.intent_tool_names = self.intent_tool_names | {SELECT_INTENT_TOOL_NAME}
            else:
                select = remove_intent_param(select)
            self.definitions = [_plain(to_strict_tool(select) if strict else select)]

        self.new_messages: list[dict[str, Any]] = []
        """Neutral messages this turn added (user, assistant, tool), complete after TurnDone."""
        self.stop_reason: str | None = None
        self.error: str | None = None
        self.error_kind: FailureKind | None = None
        """What kind of failure `error` is, when known (core/failures.py)."""

        self._seq = seq or SeqCounter()
        self._queue = _EventQueue()
        self._task: asyncio.Task[None] | None = None
        self._done = False
        self._group_count = 0
        self._groups: dict[int, list[_Call]] = {}
        self._open_groups: set[int] = set()
        self._calls: dict[str, _Call] = {}
        self._wire_ids: dict[str, str] = {}
        """The provider's call id -> the turn-unique id of the latest call that used it."""
        self._round: _Round | None = None
        self._background: dict[str, asyncio.Task[None]] = {}
        self._summarizing: list[asyncio.Task[None]] = []
        self._stop_requested = False
        self._closing = False
        self._background_on = RUN_IN_BACKGROUND_CAPABILITY in self._capabilities
        self._references = OutputReferences()
        self._round_count = 0
        self._resume = resume
        self._checkpoints = checkpoints

    # --- public ---------------------------------------------------------------------------

    def __aiter__(self) -> AsyncIterator[TurnEvent]:
        return self.events()

    async def events(self) -> AsyncIterator[TurnEvent]:
        """The turn's events, ending with `TurnDone`. Consume once."""
        if self._task is not None:
            raise RuntimeError("TurnRun.events() can only be consumed once")
        self._task = asyncio.create_task(self._drive())
        try:
            while True:
                event = self._queue.pop()
                if event is None:
                    event = await self._queue.get()
                yield event
                if isinstance(event, TurnDone):
                    return
        finally:
            if not self._task.done():
                # The consumer went away: stop the turn rather than run it unobserved.
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._task

    def stop(self) -> None:
        """Request a stop: the stream and the tools are cancelled promptly."""
        self._stop_requested = True
        task = self._task
        if task is not None and not task.done() and not task.cancelling():
            task.cancel()

    # --- driving --------------------------------------------------------------------------

    async def _drive(self) -> None:
        watcher = self._watch_stop()
        try:
            stop_reason, error = await self._rounds()
            stop_reason, error = await self._finish(stop_reason, error)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            await self._cancel_everything()
            stop_reason, error = "cancelled", None
        except Exception as exc:  # a bug in the loop must still end the turn visibly
            await self._cancel_everything(state="error", error=_describe(exc))
            stop_reason, error = "error", f"Internal error in the run loop: {_describe(exc)}"
            self.error_kind = "internal"
        finally:
            if watcher is not None:
                watcher.cancel()
        self.stop_reason, self.error = stop_reason, error
        if error is None:
            self.error_kind = None
        self._emit(TurnDone(self._next_seq(), stop_reason, error, error_kind=self.error_kind))
        self._done = True

    def _watch_stop(self) -> asyncio.Task[None] | None:
        if self._stop is None:
            return None
        driver = asyncio.current_task()
        stop = self._stop

        async def watch() -> None:
            await stop.wait()
            self._stop_requested = True
            if driver is not None and not driver.done() and not driver.cancelling():
                driver.cancel()

        return asyncio.create_task(watch())

    async def _rounds(self) -> tuple[str, str | None]:
        if self._resume is None:
            self.new_messages.append({"role": "user", "content": self._user_message})
        else:
            rnd = self._round = self._resumed_round(self._resume)
            self._settle_unfinished(rnd, "error", None)
            await self._await_round(rnd)
            self._record_round(rnd)
        while self._round_count < self._max_rounds:
            rnd = _Round(index=self._round_count)
            self._round_count += 1
            self._round = rnd
            failure = await self._stream_round(rnd)
            if failure is not None:
                self._settle_unfinished(rnd, "error", failure)
                await self._await_round(rnd)
                self._record_round(rnd)
                return "error", failure
            if rnd.stop_reason == "max_tokens":
                self._settle_unfinished(rnd, "error", CUT_OFF_ERROR)
                await self._await_round(rnd)
                self._record_round(rnd)
                return "max_tokens", "The model hit max_tokens; the reply was cut off."
            if not rnd.calls:
                self._record_round(rnd)
                return "end_turn", None
            self._settle_unfinished(rnd, "error", None)
            await self._await_round(rnd)
            self._record_round(rnd)
        return "max_rounds", (
            f"Stopped after {self._max_rounds} rounds of tool calls (the max_rounds limit)."
        )

    async def _stream_round(self, rnd: _Round) -> str | None:
        """Stream one provider response; return a readable failure, or None."""
        request = ChatRequest(
            model=self._model,
            messages=[*self._history, *self.new_messages],
            tools=self.definitions,
            system=self._system,
            max_tokens=self._max_tokens,
            strict=self._strict,
        )
        stream = self._provider.stream(request)
        try:
            async for event in stream:
                if isinstance(event, TextChunk):
                    if event.text:
                        rnd.text.append(event.text)
                        self._emit(TextDelta(self._next_seq(), event.text))
                elif isinstance(event, ToolCallBegin):
                    self._begin(rnd, event)
                elif isinstance(event, ToolCallArgs):
                    self._args(event)
                elif isinstance(event, ToolCallEnd):
                    self._end(event)
                elif isinstance(event, StreamEnd):
                    rnd.stop_reason = event.stop_reason
        except Exception as exc:
            self.error_kind = failure_kind(exc)
            return f"The model provider failed: {_describe(exc)}"
        finally:
            closer = getattr(stream, "aclose", None)
            if closer is not None:
                with contextlib.suppress(Exception):
                    await closer()
        return None

    def _resumed_round(self, point: ResumePoint) -> _Round:
        """The round that waited for the user when the server stopped (`core.resume`): its
        settled calls as they ended, its waiting ones run again from their admission,
        where they wait without asking twice."""
        rnd = _Round(index=point.round_index, group=point.group, text=[point.text])
        self._round_count, self._group_count = point.round_index + 1, point.group + 1
        self._groups[point.group] = rnd.calls
        for key, output in point.outputs.items():
            self._references.record(key, output)
        for call_id, name, group in point.earlier:
            self._calls[call_id] = _Call(call_id, name, None, group, False, final_state="settled")
        for index, done in enumerate(point.calls):
            tool = self._tools.get(done.name) or self._index.resolve(done.name)
            call = _Call(done.call_id, done.name, tool, point.group, done.carries_intent)
            call.chunks, call.ended = [done.arguments], True
            call.reference = reference_key(index, point.round_index)
            self._calls[call.call_id] = call
            rnd.calls.append(call)
            if done.state is None:
                call.args, call.args_problem = _parse_args(call.name, done.arguments)
                if call.args is not None:
                    call.task = asyncio.create_task(self._execute(call))
                continue
            call.final_state = done.state
            result = done.output or done.error or ""
            call.final_result = ToolResult(result, done.state != "settled")
            call.settlement = CallSettled(
                0, call.call_id, done.state, output=done.output, error=done.error
            )
        return rnd

    def _begin(self, rnd: _Round, event: ToolCallBegin) -> None:
        # A repeated id (some servers number calls afresh each response) is another call:
        # it gets its own id and card, and the id's later events go to it, never merged
        # into the first call.
        call_id = unique_call_id(event.call_id, self._calls)
        self._wire_ids[event.call_id] = call_id
        if rnd.group is None:
            rnd.group = self._group_count
            self._group_count += 1
            self._groups[rnd.group] = []
            self._open_groups.add(rnd.group)
        tool = self._tools.get(event.name) or self._index.resolve(event.name)
        call = _Call(
            call_id=call_id,
            name=event.name,
            tool=tool,
            group=rnd.group,
            carries_intent=event.name in self.intent_tool_names,
            reference=reference_key(len(rnd.calls), rnd.index),
        )
        self._calls[call.call_id] = call
        self._groups[rnd.group].append(call)
        rnd.calls.append(call)
        self._emit(
            CallStarted(
                self._next_seq(),
                call.call_id,
                # The card names the tool as people know it (`search_code`), even when the
                # model had to address it by its disambiguated id.
                tool.name if tool is not None else call.name,
                call.group,
                server=tool.server if tool is not None else None,
                label_bearing=call.carries_intent,
                called_as=call.name if tool is not None and tool.name != call.name else None,
            )
        )

    def _args(self, event: ToolCallArgs) -> None:
        call = self._calls.get(self._wire_ids.get(event.call_id, ""))
        if call is None or call.ended or not event.delta:
            return
        call.chunks.append(event.delta)
        self._emit(ArgsDelta(self._next_seq(), call.call_id, event.delta))

    def _end(self, event: ToolCallEnd) -> None:
        call = self._calls.get(self._wire_ids.get(event.call_id, ""))
        if call is None or call.ended:
            return
        call.ended = True
        self._emit(ArgsComplete(self._next_seq(), call.call_id, call.arguments))
        call.args, call.args_problem = _parse_args(call.name, call.arguments)
        if call.args is not None:
            call.task = asyncio.create_task(self._execute(call))
        # Unparsable arguments are settled when the response ends, when it is known whether
        # the model was cut off by max_tokens (a different message) or wrote bad JSON.

    # --- tools ----------------------------------------------------------------------------

    async def _execute(self, call: _Call) -> None:
        args: Any = call.args or {}
        tool = call.tool
        if tool is None and call.name == CHECK_BACKGROUND_TASK_NAME and self._background_on:
            self._settle(call, self._check_background(args))
            return
        searchable = self._goals is None or self.goal is not None
        if tool is None and call.name == TOOL_SEARCH_NAME and self._search.offered and searchable:
            self._settle(call, self._search_tools(strip_intent(args)))
            return
        if tool is None and call.name == SELECT_INTENT_TOOL_NAME and self._goals is not None:
            self._settle(call, self._select_goal(call.call_id, args))
            return
        if tool is not None and self._goals is not None:
            refusal = self._outside_goal(call.name, tool)
            if refusal is not None:
                self._settle(call, refusal)
                return
        if tool is None:
            known = ", ".join(sorted(self._tools)) or "none"
            self._settle(
                call,
                ToolResult(f"Unknown tool '{call.name}'. Available tools: {known}.", True),
            )
            return
        refused = self._code.refusal(call.name)
        if refused is not None:
            self._settle(call, refused)
            return
        tool = self._code.bind(tool)
        timeout: float | None = self._tool_timeout
        if self._subagents is not None:
            tool = self._subagents.bind(tool, call.call_id)
            timeout = self._subagents.timeout(tool, timeout)
        if (args := await self.pauses.admit(call, tool, args)) is None:
            return  # the user denied it, or answered its question: settled
        if call.carries_intent:
            args = strip_intent(args)
        background = False
        if call.name in self.background_tool_names:
            background = is_background_requested(args)
            args = strip_run_in_background_arg(args)
        if not isinstance(args, dict):
            args = dict(args) if isinstance(args, Mapping) else {}
        # After the label is stripped: a placeholder in the intent stays literal, while a
        # tool's own `intent` parameter is filled like any other string.
        args, call.references_used = self._references.substitute(args, label_bearing=False)
        if background:
            self._dispatch_background(call, tool, args)
            return
        self._settle(call, await self._run_tool(call, tool, args, timeout))

    def _select_goal(self, call_id: str, args: Any) -> ToolResult:
        """The host side of `select_intent`: record the goal and narrow the offered tools."""
        assert self._goals is not None
        if self.goal is not None:
            return ToolResult(
                f"This turn's goal is already '{self.goal}'; call its tools instead.",
                is_error=True,
            )
        try:
            selection = self._goals.select(args, stage_id=call_id)
        except RegistryError as exc:
            return ToolResult(f"{exc}. Call {SELECT_INTENT_TOOL_NAME} again.", is_error=True)
        goal = self._goals.get(selection.intent_id)
        assert goal is not None
        tool_ids = [tool.tool_id for tool in self._tools.values()]
        # A delegate names a family or one tool: by its id, or by the name it is offered as.
        self._goal_tool_ids = frozenset(
            tools_for_goal(self._goals, goal.id, tool_ids, self._families)
        ) | {
            tool.tool_id for name, tool in self._tools.items() if self._goals.allows(goal.id, name)
        }
        self.goal = goal.id
        self._search.keep(self._in_goal)
        self.definitions = [
            definition
            for definition in self._all_definitions
            if self._in_goal(definition["name"])
            and (definition["name"] != TOOL_SEARCH_NAME or self._search.remaining)
        ]
        self._emit(GoalSelected(self._next_seq(), goal.id, goal_line(goal)))
        offered = [definition["name"] for definition in self.definitions]
        chosen: dict[str, Any] = {"goal": goal.id, "tools": offered}
        serving = self._scopes_of(goal.id)
        if serving:
            chosen["scopes"] = serving
        return ToolResult(
            json.dumps(chosen, ensure_ascii=False),
            outcome=f"Goal: {goal_line(goal)}",
        )

    def _scopes_of(self, goal_id: str) -> list[dict[str, Any]]:
        """The scopes serving the goal, as the model reads them in the choice's result."""
        if self._scopes is None:
            return []
        found = [self._scopes.require(ident) for ident in self._scopes.ids()]
        return [_scope_entry(scope) for scope in found if goal_id in scope.goal_ids]

    def _in_goal(self, name: str) -> bool:
        """Whether the chosen goal keeps this model-facing name (host machinery always)."""
        tool = self._tools.get(name)
        return tool is None or tool.tool_id in self._goal_tool_ids

    def _outside_goal(self, name: str, tool: Tool) -> ToolResult | None:
        """An error result for a call the turn's goal does not allow, else None."""
        if self.goal is None:
            return ToolResult(
                f"Choose this turn's goal with {SELECT_INTENT_TOOL_NAME} before calling '{name}'.",
                is_error=True,
            )
        if tool.tool_id in self._goal_tool_ids:
            return None
        allowed = [n for n, t in self._tools.items() if t.tool_id in self._goal_tool_ids]
        return ToolResult(
            f"'{name}' is not one of the tools of this turn's goal '{self.goal}' "
            f"(its tools: {', '.join(allowed) or 'none'}).",
            is_error=True,
        )

    def _search_tools(self, args: object) -> ToolResult:
        """The host side of `tool_search`: offer what it found from the next round on."""
        answer = self._search.search(args, self.definitions)
        promoted = self._code.offered([_plain(d) for d in answer.promoted])
        offered = [*self.definitions, *promoted]
        if not self._search.remaining:
            # Nothing is left to find: stop offering the search.
            offered = [d for d in offered if d["name"] != TOOL_SEARCH_NAME]
        self.definitions = offered
        self.intent_tool_names = self.intent_tool_names | answer.intent_tool_names
        return answer.result

    def _check_background(self, args: Mapping[str, Any]) -> ToolResult:
        """The host side of `check_background_task`: status, or the result once finished."""
        wanted = args.get("background_task_id")
        if wanted is not None and not isinstance(wanted, str):
            return ToolResult("background_task_id must be a string", is_error=True)
        ids = [wanted] if wanted else list(self._background)
        if wanted and wanted not in self._background:
            known = ", ".join(self._background) or "none"
            return ToolResult(
                f"No background task '{wanted}' in this turn (known: {known}).", is_error=True
            )
        report = []
        for task_id in ids:
            call = self._calls[task_id]
            entry: dict[str, Any] = {"background_task_id": task_id, "tool": call.name}
            if call.final_state is None:
                entry["status"] = "running"
            else:
                result = call.final_result or ToolResult("")
                entry["status"] = "failed" if result.is_error else "completed"
                entry["result"] = result.output
            report.append(entry)
        return ToolResult(json.dumps(report if not wanted else report[0], ensure_ascii=False))

    def _dispatch_background(self, call: _Call, tool: Tool, args: dict[str, Any]) -> None:
        call.backgrounded = True
        call.model_result = ToolResult(
            json.dumps(
                {
                    "status": "running_in_background",
                    "background_task_id": call.call_id,
                    "message": "Started in the background. Call check_background_task with "
                    "this id for its status and result; the user sees it when it finishes.",
                }
            )
        )
        self._emit(CallBackgrounded(self._next_seq(), call.call_id))

        async def harvest() -> None:
            self._settle(call, await self._run_tool(call, tool, args, None))

        self._background[call.call_id] = asyncio.create_task(harvest())

    async def _run_tool(
        self, call: _Call, tool: Tool, args: dict[str, Any], timeout: float | None
    ) -> ToolResult:
        """Invoke the tool; a workspace-changing one inside its checkpoint (checkpoints.py)."""
        if self._checkpoints is None:
            return await _invoke(tool, call.name, args, timeout=timeout)
        async with self._checkpoints.around(call.call_id, tool.name, args):
            return await _invoke(tool, call.name, args, timeout=timeout)

    def _settle(self, call: _Call, result: ToolResult) -> None:
        if call.final_state is not None:
            return
        if call.references_used:
            result = self._shielded(result, call.references_used)
        if not result.is_error and call.reference:
            self._references.record(call.reference, result.output)
        state: FinalState = "error" if result.is_error else "settled"
        call.final_state = state
        call.final_result = result
        call.settlement = CallSettled(
            self._next_seq(),
            call.call_id,
            state,
            output=result.output,
            outcome=result.outcome,
            outcome_patch=dict(result.outcome_patch) if result.outcome_patch else None,
            error=(result.output or "The tool reported an error") if result.is_error else None,
        )
        self._emit(call.settlement)
        self._maybe_summarize(call.group)

    def _settle_as(self, call: _Call, state: FinalState, message: str | None) -> None:
        """Settle without a tool result (cut off, stream failed, cancelled)."""
        if call.final_state is not None:
            return
        call.final_state = state
        text = message or CANCELLED_RESULT
        call.final_result = ToolResult(text, is_error=True)
        call.settlement = CallSettled(self._next_seq(), call.call_id, state, error=message)
        self._emit(call.settlement)
        self._maybe_summarize(call.group)

    def _settle_unfinished(self, rnd: _Round, state: FinalState, message: str | None) -> None:
        """After the stream: settle calls that never started running.

        `message` None means the stream ended normally, so each call gets its own reason.
        """
        for call in rnd.calls:
            if call.task is not None or call.final_state is not None:
                continue
            if message is not None:
                reason = message
            elif not call.ended:
                reason = (
                    "Incomplete: the model's response ended before this call's arguments "
                    "were complete"
                )
            else:
                reason = call.args_problem or "Invalid arguments"
            self._settle_as(call, state, reason)
        if rnd.group is not None:
            self._open_groups.discard(rnd.group)
            self._maybe_summarize(rnd.group)

    async def _await_round(self, rnd: _Round) -> None:
        tasks = [call.task for call in rnd.calls if call.task is not None]
        if tasks:
            await asyncio.gather(*tasks)

    def _record_round(self, rnd: _Round) -> None:
        """Append the round's assistant message and tool results to `new_messages`."""
        if rnd.recorded:
            return
        rnd.recorded = True
        calls = [_history_call(call, self._references) for call in rnd.calls]
        self.new_messages.extend(round_messages("".join(rnd.text), calls))

    def _shielded(self, result: ToolResult, used: Sequence[str]) -> ToolResult:
        """A result of a call that ran with referenced outputs, told without them where
        it becomes a label or an error line (`OutputReferences.shield`)."""
        refs = self._references
        patch = result.outcome_patch
        if patch and refs.shield(patch.get("to"), used) != patch.get("to"):
            patch = None
        output = refs.restore(result.output, used) if result.is_error else result.output
        return ToolResult(output, result.is_error, refs.shield(result.outcome, used), patch)

    # --- end of turn ----------------------------------------------------------------------

    async def _finish(self, stop_reason: str, error: str | None) -> tuple[str, str | None]:
        """Harvest background calls (bounded), then wait for pending summaries."""
        pending = [task for task in self._background.values() if not task.done()]
        if pending:
            _, late = await asyncio.wait(pending, timeout=self._background_timeout)
            for call_id, task in self._background.items():
                if task in late:
                    task.cancel()
                    self._settle_as(self._calls[call_id], "error", BACKGROUND_TIMEOUT_ERROR)
            if late:
                await asyncio.wait(late)
        if self._summarizing:
            _, late = await asyncio.wait(self._summarizing, timeout=self._summary_timeout)
            for task in late:
                task.cancel()
        return stop_reason, error

    async def _cancel_everything(
        self, *, state: FinalState = "cancelled", error: str | None = None
    ) -> None:
        self._closing = True
        tasks = [
            task
            for task in [
                *(call.task for call in self._calls.values()),
                *self._background.values(),
                *self._summarizing,
            ]
            if task is not None and not task.done()
        ]
        for task in tasks:
            task.cancel()
        if tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait(tasks)
        for call in self._calls.values():
            self._settle_as(call, state, error)
        if self._round is not None:
            self._record_round(self._round)

    # --- summaries ------------------------------------------------------------------------

    def _maybe_summarize(self, group: int) -> None:
        if self._summarizer is None or group in self._open_groups:
            return
        calls = self._groups.get(group, [])
        # Only a group with a header can show the summary: a lone call's would be
        # paid for and never seen.
        if len(calls) < GROUP_HEADER_MIN_CALLS or any(c.final_state is None for c in calls):
            return
        if self._stop_requested or self._closing:
            return
        entries = [_entry(call) for call in calls]
        self._summarizing.append(asyncio.create_task(self._summarize(group, entries)))

    async def _summarize(self, group: int, entries: list[SummaryEntry]) -> None:
        assert self._summarizer is not None
        try:
            summary = await self._summarizer.summarize(entries)
        except Exception:
            return  # no summary: the header stays on the settled outcome (docs/labels.md)
        if isinstance(summary, str) and summary.strip() and not self._done:
            self._emit(ActivityLabel(self._next_seq(), group, summary.strip()))

    # --- plumbing -------------------------------------------------------------------------

    def _next_seq(self) -> int:
        return self._seq.next()

    def _emit(self, event: TurnEvent) -> None:
        self._queue.put(event)


class _EventQueue:
    """The run's events on their way to its one reader (`TurnRun.events`): an
    `asyncio.Queue` without what one reader of an unbounded queue never needs (bounds,
    task counting, a line of getters), since every argument fragment passes through."""

    __slots__ = ("_events", "_waiter")

    def __init__(self) -> None:
        self._events: deque[TurnEvent] = deque()
        self._waiter: asyncio.Future[None] | None = None

    def put(self, event: TurnEvent) -> None:
        self._events.append(event)
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():  # a reader cancelled meanwhile
            waiter.set_result(None)

    def pop(self) -> TurnEvent | None:
        """The next event if there is one, without waiting."""
        return self._events.popleft() if self._events else None

    async def get(self) -> TurnEvent:
        while not self._events:
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        return self._events.popleft()


run_turn = TurnRun
"""Prepare a turn; iterate the returned `TurnRun` to run it (see the module docstring).
An alias, not a wrapper: the keyword-only constructor is the whole signature."""


# --- helpers ----------------------------------------------------------------------------


async def _invoke(
    tool: Tool, name: str, args: dict[str, Any], *, timeout: float | None = None
) -> ToolResult:
    """Call a tool; whatever it raises becomes an error result (never a crashed turn).

    Past `timeout` seconds the call is cancelled and settles as an error. Lone surrogates
    in the result become U+FFFD: no request body or database could carry them.
    """
    deadline = asyncio.timeout(timeout)
    try:
        async with deadline:
            result = await tool.call(args)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        if isinstance(exc, TimeoutError) and deadline.expired():
            return ToolResult(
                f"Timed out after {timeout:g} s; raise tool_timeout_s in intent_ui.yaml to "
                "allow longer calls",
                is_error=True,
            )
        failed = f"Tool '{name}' failed: {type(exc).__name__}: {exc}"
        return scrub_fields(ToolResult(failed, is_error=True))
    if isinstance(result, ToolResult):
        return scrub_fields(result)
    if isinstance(result, str):
        return scrub_fields(ToolResult(result))
    return ToolResult(
        f"Tool '{name}' returned {type(result).__name__}, not a ToolResult", is_error=True
    )


def _parse_args(name: str, text: str) -> tuple[dict[str, Any] | None, str | None]:
    if not text.strip():
        return {}, None  # a tool without parameters may get no argument text at all
    try:
        # The model's JSON escapes may decode to lone surrogates: replaced here, once.
        value = scrub_decoded(json.loads(text))
    except json.JSONDecodeError as exc:
        return None, (
            f"Invalid arguments for '{name}': not valid JSON ({exc.msg} at line {exc.lineno} "
            f"column {exc.colno}); the arguments must be one JSON object"
        )
    if not isinstance(value, dict):
        return None, (
            f"Invalid arguments for '{name}': expected a JSON object, got {type(value).__name__}"
        )
    return value, None


def _history_call(call: _Call, references: OutputReferences) -> HistoryCall:
    """The call as the model reads it back (`core.history`): the handle it got for a run
    in the background, else its settlement, by the same rules as a stored turn; a result
    long enough to be worth referring to names its output reference, so later calls of
    the turn can pass it on without copying it."""
    if call.model_result is not None:
        result, is_error = call.model_result.output, call.model_result.is_error
    elif call.settlement is not None:
        done = call.settlement
        result, is_error = call_result(done.state, done.output, done.error)
        if (
            not is_error
            and len(result) >= REFERENCE_NOTE_MIN_CHARS
            and call.reference in references
        ):
            result = f"{result}\n\n{reference_note(call.reference)}"
    else:
        result, is_error = call_result(None, "", None)
    return HistoryCall(call.call_id, call.name, call.arguments, result, is_error)


def _entry(call: _Call) -> SummaryEntry:
    result = call.final_result or ToolResult("")
    return SummaryEntry(
        tool_name=call.name,
        # The raw text the model wrote: the intent stays in, it is what the summarizer
        # reads to say what the call was for (only tool bodies get it stripped).
        tool_input=call.arguments,
        status=call.final_state or "cancelled",
        output=result.output,
        outcome=result.outcome if call.carries_intent else None,
        intent=read_intent(call.arguments) if call.carries_intent else None,
    )


def _scope_entry(scope: ScopeDescription) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": scope.id,
        "description": scope.description,
        "category": scope.category,
    }
    for key in ("aliases", "knowledge_topic_ids", "tool_ids"):
        values = getattr(scope, key)
        if values:
            entry[key] = list(values)
    return entry


def _describe(exc: BaseException) -> str:
    message = getattr(exc, "message", None) or str(exc)
    return message if message else type(exc).__name__


def _plain(value: Any) -> Any:
    """Read-only mappings (the capability constants) as plain JSON-ready dicts and lists."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value
