"""Native tools: happy paths with their outcome labels, and every refusal the model may hit."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from intent_ui.agent.tools.base import Tool, ToolKind, ToolResult
from intent_ui.agent.tools.memory import (
    MEMORY_DEFAULT_OWNER,
    DeleteMemoryTool,
    InMemoryMemoryStore,
    SetMemoryTool,
)
from intent_ui.agent.tools.native import (
    MAX_READ_FILE_BYTES,
    EditFileTool,
    GlobSearchTool,
    GrepSearchTool,
    ListDirectoryTool,
    NativeTool,
    ReadFileTool,
    WriteFileTool,
    file_tools,
)
from intent_ui.agent.tools.registry import ToolIndex, build_tools, model_facing_name
from intent_ui.agent.tools.web_search import WebSearchTool
from intent_ui.agent.tools.workspace import OutsideWorkspaceError, Workspace
from intent_ui.config import AppConfig, WebSearchConfig
from intent_ui.core.capabilities.intent import (
    INTENT_ARG,
    apply_intent_labels,
    is_intent_label_property,
    without_intent,
)

HANG_GUARD_S = 60
"""Only a guard: a call that blocks fails the test instead of hanging the suite."""


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(
        "import os\n\ndef login():\n    return 'OAuth callback'\n", encoding="utf-8"
    )
    (root / "notes.md").write_text("hello\n", encoding="utf-8")
    return Workspace(root)


def ok(result: ToolResult) -> ToolResult:
    assert not result.is_error, result.output
    return result


# --- definitions -----------------------------------------------------------------------------


def test_every_native_tool_is_self_describing_with_intent_first(ws: Workspace) -> None:
    store = InMemoryMemoryStore()
    tools = [
        *file_tools(ws),
        SetMemoryTool(store),
        DeleteMemoryTool(store),
        WebSearchTool("http://x"),
    ]
    for tool in tools:
        definition = tool.definition
        params = definition["parameters"]
        assert definition["intent"] is True
        assert next(iter(params["properties"])) == INTENT_ARG
        assert is_intent_label_property(params["properties"][INTENT_ARG])
        assert params["required"][0] == INTENT_ARG
        assert (tool.kind, tool.server, tool.tool_id) == ("native", None, tool.name)


def test_definitions_carry_no_pydantic_titles(ws: Workspace) -> None:
    assert '"title": "' not in json.dumps(ReadFileTool(ws).definition["parameters"])


# --- workspace -------------------------------------------------------------------------------


def test_workspace_refuses_parent_escape(ws: Workspace) -> None:
    with pytest.raises(OutsideWorkspaceError, match="is outside the workspace"):
        ws.resolve("../etc/passwd")


def test_workspace_refuses_absolute_path_elsewhere(ws: Workspace) -> None:
    with pytest.raises(OutsideWorkspaceError, match="Path '/etc/passwd' is outside"):
        ws.resolve("/etc/passwd")


def test_workspace_accepts_absolute_path_inside(ws: Workspace) -> None:
    assert ws.resolve(str(ws.root / "notes.md")) == ws.root / "notes.md"


def test_workspace_refuses_symlink_pointing_outside(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("s", encoding="utf-8")
    (ws.root / "link.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(OutsideWorkspaceError):
        ws.resolve("link.txt")


async def test_read_file_outside_workspace_is_an_error_result(ws: Workspace) -> None:
    result = await ReadFileTool(ws).call({"path": "../etc/passwd"})
    assert result.is_error
    assert result.output == f"Path '../etc/passwd' is outside the workspace {ws.root}"


async def test_write_file_through_symlinked_folder_is_refused(
    ws: Workspace, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws.root / "out").symlink_to(outside, target_is_directory=True)
    result = await WriteFileTool(ws).call({"path": "out/x.txt", "content": "x"})
    assert result.is_error
    assert not (outside / "x.txt").exists()


# --- argument validation ---------------------------------------------------------------------


async def test_unknown_argument_is_named_in_the_error(ws: Workspace) -> None:
    result = await ReadFileTool(ws).call({"path": "notes.md", "encoding": "latin-1"})
    assert result.is_error
    assert "unknown argument 'encoding'" in result.output
    assert "allowed: path, offset, limit" in result.output


async def test_missing_argument_is_named_in_the_error(ws: Workspace) -> None:
    result = await WriteFileTool(ws).call({"path": "a.txt"})
    assert result.is_error
    assert "missing required argument 'content'" in result.output


async def test_wrong_type_is_an_error_not_a_crash(ws: Workspace) -> None:
    result = await ReadFileTool(ws).call({"path": "notes.md", "limit": "lots"})
    assert result.is_error
    assert "argument 'limit'" in result.output


async def test_a_stray_intent_is_stripped_before_validation(ws: Workspace) -> None:
    result = await ReadFileTool(ws).call({"intent": "Reading the notes", "path": "notes.md"})
    assert ok(result).outcome == "Read 1 line of notes.md"


# --- read_file -------------------------------------------------------------------------------


async def test_read_file_numbers_lines_and_reports_the_outcome(ws: Workspace) -> None:
    result = ok(await ReadFileTool(ws).call({"path": "src/app.py"}))
    assert result.output.splitlines()[0] == "     1\timport os"
    assert result.outcome == "Read 4 lines of src/app.py"
    assert result.outcome_patch is None


async def test_read_file_pages_with_offset_and_limit(ws: Workspace) -> None:
    result = ok(await ReadFileTool(ws).call({"path": "src/app.py", "offset": 3, "limit": 1}))
    assert result.output.splitlines()[0] == "     3\tdef login():"
    assert "call again with offset=4" in result.output
    assert result.outcome == "Read 1 line of src/app.py"


async def test_read_file_refuses_binary_files(ws: Workspace) -> None:
    (ws.root / "logo.png").write_bytes(b"\x89PNG\x00\x00data")
    result = await ReadFileTool(ws).call({"path": "logo.png"})
    assert result.is_error
    assert "binary file" in result.output


async def test_read_file_missing_file(ws: Workspace) -> None:
    result = await ReadFileTool(ws).call({"path": "nope.txt"})
    assert result.is_error
    assert result.output == "File 'nope.txt' does not exist"


async def test_read_file_caps_huge_output(ws: Workspace) -> None:
    (ws.root / "big.txt").write_text("x" * 1000 + "\n" * 1 + ("y" * 1000 + "\n") * 400)
    result = ok(await ReadFileTool(ws).call({"path": "big.txt"}))
    assert len(result.output.encode()) < 300 * 1024
    assert "call again with offset=" in result.output


# --- write_file / edit_file ------------------------------------------------------------------


async def test_write_file_creates_folders_and_reports_size(ws: Workspace) -> None:
    result = ok(await WriteFileTool(ws).call({"path": "docs/new.md", "content": "a" * 2150}))
    assert (ws.root / "docs" / "new.md").read_text() == "a" * 2150
    assert result.outcome == "Wrote 2.1 KB to docs/new.md"


async def test_write_file_small_file_in_bytes(ws: Workspace) -> None:
    result = ok(await WriteFileTool(ws).call({"path": "notes.md", "content": "hi"}))
    assert result.outcome == "Wrote 2 bytes to notes.md"


async def test_edit_file_replaces_one_occurrence(ws: Workspace) -> None:
    args = {"path": "src/app.py", "old_string": "OAuth callback", "new_string": "OIDC callback"}
    result = ok(await EditFileTool(ws).call(args))
    assert "OIDC callback" in (ws.root / "src" / "app.py").read_text()
    assert result.outcome == "Edited src/app.py (1 replacement)"


async def test_edit_file_ambiguous_match_is_refused(ws: Workspace) -> None:
    (ws.root / "dup.txt").write_text("a\na\na\n")
    result = await EditFileTool(ws).call({"path": "dup.txt", "old_string": "a", "new_string": "b"})
    assert result.is_error
    assert "occurs 3 times" in result.output
    assert (ws.root / "dup.txt").read_text() == "a\na\na\n"


async def test_edit_file_replace_all(ws: Workspace) -> None:
    (ws.root / "dup.txt").write_text("a\na\na\n")
    args = {"path": "dup.txt", "old_string": "a", "new_string": "b", "replace_all": True}
    result = ok(await EditFileTool(ws).call(args))
    assert (ws.root / "dup.txt").read_text() == "b\nb\nb\n"
    assert result.outcome == "Edited dup.txt (3 replacements)"


async def test_edit_file_old_string_not_found(ws: Workspace) -> None:
    args = {"path": "notes.md", "old_string": "absent", "new_string": "x"}
    result = await EditFileTool(ws).call(args)
    assert result.is_error
    assert "was not found in notes.md" in result.output


async def test_edit_file_keeps_crlf_line_endings(ws: Workspace) -> None:
    (ws.root / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    ok(await EditFileTool(ws).call({"path": "win.txt", "old_string": "two", "new_string": "2"}))
    assert (ws.root / "win.txt").read_bytes() == b"one\r\n2\r\n"


# --- grep_search / glob_search / list_directory ----------------------------------------------


async def test_grep_search_finds_matches_case_insensitively(ws: Workspace) -> None:
    result = ok(await GrepSearchTool(ws).call({"pattern": "oauth"}))
    assert result.output == "src/app.py:4:     return 'OAuth callback'"
    assert result.outcome == "Found 1 match for oauth"


async def test_grep_search_no_matches(ws: Workspace) -> None:
    result = ok(await GrepSearchTool(ws).call({"pattern": "kerberos"}))
    assert result.outcome == "No matches for kerberos"


async def test_grep_search_skips_binary_files_and_dot_folders(ws: Workspace) -> None:
    (ws.root / ".git").mkdir()
    (ws.root / ".git" / "config").write_text("OAuth in git\n")
    (ws.root / "node_modules").mkdir()
    (ws.root / "node_modules" / "lib.js").write_text("OAuth in deps\n")
    (ws.root / "blob.bin").write_bytes(b"OAuth\x00binary")
    result = ok(await GrepSearchTool(ws).call({"pattern": "OAuth"}))
    assert result.output.splitlines() == ["src/app.py:4:     return 'OAuth callback'"]


async def test_grep_search_glob_filter_and_max_results(ws: Workspace) -> None:
    (ws.root / "many.txt").write_text("hit\n" * 10)
    result = ok(
        await GrepSearchTool(ws).call({"pattern": "hit", "glob": "*.txt", "max_results": 3})
    )
    assert len([line for line in result.output.splitlines() if line.startswith("many.txt")]) == 3
    assert "stopped at 3 matches" in result.output
    assert result.outcome == "Found 3+ matches for hit"


async def test_grep_search_long_pattern_is_truncated_in_the_outcome(ws: Workspace) -> None:
    pattern = "callback|" * 10
    result = ok(await GrepSearchTool(ws).call({"pattern": pattern.rstrip("|")}))
    assert result.outcome is not None
    assert result.outcome.endswith("…")
    assert len(result.outcome) < 70


async def test_grep_search_invalid_regex(ws: Workspace) -> None:
    result = await GrepSearchTool(ws).call({"pattern": "("})
    assert result.is_error
    assert "not a valid regular expression" in result.output


async def test_grep_search_survives_a_catastrophic_pattern(ws: Workspace) -> None:
    # With a backtracking engine `(a+)+$` on this line never finishes and holds the GIL,
    # so the guard below could not even fire: the whole process (every user) would stall.
    (ws.root / "long.txt").write_text("a" * 5000 + "!\n")
    call = GrepSearchTool(ws).call({"pattern": "(a+)+$", "path": "long.txt"})
    result = ok(await asyncio.wait_for(call, timeout=HANG_GUARD_S))
    assert result.outcome == "No matches for (a+)+$"


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        (r"(ab)\1", "backreferences such as \\1 are not supported"),
        ("foo(?=bar)", "lookahead (?=...) is not supported"),
        ("(?<!x)foo", "negative lookbehind (?<!...) is not supported"),
    ],
)
async def test_grep_search_names_syntax_the_linear_engine_lacks(
    ws: Workspace, pattern: str, reason: str
) -> None:
    result = await GrepSearchTool(ws).call({"pattern": pattern})
    assert result.is_error
    assert result.output.startswith(f"pattern {pattern!r} cannot be used: {reason}")


async def test_grep_search_skips_named_pipes(ws: Workspace) -> None:
    os.mkfifo(ws.root / "src" / "events.pipe")
    call = GrepSearchTool(ws).call({"pattern": "OAuth"})
    result = ok(await asyncio.wait_for(call, timeout=HANG_GUARD_S))
    assert result.output == "src/app.py:4:     return 'OAuth callback'"


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        (ReadFileTool, {}),
        (EditFileTool, {"old_string": "a", "new_string": "b"}),
        (WriteFileTool, {"content": "hello"}),
    ],
)
async def test_file_tools_refuse_named_pipes(
    ws: Workspace, tool: type[NativeTool], args: dict[str, Any]
) -> None:
    os.mkfifo(ws.root / "events.pipe")
    call = tool(ws).call({"path": "events.pipe", **args})  # type: ignore[call-arg]
    result = await asyncio.wait_for(call, timeout=HANG_GUARD_S)
    assert result.is_error
    assert "'events.pipe' is a named pipe (FIFO), not a regular file" in result.output


async def test_edit_file_refuses_files_over_the_read_limit(ws: Workspace) -> None:
    big = ws.root / "dump.sql"
    with big.open("wb") as file:
        file.truncate(MAX_READ_FILE_BYTES + 1)
    args = {"path": "dump.sql", "old_string": "a", "new_string": "b"}
    result = await EditFileTool(ws).call(args)
    assert result.is_error
    assert "'dump.sql' is 20.0 MB, too large for edit_file (limit 20.0 MB)" in result.output


async def test_glob_search_matches_recursively(ws: Workspace) -> None:
    (ws.root / "src" / "pkg").mkdir()
    (ws.root / "src" / "pkg" / "mod.py").write_text("")
    (ws.root / ".venv").mkdir()
    (ws.root / ".venv" / "site.py").write_text("")
    result = ok(await GlobSearchTool(ws).call({"pattern": "**/*.py"}))
    assert result.output.splitlines() == ["src/app.py", "src/pkg/mod.py"]
    assert result.outcome == "Found 2 files matching **/*.py"


async def test_glob_search_skips_named_pipes(ws: Workspace) -> None:
    os.mkfifo(ws.root / "src" / "events.py")
    result = ok(await GlobSearchTool(ws).call({"pattern": "**/*.py"}))
    assert result.output.splitlines() == ["src/app.py"]


async def test_glob_search_refuses_escaping_patterns(ws: Workspace) -> None:
    result = await GlobSearchTool(ws).call({"pattern": "../**/*.py"})
    assert result.is_error


async def test_list_directory_lists_folders_first(ws: Workspace) -> None:
    result = ok(await ListDirectoryTool(ws).call({"path": "."}))
    assert result.output.splitlines() == ["src/", "notes.md  (6 bytes)"]
    assert result.outcome == "Listed 2 entries in ws"


async def test_list_directory_subfolder_outcome(ws: Workspace) -> None:
    result = ok(await ListDirectoryTool(ws).call({"path": "src"}))
    assert result.outcome == "Listed 1 entry in src"


# --- memory ----------------------------------------------------------------------------------


async def test_set_and_delete_memory() -> None:
    store = InMemoryMemoryStore()
    result = ok(await SetMemoryTool(store).call({"key": "language", "value": "Python"}))
    assert result.outcome == "Remembered language"
    assert await store.get_all(MEMORY_DEFAULT_OWNER) == {"language": "Python"}
    result = ok(await DeleteMemoryTool(store).call({"key": "language"}))
    assert result.outcome == "Forgot language"
    assert await store.get_all(MEMORY_DEFAULT_OWNER) == {}


async def test_memory_tools_bound_to_a_user_touch_only_their_memories() -> None:
    store = InMemoryMemoryStore({"tone": "local's"})
    alice_set = SetMemoryTool(store).for_owner("alice")
    alice_delete = DeleteMemoryTool(store).for_owner("alice")
    ok(await alice_set.call({"key": "tone", "value": "brief"}))
    assert await store.get_all("alice") == {"tone": "brief"}
    assert await store.get_all(MEMORY_DEFAULT_OWNER) == {"tone": "local's"}
    ok(await alice_delete.call({"key": "tone"}))
    result = ok(await alice_delete.call({"key": "tone"}))
    assert "(keys: none)" in result.output  # the local user's key is not listed
    assert await store.get_all(MEMORY_DEFAULT_OWNER) == {"tone": "local's"}


async def test_delete_unknown_memory_says_so() -> None:
    result = ok(await DeleteMemoryTool(InMemoryMemoryStore({"a": "1"})).call({"key": "b"}))
    assert "Nothing is remembered under 'b'" in result.output


async def test_blank_memory_key_is_refused() -> None:
    result = await SetMemoryTool(InMemoryMemoryStore()).call({"key": "  ", "value": "x"})
    assert result.is_error


# --- web_search ------------------------------------------------------------------------------


class _SearxHandler(BaseHTTPRequestHandler):
    status = 200
    results: list[dict[str, Any]] = []
    queries: list[dict[str, list[str]]] = []

    def do_GET(self) -> None:
        url = urlparse(self.path)
        type(self).queries.append(parse_qs(url.query))
        body = json.dumps({"results": type(self).results}).encode()
        self.send_response(type(self).status if url.path == "/search" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def searx() -> Iterator[tuple[str, type[_SearxHandler]]]:
    handler = type("Handler", (_SearxHandler,), {"status": 200, "results": [], "queries": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


async def test_web_search_formats_results(searx: tuple[str, type[_SearxHandler]]) -> None:
    url, handler = searx
    handler.results = [
        {"title": f"OAuth guide {i}", "url": f"https://example.com/{i}", "content": "How to"}
        for i in range(8)
    ]
    result = ok(await WebSearchTool(url).call({"query": "OAuth handling", "max_results": 2}))
    assert result.output.splitlines() == [
        "1. OAuth guide 0",
        "   https://example.com/0",
        "   How to",
        "2. OAuth guide 1",
        "   https://example.com/1",
        "   How to",
    ]
    assert result.outcome == "Found 2 results for OAuth handling"
    assert handler.queries == [{"q": ["OAuth handling"], "format": ["json"]}]


async def test_web_search_no_results(searx: tuple[str, type[_SearxHandler]]) -> None:
    url, _ = searx
    result = ok(await WebSearchTool(url).call({"query": "zzz"}))
    assert result.outcome == "No results for zzz"


@pytest.mark.parametrize(
    ("status", "says"),
    [(500, "answered HTTP 500"), (403, "enable the json format")],
    ids=["http-error", "json-disabled-explains-the-fix"],
)
async def test_web_search_error_answer_is_an_error_result(
    searx: tuple[str, type[_SearxHandler]], status: int, says: str
) -> None:
    url, handler = searx
    handler.status = status
    result = await WebSearchTool(url).call({"query": "x"})
    assert result.is_error
    assert says in result.output


async def test_web_search_unreachable_service_is_an_error_result() -> None:
    result = await WebSearchTool("http://127.0.0.1:9").call({"query": "x"})
    assert result.is_error
    assert "Could not reach the search service" in result.output


# --- registry --------------------------------------------------------------------------------


def test_web_search_is_offered_only_when_configured(ws: Workspace) -> None:
    store = InMemoryMemoryStore()
    bare = AppConfig(workspace=ws.root)
    names = [tool.name for tool in build_tools(bare, memory_store=store)]
    assert "web_search" not in names
    assert names[:6] == [
        "read_file",
        "write_file",
        "edit_file",
        "grep_search",
        "glob_search",
        "list_directory",
    ]
    configured = AppConfig(workspace=ws.root, web_search=WebSearchConfig(url="http://search"))
    assert "web_search" in [tool.name for tool in build_tools(configured, memory_store=store)]


class _FakeMcpTool:
    kind: ToolKind = "mcp"
    definition: dict[str, Any] = {}

    def __init__(self, name: str, server: str) -> None:
        self.name = name
        self.server = server
        self.tool_id = f"{name}_mcp_{server}"

    async def call(self, args: dict[str, Any]) -> ToolResult:
        return ToolResult("")


def test_model_facing_names_and_index_resolution(ws: Workspace) -> None:
    read = ReadFileTool(ws)
    gh_search = _FakeMcpTool("search_code", "github")
    gl_search = _FakeMcpTool("search_code", "gitlab")
    gh_read = _FakeMcpTool("read_file", "github")
    only = _FakeMcpTool("create_issue", "github")
    tools: list[Tool] = [read, gh_search, gl_search, gh_read, only]
    assert [model_facing_name(t, tools) for t in tools] == [
        "read_file",
        "search_code_mcp_github",
        "search_code_mcp_gitlab",
        "read_file_mcp_github",
        "create_issue",
    ]
    index = ToolIndex(tools)
    assert [index.model_name(t) for t in tools] == [model_facing_name(t, tools) for t in tools]
    assert index.resolve("read_file") is read
    assert index.resolve("read_file_mcp_github") is gh_read
    assert index.resolve("search_code_mcp_gitlab") is gl_search
    assert index.resolve("search_code") is None  # ambiguous bare MCP name
    assert index.resolve("create_issue") is only
    assert index.resolve("create_issue_mcp_github") is only
    assert index.resolve("nope") is None
    assert [d["name"] for d in index.definitions()][1] == "search_code_mcp_github"


def test_every_native_tool_is_labelled_by_its_name_by_default(ws: Workspace) -> None:
    """Even a copy of a native tool without its intent parameter (as an SDK or a proxy may
    forward it) gets one, and its calls a label, by its name alone."""
    store = InMemoryMemoryStore()
    config = AppConfig(workspace=ws.root, web_search=WebSearchConfig(url="http://search"))
    tools = build_tools(config, memory_store=store)
    bare = [
        {"name": tool.name, "parameters": without_intent(tool.definition["parameters"])}
        for tool in tools
    ]
    assert apply_intent_labels(bare, None).label_tool_names == {tool.name for tool in tools}


def test_package_exports_resolve() -> None:
    import intent_ui.agent.tools as package

    assert sorted(package.__all__) == sorted(package._EXPORTS)
    for name in package.__all__:
        assert getattr(package, name) is not None
