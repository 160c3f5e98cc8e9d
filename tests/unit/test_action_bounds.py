"""Bounded OpenAPI imports (agent.tools.actions): shared `$ref`s and YAML aliases that
multiply are refused with the limit named, legitimate sharing still imports, and a stored
document is parsed once per content."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from intent_ui.agent.tools import actions
from intent_ui.agent.tools.actions import (
    MAX_ALIAS_NODES,
    MAX_INLINED_NODES,
    OpenApiError,
    load_action_tools,
    parse_openapi,
)
from tests.support.openapi_bombs import alias_bomb, ref_bomb

SERVER = [{"url": "https://pets.example"}]


@pytest.mark.parametrize(
    ("text", "under", "source", "refusal"),
    [
        # About 3 KB standing for over two million nodes.
        (
            json.dumps(ref_bomb(levels=6)),
            4096,
            "bomb.json",
            f"bomb.json: the OpenAPI document expands to more than {MAX_INLINED_NODES:,} "
            "schema nodes through shared $refs",
        ),
        # Under 1 KB standing for ten billion nodes.
        (
            alias_bomb(levels=9),
            1024,
            "laughs.yaml",
            f"laughs.yaml: the YAML document expands to more than {MAX_ALIAS_NODES:,} nodes "
            "through aliases",
        ),
    ],
    ids=["shared-refs", "yaml-aliases"],
)
def test_a_document_that_multiplies_is_refused_naming_the_limit_and_the_document(
    text: str, under: int, source: str, refusal: str
) -> None:
    assert len(text) < under
    with pytest.raises(OpenApiError) as info:
        parse_openapi(text, source=source)
    assert str(info.value).startswith(refusal)


@pytest.mark.timeout(60)  # a hang guard: expanded in full, this would never finish
def test_the_refusal_comes_after_the_budget_not_after_the_expansion() -> None:
    with pytest.raises(OpenApiError, match="through shared \\$refs"):
        parse_openapi(ref_bomb(levels=15), source="bomb.json")  # 10**15 nodes in full


def test_the_budget_is_shared_by_all_operations() -> None:
    # Each operation alone stays under the budget; together they pass it.
    document = ref_bomb(levels=4)  # one body inlines about 23,000 nodes
    body = document["paths"]["/x"]["post"]["requestBody"]
    document["paths"] = {
        f"/x{i}": {"post": {"operationId": f"op{i}", "requestBody": body}} for i in range(5)
    }
    with pytest.raises(OpenApiError, match="through shared \\$refs"):
        parse_openapi(document, source="many.json")


def test_a_document_that_shares_schemas_within_the_budget_imports() -> None:
    document = ref_bomb(levels=4)
    [operation] = parse_openapi(document, source="shared.json").operations
    level3 = operation.parameters["properties"]["p0"]
    assert level3["properties"]["p9"]["properties"]["p5"] == {
        "type": "object",
        "properties": {f"p{i}": {"type": "string"} for i in range(10)},
    }


def test_many_operations_sharing_one_schema_import() -> None:
    pet = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "owner": {"$ref": "#/components/schemas/Owner"},
        },
    }
    owner = {"type": "object", "properties": {"email": {"type": "string"}}}
    body = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}
    document = {
        "openapi": "3.0.0",
        "servers": SERVER,
        "paths": {
            f"/pets{i}": {"put": {"operationId": f"put{i}", "requestBody": body}}
            for i in range(200)
        },
        "components": {"schemas": {"Pet": pet, "Owner": owner}},
    }
    spec = parse_openapi(document, source="pets.json")
    assert len(spec.operations) == 200
    assert spec.operations[-1].parameters["properties"]["owner"] == owner


def test_schemas_of_media_types_the_actions_never_send_do_not_count() -> None:
    document = ref_bomb(levels=6)
    schema = {"$ref": "#/components/schemas/L6"}
    document["paths"]["/x"]["post"]["requestBody"] = {
        "content": {
            "application/xml": {"schema": schema},
            "application/json": {"schema": {"type": "object", "properties": {"n": {}}}},
        }
    }
    [operation] = parse_openapi(document, source="xml.json").operations
    assert operation.parameters["properties"] == {"n": {}}


# --- YAML aliases -----------------------------------------------------------------------------


def test_a_yaml_alias_inside_its_own_anchor_is_refused() -> None:
    text = (
        "openapi: 3.0.0\n"
        "servers: [{url: 'https://loop.example'}]\n"
        "paths:\n"
        "  /x:\n"
        "    post:\n"
        "      operationId: x\n"
        "      requestBody:\n"
        "        content:\n"
        "          application/json:\n"
        "            schema: &node {type: object, properties: {child: *node}}\n"
    )
    with pytest.raises(OpenApiError) as info:
        parse_openapi(text, source="loop.yaml")
    assert str(info.value).startswith(
        "loop.yaml: the YAML node anchored at line 10 contains an alias to itself"
    )
    assert "use a $ref for a recursive schema" in str(info.value)


def test_yaml_that_reuses_an_anchor_a_few_times_imports() -> None:
    text = (
        "openapi: 3.0.0\n"
        "servers: [{url: 'https://pets.example'}]\n"
        "x-id: &id {name: id, in: path, required: true, schema: {type: string}}\n"
        "paths:\n"
        "  /pets/{id}:\n"
        "    get: {operationId: getPet, parameters: [*id]}\n"
        "    delete: {operationId: deletePet, parameters: [*id]}\n"
    )
    spec = parse_openapi(text, source="pets.yaml")
    assert [op.parameters["required"] for op in spec.operations] == [["id"], ["id"]]


def test_deeply_nested_json_is_refused_with_a_clear_error() -> None:
    text = '{"openapi": "3.0.0", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(OpenApiError, match=r"^deep\.json: the document is nested too deeply"):
        parse_openapi(text, source="deep.json")


# --- parsing once per content -----------------------------------------------------------------


def stored_text(title: str) -> str:
    """A stored document's JSON text, unique to this test run (the cache is per process)."""
    return json.dumps(
        {
            "openapi": "3.0.0",
            "info": {"title": f"{title} {uuid.uuid4()}"},
            "servers": [{"url": "https://cache.example"}],
            "paths": {"/a": {"get": {"operationId": "getA"}}},
        }
    )


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every source `parse_openapi` is asked to parse."""
    seen: list[str] = []
    real = actions.parse_openapi

    def counting(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("source", ""))
        return real(*args, **kwargs)

    monkeypatch.setattr(actions, "parse_openapi", counting)
    return seen


def test_a_stored_document_is_parsed_once_per_content(parses: list[str]) -> None:
    text = stored_text("Cache")
    first, _ = load_action_tools([("cache.json", text)])
    second, _ = load_action_tools([("cache.json", text)])
    assert parses == ["cache.json"]
    assert (
        [t.tool_id for t in second] == [t.tool_id for t in first] == ["getA_action_cache---example"]
    )
    load_action_tools([("cache.json", stored_text("Changed"))])
    assert parses == ["cache.json", "cache.json"]


def test_a_stored_document_that_no_longer_imports_is_not_parsed_again(parses: list[str]) -> None:
    text = json.dumps({**ref_bomb(levels=6), "info": {"title": str(uuid.uuid4())}})
    for _ in range(2):
        tools, problems = load_action_tools([("bomb.json", text)])
        assert tools == [] and "through shared $refs" in problems[0]
    assert parses == ["bomb.json"]
