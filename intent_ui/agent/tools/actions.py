"""OpenAPI actions: import an OpenAPI 3 document into one tool per operation, called with httpx.

An action's tool id is `{operationId}_action_{encoded_domain}`: the operation id exactly as
the document spells it, and the API's host with each `.` encoded as `---` (`slack.com` ->
`slack---com`; a port is appended as `_8080`). The runtime's own spelling collapses `---`
to `_` (`slack_com`); options stored under either spelling belong to the same tool (the
short-hostname bug, where opt-ins for `slack.com` silently no-oped).
`action_tool_id_aliases` gives both spellings, and the capability resolution in
`core.capabilities.selection` already treats them as one. Whether a tool IS an action is
decided by its kind (`ActionTool.kind == "action"`), never by looking for `_action_` in a
name: an MCP tool may be called `foo_action_bar`.

Parameters come from the operation's path, query and header parameters plus the properties
of a JSON request body (a non-object body becomes one `body` argument). Local `$ref`s are
inlined; cycles end in an open schema. Calls never raise: HTTP errors and network failures
come back as error results naming the method, URL and status.

An import does bounded work whatever the document says: its bytes are capped, the nodes
its YAML aliases add (`MAX_ALIAS_NODES`) and the nodes its shared `$ref`s inline
(`MAX_INLINED_NODES`, counted as they are inlined, all operations together) are too, and a
document over a limit is refused with a message naming it. Parsing is CPU work, so callers
on the event loop run it in a thread (`fetch_openapi` does); a stored document is parsed
once per content (`load_action_tools` keeps the result by the text's SHA-256).

Neither the import nor an action's calls may reach loopback, link-local or private
addresses unless the configuration allows it (`allow_private_networks`, see `netguard`),
and bodies are read with their cap enforced while streaming, never whole first.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import quote, urljoin, urlsplit

import httpx
import yaml

from intent_ui.agent.tools.base import ToolKind, ToolResult
from intent_ui.agent.tools.netguard import guarded_client, read_capped
from intent_ui.agent.tools.yaml_bounded import (
    AliasCycleError,
    AliasExpansionError,
    safe_load_bounded,
)
from intent_ui.core.capabilities.selection import (
    ACTION_DELIMITER,
    ACTION_DOMAIN_SEPARATOR,
    normalize_action_tool_id,
)

__all__ = [
    "ACTION_TIMEOUT_S",
    "HTTP_METHODS",
    "MAX_ACTION_OUTPUT_CHARS",
    "MAX_ALIAS_NODES",
    "MAX_DOCUMENT_BYTES",
    "MAX_INLINED_NODES",
    "ActionOperation",
    "ActionSpec",
    "ActionTool",
    "OpenApiError",
    "action_tool_id",
    "action_tool_id_aliases",
    "build_action_tools",
    "encode_domain",
    "fetch_openapi",
    "is_action_tool",
    "load_action_tools",
    "parse_openapi",
    "parse_openapi_text",
]

logger = logging.getLogger(__name__)

HTTP_METHODS: tuple[str, ...] = (
    "get",
    "put",
    "post",
    "delete",
    "options",
    "head",
    "patch",
    "trace",
)
MAX_DOCUMENT_BYTES = 5 * 1024 * 1024
"""Refuse larger documents: an OpenAPI file this size is almost certainly not one."""
MAX_INLINED_NODES = 100_000
"""Schema nodes a document's `$ref`s may inline, all its operations together. Shared refs
multiply (ten properties naming a schema whose ten properties name another...), so a few
KB can stand for millions of nodes; a tool schema this large would not fit a model's
context anyway."""
MAX_ALIAS_NODES = 100_000
"""Nodes a YAML document's aliases (`*name` repeating an `&name` anchor) may add to it."""
MAX_ACTION_OUTPUT_CHARS = 20_000
"""Cap on a response body handed to the model."""
ACTION_TIMEOUT_S = 30.0
_MAX_REF_DEPTH = 32
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_-]+")

ParamLocation = Literal["path", "query", "header", "body", "body_whole"]


class OpenApiError(ValueError):
    """The document cannot be imported; the message says what, where and how to fix it."""


# --- naming ------------------------------------------------------------------------------


def encode_domain(server_url: str) -> str:
    """The encoded domain of an API base URL: host dots as `---`, a port as `_<port>`.

    Characters a tool name cannot hold (anything outside `[A-Za-z0-9_-]`) become `_`.
    """
    parts = urlsplit(server_url)
    host = (parts.hostname or "").lower()
    encoded = ACTION_DOMAIN_SEPARATOR.join(
        _UNSAFE_NAME.sub("_", label) for label in host.split(".")
    )
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{encoded}_{port}" if port else encoded


def action_tool_id(operation_id: str, encoded_domain: str) -> str:
    """`{operationId}_action_{encoded_domain}`; the operation id is left exactly as given."""
    return f"{operation_id}{ACTION_DELIMITER}{encoded_domain}"


def action_tool_id_aliases(tool_id: str) -> tuple[str, ...]:
    """Both spellings of an ACTION's id: the stored `---` form first, then the `_` form.

    Call it only for tools known to be actions (by kind): the id is split at its LAST
    `_action_`, and only the domain part is rewritten, so `---` inside an operation id
    survives.
    """
    collapsed = normalize_action_tool_id(tool_id)
    return (tool_id,) if collapsed == tool_id else (tool_id, collapsed)


def is_action_tool(tool: object) -> bool:
    """Whether a tool is an OpenAPI action, by its kind (never by parsing its name)."""
    return getattr(tool, "kind", None) == "action"


# --- parsing -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ArgBinding:
    """Where one tool argument goes in the HTTP request."""

    location: ParamLocation
    name: str


@dataclass(frozen=True, slots=True)
class ActionOperation:
    """One operation: its id, HTTP method and path, and the tool schema built for it."""

    operation_id: str
    method: str
    path: str
    description: str
    parameters: dict[str, Any]
    bindings: dict[str, ArgBinding]


@dataclass(frozen=True, slots=True)
class ActionSpec:
    """An imported document: API title, base URL, encoded domain and its operations."""

    title: str
    server_url: str
    domain: str
    encoded_domain: str
    operations: tuple[ActionOperation, ...]
    document: dict[str, Any] = field(repr=False, compare=False)


def parse_openapi_text(text: str | bytes, *, source: str) -> dict[str, Any]:
    """Decode a JSON or YAML document into a mapping; `source` names it in errors."""
    if isinstance(text, bytes | bytearray):
        if len(text) > MAX_DOCUMENT_BYTES:
            raise OpenApiError(
                f"{source}: the document is larger than {MAX_DOCUMENT_BYTES // (1024 * 1024)} "
                "MiB; import a smaller OpenAPI file"
            )
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError:
            raise OpenApiError(f"{source}: the file is not UTF-8 text; save it as UTF-8") from None
    if not text.strip():
        raise OpenApiError(f"{source}: the document is empty; give an OpenAPI 3 JSON or YAML file")
    try:
        data = _decode(text, source)
    except RecursionError:
        raise OpenApiError(
            f"{source}: the document is nested too deeply to read; an OpenAPI document nests "
            "a few dozen levels at most"
        ) from None
    if not isinstance(data, dict):
        raise OpenApiError(
            f"{source}: the top level is a {type(data).__name__}, not a mapping; an OpenAPI "
            "document starts with 'openapi: 3.x'"
        )
    return data


def _decode(text: str, source: str) -> Any:
    try:
        # YAML 1.2 is a superset of JSON, but a JSON parse first gives better messages.
        return json.loads(text)
    except ValueError:
        pass
    try:
        return safe_load_bounded(text, max_alias_nodes=MAX_ALIAS_NODES)
    except AliasExpansionError:
        raise OpenApiError(
            f"{source}: the YAML document expands to more than {MAX_ALIAS_NODES:,} nodes "
            "through aliases (*name repeating an &name anchor); write the repeated parts "
            "out once, or share schemas with $ref"
        ) from None
    except AliasCycleError as exc:
        raise OpenApiError(
            f"{source}: the YAML node anchored at line {exc.line} contains an alias to "
            "itself, so it never ends; use a $ref for a recursive schema"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid syntax"
        raise OpenApiError(
            f"{source}: neither JSON nor YAML{where}: {problem}; check the file's syntax"
        ) from None


def parse_openapi(
    text_or_document: str | bytes | Mapping[str, Any],
    *,
    source: str = "document",
    base_url: str | None = None,
) -> ActionSpec:
    """Parse an OpenAPI 3 document into an `ActionSpec`. Raises `OpenApiError`.

    `base_url` (where the document was fetched from) resolves a relative `servers[0].url`
    and stands in when the document names no server.
    """
    document = (
        dict(text_or_document)
        if isinstance(text_or_document, Mapping)
        else parse_openapi_text(text_or_document, source=source)
    )
    version = document.get("openapi")
    if not (isinstance(version, str) and version.startswith("3.")):
        if "swagger" in document:
            raise OpenApiError(
                f"{source}: this is a Swagger 2.0 document; convert it to OpenAPI 3 first "
                "(for example with the swagger2openapi converter)"
            )
        raise OpenApiError(
            f"{source}: 'openapi' is {version!r}; only OpenAPI 3.x documents can be imported"
        )
    server_url = _server_url(document, source, base_url)
    domain = urlsplit(server_url).hostname or ""
    encoded = encode_domain(server_url)
    info = document.get("info")
    title = info.get("title") if isinstance(info, Mapping) else None
    paths = document.get("paths")
    if not isinstance(paths, Mapping) or not paths:
        raise OpenApiError(f"{source}: 'paths' is missing or empty; the API has no operations")
    operations: list[ActionOperation] = []
    seen: dict[str, str] = {}
    inliner = _Inliner(document, source)
    for path, item in paths.items():
        if not isinstance(item, Mapping):
            continue
        shared = item.get("parameters")
        for method in HTTP_METHODS:
            op = item.get(method)
            if not isinstance(op, Mapping):
                continue
            operation = _operation(inliner, str(path), method, op, shared)
            where = f"{method.upper()} {path}"
            if operation.operation_id in seen:
                raise OpenApiError(
                    f"{source}: operationId '{operation.operation_id}' is used by both "
                    f"{seen[operation.operation_id]} and {where}; operation ids must be unique"
                )
            seen[operation.operation_id] = where
            operations.append(operation)
    if not operations:
        raise OpenApiError(f"{source}: no operations found under 'paths'")
    return ActionSpec(
        title=title if isinstance(title, str) and title.strip() else domain,
        server_url=server_url.rstrip("/"),
        domain=domain,
        encoded_domain=encoded,
        operations=tuple(operations),
        document=document,
    )


def _server_url(document: Mapping[str, Any], source: str, base_url: str | None) -> str:
    servers = document.get("servers")
    first = servers[0] if isinstance(servers, list) and servers else None
    url = first.get("url") if isinstance(first, Mapping) else None
    variables = first.get("variables") if isinstance(first, Mapping) else None
    if isinstance(url, str) and url.strip():
        url = _fill_server_variables(url.strip(), variables)
        if not urlsplit(url).scheme:
            if base_url is None:
                raise OpenApiError(
                    f"{source}: servers[0].url '{url}' is relative; make it absolute "
                    "(e.g. https://api.example.com) or import the document from its URL"
                )
            url = urljoin(base_url, url)
    elif base_url is not None:
        parts = urlsplit(base_url)
        url = f"{parts.scheme}://{parts.netloc}"
    else:
        raise OpenApiError(
            f"{source}: the document names no server; add servers: [{{url: https://...}}]"
        )
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise OpenApiError(
            f"{source}: servers[0].url '{url}' is not an http(s) URL with a host name"
        )
    return url


def _fill_server_variables(url: str, variables: object) -> str:
    if not isinstance(variables, Mapping):
        return url
    for name, spec in variables.items():
        default = spec.get("default") if isinstance(spec, Mapping) else None
        if default is not None:
            url = url.replace("{" + str(name) + "}", str(default))
    return url


class _Inliner:
    """Inlines one document's local `$ref`s (`#/...`) under one budget for all of them.

    Every node copied from a ref's target counts, as it is copied, against
    `MAX_INLINED_NODES`; past it the import is refused, so the work is bounded by the
    budget, never by what the refs would expand to. A cycle or an unknown ref becomes an
    open schema.
    """

    def __init__(self, document: Mapping[str, Any], source: str) -> None:
        self._document = document
        self._source = source
        self._left = MAX_INLINED_NODES

    def _target(self, ref: str) -> Any:
        target: Any = self._document
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            target = target.get(part) if isinstance(target, Mapping) else None
        return target

    def _spend(self) -> None:
        self._left -= 1
        if self._left < 0:
            raise OpenApiError(
                f"{self._source}: the OpenAPI document expands to more than "
                f"{MAX_INLINED_NODES:,} schema nodes through shared $refs (each $ref in the "
                "operations' parameters and JSON request bodies is copied where it is used); "
                "point fewer properties at large shared schemas, or split the API into "
                "smaller documents"
            )

    def deref(self, node: Any) -> Any:
        """`node` with a `$ref` at its top followed (not inlining anything below it)."""
        seen: set[str] = set()
        while isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            if ref in seen or not ref.startswith("#/") or len(seen) > _MAX_REF_DEPTH:
                return {}
            seen.add(ref)
            node = self._target(ref)
        return node

    def resolve(
        self, node: Any, depth: int = 0, stack: tuple[str, ...] = (), inlined: bool = False
    ) -> Any:
        """`node` with every `$ref` below it inlined; `inlined`: copied from a ref's target."""
        if inlined:
            self._spend()
        if depth > _MAX_REF_DEPTH:
            return {}
        if isinstance(node, Mapping):
            ref = node.get("$ref")
            if isinstance(ref, str):
                if ref in stack or not ref.startswith("#/"):
                    return {}
                target = self._target(ref)
                if target is None:
                    return {}
                return self.resolve(target, depth + 1, (*stack, ref), True)
            return {k: self.resolve(v, depth + 1, stack, inlined) for k, v in node.items()}
        if isinstance(node, list):
            return [self.resolve(v, depth + 1, stack, inlined) for v in node]
        return node


def _default_operation_id(method: str, path: str) -> str:
    words = [w for w in _UNSAFE_NAME.split(path) if w]
    return "_".join([method, *words]) if words else method


def _operation(
    inliner: _Inliner,
    path: str,
    method: str,
    op: Mapping[str, Any],
    shared: object,
) -> ActionOperation:
    raw_id = op.get("operationId")
    operation_id = (
        raw_id if isinstance(raw_id, str) and raw_id else _default_operation_id(method, path)
    )
    summary = op.get("summary") or op.get("description") or f"{method.upper()} {path}"
    description = str(summary).strip()
    properties: dict[str, Any] = {}
    required: list[str] = []
    bindings: dict[str, ArgBinding] = {}
    params: dict[tuple[str, str], Mapping[str, Any]] = {}
    for group in (shared, op.get("parameters")):
        for param in group if isinstance(group, list) else ():
            param = inliner.resolve(param)
            if isinstance(param, Mapping) and isinstance(param.get("name"), str):
                # Operation-level parameters override path-level ones with the same key.
                params[(str(param.get("in")), param["name"])] = param
    for (location, name), param in params.items():
        if location not in ("path", "query", "header"):
            continue  # cookies are not sent by actions
        declared = param.get("schema")
        schema = dict(declared) if isinstance(declared, Mapping) else {}
        schema.setdefault("type", "string")
        if isinstance(param.get("description"), str) and "description" not in schema:
            schema["description"] = param["description"]
        properties[name] = schema
        bindings[name] = ArgBinding(location, name)  # type: ignore[arg-type]
        if location == "path" or param.get("required") is True:
            required.append(name)
    # Only the JSON media type's schema is inlined: the others are never sent.
    body = inliner.deref(op.get("requestBody"))
    if isinstance(body, Mapping):
        content = inliner.deref(body.get("content"))
        media = content.get("application/json") if isinstance(content, Mapping) else None
        if media is None and isinstance(content, Mapping):
            media = next((v for k, v in content.items() if "json" in str(k)), None)
        media = inliner.deref(media)
        body_schema = inliner.resolve(media.get("schema")) if isinstance(media, Mapping) else None
        if isinstance(body_schema, Mapping):
            body_required = body.get("required") is True
            body_props = body_schema.get("properties")
            if body_schema.get("type", "object") == "object" and isinstance(body_props, Mapping):
                listed = body_schema.get("required")
                wanted = listed if isinstance(listed, list) else []
                for name, prop in body_props.items():
                    arg = name if name not in properties else f"body_{name}"
                    properties[arg] = prop
                    bindings[arg] = ArgBinding("body", name)
                    if name in wanted and body_required:
                        required.append(arg)
            else:
                arg = "body" if "body" not in properties else "request_body"
                properties[arg] = dict(body_schema)
                bindings[arg] = ArgBinding("body_whole", arg)
                if body_required:
                    required.append(arg)
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = list(dict.fromkeys(required))
    return ActionOperation(operation_id, method, path, description, parameters, bindings)


async def fetch_openapi(
    url: str,
    *,
    client: httpx.AsyncClient | None = None,
    allow_private_networks: bool = False,
) -> ActionSpec:
    """Download and parse a document from an http(s) URL. Raises `OpenApiError`.

    Without `client`, private addresses are refused unless `allow_private_networks`.
    """
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise OpenApiError(f"'{url}' is not an http(s) URL; give the document's full address")
    owned = client is None
    if client is None:
        client = guarded_client(
            allow_private_networks=allow_private_networks, timeout=ACTION_TIMEOUT_S
        )
    try:
        async with client.stream("GET", url.strip()) as response:
            if response.status_code >= 400:
                raise OpenApiError(
                    f"{url}: the server answered HTTP {response.status_code}; check the address"
                )
            body, more = await read_capped(response, MAX_DOCUMENT_BYTES)
            final_url = str(response.url)
    except httpx.HTTPError as exc:
        raise OpenApiError(
            f"{url}: could not download the document ({type(exc).__name__}: {exc}); check "
            "the address, or save the file and upload it instead"
        ) from None
    finally:
        if owned:
            await client.aclose()
    if more:
        raise OpenApiError(
            f"{url}: the document is larger than {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB "
            "(download stopped there); import a smaller OpenAPI file"
        )
    # Parsing is CPU work bounded by the limits above: off the event loop.
    return await asyncio.to_thread(parse_openapi, body, source=url, base_url=final_url)


# --- the tool ----------------------------------------------------------------------------


class ActionTool:
    """One operation of an imported API, as a tool (`kind == "action"`)."""

    kind: ToolKind = "action"
    server: str | None = None

    def __init__(
        self,
        spec: ActionSpec,
        operation: ActionOperation,
        *,
        client: httpx.AsyncClient | None = None,
        allow_private_networks: bool = False,
    ) -> None:
        self.spec = spec
        self.operation = operation
        self._client = client
        self._allow_private_networks = allow_private_networks

    @property
    def name(self) -> str:
        # The model-facing name: the runtime spelling (`_`), accepted by every provider.
        return normalize_action_tool_id(self.tool_id)

    @property
    def tool_id(self) -> str:
        return action_tool_id(self.operation.operation_id, self.spec.encoded_domain)

    @property
    def domain(self) -> str:
        return self.spec.domain

    @property
    def definition(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.operation.description,
            "parameters": self.operation.parameters,
        }

    def _request(self, args: Mapping[str, Any]) -> httpx.Request | str:
        op = self.operation
        path = op.path
        query: dict[str, Any] = {}
        headers: dict[str, str] = {}
        body: dict[str, Any] = {}
        whole: Any = None
        has_whole = False
        unknown = [name for name in args if name not in op.bindings]
        if unknown:
            allowed = ", ".join(op.bindings) or "none"
            return f"unknown argument(s) {', '.join(unknown)} (allowed: {allowed})"
        for arg, binding in op.bindings.items():
            if arg not in args:
                continue
            value = args[arg]
            if binding.location == "path":
                path = path.replace("{" + binding.name + "}", quote(str(value), safe=""))
            elif binding.location == "query":
                query[binding.name] = value if not isinstance(value, bool) else str(value).lower()
            elif binding.location == "header":
                headers[binding.name] = str(value)
            elif binding.location == "body":
                body[binding.name] = value
            else:
                whole, has_whole = value, True
        missing = re.findall(r"\{([^}]+)\}", path)
        if missing:
            return f"missing required path argument(s): {', '.join(missing)}"
        url = self.spec.server_url + (path if path.startswith("/") else "/" + path)
        payload = whole if has_whole else (body or None)
        return httpx.Request(
            op.method.upper(),
            url,
            params=query or None,
            headers=headers,
            json=payload,
        )

    async def call(self, args: dict[str, Any]) -> ToolResult:
        # No intent is stripped here: the run loop strips the label of label-bearing calls
        # (marker-guarded), and an API's own `intent` field must reach it unchanged.
        if not isinstance(args, Mapping):
            return ToolResult(f"{self.name}: arguments must be a JSON object", is_error=True)
        request = self._request(args)
        if isinstance(request, str):
            return ToolResult(f"{self.name}: {request}", is_error=True)
        where = f"{request.method} {request.url}"
        client = self._client or guarded_client(
            allow_private_networks=self._allow_private_networks, timeout=ACTION_TIMEOUT_S
        )
        try:
            response = await client.send(request, stream=True)
            try:
                # UTF-8 takes at most 4 bytes a character: this holds every character shown.
                body, more = await read_capped(response, 4 * MAX_ACTION_OUTPUT_CHARS)
            finally:
                await response.aclose()
        except httpx.HTTPError as exc:
            return ToolResult(f"{where} failed: {type(exc).__name__}: {exc}", is_error=True)
        finally:
            if self._client is None:
                await client.aclose()
        text = body.decode(response.encoding or "utf-8", errors="replace")
        if more or len(text) > MAX_ACTION_OUTPUT_CHARS:
            text = text[:MAX_ACTION_OUTPUT_CHARS] + f"\n… (cut at {MAX_ACTION_OUTPUT_CHARS} chars)"
        if response.status_code >= 400:
            reason = response.reason_phrase or ""
            return ToolResult(
                f"{where} returned HTTP {response.status_code} {reason}".rstrip() + f": {text}",
                is_error=True,
            )
        return ToolResult(text)


def build_action_tools(
    spec: ActionSpec,
    *,
    client: httpx.AsyncClient | None = None,
    allow_private_networks: bool = False,
) -> list[ActionTool]:
    """One tool per operation of an imported document."""
    return [
        ActionTool(spec, operation, client=client, allow_private_networks=allow_private_networks)
        for operation in spec.operations
    ]


class _SpecCache:
    """Parsed stored documents (or why they no longer import), by source and content.

    Every start of the runtime and every `/agents` load turns each stored document into
    tools again; parsing is the expensive part, so it happens once per document text.
    Bounded, least recently used first out; shared by threads.
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[tuple[str, str], ActionSpec | str] = OrderedDict()
        self._lock = threading.Lock()

    def spec(self, source: str, text: str) -> ActionSpec:
        """The spec of `text` stored for `source`. Raises `OpenApiError`."""
        key = (source, hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest())
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
        if found is None:
            # Parsed outside the lock: two threads may both parse a new text, never wait.
            try:
                found = parse_openapi(text, source=source, base_url=_base_of(source))
            except OpenApiError as exc:
                found = str(exc)
            with self._lock:
                self._entries[key] = found
                while len(self._entries) > self._size:
                    self._entries.popitem(last=False)
        if isinstance(found, str):
            raise OpenApiError(found)
        return found


_SPECS = _SpecCache(size=512)


def load_action_tools(
    documents: Iterable[tuple[str, str | Mapping[str, Any]]],
    *,
    client: httpx.AsyncClient | None = None,
    allow_private_networks: bool = False,
) -> tuple[list[ActionTool], list[str]]:
    """Tools from stored documents (`(source, document)` pairs), and one problem per bad one.

    A document given as its stored JSON text is parsed once per content (kept by source
    and SHA-256); a mapping is parsed each time. A document that no longer parses is
    skipped, never fatal: its problem is returned (and logged) so the caller can show it.
    Blocking (parsing is CPU work): call it from a worker thread.
    """
    tools: list[ActionTool] = []
    problems: list[str] = []
    for source, document in documents:
        try:
            spec = (
                _SPECS.spec(source, document)
                if isinstance(document, str)
                else parse_openapi(document, source=source, base_url=_base_of(source))
            )
        except OpenApiError as exc:
            logger.warning("Skipping stored action document: %s", exc)
            problems.append(str(exc))
            continue
        tools.extend(
            build_action_tools(spec, client=client, allow_private_networks=allow_private_networks)
        )
    return tools, problems


def _base_of(source: str) -> str | None:
    return source if urlsplit(source).scheme in ("http", "https") else None
