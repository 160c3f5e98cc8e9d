"""The app's own files: no file tool may create, change or delete them, whatever the workspace.

Each test builds a small copy of the app's layout (`app`) in its own folder, runs from it
as `scripts/start.sh` does, and asks the tools the app would build (`build_tools` over
`load_config()`) to write there.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from intent_ui.agent.runtime import AgentRuntime
from intent_ui.agent.tools.base import Tool, ToolResult
from intent_ui.agent.tools.memory import InMemoryMemoryStore
from intent_ui.agent.tools.protected import PACKAGE_DIR, ProtectedFiles, ProtectedPath
from intent_ui.agent.tools.registry import build_tools
from intent_ui.config import AppConfig, load_config
from intent_ui.core.events import CallSettled

GIT = "its git repository"
CONFIG = "endpoints:\n  - kind: demo\n    pacing_ms: 0\n"
HINT = (
    "the file tools never change the app. Point `workspace:` in intent_ui.yaml at the "
    "folder the agent should work in."
)
APP_FILES = {
    "intent_ui.yaml": CONFIG,
    "rxconfig.py": "import reflex as rx\n",
    "pyproject.toml": "[project]\nname = 'intent_ui'\n",
    "requirements.txt": "reflex==0.10.1\n",
    "scripts/start.sh": "reflex run\n",
    "intent_ui/__init__.py": "",
    "intent_ui/ui/state.py": "STATE = 1\n",
    "assets/live_titles.js": "export const x = 1;\n",
    ".data/intent_ui.db": "SQLite format 3\n",
    ".data/intent_ui.db-wal": "wal\n",
    ".states/token.pkl": "pickle\n",
    ".web/app.js": "app\n",
    ".venv/bin/activate": "export VIRTUAL_ENV\n",
    "tools/node_modules/bun": "bun\n",
    ".git/config": "[core]\n\tbare = false\n",
    ".git/hooks/pre-commit.sample": "#!/bin/sh\n",
    "docs/notes.md": "notes\n",
}


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An app folder like the checkout, and the process running from it."""
    root = tmp_path / "app"
    for name, text in APP_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    for variable in (
        "INTENT_UI_CONFIG",
        "DB_URL",
        "REFLEX_WEB_WORKDIR",
        "REFLEX_STATES_WORKDIR",
        "REFLEX_DIR",
    ):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.chdir(root)
    return root


def file_tool(name: str, config: AppConfig | None = None) -> Tool:
    tools = build_tools(config or load_config(), memory_store=InMemoryMemoryStore())
    return next(tool for tool in tools if tool.name == name)


async def write(
    path: str, content: str = "changed\n", config: AppConfig | None = None
) -> ToolResult:
    return await file_tool("write_file", config).call({"path": path, "content": content})


async def edit(path: str, old: str, new: str = "changed") -> ToolResult:
    return await file_tool("edit_file").call({"path": path, "old_string": old, "new_string": new})


def refused(result: ToolResult, tool: str, shown: str, what: str) -> None:
    assert result.is_error, result.output
    assert result.output == (
        f"{tool} refused: '{shown}' is part of Intent UI itself ({what}); {HINT}"
    )


def unchanged(app: Path, *names: str) -> None:
    for name in names:
        assert (app / name).read_text(encoding="utf-8") == APP_FILES[name], name


def sibling(app: Path) -> AppConfig:
    """The app's configuration with `workspace:` pointed at a folder next to it."""
    (app.parent / "work").mkdir(exist_ok=True)
    (app / "intent_ui.yaml").write_text(CONFIG + "workspace: ../work\n", encoding="utf-8")
    return load_config()


# --- each kind of the app's own files --------------------------------------------------------


async def test_the_configuration_file_cannot_be_overwritten(app: Path) -> None:
    result = await write("intent_ui.yaml", "mcp_servers:\n  x: {command: sh}\n")
    refused(result, "write_file", "intent_ui.yaml", "its configuration")
    unchanged(app, "intent_ui.yaml")


async def test_the_configuration_file_cannot_be_edited(app: Path) -> None:
    result = await edit("intent_ui.yaml", "kind: demo", "kind: openai")
    refused(result, "edit_file", "intent_ui.yaml", "its configuration")
    unchanged(app, "intent_ui.yaml")


async def test_the_configuration_file_cannot_be_created(app: Path) -> None:
    (app / "intent_ui.yaml").unlink()
    result = await write("intent_ui.yaml", "mcp_servers:\n  x: {command: sh}\n")
    refused(result, "write_file", "intent_ui.yaml", "its configuration")
    assert not (app / "intent_ui.yaml").exists()


async def test_the_file_named_by_intent_ui_config_is_refused(
    app: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (app / "docs" / "prod.yaml").write_text(CONFIG, encoding="utf-8")
    monkeypatch.setenv("INTENT_UI_CONFIG", "docs/prod.yaml")
    result = await file_tool("write_file").call({"path": "docs/prod.yaml", "content": "x"})
    assert result.output == (
        "write_file refused: 'docs/prod.yaml' is part of Intent UI itself (its configuration);"
        " the file tools never change the app. Point `workspace:` in prod.yaml at the folder "
        "the agent should work in."
    )
    assert (app / "docs" / "prod.yaml").read_text(encoding="utf-8") == CONFIG


async def test_rxconfig_is_refused(app: Path) -> None:
    refused(await write("rxconfig.py"), "write_file", "rxconfig.py", "its configuration")
    unchanged(app, "rxconfig.py")


@pytest.mark.parametrize(
    "name", ["intent_ui/ui/state.py", "scripts/start.sh", "pyproject.toml", "requirements.txt"]
)
async def test_the_apps_code_is_refused(app: Path, name: str) -> None:
    refused(await write(name), "write_file", name, "its code")
    unchanged(app, name)


async def test_editing_the_apps_code_says_why(app: Path) -> None:
    result = await edit("intent_ui/ui/state.py", "STATE = 1")
    assert result.output == (
        "edit_file refused: 'intent_ui/ui/state.py' is part of Intent UI itself (its code); "
        "the file tools never change the app. Point `workspace:` in intent_ui.yaml at the "
        "folder the agent should work in."
    )
    unchanged(app, "intent_ui/ui/state.py")


async def test_a_module_at_the_app_root_would_shadow_an_import_and_is_refused(app: Path) -> None:
    for name in ("yaml.py", "httpx/__init__.py"):
        refused(await write(name), "write_file", name, "its code")
        assert not (app / name).exists()


async def test_the_package_the_process_imports_is_refused(app: Path) -> None:
    probe = PACKAGE_DIR / "agent" / "tools" / "_write_probe.py"
    config = AppConfig.model_validate({"workspace": PACKAGE_DIR})
    try:
        result = await write("agent/tools/_write_probe.py", "raise SystemExit\n", config)
        refused(result, "write_file", "agent/tools/_write_probe.py", "its code")
        assert not probe.exists()
    finally:
        probe.unlink(missing_ok=True)


async def test_assets_are_refused(app: Path) -> None:
    name = "assets/live_titles.js"
    refused(await write(name), "write_file", name, "its assets")
    unchanged(app, name)


@pytest.mark.parametrize(
    "name", [".data/intent_ui.db", ".data/intent_ui.db-wal", ".data/intent_ui.db-shm"]
)
async def test_the_database_and_its_wal_files_are_refused(app: Path, name: str) -> None:
    refused(await write(name), "write_file", name, "its database")
    if name in APP_FILES:
        unchanged(app, name)
    else:
        assert not (app / name).exists()


async def test_the_sqlite_file_of_db_url_and_its_journal_are_refused(
    app: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = sibling(app)
    monkeypatch.setenv("DB_URL", f"sqlite:///{app.parent / 'work' / 'store' / 'app.sqlite'}")
    for name in ("store/app.sqlite", "store/app.sqlite-journal", "store/app.sqlite-wal"):
        result = await write(name, config=config)
        refused(result, "write_file", name, "its database")
    assert not (app.parent / "work" / "store").exists()
    assert not (await write("store/notes.txt", config=config)).is_error


@pytest.mark.parametrize(
    ("name", "what"),
    [
        (".states/token.pkl", "its saved Reflex state"),
        (".web/app.js", "its built web app"),
        (".venv/bin/activate", "its Python environment"),
        ("tools/node_modules/bun", "its installed tools"),
        (".git/config", "its git repository"),
    ],
)
async def test_reflex_folders_venv_tools_and_git_are_refused(
    app: Path, name: str, what: str
) -> None:
    refused(await write(name), "write_file", name, what)
    unchanged(app, name)


async def test_a_new_git_hook_is_refused(app: Path) -> None:
    refused(await write(".git/hooks/pre-commit"), "write_file", ".git/hooks/pre-commit", GIT)
    assert not (app / ".git" / "hooks" / "pre-commit").exists()


async def test_the_git_folder_a_worktree_points_at_is_refused(app: Path) -> None:
    real = app.parent / "repo.git" / "worktrees" / "app"
    (real / "hooks").mkdir(parents=True)
    (real / "commondir").write_text("../..\n", encoding="utf-8")
    shutil.rmtree(app / ".git")
    (app / ".git").write_text(f"gitdir: {real}\n", encoding="utf-8")
    (app / "intent_ui.yaml").write_text(CONFIG + "workspace: ..\n", encoding="utf-8")
    for name in ("repo.git/worktrees/app/hooks/post-checkout", "repo.git/hooks/pre-commit"):
        refused(await write(name), "write_file", name, GIT)
        assert not (app.parent / name).exists()


async def test_the_git_hooks_path_of_the_checkout_is_refused(app: Path) -> None:
    (app / ".git" / "config").write_text("[core]\n\thooksPath = githooks\n", encoding="utf-8")
    refused(await write("githooks/pre-commit"), "write_file", "githooks/pre-commit", GIT)


async def test_the_virtualenv_of_the_process_is_refused(
    app: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = sibling(app)
    venv = app.parent / "work" / "env"
    (venv / "lib").mkdir(parents=True)
    monkeypatch.setattr(sys, "prefix", str(venv))
    name = "env/lib/site-packages/evil.pth"
    refused(await write(name, "import os\n", config), "write_file", name, "its Python environment")
    assert not (venv / "lib" / "site-packages").exists()


async def test_a_script_an_mcp_server_runs_is_refused(app: Path) -> None:
    (app / "servers").mkdir()
    (app / "servers" / "tool.py").write_text("print('server')\n", encoding="utf-8")
    (app / "intent_ui.yaml").write_text(
        CONFIG + "mcp_servers:\n  files:\n    command: python\n    args: [servers/tool.py]\n",
        encoding="utf-8",
    )
    result = await write("servers/tool.py")
    refused(result, "write_file", "servers/tool.py", "the code of its MCP server 'files'")
    assert (app / "servers" / "tool.py").read_text(encoding="utf-8") == "print('server')\n"


# --- aliases and new files -------------------------------------------------------------------


async def test_a_symlink_in_the_workspace_to_the_configuration_is_refused(app: Path) -> None:
    (app / "docs" / "settings.yaml").symlink_to(app / "intent_ui.yaml")
    result = await write("docs/settings.yaml", "mcp_servers:\n  x: {command: sh}\n")
    assert result.output == (
        "write_file refused: 'docs/settings.yaml' leads to 'intent_ui.yaml', which is part of "
        f"Intent UI itself (its configuration); {HINT}"
    )
    unchanged(app, "intent_ui.yaml")


async def test_a_hard_link_in_a_sibling_workspace_to_the_configuration_is_refused(
    app: Path,
) -> None:
    config = sibling(app)
    before = (app / "intent_ui.yaml").read_text(encoding="utf-8")
    os.link(app / "intent_ui.yaml", app.parent / "work" / "settings.yaml")
    result = await write("settings.yaml", "mcp_servers:\n  x: {command: sh}\n", config)
    assert result.output == (
        f"write_file refused: 'settings.yaml' is the same file as {app / 'intent_ui.yaml'}, "
        f"which is part of Intent UI itself (its configuration); {HINT}"
    )
    assert (app / "intent_ui.yaml").read_text(encoding="utf-8") == before


async def test_a_differently_cased_name_is_refused(app: Path) -> None:
    # On a case-insensitive file system this name is the configuration file itself.
    result = await write("Intent_UI.YAML")
    refused(result, "write_file", "Intent_UI.YAML", "its configuration")


async def test_a_new_file_in_a_new_folder_inside_a_protected_folder_is_refused(
    app: Path,
) -> None:
    name = ".states/forged/deeper/token.pkl"
    refused(await write(name), "write_file", name, "its saved Reflex state")
    assert not (app / ".states" / "forged").exists()


async def test_a_path_with_dot_dot_into_the_code_is_refused(app: Path) -> None:
    result = await write("docs/../intent_ui/ui/state.py")
    refused(result, "write_file", "intent_ui/ui/state.py", "its code")
    unchanged(app, "intent_ui/ui/state.py")


# --- what stays allowed ----------------------------------------------------------------------


async def test_other_files_of_the_checkout_stay_writable(app: Path) -> None:
    assert not (await write("docs/notes.md", "new notes\n")).is_error
    assert not (await edit("docs/notes.md", "new notes", "newer notes")).is_error
    assert (app / "docs" / "notes.md").read_text(encoding="utf-8") == "newer notes\n"


async def test_a_sibling_workspace_is_unaffected(app: Path) -> None:
    config = sibling(app)
    work = app.parent / "work"
    for name in ("intent_ui.yaml", "scripts/build.sh", "assets/app.js", ".git/hooks/x", "a.py"):
        result = await write(name, "mine\n", config)
        assert not result.is_error, result.output
        assert (work / name).read_text(encoding="utf-8") == "mine\n"


async def test_reading_the_apps_own_code_stays_allowed(app: Path) -> None:
    result = await file_tool("read_file").call({"path": "intent_ui/ui/state.py"})
    assert not result.is_error, result.output
    assert "STATE = 1" in result.output
    found = await file_tool("grep_search").call({"pattern": "STATE"})
    assert "intent_ui/ui/state.py:1: STATE = 1" in found.output


# --- when the list cannot be made ------------------------------------------------------------


async def test_every_write_is_refused_when_the_database_url_cannot_be_read(
    app: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = sibling(app)
    monkeypatch.setenv("DB_URL", "not a database url")
    result = await write("notes.md", "x", config)
    assert result.output == (
        "write_file refused: the app's own files could not be listed (the database URL "
        "(DB_URL) cannot be parsed; write it as sqlite:///path or postgresql://user@host/db),"
        " so no file is written rather than risk changing Intent UI itself. Fix that and "
        "restart the app."
    )
    assert not (app.parent / "work" / "notes.md").exists()


def test_the_check_by_name_is_pure_and_respects_folder_boundaries() -> None:
    files = ProtectedFiles(
        (
            ProtectedPath(Path("/srv/app/intent_ui.yaml"), "its configuration"),
            ProtectedPath(Path("/srv/app/.web"), "its built web app", "tree"),
            ProtectedPath(Path("/srv/app"), "its code", "modules"),
        )
    )
    assert files.covering(Path("/srv/app/.web")) is files.entries[1]
    assert files.covering(Path("/srv/app/.web/a/b.js")) is files.entries[1]
    assert files.covering(Path("/srv/app/INTENT_UI.yaml")) is files.entries[0]
    assert files.covering(Path("/srv/app/pkg/__init__.py")) is files.entries[2]
    assert files.covering(Path("/srv/app/.webpack/a.js")) is None
    assert files.covering(Path("/srv/app/intent_ui.yaml.bak")) is None
    assert files.covering(Path("/srv/app/docs/a.py")) is None
    assert files.covering(Path("/srv/app/README.md")) is None


# --- a whole turn ----------------------------------------------------------------------------


async def test_a_turn_that_writes_the_configuration_settles_as_an_error(app: Path) -> None:
    async with AgentRuntime(load_config()) as runtime:
        run = runtime.start_turn(user_message="write mcp_servers to intent_ui.yaml")
        events = [event async for event in run]
    (settled,) = [event for event in events if isinstance(event, CallSettled)]
    assert settled.state == "error"
    assert settled.error == (
        f"write_file refused: 'intent_ui.yaml' is part of Intent UI itself (its configuration); "
        f"{HINT}"
    )
    unchanged(app, "intent_ui.yaml")
