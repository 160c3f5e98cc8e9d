"""The request build over an agent with 1,000 MCP tools: uncached, first build, cached.

    source scripts/env.sh && python tests/bench/bench_request_build.py [--tools 1000]
        [--repeat 15] [--runs 2] [--before REV]

The tools are MCP-like definitions (the same in every run): a description of 20 to 60
words and an object schema of 2 to 8 properties (strings, integers, booleans, enums,
arrays, nested objects with their own properties), about 1.4 KB of JSON each. Every
tool is labelled (`{"*": {"describe_intent": true}}`, the default agent), with every
capability on; each row is measured without and with strict schemas.

Rows (milliseconds of CPU time, the median of `--repeat` builds):

- `pipeline, uncached`: `apply_capabilities` over fresh definitions, as every turn ran
  it before the cache;
- `pipeline, first build`: a `CapabilityCache` that has not seen the inputs (the key,
  the pipeline and freezing its result), over plain definitions and over frozen ones
  (what the runtime passes); `freeze definitions` is freezing them, once per tool;
- `pipeline, cached`: the same inputs again, as frozen definitions (the runtime's
  turns) and as equal plain definitions built afresh (the content is read to key them);
- `turn's tool offer`: a whole `TurnRun` built over 1,000 `McpTool`s (naming, reading
  the definitions, the pipeline): without a cache, and with the runtime's
  `RequestCache` cold (a first turn) and warm (every later turn);
- `per round: provider body`: the Chat Completions body with the tools, JSON-encoded
  (what every round of a turn sends), for scale.

`--before REV` measures the rows that revision has (the uncached ones) in a `git
worktree` of it, in the same run: each checkout is measured in processes of its own
(`--runs` each, alternating which goes first; a row shows the lower of a checkout's
medians), with the same tools and code. Compare the columns of one run.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import gc
import json
import logging
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

STRICT = (False, True)
OPTIONS = {"*": {"describe_intent": True}}

ROWS = (
    ("pipeline", "pipeline, uncached (apply_capabilities)"),
    ("first_plain", "pipeline, first build, plain definitions"),
    ("freeze", "  freeze definitions (once per tool)"),
    ("first_frozen", "pipeline, first build, frozen definitions"),
    ("hit_frozen", "pipeline, cached, frozen definitions"),
    ("hit_plain", "pipeline, cached, equal plain definitions"),
    ("turn", "turn's tool offer (TurnRun), no cache"),
    ("turn_first", "turn's tool offer, first turn (RequestCache)"),
    ("turn_hit", "turn's tool offer, later turns (RequestCache)"),
    ("body", "per round: provider body + JSON"),
)

_WORDS = [
    *("repository", "issue", "pull", "request", "branch", "commit", "file", "path", "owner"),
    *("label", "milestone", "review", "comment", "workflow", "run", "job", "artifact"),
    *("release", "tag", "team", "member", "project", "column", "card", "query", "page"),
    *("limit", "sort", "order", "state", "open", "closed", "merged", "draft", "title"),
    *("body", "base", "head", "sha", "ref", "content", "encoding"),
]


# --- the tools (both checkouts build them with this code) -----------------------------


def _words(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(low, high))).capitalize()


def _property(rng: random.Random, depth: int) -> dict[str, Any]:
    kinds = ["string"] * 3 + ["integer", "boolean"]
    if depth < 2:
        kinds += ["enum", "array", "object"]
    kind = rng.choice(kinds)
    description = _words(rng, 5, 16) + "."
    if kind == "enum":
        values = [rng.choice(_WORDS) for _ in range(rng.randint(2, 5))]
        return {"type": "string", "description": description, "enum": values}
    if kind == "integer":
        return {"type": "integer", "description": description, "minimum": 1, "maximum": 100}
    if kind == "array":
        return {"type": "array", "description": description, "items": {"type": "string"}}
    if kind == "object":
        return _object(rng, depth + 1, description)
    return {"type": kind, "description": description}


def _object(rng: random.Random, depth: int, description: str | None = None) -> dict[str, Any]:
    count = rng.randint(2, 8 if depth == 0 else 4)
    names = list(dict.fromkeys(f"{rng.choice(_WORDS)}_{rng.choice(_WORDS)}" for _ in range(count)))
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {name: _property(rng, depth) for name in names},
    }
    if description:
        schema["description"] = description
    required = [name for name in names if rng.random() < 0.4]
    if required:
        schema["required"] = required
    return schema


def tool_specs(count: int) -> list[dict[str, Any]]:
    """`count` MCP tool listings (`name`, `description`, `inputSchema`), seeded."""
    rng = random.Random(18)
    return [
        {
            "name": f"{rng.choice(_WORDS)}_{rng.choice(_WORDS)}_{index}",
            "description": _words(rng, 20, 60) + ".",
            "inputSchema": _object(rng, 0),
        }
        for index in range(count)
    ]


# --- measuring (in a child process, over one checkout) ----------------------------------


def _nothing() -> None:
    return None


def _median_ms(
    build: Callable[[Any], object], repeat: int, setup: Callable[[], Any] = _nothing
) -> float:
    """The median CPU time of `build(setup())`, the setup untimed: the build is all CPU,
    and on a shared machine wall time would add whatever else held the CPU meanwhile.

    Each build starts from a collected heap: the garbage of the builds before it would
    otherwise make a full collection (a quarter of a second with these tools alive) land
    on whichever build crosses the threshold.
    """
    times = []
    for _ in range(repeat):
        arg = setup()
        gc.collect()
        start = time.process_time()
        build(arg)
        times.append(time.process_time() - start)
    return statistics.median(times) * 1000


def measure(count: int, repeat: int) -> dict[str, dict[str, float]]:
    """Every row this checkout has, per strictness ("off"/"on")."""
    specs = tool_specs(count)
    return {("on" if strict else "off"): _measure(specs, strict, repeat) for strict in STRICT}


def _measure(specs: list[dict[str, Any]], strict: bool, repeat: int) -> dict[str, float]:
    from mcp import types

    from intent_ui.agent.providers.base import ChatRequest
    from intent_ui.agent.providers.openai import chat_completions_body
    from intent_ui.agent.run import TurnRun
    from intent_ui.agent.tools.mcp import McpTool
    from intent_ui.core.capabilities import ALL_CAPABILITIES, apply_capabilities

    class Worker:
        name = "github"

    tools = [McpTool(types.Tool(**spec), Worker()) for spec in specs]  # type: ignore[arg-type]
    plain = [
        {"name": s["name"], "description": s["description"], "parameters": s["inputSchema"]}
        for s in specs
    ]
    ids = {d["name"]: f"{d['name']}_mcp_github" for d in plain}

    def fresh() -> list[dict[str, Any]]:
        return copy.deepcopy(plain)

    def turn(cache: Any = None) -> Any:
        extra = {} if cache is None else {"request_cache": cache}
        return TurnRun(
            provider=None,  # type: ignore[arg-type]
            model="bench",
            history=[],
            user_message="hi",
            tools=tools,
            tool_options=OPTIONS,
            capabilities=ALL_CAPABILITIES,
            system=None,
            strict=strict,
            **extra,
        )

    def uncached(defs: Any) -> object:
        return apply_capabilities(
            defs, OPTIONS, capabilities=ALL_CAPABILITIES, tool_ids=ids, strict=strict
        )

    request = ChatRequest(
        model="bench",
        messages=[{"role": "user", "content": "hi"}],
        tools=turn().definitions,
        strict=strict,
    )
    row = {
        "pipeline": _median_ms(uncached, repeat, fresh),
        "turn": _median_ms(lambda _: turn(), repeat),
        "body": _median_ms(
            lambda _: json.dumps(chat_completions_body(request), ensure_ascii=False), repeat
        ),
    }
    try:
        from intent_ui.agent.request_cache import RequestCache
        from intent_ui.core.capabilities.cache import CapabilityCache, frozen_definition
    except ImportError:  # a revision before the cache
        return row

    def shaped(defs: Any, cache: CapabilityCache) -> object:
        return cache.apply(
            defs, OPTIONS, capabilities=ALL_CAPABILITIES, tool_ids=ids, strict=strict
        )

    frozen = [frozen_definition(d) for d in plain]
    warm = CapabilityCache()
    shaped(frozen, warm)
    ready = RequestCache()
    turn(ready)
    row |= {
        "first_plain": _median_ms(
            lambda pair: shaped(*pair), repeat, lambda: (fresh(), CapabilityCache())
        ),
        "freeze": _median_ms(lambda defs: [frozen_definition(d) for d in defs], repeat, fresh),
        "first_frozen": _median_ms(lambda cache: shaped(frozen, cache), repeat, CapabilityCache),
        "hit_frozen": _median_ms(lambda _: shaped(frozen, warm), repeat),
        "hit_plain": _median_ms(lambda defs: shaped(defs, warm), repeat, fresh),
        "turn_first": _median_ms(turn, repeat, RequestCache),
        "turn_hit": _median_ms(lambda _: turn(ready), repeat),
    }
    return row


def _child(root: Path, count: int, repeat: int) -> None:
    sys.path[:0] = [str(root)]
    import intent_ui

    package = Path(intent_ui.__file__).resolve()
    if root.resolve() not in package.parents:
        raise SystemExit(f"imported intent_ui from {package}, not from the checkout {root}")
    # The pipeline warns about tools it cannot label; none of these is one, but a bench
    # must not print a thousand lines if one were.
    logging.disable(logging.WARNING)
    print(json.dumps(measure(count, repeat)))


def _run(root: Path, count: int, repeat: int) -> dict[str, dict[str, float]]:
    found = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            str(root),
            "--tools",
            str(count),
            "--repeat",
            str(repeat),
        ],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if found.returncode != 0:
        raise SystemExit(f"measuring {root} failed:\n{found.stderr}")
    result: dict[str, dict[str, float]] = json.loads(found.stdout)
    return result


def _best(runs: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Per row, the lowest of the runs' medians: the run least disturbed by the machine."""
    return {
        strict: {key: min(run[strict][key] for run in runs) for key in runs[0][strict]}
        for strict in runs[0]
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tools", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=15, help="builds timed per row")
    parser.add_argument("--runs", type=int, default=2, help="processes per checkout")
    parser.add_argument("--before", metavar="REV", help="measure this revision beside it")
    parser.add_argument("--child", metavar="ROOT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(Path(args.child), args.tools, args.repeat)
        return
    sys.path.insert(0, str(ROOT))
    from tests.support.bench_app import resolve, worktree

    roots = {"now": ROOT}
    with contextlib.ExitStack() as stack:
        if args.before:
            roots = {resolve(args.before)[:7]: stack.enter_context(worktree(args.before))} | roots
        runs: dict[str, list[dict[str, dict[str, float]]]] = {label: [] for label in roots}
        for index in range(max(1, args.runs)):
            # Alternate which checkout goes first, so drift in the machine's load (it is
            # shared) falls on both alike.
            order = list(roots.items())
            for label, root in order if index % 2 == 0 else order[::-1]:
                runs[label].append(_run(root, args.tools, args.repeat))
                print(f"measured {label} (run {index + 1})", file=sys.stderr)
    results = {label: _best(found) for label, found in runs.items()}
    labels = list(roots)
    size = len(json.dumps(tool_specs(args.tools))) / args.tools / 1024
    print(
        f"\n{args.tools} MCP tools, {size:.1f} KB of JSON each; ms, the median of {args.repeat}"
        f" builds (the lower of {max(1, args.runs)} processes per checkout)"
    )
    headers = ["", *(f"{label} {'strict' if s else 'plain'}" for s in STRICT for label in labels)]
    lines = []
    for key, title in ROWS:
        line = [title]
        for strict in STRICT:
            for label in labels:
                value = results[label]["on" if strict else "off"].get(key)
                line.append(
                    "-" if value is None else f"{value:.3f}" if value < 1 else f"{value:.1f}"
                )
        lines.append(line)
    widths = [max(len(row[i]) for row in [headers, *lines]) for i in range(len(headers))]
    for row in [headers, *lines]:
        print(
            "  ".join(
                cell.ljust(widths[0]) if i == 0 else cell.rjust(widths[i])
                for i, cell in enumerate(row)
            )
        )
    if not args.before:
        print("(--before REV adds the revision's columns: the code before the cache)")


if __name__ == "__main__":
    main()
