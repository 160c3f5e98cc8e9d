"""OpenAPI actions (agent.tools.actions): import, naming, aliasing and calls."""

from __future__ import annotations

import ipaddress
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from intent_ui.agent.providers.base import TextChunk
from intent_ui.agent.tools.actions import (
    ActionTool,
    OpenApiError,
    action_tool_id,
    action_tool_id_aliases,
    build_action_tools,
    encode_domain,
    fetch_openapi,
    is_action_tool,
    load_action_tools,
    parse_openapi,
)
from intent_ui.agent.tools.netguard import blocked_reason
from intent_ui.core.capabilities.intent import is_intent_label_property
from intent_ui.core.capabilities.selection import canonical_tool_options, resolve_opt_in
from intent_ui.core.events import CallStarted
from tests.support.run_loop import ScriptedProvider, call, collect, end, make_run, of, settled

SLACK = {
    "openapi": "3.0.3",
    "info": {"title": "Slack", "version": "1"},
    "servers": [{"url": "https://slack.com/api"}],
    "paths": {
        "/chat.postMessage": {
            "post": {
                "operationId": "chat.postMessage",
                "summary": "Send a message to a channel.",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Message"}}
                    },
                },
            }
        },
        "/channels/{channel}/history": {
            "parameters": [{"name": "channel", "in": "path", "schema": {"type": "string"}}],
            "get": {
                "operationId": "get---history",
                "parameters": [
                    {"name": "limit", "in": "query", "schema": {"type": "integer"}},
                    {"name": "X-Trace", "in": "header", "required": True},
                    {"name": "session", "in": "cookie"},
                ],
            },
        },
    },
    "components": {
        "schemas": {
            "Message": {
                "type": "object",
                "required": ["channel", "text"],
                "properties": {
                    "channel": {"type": "string"},
                    "text": {"type": "string"},
                    "thread": {"$ref": "#/components/schemas/Message"},
                },
            }
        }
    },
}

YAML_DOC = """
openapi: 3.1.0
info: {title: Pets}
servers:
  - url: https://{region}.pets.example:8443/v1
    variables: {region: {default: eu}}
paths:
  /pets:
    get:
      summary: List pets
"""


def spec_tools(document: dict[str, Any] = SLACK, **kwargs: Any) -> dict[str, ActionTool]:
    tools = build_action_tools(parse_openapi(document, source="slack.json"), **kwargs)
    return {tool.operation.operation_id: tool for tool in tools}


# --- naming -------------------------------------------------------------------------------


def test_encode_domain_replaces_dots() -> None:
    assert encode_domain("https://slack.com/api") == "slack---com"


def test_encode_domain_appends_the_port() -> None:
    assert encode_domain("http://127.0.0.1:8000") == "127---0---0---1_8000"


def test_tool_id_keeps_the_operation_id_characters() -> None:
    tools = spec_tools()
    assert set(t.tool_id for t in tools.values()) == {
        "chat.postMessage_action_slack---com",
        "get---history_action_slack---com",
    }


def test_model_facing_name_uses_the_runtime_spelling() -> None:
    assert spec_tools()["get---history"].name == "get---history_action_slack_com"


def test_aliases_give_both_spellings_of_the_domain_only() -> None:
    assert action_tool_id_aliases("get---history_action_slack---com") == (
        "get---history_action_slack---com",
        "get---history_action_slack_com",
    )


def test_aliases_of_a_collapsed_id_are_itself() -> None:
    assert action_tool_id_aliases("post_action_slack_com") == ("post_action_slack_com",)


def test_action_tool_id_joins_with_the_delimiter() -> None:
    assert action_tool_id("listPets", "api---x---io") == "listPets_action_api---x---io"


def test_options_under_either_spelling_resolve_for_the_runtime_id() -> None:
    tool = spec_tools()["chat.postMessage"]
    for stored in ("chat.postMessage_action_slack---com", "chat.postMessage_action_slack_com"):
        options = {stored: {"describe_intent": True}}
        for runtime_id in (tool.tool_id, tool.name):
            folded = canonical_tool_options(options, [runtime_id])
            assert resolve_opt_in(folded, "describe_intent", runtime_id) is True


def test_action_is_recognised_by_kind() -> None:
    assert is_action_tool(spec_tools()["chat.postMessage"]) is True


def test_mcp_tool_with_the_delimiter_in_its_name_is_not_an_action() -> None:
    class FakeMcp:
        kind = "mcp"
        name = "foo_action_bar"
        tool_id = "foo_action_bar_mcp_github"

    assert is_action_tool(FakeMcp()) is False


# --- parsing ------------------------------------------------------------------------------


def test_yaml_document_with_server_variables() -> None:
    spec = parse_openapi(YAML_DOC, source="pets.yaml")
    assert spec.server_url == "https://eu.pets.example:8443/v1"
    assert spec.encoded_domain == "eu---pets---example_8443"
    assert spec.title == "Pets"


def test_missing_operation_id_is_derived_from_method_and_path() -> None:
    spec = parse_openapi(YAML_DOC, source="pets.yaml")
    assert spec.operations[0].operation_id == "get_pets"


def test_json_body_properties_become_arguments() -> None:
    params = spec_tools()["chat.postMessage"].definition["parameters"]
    assert list(params["properties"]) == ["channel", "text", "thread"]
    assert params["required"] == ["channel", "text"]


def test_recursive_refs_end_in_an_open_schema() -> None:
    thread = spec_tools()["chat.postMessage"].definition["parameters"]["properties"]["thread"]
    assert thread == {}


def test_path_query_and_header_parameters_become_arguments() -> None:
    params = spec_tools()["get---history"].definition["parameters"]
    assert list(params["properties"]) == ["channel", "limit", "X-Trace"]
    assert params["required"] == ["channel", "X-Trace"]


def test_a_body_property_clashing_with_a_parameter_is_renamed() -> None:
    doc = {
        "openapi": "3.0.0",
        "servers": [{"url": "https://a.io"}],
        "paths": {
            "/items/{id}": {
                "put": {
                    "operationId": "put",
                    "parameters": [{"name": "id", "in": "path"}],
                    "requestBody": {
                        "content": {
                            "application/json": {
                                "schema": {"type": "object", "properties": {"id": {}, "n": {}}}
                            }
                        }
                    },
                }
            }
        },
    }
    params = parse_openapi(doc).operations[0].parameters
    assert list(params["properties"]) == ["id", "body_id", "n"]


def test_a_non_object_body_is_one_argument() -> None:
    doc = {
        "openapi": "3.0.0",
        "servers": [{"url": "https://a.io"}],
        "paths": {
            "/bulk": {
                "post": {
                    "operationId": "bulk",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"type": "array"}}},
                    },
                }
            }
        },
    }
    params = parse_openapi(doc).operations[0].parameters
    assert params == {
        "type": "object",
        "properties": {"body": {"type": "array"}},
        "required": ["body"],
    }


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "empty"),
        ("[1, 2]", "not a mapping"),
        ("openapi: [unclosed", "neither JSON nor YAML"),
        ('{"swagger": "2.0", "paths": {}}', "Swagger 2.0"),
        ('{"openapi": "3.0.0", "servers": [{"url": "https://a.io"}]}', "'paths' is missing"),
        ('{"openapi": "3.0.0", "paths": {"/a": {"get": {}}}}', "names no server"),
        ('{"openapi": "3.0.0", "servers": [{"url": "/v1"}], "paths": {}}', "relative"),
        ('{"openapi": "3.0.0", "servers": [{"url": "ftp://a.io"}], "paths": {}}', "http(s)"),
        (b"\xff\xfe\x00", "not UTF-8"),
    ],
)
def test_bad_documents_give_a_clear_error(text: str | bytes, problem: str) -> None:
    with pytest.raises(OpenApiError) as info:
        parse_openapi(text, source="doc.json")
    assert problem in str(info.value)
    assert str(info.value).startswith("doc.json")


def test_duplicate_operation_ids_are_refused() -> None:
    doc = {
        "openapi": "3.0.0",
        "servers": [{"url": "https://a.io"}],
        "paths": {"/a": {"get": {"operationId": "x"}}, "/b": {"get": {"operationId": "x"}}},
    }
    with pytest.raises(OpenApiError, match="used by both GET /a and GET /b"):
        parse_openapi(doc)


def test_relative_server_resolves_against_the_document_url() -> None:
    doc = json.dumps(
        {"openapi": "3.0.0", "servers": [{"url": "/v1"}], "paths": {"/a": {"get": {}}}}
    )
    spec = parse_openapi(doc, base_url="https://api.example.com/openapi.json")
    assert spec.server_url == "https://api.example.com/v1"


def test_load_action_tools_skips_documents_that_no_longer_parse() -> None:
    tools, problems = load_action_tools([("good.json", SLACK), ("bad.json", {"openapi": "2"})])
    assert len(tools) == 2
    assert len(problems) == 1 and problems[0].startswith("bad.json")


# --- calling ------------------------------------------------------------------------------


def recording_client(
    status: int = 200, body: str = '{"ok": true}'
) -> tuple[httpx.AsyncClient, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, text=body)

    return httpx.AsyncClient(transport=httpx.MockTransport(handler)), seen


async def test_call_sends_json_body() -> None:
    client, seen = recording_client()
    tool = spec_tools(client=client)["chat.postMessage"]
    result = await tool.call({"channel": "C1", "text": "hi"})
    assert result.is_error is False
    assert result.output == '{"ok": true}'
    assert seen[0].method == "POST"
    assert str(seen[0].url) == "https://slack.com/api/chat.postMessage"
    assert json.loads(seen[0].content) == {"channel": "C1", "text": "hi"}


async def test_call_fills_path_query_and_header() -> None:
    client, seen = recording_client()
    tool = spec_tools(client=client)["get---history"]
    await tool.call({"channel": "a/b c", "limit": 5, "X-Trace": "t1"})
    assert str(seen[0].url) == "https://slack.com/api/channels/a%2Fb%20c/history?limit=5"
    assert seen[0].headers["X-Trace"] == "t1"


async def test_http_error_becomes_an_error_result() -> None:
    client, _ = recording_client(status=404, body="channel_not_found")
    result = await spec_tools(client=client)["chat.postMessage"].call({"channel": "x", "text": "y"})
    assert result.is_error is True
    assert "HTTP 404" in result.output and "channel_not_found" in result.output
    assert "POST https://slack.com/api/chat.postMessage" in result.output


async def test_network_failure_becomes_an_error_result() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    client = httpx.AsyncClient(transport=httpx.MockTransport(refuse))
    result = await spec_tools(client=client)["chat.postMessage"].call({"channel": "x"})
    assert result.is_error is True
    assert "ConnectError" in result.output


async def test_missing_path_argument_is_an_error_result() -> None:
    client, seen = recording_client()
    result = await spec_tools(client=client)["get---history"].call({"X-Trace": "t"})
    assert result.is_error is True and "channel" in result.output
    assert seen == []


async def test_unknown_argument_is_an_error_result() -> None:
    client, seen = recording_client()
    result = await spec_tools(client=client)["chat.postMessage"].call({"colour": "red"})
    assert result.is_error is True and "colour" in result.output
    assert seen == []


async def test_long_responses_are_cut() -> None:
    client, _ = recording_client(body="x" * 50_000)
    result = await spec_tools(client=client)["chat.postMessage"].call({})
    assert len(result.output) < 21_000 and "cut at" in result.output


# --- fetching -----------------------------------------------------------------------------


async def test_fetch_openapi_parses_the_downloaded_document() -> None:
    def serve(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text=YAML_DOC)

    client = httpx.AsyncClient(transport=httpx.MockTransport(serve))
    spec = await fetch_openapi("https://pets.example/openapi.yaml", client=client)
    assert [op.operation_id for op in spec.operations] == ["get_pets"]


async def test_fetch_openapi_reports_http_errors() -> None:
    client = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(404)))
    with pytest.raises(OpenApiError, match="HTTP 404"):
        await fetch_openapi("https://pets.example/missing.json", client=client)


async def test_fetch_openapi_refuses_non_http_urls() -> None:
    with pytest.raises(OpenApiError, match="not an http"):
        await fetch_openapi("file:///etc/passwd")


# --- the server's own network is off limits --------------------------------------------------


class LoopbackApi:
    """A real HTTP server on 127.0.0.1: an OpenAPI document, an API (GET answers a list,
    POST records the JSON body it got), and an endless body."""

    ENDLESS_CHUNK = b"x" * 65536
    ENDLESS_TOTAL = 64 * 1024 * 1024

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.bodies: list[Any] = []
        self.endless_sent = 0
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                api.paths.append(self.path)
                if self.path == "/endless.json":
                    self._endless()
                    return
                if self.path == "/openapi.json":
                    body = json.dumps(api.document).encode()
                else:
                    body = b'[{"name": "Rex"}]'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                api.paths.append(self.path)
                size = int(self.headers.get("Content-Length") or 0)
                api.bodies.append(json.loads(self.rfile.read(size) or b"null"))
                body = b'{"id": 7}'
                self.send_response(201)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _endless(self) -> None:
                # No Content-Length: the size is only learnt by reading.
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                try:
                    while api.endless_sent < LoopbackApi.ENDLESS_TOTAL:
                        self.wfile.write(LoopbackApi.ENDLESS_CHUNK)
                        api.endless_sent += len(LoopbackApi.ENDLESS_CHUNK)
                except OSError:
                    pass  # the client hung up: what the cap is for
                self.close_connection = True

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.document = {
            "openapi": "3.0.3",
            "info": {"title": "Pets", "version": "1"},
            "servers": [{"url": f"{self.base}/v1"}],
            "paths": {"/pets": {"get": {"operationId": "listPets"}}},
        }


@pytest.fixture
def loopback_api() -> Iterator[LoopbackApi]:
    api = LoopbackApi()
    threading.Thread(target=api.server.serve_forever, daemon=True).start()
    yield api
    api.server.shutdown()
    api.server.server_close()


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "a loopback address"),
        ("::1", "a loopback address"),
        ("::ffff:127.0.0.1", "a loopback address"),
        ("169.254.169.254", "a link-local address"),
        ("10.1.2.3", "a private-network address"),
        ("192.168.0.10", "a private-network address"),
        ("fd00::1", "a private-network address"),
        ("0.0.0.0", "an unspecified address"),
        ("224.0.0.1", "a multicast address"),
        ("240.0.0.1", "a reserved address"),
        ("100.64.0.1", "an address that is not publicly routable"),
        ("93.184.216.34", None),
        ("2606:4700::1111", None),
    ],
)
def test_blocked_reason_names_why_an_address_is_off_limits(
    address: str, reason: str | None
) -> None:
    assert blocked_reason(ipaddress.ip_address(address)) == reason


async def test_import_from_a_loopback_url_is_refused_by_default(loopback_api: LoopbackApi) -> None:
    with pytest.raises(OpenApiError) as caught:
        await fetch_openapi(f"{loopback_api.base}/openapi.json")
    message = str(caught.value)
    assert "refused to connect to 127.0.0.1: it is a loopback address" in message
    assert "actions.allow_private_networks: true" in message
    assert loopback_api.paths == []


async def test_a_host_name_is_checked_by_every_address_it_resolves_to(
    loopback_api: LoopbackApi,
) -> None:
    url = loopback_api.base.replace("127.0.0.1", "localhost") + "/openapi.json"
    with pytest.raises(OpenApiError, match="refused to connect to localhost: it resolves to"):
        await fetch_openapi(url)
    assert loopback_api.paths == []


async def test_import_from_a_loopback_url_works_when_the_config_allows_it(
    loopback_api: LoopbackApi,
) -> None:
    spec = await fetch_openapi(f"{loopback_api.base}/openapi.json", allow_private_networks=True)
    assert [op.operation_id for op in spec.operations] == ["listPets"]


async def test_import_stops_reading_at_the_document_cap(loopback_api: LoopbackApi) -> None:
    with pytest.raises(OpenApiError, match="larger than 5 MiB"):
        await fetch_openapi(f"{loopback_api.base}/endless.json", allow_private_networks=True)
    # The download stopped near the cap instead of taking the whole body into memory.
    assert loopback_api.endless_sent < LoopbackApi.ENDLESS_TOTAL // 2


async def test_an_imported_action_may_not_call_a_private_server_by_default(
    loopback_api: LoopbackApi,
) -> None:
    (tool,) = build_action_tools(parse_openapi(loopback_api.document, source="pets.json"))
    result = await tool.call({})
    assert result.is_error is True
    assert "refused to connect to 127.0.0.1: it is a loopback address" in result.output
    assert loopback_api.paths == []


async def test_an_imported_action_calls_a_private_server_when_allowed(
    loopback_api: LoopbackApi,
) -> None:
    spec = parse_openapi(loopback_api.document, source="pets.json")
    (tool,) = build_action_tools(spec, allow_private_networks=True)
    result = await tool.call({})
    assert (result.is_error, result.output) == (False, '[{"name": "Rex"}]')
    assert loopback_api.paths == ["/v1/pets"]


# --- an API's own `intent` field ----------------------------------------------------------


def helpdesk_document(base: str) -> dict[str, Any]:
    """Two operations on the loopback API: one whose body has its own `intent` field."""

    def post(operation_id: str, properties: dict[str, Any]) -> dict[str, Any]:
        schema = {"type": "object", "properties": properties, "required": list(properties)}
        return {
            "post": {
                "operationId": operation_id,
                "requestBody": {"content": {"application/json": {"schema": schema}}},
            }
        }

    return {
        "openapi": "3.0.3",
        "info": {"title": "Helpdesk", "version": "1"},
        "servers": [{"url": f"{base}/v1"}],
        "paths": {
            "/tickets": post(
                "createTicket",
                {
                    "intent": {"type": "string", "enum": ["billing", "support"]},
                    "text": {"type": "string"},
                },
            ),
            "/notes": post("addNote", {"text": {"type": "string"}}),
        },
    }


def helpdesk_tools(api: LoopbackApi) -> dict[str, ActionTool]:
    spec = parse_openapi(helpdesk_document(api.base), source="helpdesk.json")
    tools = build_action_tools(spec, allow_private_networks=True)
    return {tool.operation.operation_id: tool for tool in tools}


@pytest.mark.parametrize("intents", [True, False], ids=["intents-on", "intents-off"])
async def test_a_business_intent_field_reaches_the_api_unchanged(
    loopback_api: LoopbackApi, intents: bool
) -> None:
    ticket = helpdesk_tools(loopback_api)["createTicket"]
    provider = ScriptedProvider(
        [*call("c1", ticket.name, {"intent": "billing", "text": "Refund"}), end("tool_use")],
        [TextChunk("Filed."), end()],
    )
    options = {ticket.tool_id: {"describe_intent": intents}}
    events = await collect(make_run(provider, [ticket], tool_options=options))
    assert (settled(events, "c1").state, settled(events, "c1").output) == ("settled", '{"id": 7}')
    assert loopback_api.bodies == [{"intent": "billing", "text": "Refund"}]
    # The field stays the API's own: no label is offered in its place or shown on the card.
    (offered,) = provider.requests[0].tools
    assert not is_intent_label_property(offered["parameters"]["properties"]["intent"])
    assert of(events, CallStarted)[0].label_bearing is False


async def test_an_actions_intent_label_is_shown_and_never_sent_to_the_api(
    loopback_api: LoopbackApi,
) -> None:
    note = helpdesk_tools(loopback_api)["addNote"]
    provider = ScriptedProvider(
        [*call("c1", note.name, {"intent": "Noting the refund", "text": "Refund"}), end()],
    )
    options = {note.tool_id: {"describe_intent": True}}
    events = await collect(make_run(provider, [note], tool_options=options))
    assert settled(events, "c1").state == "settled"
    assert loopback_api.bodies == [{"text": "Refund"}]
    assert of(events, CallStarted)[0].label_bearing is True
