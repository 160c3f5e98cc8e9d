"""`python -m intent_ui run "message"`: one agent turn in the terminal (and `users`, see
`intent_ui.users_cli`).

Without `--json` the turn is shown live: on a terminal each card's label updates in place
(the group header above its cards, a spinner while a call is live, ✓ / ✗ / ⊘ once it
settled, failed or was cancelled); piped, one plain line per change. The reply follows.
With `--json` every event is one JSON object per line (flushed), with the card's resolved
label and its group's header, so scripts and tests see exactly what a user would.

The exit codes are listed in `EXIT_CODES` (and shown by `run --help`): a turn that did
not end normally never exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import re
import shutil
import signal
import sys
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, TextIO

from intent_ui.core.events import (
    ActivityLabel,
    ArgsComplete,
    ArgsDelta,
    CallBackgrounded,
    CallSettled,
    CallStarted,
    TextDelta,
    TurnDone,
    TurnEvent,
)
from intent_ui.core.labels import (
    DEFAULT_LABEL_LIMIT,
    ELLIPSIS,
    GROUP_HEADER_MIN_CALLS,
    sanitize_label,
)
from intent_ui.core.text import scrub_surrogates, terminal_text
from intent_ui.core.turn import TurnView
from intent_ui.users_cli import add_users_command, run_users_command

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

_EVENT_TYPES: dict[type, str] = {
    CallStarted: "call_started",
    ArgsDelta: "args_delta",
    ArgsComplete: "args_complete",
    CallBackgrounded: "call_backgrounded",
    CallSettled: "call_settled",
    TextDelta: "text_delta",
    ActivityLabel: "activity_label",
    TurnDone: "turn_done",
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
    add_users_command(commands)
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

    runtime = AgentRuntime(config, pacing_ms=args.pacing_ms)
    try:
        await runtime.start()
        for server, why in runtime.mcp_failures.items():
            _fail(f"MCP server '{server}' is unavailable: {why}")
        stop = asyncio.Event()
        run = runtime.start_turn(
            user_message=args.message, endpoint=endpoint.name, model=args.model, stop=stop
        )
        with _stop_on_interrupt(stop):
            view = await _consume(run, args, sys.stdout)
    finally:
        await runtime.aclose()
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


async def _consume(run: Any, args: argparse.Namespace, out: TextIO) -> TurnView:
    view = TurnView()
    renderer: _Renderer
    if args.json:
        renderer = _JsonRenderer(view, out, args.lang)
    elif out.isatty():
        renderer = _LiveRenderer(view, out, args.lang)
    else:
        renderer = _PlainRenderer(view, out, args.lang)
    async for event in run:
        view.apply(event)
        renderer.show(event)
    renderer.close()
    return view


# --- JSON -------------------------------------------------------------------------------


def event_record(view: TurnView, event: TurnEvent, lang: str = "en") -> dict[str, Any]:
    """One event as the `--json` line: the event plus what a user would see for it.

    `view` must already have applied `event`.
    """
    record: dict[str, Any] = {
        "type": _EVENT_TYPES.get(type(event), type(event).__name__.lower()),
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
    block: int | None = None
    if isinstance(call_id, str):
        call = view.call(call_id)
        record["call_id"] = call_id
        if call is not None:
            record.update(tool=call.tool, state=call.state, label=view.card_label(call_id, lang))
            block = call.block
            record["block"] = block
    if isinstance(event, ActivityLabel):
        block = event.block
        record["block"] = block
        record["label"] = event.label
    if block is not None:
        record["header"] = view.block_header(block, lang).full_text
    if isinstance(event, ArgsDelta):
        # A fragment's line shows the label as a card does while it streams: however long
        # the intent grows, each line stays short, so the output grows with the turn.
        for key in ("label", "header"):
            if isinstance(record[key], str) and len(record[key]) > DEFAULT_LABEL_LIMIT:
                record[key] = record[key][: DEFAULT_LABEL_LIMIT - 1] + ELLIPSIS
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
    elif isinstance(event, TurnDone):
        record.update(stop_reason=event.stop_reason, error=event.error, reply=view.text)
    return record


class _Renderer(ABC):
    def __init__(self, view: TurnView, out: TextIO, lang: str) -> None:
        self.view = view
        self.out = out
        self.lang = lang

    @abstractmethod
    def show(self, event: TurnEvent) -> None:
        """Render one event, after it was applied to `self.view`."""

    def close(self) -> None:  # noqa: B027 - optional hook: most renderers have nothing to end
        pass


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

_SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_ICONS = {"settled": "✓", "error": "✗", "cancelled": "⊘"}
_COLOURS = {"settled": "32", "error": "31", "cancelled": "33"}
# Only our own styling reaches the terminal; model text is sanitised before it is shown.


class _PlainRenderer(_Renderer):
    """One line per visible change; the reply at the end."""

    def __init__(self, view: TurnView, out: TextIO, lang: str) -> None:
        super().__init__(view, out, lang)
        self._shown: dict[str, str] = {}

    def show(self, event: TurnEvent) -> None:
        if isinstance(event, TextDelta | TurnDone):
            return
        for block in self.view.blocks():
            calls = self.view.block_calls(block)
            if len(calls) >= GROUP_HEADER_MIN_CALLS:
                header = _clean(self.view.block_header(block, self.lang).full_text, 200)
                self._line(f"header:{block}", f"▸ {header}")
            for call in calls:
                label = _clean(self.view.card_label(call.call_id, self.lang), 200)
                icon = _ICONS.get(call.state, "…")
                self._line(call.call_id, f"  {icon} {label}")

    def _line(self, key: str, text: str) -> None:
        if self._shown.get(key) != text:
            self._shown[key] = text
            self.out.write(text + "\n")
            self.out.flush()

    def close(self) -> None:
        _write_reply(self.view, self.out, bool(self._shown))


class _LiveRenderer(_Renderer):
    """Redraws the tool cards in place with ANSI; prints the reply when the turn ends."""

    def __init__(self, view: TurnView, out: TextIO, lang: str) -> None:
        super().__init__(view, out, lang)
        self._drawn = 0
        self._frame = 0
        self._frozen = False

    def show(self, event: TurnEvent) -> None:
        if isinstance(event, TextDelta):
            return
        self._frame = (self._frame + 1) % len(_SPINNER)
        self._draw()

    def _lines(self, width: int) -> list[str]:
        lines: list[str] = []
        for block in self.view.blocks():
            calls = self.view.block_calls(block)
            indent = ""
            if len(calls) >= GROUP_HEADER_MIN_CALLS:
                header = self.view.block_header(block, self.lang)
                text = _clean(header.full_text, width - 3)
                lines.append(f"\x1b[1m▸ {text}\x1b[0m")
                indent = "  "
            for call in calls:
                label = _clean(
                    self.view.card_label(call.call_id, self.lang), width - 4 - len(indent)
                )
                if call.state in _ICONS:
                    icon = f"\x1b[{_COLOURS[call.state]}m{_ICONS[call.state]}\x1b[0m"
                    lines.append(f"{indent}{icon} {label}")
                else:
                    spinner = _SPINNER[self._frame]
                    lines.append(f"{indent}\x1b[36m{spinner}\x1b[0m \x1b[2m{label}\x1b[0m")
        return lines

    def _draw(self) -> None:
        size = shutil.get_terminal_size((100, 24))
        lines = self._lines(max(20, size.columns))
        if self._drawn and not self._frozen and self._drawn < size.lines:
            # Back to the first line of the region, then clear everything below it.
            self.out.write(f"\x1b[{self._drawn}F\x1b[J")
        elif self._drawn:
            # The region scrolled past the top of the screen: append from here on.
            self._frozen = True
            lines = lines[self._drawn :] if len(lines) > self._drawn else []
        self.out.write("".join(line + "\n" for line in lines))
        self.out.flush()
        if not self._frozen:
            self._drawn = len(lines)
        else:
            self._drawn += len(lines)

    def close(self) -> None:
        _write_reply(self.view, self.out, self._drawn > 0)


def _write_reply(view: TurnView, out: TextIO, after_cards: bool) -> None:
    reply = terminal_text(view.text).strip()
    if reply:
        out.write(("\n" if after_cards else "") + reply + "\n")
    out.flush()


def _clean(text: str, limit: int) -> str:
    return sanitize_label(text, max(8, limit)).text
