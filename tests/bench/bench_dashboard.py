"""The intents dashboard's queries at a million stored calls, on SQLite and PostgreSQL.

    source scripts/env.sh && python tests/bench/bench_dashboard.py [--rows 1000000]
        [--databases sqlite,postgresql] [--rounds 5]

Two stores of `--rows` calls each, seeded in bulk with what the app writes (the call
copies of `dashboard_calls`, the captured calls of `capture_events`, and the counts both
add to in `dashboard_counts` and `dashboard_intents`, built by grouped inserts as the
migration builds them for captured calls):

- `user`: every call is one user's own (the most a user's dashboard can read);
- `operator`: half are the operator's own calls, half captured from MCP servers, read
  with both sources.

The calls: 40 tools (12 of the app's own, whose intent is required; 28 on 4 servers,
optional), 9 agents, four calls per turn, over 365 UTC days up to today; 90% carry an
intent, drawn from 50,000 distinct sentences with a long tail (a Pareto draw: a few
intents are very common, most are rare); 5% are vague, 6% fail, and 2% repeat a sibling's
intent. PostgreSQL is vacuumed after the load, as autovacuum would have done, so index-only
scans see an up-to-date visibility map.

Every query `/intents` runs is timed alone (the best of `--rounds`, on a warm cache), for
all time, the last 90 days and the last 30 days, without a scope and (all time, 30 days)
narrowed to one tool; then the whole page (`store.dashboard.dashboard`, all of them in
one read) per case. The budget is 200 ms per query. The machine's load shows in the
numbers: run it on an otherwise idle machine to compare revisions.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, text

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from intent_ui.core.dashboard import intent_hash, utc_day  # noqa: E402
from intent_ui.store.dashboard import (  # noqa: E402
    APP,
    CAPTURED,
    DashboardQuery,
    Scope,
    dashboard,
    timed_queries,
)
from intent_ui.store.db import dispose_engines, init_db  # noqa: E402
from tests.support import servers  # noqa: E402

BUDGET_MS = 200.0
TODAY = 20_500
CALLS_PER_TURN = 4
DISTINCT_INTENTS = 50_000
OWNER = "bench-user"

TOOLS: list[tuple[str, str | None]] = [(f"native_tool_{i}", None) for i in range(12)] + [
    (f"mcp_tool_{i}", f"server_{i % 4}") for i in range(28)
]
AGENTS = ["default", *(f"agent{i}" for i in range(8))]
VAGUE = ["Calling the tool", "Getting data", "Checking", "Doing the task", "Helping the user"]

_CALL_COLUMNS = [
    *("owner_id", "message_id", "call_id", "position", "agent_id", "tool", "server"),
    *("intent", "intent_hash", "outcome", "intent_context", "has_intent", "vague"),
    *("duplicate", "status", "started_at", "duration_ms", "day"),
]
_CAPTURE_COLUMNS = [
    *("server", "tool", "intent", "intent_context", "intent_source", "status"),
    *("duration_ms", "timestamp", "intent_hash", "vague"),
]


def _intents() -> list[tuple[str, int]]:
    nouns = ["OAuth callback", "billing export", "search index", "release notes", "test run"]
    places = ["router", "worker", "schema", "dashboard", "client", "migration", "config"]
    out = []
    for i in range(DISTINCT_INTENTS):
        sentence = f"Looking into the {nouns[i % 5]} of the {places[i % 7]} (case {i})"
        out.append((sentence, intent_hash(sentence) or 0))
    return out


def _rows(count: int, seed: int) -> Iterator[dict[str, Any]]:
    """`count` calls of the distribution in the module docstring."""
    rnd = random.Random(seed)
    intents = _intents()
    vague = [(v, intent_hash(v) or 0) for v in VAGUE]
    start = (TODAY - 364) * 86_400.0
    turn: list[tuple[str, int]] = []
    for i in range(count):
        tool, server = TOOLS[min(int(rnd.expovariate(0.12)), len(TOOLS) - 1)]
        has = rnd.random() < 0.9
        pick: tuple[str, int] | None = None
        flags = {"vague": False, "duplicate": False}
        if has:
            roll = rnd.random()
            if roll < 0.05:
                pick, flags["vague"] = rnd.choice(vague), True
            elif roll < 0.07 and turn:
                pick, flags["duplicate"] = turn[-1], True
            else:
                k = min(int(rnd.paretovariate(1.1)) - 1, DISTINCT_INTENTS - 1)
                pick = intents[k if rnd.random() < 0.7 else rnd.randrange(DISTINCT_INTENTS)]
        if i % CALLS_PER_TURN == 0:
            turn = []
        if pick is not None:
            turn.append(pick)
        at = start + rnd.random() * 365 * 86_400
        yield {
            "turn": i // CALLS_PER_TURN,
            "position": i % CALLS_PER_TURN,
            "tool": tool,
            "server": server,
            "agent_id": AGENTS[rnd.randrange(len(AGENTS))],
            "intent": pick[0] if pick else None,
            "intent_hash": pick[1] if pick else None,
            "mode": "required" if server is None else "optional",
            "has_intent": has,
            "failed": rnd.random() < 0.06,
            "at": at,
            **flags,
        }


# --- seeding --------------------------------------------------------------------------------


class Loader:
    """Bulk inserts through the driver: COPY on PostgreSQL, executemany on SQLite."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.postgres = engine.dialect.name == "postgresql"

    def load(self, table: str, columns: list[str], rows: Iterator[tuple[Any, ...]]) -> None:
        raw = self.engine.raw_connection()
        try:
            if self.postgres:
                with raw.driver_connection.cursor() as cursor:  # type: ignore[union-attr]
                    names = ", ".join(f'"{c}"' for c in columns)
                    with cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                        for row in rows:
                            copy.write_row(row)
            else:
                marks = ", ".join("?" for _ in columns)
                cursor = raw.cursor()
                insert = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"
                batch: list[tuple[Any, ...]] = []
                for row in rows:
                    batch.append(row)
                    if len(batch) == 50_000:
                        cursor.executemany(insert, batch)
                        batch = []
                if batch:
                    cursor.executemany(insert, batch)
            raw.commit()
        finally:
            raw.close()


def seed(engine: Engine, own: int, captured: int) -> None:
    loader = Loader(engine)
    turns = (own + CALLS_PER_TURN - 1) // CALLS_PER_TURN
    with engine.begin() as connection:
        connection.execute(
            text("INSERT INTO users (id, name, created_at) VALUES (:id, :name, 0)"),
            {"id": OWNER, "name": OWNER},
        )
    chats = max(1, turns // 10)
    loader.load(
        "conversations",
        ["id", "owner_id", "title", "endpoint", "model", "created_at", "updated_at"],
        ((f"c{i}", OWNER, "Bench", "demo", "demo", 0.0, 0.0) for i in range(chats)),
    )
    loader.load(
        "messages",
        ["id", "conversation_id", "position", "role", "content", "status", "created_at",
         "updated_at"],
        ((f"m{t}", f"c{t % chats}", t // chats, "assistant", "", "complete", 0.0, 0.0)
         for t in range(turns)),
    )  # fmt: skip
    loader.load(
        "dashboard_calls",
        _CALL_COLUMNS,
        (
            (OWNER, f"m{r['turn']}", f"call{r['position']}", r["position"], r["agent_id"],
             r["tool"], r["server"], r["intent"], r["intent_hash"], None, r["mode"],
             r["has_intent"], r["vague"], r["duplicate"], "error" if r["failed"] else "ok",
             r["at"], 250.0, utc_day(r["at"]))
            for r in _rows(own, seed=1)
        ),
    )  # fmt: skip
    loader.load(
        "capture_events",
        _CAPTURE_COLUMNS,
        (
            (r["server"] or "widgets", r["tool"], r["intent"],
             "required" if r["server"] is None else "optional",
             "context_parameter" if r["intent"] else None, "error" if r["failed"] else "ok",
             3.0, r["at"], r["intent_hash"], r["vague"])
            for r in _rows(captured, seed=2)
        ),
    )  # fmt: skip
    _build_counts(engine)
    with contextlib.ExitStack() as stack:
        if loader.postgres:
            connection = stack.enter_context(engine.connect().execution_options(
                isolation_level="AUTOCOMMIT"))  # fmt: skip
            connection.execute(text("VACUUM ANALYZE"))
        else:
            connection = stack.enter_context(engine.begin())
            connection.execute(text("ANALYZE"))


def _build_counts(engine: Engine) -> None:
    """The day counts of the seeded rows, as the writers would have added them."""
    postgres = engine.dialect.name == "postgresql"
    day = "FLOOR(timestamp / 86400)::integer" if postgres else "CAST(timestamp / 86400 AS INTEGER)"
    yes = "true" if postgres else "1"
    with engine.begin() as connection:
        for dimension, name in (("tool", "tool"), ("agent", "agent_id")):
            server = "COALESCE(server, '')" if dimension == "tool" else "''"
            grouped = f"{name}, {server}" if dimension == "tool" else name
            connection.execute(text(f"""
                INSERT INTO dashboard_counts (owner_id, source, dimension, day, name, server,
                    intent_context, calls, with_intent, vague, duplicates, failures)
                SELECT owner_id, 'app', '{dimension}', day, {name}, {server}, intent_context,
                    COUNT(*), SUM(CASE WHEN has_intent = {yes} THEN 1 ELSE 0 END),
                    SUM(CASE WHEN vague = {yes} THEN 1 ELSE 0 END),
                    SUM(CASE WHEN duplicate = {yes} THEN 1 ELSE 0 END),
                    SUM(CASE WHEN status = 'error' THEN 1 ELSE 0 END)
                FROM dashboard_calls
                GROUP BY owner_id, day, {grouped}, intent_context
            """))  # fmt: skip
        connection.execute(text("""
            INSERT INTO dashboard_intents (owner_id, source, intent_hash, calls, failures)
            SELECT owner_id, 'app', intent_hash, COUNT(*),
                SUM(CASE WHEN status = 'error' THEN 1 ELSE 0 END)
            FROM dashboard_calls WHERE intent_hash IS NOT NULL
            GROUP BY owner_id, intent_hash
        """))  # fmt: skip
        connection.execute(text("""
            INSERT INTO dashboard_intents (owner_id, source, intent_hash, calls, failures)
            SELECT '', 'captured', intent_hash, COUNT(*),
                SUM(CASE WHEN status = 'error' THEN 1 ELSE 0 END)
            FROM capture_events WHERE intent_hash IS NOT NULL
            GROUP BY intent_hash
        """))  # fmt: skip
        connection.execute(text(f"""
            INSERT INTO dashboard_counts (owner_id, source, dimension, day, name, server,
                intent_context, calls, with_intent, vague, duplicates, failures)
            SELECT '', 'captured', 'tool', {day}, tool, COALESCE(server, ''), intent_context,
                COUNT(*), SUM(CASE WHEN intent_source = 'context_parameter' THEN 1 ELSE 0 END),
                SUM(CASE WHEN vague = {yes} THEN 1 ELSE 0 END), 0,
                SUM(CASE WHEN status = 'error' THEN 1 ELSE 0 END)
            FROM capture_events
            GROUP BY {day}, tool, COALESCE(server, ''), intent_context
        """))  # fmt: skip


# --- timing ---------------------------------------------------------------------------------


def best_ms(engine: Engine, run: Callable[[Any], object], rounds: int) -> float:
    best = float("inf")
    with engine.connect() as connection:
        run(connection)  # warm
        for _ in range(rounds):
            started = time.perf_counter()
            run(connection)
            best = min(best, (time.perf_counter() - started) * 1000)
    return best


def cases(sources: frozenset[Any]) -> list[tuple[str, DashboardQuery]]:
    source = APP if APP in sources else CAPTURED
    tool = Scope("tool", source, "native_tool_0", "") if source == APP else None
    if tool is None:
        tool = Scope("tool", CAPTURED, "mcp_tool_1", "server_1")
    out = []
    for label, since in (("all time", None), ("90 days", TODAY - 89), ("30 days", TODAY - 29)):
        out.append((f"{label}", DashboardQuery(OWNER, sources, TODAY, since)))
        if since != TODAY - 89:
            out.append((f"{label}, a tool", DashboardQuery(OWNER, sources, TODAY, since, tool)))
    return out


def run_store(kind: str, url: str, name: str, own: int, captured: int, rounds: int) -> bool:
    engine = init_db(url)
    started = time.perf_counter()
    seed(engine, own, captured)
    print(f"\n## {kind}, {name}: {own:,} own calls + {captured:,} captured "
          f"(seeded in {time.perf_counter() - started:.0f} s)")  # fmt: skip
    sources = frozenset({APP}) if captured == 0 else frozenset({APP, CAPTURED})
    ok = True
    table = cases(sources)
    print(f"{'query':<28}" + "".join(f"{label:>18}" for label, _ in table))
    names = [n for n, _ in timed_queries(table[0][1])]
    for index, query_name in enumerate(names):
        cells = []
        for _, query in table:
            ms = best_ms(engine, timed_queries(query)[index][1], rounds)
            ok &= ms < BUDGET_MS
            cells.append(f"{ms:.1f} ms" + ("" if ms < BUDGET_MS else " !"))
        print(f"{query_name:<28}" + "".join(f"{c:>18}" for c in cells))
    page = []
    for _, query in table:
        best = float("inf")
        for _ in range(rounds):
            t0 = time.perf_counter()
            dashboard(engine, query)
            best = min(best, (time.perf_counter() - t0) * 1000)
        page.append(f"{best:.1f} ms")
    print(f"{'whole page (all of them)':<28}" + "".join(f"{c:>18}" for c in page))
    dispose_engines()
    return ok


@contextlib.contextmanager
def database(kind: str) -> Iterator[str]:
    if kind == "sqlite":
        with tempfile.TemporaryDirectory(prefix="intent-ui-bench-") as folder:
            yield f"sqlite:///{Path(folder) / 'dashboard.db'}"
        return
    with servers.postgres_server() as server, servers.postgres_database(
        server, "intent_ui_bench"
    ) as url:  # fmt: skip
        yield url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--databases", default="sqlite,postgresql")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"# Intents dashboard, {args.rows:,} stored calls per store; best of {args.rounds}; "
          f"budget {BUDGET_MS:.0f} ms per query")  # fmt: skip
    ok = True
    for kind in args.databases.split(","):
        for name, own, captured in (
            ("user", args.rows, 0),
            ("operator", args.rows // 2, args.rows - args.rows // 2),
        ):
            with database(kind) as url:
                ok &= run_store(kind, url, name, own, captured, args.rounds)
    print("\nevery query within budget" if ok else "\nsome queries over budget (marked !)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
