"""`python -m intent_ui run "message"`: one agent turn in the terminal (and `users`, see
`intent_ui.users_cli`, and `rewind`, see `intent_ui.rewind_cli`).

Without `--json` the turn is shown live: on a terminal each card's label updates in place
(rich's live display: the group header above its cards, a spinner while a call is live,
✓ / ✗ / ⊘ once it settled, failed or was cancelled, each on one line cut to the terminal's
width); piped, one plain line per change. The reply follows.
With `--json` every event is one JSON object per line (flushed), with the card's resolved
label and its group's header, so scripts and tests see exactly what a user would.

The exit codes are listed in `EXIT_CODES` (and shown by `run --help`): a turn that did
not end normally never exits 0.

A call of a tool that asks first (`--ask-first TOOL`, or `--ask-first workspace` for the
tools that change the workspace) is asked about on the terminal; `--yes` approves every
such call and `--deny-all` denies it without asking (`intent_ui.agent.cli_pauses`).

With `OTEL_EXPORTER_OTLP_ENDPOINT` set the turn is traced as the web app's are
(`intent_ui.agent.tracing`), and its spans are flushed before the command exits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import re
import signal
import sys
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING, Any, TextIO

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.padding import Padding
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from intent_ui.core.events import (
    EVENT_TYPES,
    ActivityLabel,
    ApprovalDecided,
    ApprovalRequested,
    ArgsComplete,
    ArgsDelta,
    CallSettled,
    CallStarted,
    GoalSelected,
    QuestionAnswered,
    QuestionAsked,
    TextDelta,
    TurnDone,
    TurnEvent,
)
from intent_ui.core.header import GROUP_HEADER_MIN_CALLS
from intent_ui.core.sanitize import sanitize_label, truncate_label
from intent_ui.core.states import FINAL_STATES, FinalState
from intent_ui.core.text import scrub_surrogates, terminal_text
from intent_ui.core.turn import TurnView
from intent_ui.rewind_cli import add_rewind_command, run_rewind_command
from intent_ui.users_cli import add_users_command, run_users_command

if TYPE_CHECKING:
    from intent_ui.agent.session import EventObserver
    from intent_ui.agent.tracing import TurnTracer

__all__ = ["event_record", "main"]

PROG = "python -m intent_ui"
EXIT_OK = 0
EXIT_PROVIDER = 1
EXIT_CONFIG = 2
EXIT_CUT_OFF = 3
EXIT_INTERRUPTED = 130
EXIT_CODES: dict[int, str] = {
    EXIT_OK: "the turn ended normally",
    EXIT_PROVIDER: "the turn ended with an error (the provider failed, or the run did)",
    EXIT_CONFIG: "bad configuration or arguments",
    EXIT_CUT_OFF: "the turn was cut short: the model hit max_tokens, or the max_rounds limit",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
}

# The `type` of a JSON line: the event's kind in snake case (CallStarted -> call_started).
_JSON_TYPES: dict[type, str] = {
    cls: re.sub(r"(?<!^)(?=[A-Z])", "_", kind).lower() for kind, cls in EVENT_TYPES.items()
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Intent UI: watch an AI agent's tool calls explain themselves."
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = commands.add_parser(
        "run",
        help="run one agent turn in the terminal",
        description="Run one agent turn and show its tool calls live.",
        epilog="exit codes:\n"
        + "\n".join(f"  {code:<4} {meaning}" for code, meaning in EXIT_CODES.items()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("message", help="what to ask the agent")
    run.add_argument("--config", metavar="FILE", help="configuration file (intent_ui.yaml)")
    run.add_argument("--json", action="store_true", help="print one JSON object per event")
    run.add_argument("--endpoint", metavar="NAME", help="endpoint name (default: the first)")
    run.add_argument("--model", metavar="NAME", help="model name (default: the endpoint's first)")
    run.add_argument(
        "--pacing-ms", type=float, metavar="N", help="demo model: milliseconds between chunks"
    )
    run.add_argument("--lang", default="en", help="language of the default labels (en, es, ja)")
    run.add_argument(
        "--ask-first",
        action="append",
        default=[],
        metavar="TOOL",
        help="ask before each call of TOOL runs (a tool id; 'workspace' for the tools that "
        "change the workspace); repeatable",
    )
    answers = run.add_mutually_exclusive_group()
    answers.add_argument(
        "--yes", action="store_true", help="approve every call that asks first, without asking"
    )
    answers.add_argument(
        "--deny-all", action="store_true", help="deny every call that asks first (for CI)"
    )
    add_users_command(commands)
    add_rewind_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The command line entry point; returns the exit code."""
    for stream in (sys.stdout, sys.stderr):
        # A terminal whose encoding cannot show a character gets a `?` for it, not a
        # traceback that loses the rest of the turn.
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="replace")
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stdout)
        return EXIT_OK
    if args.command == "users":
        return run_users_command(args)
    if args.command == "rewind":
        return run_rewind_command(args)
    if args.command == "run":
        # An argument that is not valid UTF-8 arrives with lone surrogates (Python's
        # surrogateescape); the request body could not carry them.
        args.message = scrub_surrogates(args.message)
    try:
        return asyncio.run(_run_command(args))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


async def _run_command(args: argparse.Namespace) -> int:
    from intent_ui.config import ConfigError, load_config

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        problems = "; ".join(exc.problems) or str(exc)
        _fail(f"invalid configuration in {exc.source}: {problems}")
        return EXIT_CONFIG
    if args.pacing_ms is not None and args.pacing_ms < 0:
        _fail("--pacing-ms must be 0 or more")
        return EXIT_CONFIG
    endpoint = config.endpoint(args.endpoint) if args.endpoint else config.default_endpoint
    if endpoint is None:
        known = ", ".join(e.name for e in config.endpoints)
        _fail(f"Unknown endpoint '{args.endpoint}' (configured: {known})")
        return EXIT_CONFIG

    # Imported only now, so usage and configuration errors answer at once (the MCP client
    # is a heavy import).
    from intent_ui.agent.runtime import AgentRuntime
    from intent_ui.agent.tracing import Tracing, TurnInfo, activity_model_of

    runtime = AgentRuntime(config, pacing_ms=args.pacing_ms)
    tracing = Tracing.from_env(config)
    tracer: TurnTracer | None = None
    try:
        await runtime.start()
        for server, why in runtime.mcp_failures.items():
            _fail(f"MCP server '{server}' is unavailable: {why}")
        stop = asyncio.Event()
        run = runtime.start_turn(
            user_message=args.message,
            endpoint=endpoint.name,
            model=args.model,
            stop=stop,
            tool_options=_asking_first(runtime.default_tool_options(), args.ask_first),
        )
        if tracing is not None:
            from intent_ui.agent.session import DEFAULT_AGENT_ID

            info = TurnInfo(
                agent_id=DEFAULT_AGENT_ID,
                agent_name=DEFAULT_AGENT_ID,
                endpoint=endpoint.name,
                provider=endpoint.kind,
                model=args.model or runtime.default_model(endpoint.name),
                activity_model=activity_model_of(endpoint),
            )
            tracer = tracing.turn(info)
        with _stop_on_interrupt(stop):
            view = await _consume(run, args, sys.stdout, [] if tracer is None else [tracer])
    finally:
        await runtime.aclose()
        if tracer is not None:
            tracer.close()  # a turn that raised still ends its spans
        if tracing is not None:
            # The exporter sends in the background: without this the last spans (the
            # turn's own) would leave with the process, unsent.
            await asyncio.to_thread(tracing.shutdown)
    return _exit_code(view)


def _exit_code(view: TurnView) -> int:
    if view.stop_reason == "error":
        _fail(f"the turn failed: {view.error or 'unknown error'}")
        return EXIT_PROVIDER
    if view.stop_reason == "cancelled":
        _fail("stopped")
        return EXIT_INTERRUPTED
    if view.stop_reason in ("max_tokens", "max_rounds"):
        _fail(f"the turn was cut short: {view.error or view.stop_reason}")
        return EXIT_CUT_OFF
    if view.error:
        _fail(view.error)
    return EXIT_OK


def _fail(message: str) -> None:
    print(f"intent_ui: {terminal_text(message, multiline=False)}", file=sys.stderr)


@contextlib.contextmanager
def _stop_on_interrupt(stop: asyncio.Event) -> Any:
    """The first Ctrl-C stops the turn cleanly (cards settle as cancelled)."""
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, stop.set)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread / Windows
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)


def _asking_first(options: dict[str, Any], tools: Sequence[str]) -> dict[str, Any]:
    """The turn's options with `--ask-first` applied (`core/pauses.py`)."""
    from intent_ui.core.capabilities.selection import TOOL_SELECTION_WILDCARD
    from intent_ui.core.pauses import REQUIRE_APPROVAL_OPTION

    for tool in tools:
        key = TOOL_SELECTION_WILDCARD if tool == "workspace" else tool
        options[key] = {**options.get(key, {}), REQUIRE_APPROVAL_OPTION: True}
    return options


async def _consume(
    run: Any,
    args: argparse.Namespace,
    out: TextIO,
    observers: Sequence[EventObserver] = (),
) -> TurnView:
    from intent_ui.agent.cli_pauses import TerminalPauses, stdin_is_terminal

    view = TurnView()
    renderer: _Renderer
    if args.json:
        renderer = _JsonRenderer(view, out, args.lang)
    elif out.isatty():
        renderer = _LiveRenderer(view, Console(file=out), args.lang)
    else:
        renderer = _PlainRenderer(view, out, args.lang)
    from intent_ui.agent.pauses import Pauses

    answers = TerminalPauses(
        getattr(run, "pauses", None) or Pauses(),
        sys.stderr,
        approve_all=bool(getattr(args, "yes", False)),
        deny_all=bool(getattr(args, "deny_all", False)),
        interactive=stdin_is_terminal(),
    )
    try:
        async for event in run:
            view.apply(event)
            renderer.show(event)
            for observe in observers:
                observe(event, view)
            if isinstance(event, ApprovalRequested | QuestionAsked):
                # The live display stops while the terminal asks (it would draw over it).
                renderer.suspend()
                try:
                    await answers.answer(event, view)
                finally:
                    renderer.resume()
    finally:
        # Also when the turn raised: a live display left running keeps the cursor hidden.
        renderer.close()
    return view


# --- JSON -------------------------------------------------------------------------------


def event_record(view: TurnView, event: TurnEvent, lang: str = "en") -> dict[str, Any]:
    """One event as the `--json` line: the event plus what a user would see for it.

    `view` must already have applied `event`. A call's group index goes out under the
    key `"block"`, the name scripts reading these lines already know.
    """
    record: dict[str, Any] = {
        "type": _JSON_TYPES[type(event)],
        "seq": event.seq,
        "call_id": None,
        "tool": None,
        "state": None,
        "label": None,
        "header": None,
        "text": None,
        "error": None,
    }
    call_id = getattr(event, "call_id", None)
    group: int | None = None
    if isinstance(call_id, str):
        call = view.call(call_id)
        record["call_id"] = call_id
        if call is not None:
            record.update(tool=call.tool, state=call.state, label=view.card_label(call_id, lang))
            group = call.group
            record["block"] = group
            if call.parent is not None:
                # A subagent's call: its block is the child's round; the header on screen
                # is the group of the call it ran in.
                record["parent"] = call.parent
                top = view.call(call.parent)
                group = top.group if top is not None else None
    if isinstance(event, ActivityLabel):
        group = event.block
        record["block"] = group
        record["label"] = event.label
    if group is not None:
        record["header"] = view.group_header(group, lang).full_text
    if isinstance(event, ArgsDelta):
        # A fragment's line shows the label as a card does while it streams: however long
        # the intent grows, each line stays short, so the output grows with the turn.
        for key in ("label", "header"):
            if isinstance(record[key], str):
                record[key] = truncate_label(record[key])
    if isinstance(event, CallStarted):
        record.update(server=event.server, label_bearing=event.label_bearing)
    elif isinstance(event, ArgsDelta):
        record["chunk"] = event.chunk
    elif isinstance(event, ArgsComplete):
        record["arguments"] = event.arguments
    elif isinstance(event, CallSettled):
        record.update(outcome=event.outcome, output=event.output, error=event.error)
    elif isinstance(event, TextDelta):
        record["text"] = event.text
    elif isinstance(event, GoalSelected):
        record.update(goal_id=event.goal_id, label=event.label)
    elif isinstance(event, TurnDone):
        record.update(stop_reason=event.stop_reason, error=event.error, reply=view.text)
    elif isinstance(event, ApprovalRequested):
        record.update(tool_id=event.tool_id)
    elif isinstance(event, ApprovalDecided):
        record.update(verdict=event.verdict, scope=event.scope, reason=event.reason)
    elif isinstance(event, QuestionAsked):
        record.update(question=event.question, choices=event.choices)
    elif isinstance(event, QuestionAnswered):
        record.update(answer=event.answer)
    return record


class _Renderer(ABC):
    def __init__(self, view: TurnView, out: IO[str], lang: str) -> None:
        self.view = view
        self.out = out
        self.lang = lang

    @abstractmethod
    def show(self, event: TurnEvent) -> None:
        """Render one event, after it was applied to `self.view`."""

    def close(self) -> None:  # noqa: B027 - optional hook: most renderers have nothing to end
        pass

    def suspend(self) -> None:  # noqa: B027 - optional hook: only a live display redraws
        """Stop drawing while the terminal asks the user something."""

    def resume(self) -> None:  # noqa: B027 - optional hook: only a live display redraws
        """Draw again after the question."""


class _JsonRenderer(_Renderer):
    def show(self, event: TurnEvent) -> None:
        record = event_record(self.view, event, self.lang)
        self.out.write(_json_line(record))
        self.out.flush()


# JSON escapes C0 controls but not the C1 ones (0x80-0x9f, e.g. the 8-bit CSI), which
# some terminals obey: they are escaped too, so the line is terminal-safe and still the
# very same JSON value.
_C1 = re.compile("[\x7f-\x9f]")


def _json_line(record: dict[str, Any]) -> str:
    line = json.dumps(record, ensure_ascii=False)
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", line) + "\n"


# --- terminal ---------------------------------------------------------------------------

_ICONS: dict[FinalState, str] = {"settled": "✓", "error": "✗", "cancelled": "⊘"}
_COLOURS: dict[FinalState, str] = {"settled": "green", "error": "red", "cancelled": "yellow"}
# Only our own styling reaches the terminal: model text is sanitised, then shown as rich
# `Text`, which never reads markup in it.


class _PlainRenderer(_Renderer):
    """One line per visible change; the reply at the end."""

    def __init__(self, view: TurnView, out: TextIO, lang: str) -> None:
        super().__init__(view, out, lang)
        self._shown: dict[str, str] = {}

    def show(self, event: TurnEvent) -> None:
        if isinstance(event, TextDelta | TurnDone):
            return
        for group in self.view.groups():
            calls = self.view.group_calls(group)
            if len(calls) >= GROUP_HEADER_MIN_CALLS:
                header = _clean(self.view.group_header(group, self.lang).full_text, 200)
                self._line(f"header:{group}", f"▸ {header}")
            for call in calls:
                label = _clean(self.view.card_label(call.call_id, self.lang), 200)
                icon = _ICONS[call.state] if call.state in FINAL_STATES else "…"
                self._line(call.call_id, f"  {icon} {label}")

    def _line(self, key: str, text: str) -> None:
        if self._shown.get(key) != text:
            self._shown[key] = text
            self.out.write(text + "\n")
            self.out.flush()

    def close(self) -> None:
        _write_reply(self.view, self.out, bool(self._shown))


class _LiveRenderer(_Renderer):
    """The tool cards redrawn in place by rich's live display; the reply when the turn ends.

    Rich measures what the terminal shows (wide characters take two columns) and redraws
    the region. Every card is one line, cut with an ellipsis at the terminal's width, so a
    redraw never meets a line the terminal wrapped. While the cards outgrow the screen the
    newest are shown (the older ones behind a `⋮`); all of them stay on screen at the end.
    """

    def __init__(self, view: TurnView, console: Console, lang: str) -> None:
        super().__init__(view, console.file, lang)
        self._console = console
        self._spinners: dict[str, Spinner] = {}
        self._rows = 0
        self._live = Live(console=console, refresh_per_second=12.5)
        self._live.start()

    def show(self, event: TurnEvent) -> None:
        if not isinstance(event, TextDelta):
            # A snapshot, never the view itself: the refresh thread redraws it meanwhile.
            self._live.update(self._frame(room=self._console.height - 1))

    def _frame(self, room: int | None) -> RenderableType:
        rows: list[RenderableType] = []
        width = self._console.width
        for group in self.view.groups():
            calls = self.view.group_calls(group)
            indent = 0
            if len(calls) >= GROUP_HEADER_MIN_CALLS:
                header = self.view.group_header(group, self.lang).full_text
                rows.append(_row(Text("▸", style="bold"), _clean(header, width), "bold", 0))
                indent = 2
            for call in calls:
                label = _clean(self.view.card_label(call.call_id, self.lang), width)
                if call.state in FINAL_STATES:
                    icon = Text(_ICONS[call.state], style=_COLOURS[call.state])
                    rows.append(_row(icon, label, "", indent))
                else:
                    # One spinner per call, kept across frames, so it turns at its own pace.
                    spinner = self._spinners.setdefault(call.call_id, Spinner("dots", style="cyan"))
                    rows.append(_row(spinner, label, "dim", indent))
        self._rows = len(rows)
        if room is not None and len(rows) > room:
            rows = [Text("⋮", style="dim"), *rows[len(rows) - max(1, room - 1) :]]
        return Group(*rows)

    def close(self) -> None:
        if self._live.is_started:
            self._live.update(self._frame(room=None))
            self._live.stop()
        _write_reply(self.view, self.out, self._rows > 0)

    def suspend(self) -> None:
        if self._live.is_started:
            self._live.update(self._frame(room=None))
            self._live.stop()

    def resume(self) -> None:
        if not self._live.is_started:
            self._live.start()


def _row(icon: RenderableType, label: str, style: str, indent: int) -> RenderableType:
    """One line: the icon, then the label cut with an ellipsis where the line ends."""
    line = Table.grid(padding=(0, 1), expand=True)
    line.add_column(no_wrap=True)
    line.add_column(no_wrap=True, overflow="ellipsis", ratio=1)
    line.add_row(icon, Text(label, style=style))
    return Padding(line, (0, 0, 0, indent)) if indent else line


def _write_reply(view: TurnView, out: IO[str], after_cards: bool) -> None:
    reply = terminal_text(view.text).strip()
    if reply:
        out.write(("\n" if after_cards else "") + reply + "\n")
    out.flush()


def _clean(text: str, limit: int) -> str:
    return sanitize_label(text, max(8, limit)).text
