"""Application configuration: `intent_ui.yaml` (or `INTENT_UI_CONFIG`) into a validated `AppConfig`.

`load_config` is the only entry point. It reads YAML, expands `${ENV}` references, validates
with pydantic (unknown keys are refused so typos surface) and turns every problem into a
`ConfigError` whose lines read `<file>: <key path>: <problem>`, e.g.
`intent_ui.yaml: endpoints[1].kind: 'gpt' is not one of demo, openai, anthropic`.

Without a file the app still runs: the offline `demo` endpoint, plus `openai` / `anthropic`
endpoints when the usual environment variables are set.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Callable, Mapping
from ipaddress import ip_address
from pathlib import Path
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from intent_ui.core.capabilities.selection import TOOL_SELECTION_WILDCARD
from intent_ui.core.origins import normalize_origin
from intent_ui.core.proxies import LOOPBACK_PROXIES, Network, parse_network

__all__ = [
    "ALL_CAPABILITIES",
    "DEFAULT_BASE_URLS",
    "DEFAULT_BIND",
    "DEFAULT_CONFIG_FILE",
    "DEFAULT_DEMO_PACING_MS",
    "DEFAULT_TOOL_TIMEOUT_S",
    "DEFAULT_USER_HEADER",
    "MIN_SECRET_CHARS",
    "ActionsConfig",
    "AppConfig",
    "AuthConfig",
    "AuthMode",
    "Capability",
    "ConfigError",
    "DashboardConfig",
    "EndpointConfig",
    "EndpointKind",
    "McpServerConfig",
    "ModelSpec",
    "SandboxConfig",
    "ServerConfig",
    "TracingConfig",
    "WebSearchConfig",
    "load_config",
]

EndpointKind = Literal["demo", "openai", "anthropic"]
AuthMode = Literal["header", "password"]
Capability = Literal["tool_intents", "run_in_background", "deferred_tools", "programmatic_tools"]

ALL_CAPABILITIES: frozenset[Capability] = frozenset(get_args(Capability))
DEFAULT_CONFIG_FILE = "intent_ui.yaml"
DEFAULT_DEMO_PACING_MS = 25.0
DEFAULT_TOOL_TIMEOUT_S = 120.0
DEFAULT_BASE_URLS: dict[str, str] = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
}
# Used only for endpoints built from environment variables (no file); override with
# OPENAI_MODELS / ANTHROPIC_MODELS (comma-separated).
_ENV_DEFAULT_MODELS: dict[str, list[str]] = {
    "openai": ["gpt-4.1-mini"],
    "anthropic": ["claude-sonnet-4-5"],
}
DEFAULT_USER_HEADER = "X-Forwarded-User"
MIN_SECRET_CHARS = 32
DEFAULT_BIND = "127.0.0.1"
_SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class ConfigError(Exception):
    """The configuration is unusable. `problems` holds one `<key path>: <problem>` per line."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__("\n".join(f"{source}: {p}" for p in problems))


class _PathError(ValueError):
    """A cross-field problem raised at the top level that knows its own key path."""

    def __init__(self, loc: tuple[Any, ...], problem: str) -> None:
        super().__init__(problem)
        self.loc = loc
        self.problem = problem


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EndpointConfig(_Section):
    """One model endpoint. `name` defaults to `kind` (de-duplicated with a `-2` suffix)."""

    kind: EndpointKind
    name: str = ""
    base_url: str | None = None
    api_key: str | None = None
    models: list[str] = Field(default_factory=list)
    strict: bool = False
    activity_label: bool = False
    activity_model: str | None = None
    max_tokens: int = Field(default=4096, gt=0)
    pacing_ms: float | None = Field(default=None, ge=0)
    context_budget: int | None = Field(default=None, gt=0, strict=True)
    """Tokens the conversation's history may take (counted with the app's tokenizer)
    before its older tool calls are compacted into their ledger; absent, never
    compacted (docs/compaction.md)."""

    @model_validator(mode="before")
    @classmethod
    def _kind_defaults(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        kind = data.get("kind")
        out = dict(data)
        if kind in DEFAULT_BASE_URLS and not out.get("base_url"):
            out["base_url"] = DEFAULT_BASE_URLS[kind]
        if kind == "demo" and not out.get("models"):
            out["models"] = ["demo"]
        return out

    @field_validator("base_url")
    @classmethod
    def _http_base_url(cls, url: str | None) -> str | None:
        # Checked at start, so a typo is a configuration error naming the key rather than
        # a connection error on the first message.
        if url is None or _ENV_REF.search(url):
            return url  # an unset ${VAR} is reported on its own
        try:
            parts = urlsplit(url)
            ok = parts.scheme in ("http", "https") and bool(parts.hostname) and " " not in url
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(
                f"{url!r} is not an http:// or https:// URL with a host; write the full "
                "address, e.g. https://api.openai.com/v1 or http://localhost:11434/v1"
            )
        return url

    @field_validator("models")
    @classmethod
    def _models_are_names(cls, models: list[str]) -> list[str]:
        if any(not m.strip() for m in models):
            raise ValueError("model names must not be blank")
        return models

    @model_validator(mode="after")
    def _models_required(self) -> EndpointConfig:
        if self.kind != "demo" and not self.models:
            raise ValueError(
                f"'models' must list at least one model for this {self.kind} endpoint, "
                "e.g. models: [my-model]"
            )
        return self


class McpServerConfig(_Section):
    """An MCP server: stdio (`command`, `args`, `env`, `cwd`) or streamable HTTP (`url`)."""

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError(
                "give exactly one of 'command' (a stdio server) or 'url' (streamable HTTP)"
            )
        if self.url is not None and (self.args or self.env or self.cwd):
            raise ValueError("'args', 'env' and 'cwd' only apply to a stdio server ('command')")
        if self.command is not None and self.headers:
            raise ValueError("'headers' only apply to an HTTP server ('url')")
        return self

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command is not None else "http"


class WebSearchConfig(_Section):
    """A SearxNG-compatible search service (`GET {url}/search?q=...&format=json`)."""

    url: str

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str) -> str:
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"'{url}' is not an http(s) URL, e.g. http://localhost:8888")
        return url.rstrip("/")


class ActionsConfig(_Section):
    """Imported OpenAPI actions: what their import and their calls may reach."""

    allow_private_networks: bool = False
    """Let the import and the calls reach loopback, link-local and private addresses
    (refused by default: a document URL or an API server could point into the server's
    own network)."""


class TracingConfig(_Section):
    """What traces may carry (traces themselves are switched on by the standard
    `OTEL_EXPORTER_OTLP_ENDPOINT`, docs/traces.md)."""

    redact_arguments: bool = False
    """Keep tool-call arguments out of traces, and with them everything written from them:
    intents, settled labels, tool errors and group summaries (spans are then named
    "Running {tool}" / "Ran {tool}")."""


class DashboardConfig(_Section):
    """What the intents dashboard (/intents) keeps of the app's own calls (docs/dashboard.md).

    `omit_intents`: tool ids (as in `tool_options`) or tool names whose calls are counted
    without their intent or outcome text: for tools whose intents tend to name people
    (bookings, support messages). Captured servers opt tools out in the wrapper instead
    (`IntentOptions(exclude=...)`)."""

    omit_intents: tuple[str, ...] = ()

    @field_validator("omit_intents", mode="before")
    @classmethod
    def _tool_names(cls, names: Any) -> Any:
        if not isinstance(names, (list, tuple)) or not all(
            isinstance(name, str) and name.strip() for name in names
        ):
            raise _PathError(
                ("dashboard", "omit_intents"),
                "expected a list of tool ids or names, e.g. [book_flight, send_message]",
            )
        return tuple(name.strip() for name in names)


class SandboxConfig(_Section):
    """The sandbox `bash_tool` and `run_tools_with_code` run programs in (bubblewrap;
    docs/capabilities.md): whether those tools are offered, and what one run may use."""

    enabled: bool = True
    """Off: neither tool is offered, even where the sandbox works."""
    time_limit_s: float = Field(default=30.0, gt=0)
    cpu_limit_s: int = Field(default=20, gt=0)
    memory_mb: int = Field(default=1024, ge=64)
    """Address space of each process in the sandbox."""
    processes: int = Field(default=64, ge=8)
    """Processes and threads running at once in one sandbox."""
    output_kb: int = Field(default=64, ge=1)
    """Output (stdout and stderr) one run may print before it is stopped."""
    write_workspace: bool = False
    """On: the sandbox sees the workspace writable (the app's own files in it stay
    read-only), so `bash_tool` and programs change files there; each such call takes a
    checkpoint (docs/rewind.md). Refused, with a warning, for a workspace holding the
    app's checkout. Off: the workspace is read-only in the sandbox."""


class AuthConfig(_Section):
    """Who is using the app. Absent: one local user, no sign-in.

    `header`: a reverse proxy in front of the app has signed the user in and names them
    in `header` (requests without it are refused). `password`: users sign in with a name
    and password (`python -m intent_ui users add NAME`); the session cookie is signed
    with `secret`. `operators`: the user names who see the calls captured from MCP
    servers on /intents (those calls belong to no user). `secure_cookie`: the session
    cookie's Secure flag; absent, it is set when the page is served over HTTPS.
    """

    mode: AuthMode
    header: str = DEFAULT_USER_HEADER
    secret: str | None = None
    operators: tuple[str, ...] = ()
    secure_cookie: bool | None = None

    @field_validator("operators", mode="before")
    @classmethod
    def _operator_names(cls, names: Any) -> Any:
        if not isinstance(names, (list, tuple)):
            raise _PathError(("auth", "operators"), "expected a list of user names, e.g. [alice]")
        cleaned: list[str] = []
        for i, name in enumerate(names):
            if not isinstance(name, str) or not name.strip():
                problem = "a user name cannot be blank"
            elif any(ord(c) < 32 for c in name):
                problem = "a user name cannot contain control characters (tabs, newlines)"
            else:
                cleaned.append(name.strip())
                continue
            raise _PathError(("auth", "operators", i), f"{name!r}: {problem}")
        return tuple(cleaned)

    @field_validator("secure_cookie", mode="before")
    @classmethod
    def _secure_flag(cls, value: Any) -> Any:
        if value is None or isinstance(value, bool):
            return value
        raise ValueError(
            f"{value!r} is not true or false; true: always Secure (sign-in then works only "
            "over HTTPS), false: never, or leave it out: Secure when the page is served "
            "over HTTPS"
        )

    @field_validator("header")
    @classmethod
    def _header_name(cls, header: str) -> str:
        if not _HEADER_NAME.match(header):
            raise ValueError(f"'{header}' is not an HTTP header name, e.g. {DEFAULT_USER_HEADER}")
        return header

    @model_validator(mode="after")
    def _password_needs_a_secret(self) -> AuthConfig:
        if self.mode != "password":
            return self
        if not self.secret:
            raise _PathError(
                ("auth", "secret"),
                "required when mode is password: it signs the session cookies. Set it from "
                "the environment, e.g. secret: ${INTENT_UI_SECRET}, with a value made by "
                "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`",
            )
        if len(self.secret) < MIN_SECRET_CHARS:
            raise _PathError(
                ("auth", "secret"),
                f"too short ({len(self.secret)} characters); use at least {MIN_SECRET_CHARS}, "
                "e.g. from `python -c 'import secrets; print(secrets.token_urlsafe(32))'`",
            )
        return self


class ServerConfig(_Section):
    """Who can reach the app: where it listens, which web pages may drive it, and which
    reverse proxies may speak for the client.

    `bind`: the address the backend listens on (127.0.0.1: this machine only; 0.0.0.0 or
    `::`: every interface). `allowed_origins`: web origins besides the app's own page
    whose pages may open the event socket and call the HTTP API, e.g. the address users
    open through a proxy. `trusted_proxies`: addresses or networks whose connections may
    name the user (`auth.mode: header`) and say in X-Forwarded-For whom they forward.
    """

    bind: str = DEFAULT_BIND
    allowed_origins: tuple[str, ...] = ()
    trusted_proxies: tuple[Network, ...] = LOOPBACK_PROXIES

    @field_validator("bind")
    @classmethod
    def _bind_address(cls, bind: str) -> str:
        try:
            return str(ip_address(bind.strip()))
        except ValueError:
            raise ValueError(
                f"'{bind}' is not an IP address to listen on; use 127.0.0.1 (this machine "
                "only), an address of this machine, or 0.0.0.0 (every interface)"
            ) from None

    @field_validator("allowed_origins", mode="before")
    @classmethod
    def _origins(cls, origins: Any) -> Any:
        return _each(origins, "allowed_origins", "[https://chat.example.com]", normalize_origin)

    @field_validator("trusted_proxies", mode="before")
    @classmethod
    def _proxies(cls, proxies: Any) -> Any:
        return _each(proxies, "trusted_proxies", "[127.0.0.1, 10.0.0.0/24]", parse_network)


def _each(value: Any, key: str, example: str, parse: Callable[[str], Any]) -> tuple[Any, ...]:
    """Every entry of the list `server.{key}` parsed; a bad one is named by its index."""
    if not isinstance(value, (list, tuple)):
        raise _PathError(("server", key), f"expected a list, e.g. {key}: {example}")
    parsed = []
    for i, entry in enumerate(value):
        try:
            parsed.append(parse(str(entry)))
        except ValueError as exc:
            raise _PathError(("server", key, i), str(exc)) from None
    return tuple(parsed)


_EVERY_TOOL = {
    "describe_intent": "to describe every tool",
    "require_approval": "to ask before every tool that changes the workspace",
}


class ModelSpec(_Section):
    """A preset: an endpoint + model with instructions, a `describe_intent` default and
    which tools ask before they run (`require_approval`)."""

    name: str
    endpoint: str
    model: str
    describe_intent: bool | list[str] | None = None
    require_approval: bool | list[str] | None = None
    """Which tools ask the user before they run: true for the tools that change the
    workspace, or a list of tool ids."""
    instructions: str | None = None

    @field_validator("describe_intent", "require_approval", mode="before")
    @classmethod
    def _bool_or_tool_ids(cls, value: Any, info: ValidationInfo) -> Any:
        # Checked here so a wrong type gives one readable line, not one per union member.
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            if TOOL_SELECTION_WILDCARD in value:
                # It would switch every tool on, the ones not listed too.
                every = _EVERY_TOOL.get(str(info.field_name), "for every tool")
                raise ValueError(
                    f"'{TOOL_SELECTION_WILDCARD}' is not a tool id; write "
                    f"`{info.field_name}: true` {every}, or list only tool ids"
                )
            return value
        raise ValueError("expected true, false or a list of tool ids")


class AppConfig(_Section):
    """The whole configuration. `endpoints[0]` is the default for new chats."""

    endpoints: list[EndpointConfig] = Field(default_factory=list)
    capabilities: frozenset[Capability] = ALL_CAPABILITIES
    mcp_servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    workspace: Path = Field(default_factory=Path.cwd)
    web_search: WebSearchConfig | None = None
    actions: ActionsConfig = Field(default_factory=ActionsConfig)
    model_specs: list[ModelSpec] = Field(default_factory=list)
    database_url: str | None = None
    tool_timeout_s: float = Field(default=DEFAULT_TOOL_TIMEOUT_S, gt=0)
    """Seconds one tool call may run before it settles as an error (and is cancelled)."""
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    auth: AuthConfig | None = None
    server: ServerConfig = Field(default_factory=ServerConfig)
    tracing: TracingConfig = Field(default_factory=TracingConfig)
    dashboard: DashboardConfig = Field(default_factory=DashboardConfig)
    # Not a key of the file: where `load_config` read it, so the file tools can refuse it.
    _source_file: Path | None = PrivateAttr(default=None)

    @field_validator("endpoints", mode="before")
    @classmethod
    def _mapping_form(cls, value: Any) -> Any:
        # load_config converts earlier (to keep the user's key paths); this serves callers
        # that build an AppConfig directly.
        return _endpoints_as_list(value)[0] if isinstance(value, dict) else value

    @field_validator("capabilities", mode="before")
    @classmethod
    def _absent_means_all(cls, value: Any) -> Any:
        return ALL_CAPABILITIES if value is None else value

    @field_validator("mcp_servers", mode="before")
    @classmethod
    def _server_names(cls, servers: Any) -> Any:
        for name in servers if isinstance(servers, dict) else ():
            if not _SERVER_NAME.match(str(name)):
                raise ValueError(
                    f"server name '{name}' may only use letters, digits, '_' and '-' "
                    "(it becomes part of tool ids)"
                )
        return servers

    @model_validator(mode="after")
    def _name_endpoints(self) -> AppConfig:
        explicit: dict[str, int] = {}
        for i, endpoint in enumerate(self.endpoints):
            if endpoint.name in explicit:
                raise _PathError(
                    ("endpoints", i, "name"),
                    f"'{endpoint.name}' is already the name of endpoints[{explicit[endpoint.name]}]"
                    "; give each endpoint its own name",
                )
            if endpoint.name:
                explicit[endpoint.name] = i
        taken = set(explicit)
        named: list[EndpointConfig] = []
        for endpoint in self.endpoints:
            if not endpoint.name:
                name: str = endpoint.kind
                n = 2
                while name in taken:
                    name, n = f"{endpoint.kind}-{n}", n + 1
                taken.add(name)
                endpoint = endpoint.model_copy(update={"name": name})
            named.append(endpoint)
        # Frozen model: naming is part of validation, so set the field once, here.
        object.__setattr__(self, "endpoints", named)
        known = [e.name for e in named]
        for i, spec in enumerate(self.model_specs):
            if spec.endpoint not in known:
                raise _PathError(
                    ("model_specs", i, "endpoint"),
                    f"'{spec.endpoint}' is not a configured endpoint (known: {', '.join(known)})",
                )
        return self

    @model_validator(mode="after")
    def _header_mode_needs_a_proxy(self) -> AppConfig:
        if self.auth is not None and self.auth.mode == "header" and not self.server.trusted_proxies:
            raise _PathError(
                ("server", "trusted_proxies"),
                "empty, so no proxy may name the user and header mode would refuse everyone; "
                "list the sign-in proxy's address, e.g. trusted_proxies: [127.0.0.1]",
            )
        return self

    @property
    def source_file(self) -> Path | None:
        """The file this configuration was loaded from (resolved), None without one."""
        return self._source_file

    @property
    def default_endpoint(self) -> EndpointConfig:
        return self.endpoints[0]

    def endpoint(self, name: str) -> EndpointConfig | None:
        return next((e for e in self.endpoints if e.name == name), None)


# --- loading ---------------------------------------------------------------------------------


def load_config(path: str | Path | None = None, env: Mapping[str, str] | None = None) -> AppConfig:
    """Load the configuration.

    The file is `path`, else `$INTENT_UI_CONFIG`, else `./intent_ui.yaml` when present, else
    none (built-in defaults). `env` defaults to `os.environ`. Raises `ConfigError`.
    """
    env = os.environ if env is None else env
    file = _locate(path, env)
    source = str(file) if file is not None else "environment"
    raw = _read_yaml(file) if file is not None else {}
    data, aliases, problems = _normalise(raw, env, file)
    problems += _expand_env_refs(data, env, aliases)
    try:
        config = AppConfig.model_validate(data)
    except ValidationError as exc:
        problems += [_describe(err, aliases) for err in exc.errors()]
        raise ConfigError(source, problems) from None
    if problems:
        raise ConfigError(source, problems)
    config._source_file = file.resolve() if file is not None else None
    return config


def _locate(path: str | Path | None, env: Mapping[str, str]) -> Path | None:
    if path is not None:
        origin = "the configuration file"
    elif env.get("INTENT_UI_CONFIG"):
        path, origin = env["INTENT_UI_CONFIG"], "INTENT_UI_CONFIG"
    else:
        default = Path(DEFAULT_CONFIG_FILE)
        return default if default.is_file() else None
    file = Path(path).expanduser()
    if not file.is_file():
        raise ConfigError(
            str(path), [f"{origin} '{path}' does not exist; create it or fix the path"]
        )
    return file


def _read_yaml(file: Path) -> dict[str, Any]:
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(str(file), [f"cannot read the file: {exc}"]) from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(str(file), [f"{where}invalid YAML: {problem}"]) from None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(
            str(file), [f"the top level must be a mapping of keys, got {type(raw).__name__}"]
        )
    return raw


Aliases = dict[tuple[Any, ...], str]
"""Maps a normalised location prefix to the path the user wrote (mapping-form endpoints)."""


def _normalise(
    raw: dict[str, Any], env: Mapping[str, str], file: Path | None
) -> tuple[dict[str, Any], Aliases, list[str]]:
    """Apply file-relative and environment-dependent defaults before validation.

    Works on copies; returns the data, the path aliases and the problems found so far.
    """
    data = dict(raw)
    aliases: Aliases = {}
    problems: list[str] = []
    endpoints = data.get("endpoints")
    if isinstance(endpoints, dict):
        try:
            endpoints, aliases = _endpoints_as_list(endpoints)
        except _PathError as exc:
            problems.append(f"{_path(exc.loc, {})}: {exc.problem}")
            endpoints = []
    if "endpoints" not in data or endpoints is None:
        endpoints = _env_endpoints(env)
        # A bad URL from the environment is reported under the variable that set it.
        for i, ep in enumerate(endpoints):
            if ep["kind"] in _ENV_PREFIXES and env.get(f"{_ENV_PREFIXES[ep['kind']]}_BASE_URL"):
                aliases[("endpoints", i, "base_url")] = f"{_ENV_PREFIXES[ep['kind']]}_BASE_URL"
    if isinstance(endpoints, list):
        endpoints = [dict(e) if isinstance(e, dict) else e for e in endpoints]
        if not any(isinstance(e, dict) and e.get("kind") == "demo" for e in endpoints):
            endpoints.append({"kind": "demo"})
        pacing = _env_pacing(env, problems)
        for ep in endpoints:
            if isinstance(ep, dict) and ep.get("kind") == "demo":
                if pacing is not None:
                    ep["pacing_ms"] = pacing
                else:
                    ep.setdefault("pacing_ms", DEFAULT_DEMO_PACING_MS)
    data["endpoints"] = endpoints
    if env.get("DB_URL"):
        data["database_url"] = env["DB_URL"]
    workspace = data.get("workspace")
    if isinstance(workspace, str):
        folder = Path(workspace).expanduser()
        if not folder.is_absolute() and file is not None:
            folder = file.resolve().parent / folder
        data["workspace"] = folder.resolve()
    elif "workspace" not in data:
        data["workspace"] = Path.cwd().resolve()
    if isinstance(data["workspace"], Path) and not data["workspace"].is_dir():
        problems.append(
            f"workspace: folder '{data['workspace']}' does not exist; create it or point "
            "'workspace' at an existing folder"
        )
        data.pop("workspace")
    return data, aliases, problems


def _env_pacing(env: Mapping[str, str], problems: list[str]) -> float | None:
    raw = env.get("INTENT_UI_DEMO_PACING_MS", "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if value < 0:
        problems.append(
            f"INTENT_UI_DEMO_PACING_MS: {raw!r} is not a number of milliseconds (e.g. 0 or 25)"
        )
        return None
    return value


def _endpoints_as_list(mapping: dict[Any, Any]) -> tuple[list[Any], Aliases]:
    """The mapping form `{name: endpoint}` as the list form; the key becomes `name`."""
    items: list[Any] = []
    aliases: Aliases = {}
    for i, (name, body) in enumerate(mapping.items()):
        aliases[("endpoints", i)] = f"endpoints.{name}"
        if isinstance(body, dict):
            if "name" in body and body["name"] != name:
                raise _PathError(
                    ("endpoints", str(name), "name"),
                    f"'{body['name']}' differs from its key '{name}'; drop 'name' (the key "
                    "names the endpoint)",
                )
            body = {**body, "name": str(name)}
        items.append(body)
    return items, aliases


_ENV_PREFIXES = {"openai": "OPENAI", "anthropic": "ANTHROPIC"}


def _env_endpoints(env: Mapping[str, str]) -> list[dict[str, Any]]:
    endpoints: list[dict[str, Any]] = [{"kind": "demo"}]
    for kind, prefix in _ENV_PREFIXES.items():
        key = env.get(f"{prefix}_API_KEY")
        if not key:
            continue
        models = [m.strip() for m in env.get(f"{prefix}_MODELS", "").split(",") if m.strip()]
        endpoints.append(
            {
                "kind": kind,
                "api_key": key,
                "base_url": env.get(f"{prefix}_BASE_URL") or DEFAULT_BASE_URLS[kind],
                "models": models or _ENV_DEFAULT_MODELS[kind],
            }
        )
    return endpoints


def _expand_env_refs(data: dict[str, Any], env: Mapping[str, str], aliases: Aliases) -> list[str]:
    """Expand `${VAR}` / `${VAR:-default}` in secrets-bearing strings, in place."""
    problems: list[str] = []

    def expand(container: dict[Any, Any], key: Any, loc: tuple[Any, ...]) -> None:
        value = container.get(key)
        if not isinstance(value, str):
            return

        def sub(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            found = env.get(name)
            if found:
                return found
            if default is not None:
                return default
            if found is not None:
                return found
            problems.append(
                f"{_path(loc, aliases)}: environment variable {name} is not set; export it "
                f"or write ${{{name}:-default}}"
            )
            return match.group(0)

        container[key] = _ENV_REF.sub(sub, value)

    endpoints = data.get("endpoints")
    if isinstance(endpoints, list):
        for i, ep in enumerate(endpoints):
            if isinstance(ep, dict):
                for field in ("api_key", "base_url"):
                    expand(ep, field, ("endpoints", i, field))
    servers = data.get("mcp_servers")
    if isinstance(servers, dict):
        copied = {}
        for name, server in servers.items():
            if isinstance(server, dict):
                server = dict(server)
                for section in ("env", "headers"):
                    if isinstance(server.get(section), dict):
                        values = dict(server[section])
                        for var in values:
                            expand(values, var, ("mcp_servers", name, section, var))
                        server[section] = values
            copied[name] = server
        data["mcp_servers"] = copied
    auth = data.get("auth")
    if isinstance(auth, dict):
        auth = data["auth"] = dict(auth)
        expand(auth, "secret", ("auth", "secret"))
    return problems


# --- error messages --------------------------------------------------------------------------


def _path(loc: tuple[Any, ...], aliases: Aliases) -> str:
    for size in range(len(loc), 0, -1):
        if loc[:size] in aliases:
            head, rest = aliases[loc[:size]], loc[size:]
            break
    else:
        head, rest = "", loc
    out = head
    for part in rest:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


_SECTIONS: dict[str, type[BaseModel]] = {
    "endpoints": EndpointConfig,
    "mcp_servers": McpServerConfig,
    "web_search": WebSearchConfig,
    "actions": ActionsConfig,
    "model_specs": ModelSpec,
    "auth": AuthConfig,
    "server": ServerConfig,
    "sandbox": SandboxConfig,
    "tracing": TracingConfig,
    "dashboard": DashboardConfig,
}


def _section_model(loc: tuple[Any, ...]) -> type[BaseModel]:
    if len(loc) <= 1:
        return AppConfig
    return _SECTIONS.get(str(loc[0]), AppConfig)


def _describe(err: Any, aliases: Aliases) -> str:
    """One pydantic error as `<key path>: <problem and how to fix it>`."""
    loc = tuple(err["loc"])
    kind = err["type"]
    value = err.get("input")
    error = err.get("ctx", {}).get("error")
    if isinstance(error, _PathError):
        return f"{_path(error.loc, aliases)}: {error.problem}"
    where = _path(loc, aliases)
    if kind == "extra_forbidden":
        allowed = sorted(_section_model(loc).model_fields)
        hint = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
        tip = f"did you mean '{hint[0]}'? " if hint else ""
        return f"{where}: unknown key; {tip}allowed keys are {', '.join(allowed)}"
    if kind == "literal_error":
        expected = re.findall(r"'([^']*)'", err.get("ctx", {}).get("expected", ""))
        return f"{where}: {value!r} is not one of {', '.join(expected)}"
    if kind == "missing":
        return f"{where}: required key is missing; add it"
    if kind == "value_error":
        return f"{where}: {error if error is not None else err['msg']}"
    message = err["msg"].rstrip(".").replace("Input should be", "should be", 1)
    return f"{where}: {message} (got {value!r})"
