"""OpenAPI documents that are small on disk and huge once expanded, for the import tests."""

from __future__ import annotations

from typing import Any

__all__ = ["alias_bomb", "ref_bomb"]


def ref_bomb(levels: int, fan_out: int = 10) -> dict[str, Any]:
    """`L{k}` has `fan_out` properties that all name `L{k-1}`: each level multiplies, so the
    one operation's request body inlines about `3 * fan_out ** (levels - 1)` nodes."""
    schemas: dict[str, Any] = {"L0": {"type": "string"}}
    for level in range(1, levels + 1):
        ref = {"$ref": f"#/components/schemas/L{level - 1}"}
        schemas[f"L{level}"] = {
            "type": "object",
            "properties": {f"p{i}": dict(ref) for i in range(fan_out)},
        }
    schema = {"$ref": f"#/components/schemas/L{levels}"}
    body = {"content": {"application/json": {"schema": schema}}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "Bomb"},
        "servers": [{"url": "https://bomb.example"}],
        "paths": {"/x": {"post": {"operationId": "explode", "requestBody": body}}},
        "components": {"schemas": schemas},
    }


def alias_bomb(levels: int) -> str:
    """The "billion laughs" in YAML: each anchored list repeats the one before ten times."""
    lines = [
        "openapi: 3.0.0",
        "info: {title: Laughs}",
        "servers: [{url: 'https://laughs.example'}]",
        "paths:",
        "  /x:",
        "    get: {operationId: x}",
        "x-lol0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]",
    ]
    for level in range(1, levels + 1):
        lines.append(f"x-lol{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"
