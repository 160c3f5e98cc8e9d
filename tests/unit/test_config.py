"""`load_config`: defaults, environment endpoints, file forms and every error message."""

from __future__ import annotations

from pathlib import Path

import pytest

from intent_ui.config import (
    ALL_CAPABILITIES,
    AppConfig,
    ConfigError,
    load_config,
)


@pytest.fixture(autouse=True)
def _no_config_in_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs in an empty folder so a developer's intent_ui.yaml is never read."""
    monkeypatch.chdir(tmp_path)


def write(tmp_path: Path, text: str, name: str = "intent_ui.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def error_of(path: Path | str | None, env: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as caught:
        load_config(path, env=env or {})
    return str(caught.value)


# --- defaults --------------------------------------------------------------------------------


def test_no_file_runs_on_the_demo_endpoint(tmp_path: Path) -> None:
    config = load_config(env={})
    assert [e.name for e in config.endpoints] == ["demo"]
    assert config.default_endpoint.kind == "demo"
    assert config.default_endpoint.models == ["demo"]
    assert config.default_endpoint.pacing_ms == 25
    assert config.capabilities == ALL_CAPABILITIES
    assert config.workspace == tmp_path.resolve()
    assert config.mcp_servers == {}
    assert config.web_search is None


def test_openai_env_vars_add_an_openai_endpoint() -> None:
    config = load_config(
        env={"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": "http://localhost:11434/v1"}
    )
    openai = config.endpoint("openai")
    assert openai is not None
    assert openai.api_key == "sk-test"
    assert openai.base_url == "http://localhost:11434/v1"
    assert openai.models
    assert config.endpoint("demo") is not None


def test_anthropic_env_vars_add_an_anthropic_endpoint_with_default_base_url() -> None:
    config = load_config(env={"ANTHROPIC_API_KEY": "ak", "ANTHROPIC_MODELS": "m1, m2"})
    anthropic = config.endpoint("anthropic")
    assert anthropic is not None
    assert anthropic.base_url == "https://api.anthropic.com"
    assert anthropic.models == ["m1", "m2"]


def test_demo_pacing_env_overrides_the_default() -> None:
    config = load_config(env={"INTENT_UI_DEMO_PACING_MS": "0"})
    assert config.default_endpoint.pacing_ms == 0


def test_demo_pacing_env_that_is_not_a_number_is_an_error() -> None:
    message = error_of(None, {"INTENT_UI_DEMO_PACING_MS": "fast"})
    assert message == (
        "environment: INTENT_UI_DEMO_PACING_MS: 'fast' is not a number of milliseconds "
        "(e.g. 0 or 25)"
    )


def test_intent_ui_yaml_in_the_current_directory_is_read(tmp_path: Path) -> None:
    write(tmp_path, "capabilities: []\n")
    assert load_config(env={}).capabilities == frozenset()


def test_intent_ui_config_env_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "capabilities: [tool_intents]\n", name="other.yaml")
    config = load_config(env={"INTENT_UI_CONFIG": str(path)})
    assert config.capabilities == frozenset({"tool_intents"})


def test_missing_file_named_by_env_is_an_error() -> None:
    message = error_of(None, {"INTENT_UI_CONFIG": "/nowhere/intent_ui.yaml"})
    assert "INTENT_UI_CONFIG" in message
    assert "/nowhere/intent_ui.yaml" in message


def test_empty_file_means_defaults(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, ""), env={})
    assert [e.name for e in config.endpoints] == ["demo"]


def test_db_url_env_wins_over_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "database_url: sqlite:///file.db\n")
    assert load_config(path, env={"DB_URL": "sqlite:///env.db"}).database_url == "sqlite:///env.db"
    assert load_config(path, env={}).database_url == "sqlite:///file.db"


# --- endpoints -------------------------------------------------------------------------------


def test_list_form_names_endpoints_by_kind_and_deduplicates(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
endpoints:
  - {kind: openai, models: [a]}
  - {kind: openai, models: [b], base_url: "http://local/v1"}
  - {kind: anthropic, models: [c]}
""",
    )
    config = load_config(path, env={})
    assert [e.name for e in config.endpoints] == ["openai", "openai-2", "anthropic", "demo"]
    assert config.endpoints[0].base_url == "https://api.openai.com/v1"
    assert config.endpoints[1].base_url == "http://local/v1"
    assert config.default_endpoint.name == "openai"


def test_mapping_form_uses_keys_as_names(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
endpoints:
  local: {kind: openai, models: [llama3], base_url: "http://localhost:11434/v1"}
  claude: {kind: anthropic, models: [claude-sonnet-4-5], activity_label: true}
""",
    )
    config = load_config(path, env={})
    assert [e.name for e in config.endpoints] == ["local", "claude", "demo"]
    claude = config.endpoint("claude")
    assert claude is not None and claude.activity_label is True


def test_listed_demo_is_not_duplicated(tmp_path: Path) -> None:
    path = write(tmp_path, "endpoints:\n  - {kind: demo, pacing_ms: 5}\n")
    config = load_config(path, env={})
    assert [(e.name, e.pacing_ms) for e in config.endpoints] == [("demo", 5)]


def test_api_key_env_reference_is_expanded(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        'endpoints:\n  - {kind: openai, models: [m], api_key: "${MY_KEY}"}\n',
    )
    assert load_config(path, env={"MY_KEY": "secret"}).endpoints[0].api_key == "secret"


def test_env_reference_default_applies_when_unset(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        'endpoints:\n  - {kind: openai, models: [m], api_key: "${MY_KEY:-fallback}"}\n',
    )
    assert load_config(path, env={}).endpoints[0].api_key == "fallback"


def test_missing_env_reference_names_key_path_and_variable(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        'endpoints:\n  - {kind: demo}\n  - {kind: openai, models: [m], api_key: "${MY_KEY}"}\n',
    )
    message = error_of(path)
    assert message.startswith(f"{path}: endpoints[1].api_key: ")
    assert "MY_KEY is not set" in message


def test_missing_env_reference_in_mapping_form_names_the_key(tmp_path: Path) -> None:
    path = write(
        tmp_path, 'endpoints:\n  work: {kind: openai, models: [m], api_key: "${WORK_KEY}"}\n'
    )
    assert "endpoints.work.api_key: environment variable WORK_KEY" in error_of(path)


def test_unknown_endpoint_kind_lists_the_allowed_kinds(tmp_path: Path) -> None:
    path = write(tmp_path, "endpoints:\n  - {kind: demo}\n  - {kind: gpt}\n")
    assert error_of(path) == (
        f"{path}: endpoints[1].kind: 'gpt' is not one of demo, openai, anthropic"
    )


def test_context_budget_is_per_endpoint_and_absent_by_default(tmp_path: Path) -> None:
    path = write(tmp_path, "endpoints:\n  - {kind: demo, context_budget: 8000}\n")
    assert load_config(path, env={}).endpoints[0].context_budget == 8000
    unset = AppConfig.model_validate({"endpoints": [{"kind": "demo"}]})
    assert unset.endpoints[0].context_budget is None


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("0", "should be greater than 0 (got 0)"),
        ("true", "should be a valid integer (got True)"),
        ("'8000'", "should be a valid integer (got '8000')"),
    ],
)
def test_context_budget_must_be_a_positive_number_of_tokens(
    tmp_path: Path, value: str, problem: str
) -> None:
    path = write(tmp_path, f"endpoints:\n  - {{kind: demo, context_budget: {value}}}\n")
    assert error_of(path) == f"{path}: endpoints[0].context_budget: {problem}"


def test_openai_endpoint_without_models_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "endpoints:\n  - {kind: openai}\n")
    message = error_of(path)
    assert "endpoints[0]:" in message
    assert "'models'" in message


def test_duplicate_explicit_endpoint_names_are_an_error(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "endpoints:\n  - {kind: demo, name: x}\n  - {kind: openai, models: [m], name: x}\n",
    )
    assert "endpoints[1].name: 'x' is already the name of endpoints[0]" in error_of(path)


def test_mapping_form_name_that_differs_from_its_key_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "endpoints:\n  a: {kind: demo, name: b}\n")
    assert "endpoints.a.name: 'b' differs from its key 'a'" in error_of(path)


# --- capabilities ----------------------------------------------------------------------------


def test_capabilities_absent_means_all_four(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, "workspace: .\n"), env={}).capabilities == ALL_CAPABILITIES


def test_capabilities_empty_list_means_none(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, "capabilities: []\n"), env={}).capabilities == frozenset()


def test_capabilities_subset_is_a_frozenset(tmp_path: Path) -> None:
    path = write(tmp_path, "capabilities: [tool_intents, run_in_background]\n")
    config = load_config(path, env={})
    assert config.capabilities == frozenset({"tool_intents", "run_in_background"})


def test_unknown_capability_names_the_allowed_ones(tmp_path: Path) -> None:
    path = write(tmp_path, "capabilities: [tool_intents, intents]\n")
    assert error_of(path) == (
        f"{path}: capabilities[1]: 'intents' is not one of tool_intents, run_in_background, "
        "deferred_tools, programmatic_tools"
    )


# --- mcp servers, workspace, web search, model specs -----------------------------------------


def test_mcp_servers_stdio_and_http(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
mcp_servers:
  github:
    command: python
    args: [server.py]
    env: {TOKEN: "${GH_TOKEN}"}
  remote:
    url: https://mcp.example.com/mcp
    headers: {Authorization: "Bearer ${REMOTE:-none}"}
""",
    )
    config = load_config(path, env={"GH_TOKEN": "t0k"})
    github, remote = config.mcp_servers["github"], config.mcp_servers["remote"]
    assert (github.transport, github.args, github.env) == ("stdio", ["server.py"], {"TOKEN": "t0k"})
    assert (remote.transport, remote.headers) == ("http", {"Authorization": "Bearer none"})


def test_mcp_server_with_both_command_and_url_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "mcp_servers:\n  gh: {command: x, url: 'http://y'}\n")
    assert "mcp_servers.gh: give exactly one of 'command'" in error_of(path)


def test_mcp_server_with_neither_command_nor_url_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "mcp_servers:\n  gh: {args: [x]}\n")
    assert "mcp_servers.gh: give exactly one of 'command'" in error_of(path)


def test_mcp_env_missing_variable_names_the_path(tmp_path: Path) -> None:
    path = write(tmp_path, 'mcp_servers:\n  gh: {command: x, env: {TOKEN: "${GH_TOKEN}"}}\n')
    assert "mcp_servers.gh.env.TOKEN: environment variable GH_TOKEN is not set" in error_of(path)


def test_mcp_server_name_with_spaces_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "mcp_servers:\n  'my server': {command: x}\n")
    assert "mcp_servers: server name 'my server'" in error_of(path)


def test_workspace_relative_to_the_config_file(tmp_path: Path) -> None:
    (tmp_path / "project" / "src").mkdir(parents=True)
    path = write(tmp_path / "project", "workspace: src\n")
    assert load_config(path, env={}).workspace == (tmp_path / "project" / "src").resolve()


def test_missing_workspace_folder_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "workspace: does-not-exist\n")
    message = error_of(path)
    assert "workspace: folder" in message
    assert "does-not-exist" in message


def test_tool_timeout_is_read_and_must_be_positive(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, "tool_timeout_s: 300\n"), env={}).tool_timeout_s == 300
    message = error_of(write(tmp_path, "tool_timeout_s: 0\n"))
    assert "tool_timeout_s: should be greater than 0 (got 0)" in message


def test_actions_refuse_private_networks_unless_allowed(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, ""), env={}).actions.allow_private_networks is False
    allowed = write(tmp_path, "actions: {allow_private_networks: true}\n")
    assert load_config(allowed, env={}).actions.allow_private_networks is True
    message = error_of(write(tmp_path, "actions: {allow_private: true}\n"))
    assert "actions.allow_private: unknown key; did you mean 'allow_private_networks'?" in message


def test_web_search_url(tmp_path: Path) -> None:
    path = write(tmp_path, "web_search: {url: 'http://localhost:8888/'}\n")
    assert load_config(path, env={}).web_search.url == "http://localhost:8888"  # type: ignore[union-attr]


def test_web_search_url_must_be_http(tmp_path: Path) -> None:
    path = write(tmp_path, "web_search: {url: 'localhost:8888'}\n")
    assert "web_search.url: 'localhost:8888' is not an http(s) URL" in error_of(path)


# --- auth ------------------------------------------------------------------------------------

SECRET = "s" * 40


def test_auth_absent_means_one_local_user() -> None:
    assert load_config(env={}).auth is None


def test_auth_header_mode_defaults_to_x_forwarded_user(tmp_path: Path) -> None:
    auth = load_config(write(tmp_path, "auth: {mode: header}\n"), env={}).auth
    assert auth is not None and (auth.mode, auth.header) == ("header", "X-Forwarded-User")


def test_auth_password_mode_reads_the_secret_from_the_environment(tmp_path: Path) -> None:
    path = write(tmp_path, "auth: {mode: password, secret: '${INTENT_UI_SECRET}'}\n")
    auth = load_config(path, env={"INTENT_UI_SECRET": SECRET}).auth
    assert auth is not None and auth.secret == SECRET


def test_auth_password_mode_without_a_secret_is_refused(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "auth: {mode: password}\n"))
    assert "auth.secret: required when mode is password" in message
    assert "secrets.token_urlsafe" in message


def test_auth_password_mode_with_a_short_secret_is_refused(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "auth: {mode: password, secret: hunter2}\n"))
    assert "auth.secret: too short (7 characters); use at least 32" in message


def test_auth_unknown_mode_lists_the_modes(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "auth: {mode: oauth}\n"))
    assert "auth.mode: 'oauth' is not one of header, password" in message


def test_auth_header_must_be_a_header_name(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "auth: {mode: header, header: 'X User'}\n"))
    assert "auth.header: 'X User' is not an HTTP header name" in message


def test_auth_operators_are_user_names(tmp_path: Path) -> None:
    auth = load_config(write(tmp_path, "auth: {mode: header, operators: [' ops ', bo]}\n")).auth
    assert auth is not None and auth.operators == ("ops", "bo")
    plain = load_config(write(tmp_path, "auth: {mode: header}\n")).auth
    assert plain is not None and plain.operators == ()


@pytest.mark.parametrize(
    ("operators", "problem"),
    [
        ("[alice, '  ']", "auth.operators[1]: '  ': a user name cannot be blank"),
        ("[3]", "auth.operators[0]: 3: a user name cannot be blank"),
        ('["a\\tb"]', "auth.operators[0]: 'a\\tb': a user name cannot contain control"),
        ("alice", "auth.operators: expected a list of user names, e.g. [alice]"),
    ],
)
def test_auth_operators_that_are_not_names_are_refused(
    tmp_path: Path, operators: str, problem: str
) -> None:
    message = error_of(write(tmp_path, f"auth: {{mode: header, operators: {operators}}}\n"))
    assert problem in message


def test_auth_secure_cookie_is_true_false_or_absent(tmp_path: Path) -> None:
    auth = load_config(write(tmp_path, "auth: {mode: header, secure_cookie: true}\n")).auth
    assert auth is not None and auth.secure_cookie is True
    plain = load_config(write(tmp_path, "auth: {mode: header}\n")).auth
    assert plain is not None and plain.secure_cookie is None
    message = error_of(write(tmp_path, "auth: {mode: header, secure_cookie: auto}\n"))
    assert "auth.secure_cookie: 'auto' is not true or false" in message


def test_model_specs_accept_bool_or_tool_ids(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
model_specs:
  - {name: A, endpoint: demo, model: demo, describe_intent: [read_file, search_code_mcp_github]}
  - {name: B, endpoint: demo, model: demo, describe_intent: false, instructions: Be brief.}
  - {name: C, endpoint: demo, model: demo}
""",
    )
    specs = load_config(path, env={}).model_specs
    assert [s.describe_intent for s in specs] == [
        ["read_file", "search_code_mcp_github"],
        False,
        None,
    ]


def test_model_spec_describe_intent_of_wrong_type_is_one_line(tmp_path: Path) -> None:
    path = write(
        tmp_path, "model_specs:\n  - {name: A, endpoint: demo, model: m, describe_intent: 3}\n"
    )
    assert error_of(path) == (
        f"{path}: model_specs[0].describe_intent: expected true, false or a list of tool ids"
    )


def test_a_literal_star_in_a_model_specs_tool_list_is_refused(tmp_path: Path) -> None:
    # It would have turned intents on for every tool, the listed ones or not.
    path = write(
        tmp_path,
        "model_specs:\n  - {name: A, endpoint: demo, model: m, describe_intent: ['*', grep]}\n",
    )
    assert error_of(path) == (
        f"{path}: model_specs[0].describe_intent: '*' is not a tool id; write "
        "`describe_intent: true` to describe every tool, or list only tool ids"
    )


def test_model_spec_naming_an_unknown_endpoint_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "model_specs:\n  - {name: A, endpoint: gpt, model: m}\n")
    assert error_of(path) == (
        f"{path}: model_specs[0].endpoint: 'gpt' is not a configured endpoint (known: demo)"
    )


# --- file-level errors -----------------------------------------------------------------------


def test_yaml_syntax_error_reports_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "endpoints:\n  - kind: demo\n   pacing_ms: 3\n")
    message = error_of(path)
    assert message.startswith(f"{path}: line 3, column 4: invalid YAML")


def test_top_level_list_is_an_error(tmp_path: Path) -> None:
    assert "top level must be a mapping" in error_of(write(tmp_path, "- a\n- b\n"))


def test_unknown_top_level_key_suggests_the_spelling(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "workspcae: .\n"))
    assert message.startswith(f"{tmp_path / 'intent_ui.yaml'}: workspcae: unknown key;")
    assert "did you mean 'workspace'?" in message


def test_unknown_endpoint_key_lists_the_allowed_keys(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "endpoints:\n  - {kind: demo, modle: x}\n"))
    assert "endpoints[0].modle: unknown key; did you mean 'model" in message
    assert "allowed keys are activity_label" in message


def test_every_problem_is_reported_on_its_own_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
endpoints:
  - {kind: gpt}
capabilities: [nope]
mcp_servers:
  gh: {url: 'http://x', command: y}
bogus: 1
""",
    )
    lines = error_of(path).splitlines()
    assert [line.split(": ")[1] for line in lines] == [
        "endpoints[0].kind",
        "capabilities[0]",
        "mcp_servers.gh",
        "bogus",
    ]
    assert all(line.startswith(f"{path}: ") for line in lines)


def test_app_config_accepts_the_mapping_form_directly() -> None:
    config = AppConfig.model_validate(
        {"endpoints": {"a": {"kind": "demo"}, "b": {"kind": "openai", "models": ["m"]}}}
    )
    assert [e.name for e in config.endpoints] == ["a", "b"]


@pytest.mark.parametrize(
    "base_url",
    ["localhost:11434/v1", "ftp://api.example.com/v1", "https://", "file:///tmp/x", "not a url"],
)
def test_a_base_url_that_is_not_an_http_url_names_the_key_and_the_fix(
    tmp_path: Path, base_url: str
) -> None:
    path = write(
        tmp_path, f"endpoints:\n  - {{kind: openai, models: [m], base_url: '{base_url}'}}\n"
    )
    message = error_of(path, env={})
    assert "endpoints[0].base_url" in message
    assert repr(base_url) in message
    assert "http://" in message and "https://" in message  # how to fix it


def test_a_bad_base_url_from_the_environment_names_the_variable() -> None:
    env = {"OPENAI_API_KEY": "sk-x", "OPENAI_BASE_URL": "localhost:11434/v1"}
    message = error_of(None, env=env)
    assert "OPENAI_BASE_URL: 'localhost:11434/v1' is not an http:// or https:// URL" in message
