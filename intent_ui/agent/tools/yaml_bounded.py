"""YAML decoding that refuses alias bombs ("billion laughs") and self-containing nodes.

An alias (`*name`) repeats the node anchored as `&name` without copying it, so a few
hundred bytes of YAML can stand for billions of nodes. PyYAML builds such a document
quickly, as shared objects, but everything that walks the result afterwards (inlining a
schema, encoding the document as JSON for the store, sending a tool schema to a model) does
the whole expansion. So the expansion is counted first, on the composed node graph and
before anything is constructed: in time linear in the nodes actually written, whatever
they expand to. A node that contains an alias to itself expands for ever and is refused
too.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

__all__ = ["AliasCycleError", "AliasExpansionError", "safe_load_bounded"]


class AliasExpansionError(yaml.YAMLError):
    """The document expands to more than `limit` extra nodes through aliases."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"aliases expand the document by more than {limit} nodes")
        self.limit = limit


class AliasCycleError(yaml.YAMLError):
    """A node contains an alias to itself; `line` (1-based) is where it is anchored."""

    def __init__(self, line: int) -> None:
        super().__init__(f"the node anchored at line {line} contains an alias to itself")
        self.line = line


def safe_load_bounded(text: str, *, max_alias_nodes: int) -> Any:
    """`yaml.safe_load(text)`, refusing a document whose aliases add more than
    `max_alias_nodes` nodes to it (`AliasExpansionError`) or form a cycle
    (`AliasCycleError`). Other problems raise PyYAML's own errors, as `safe_load` does."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node, max_alias_nodes)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


_OPEN = -1


def _check_expansion(root: Node, limit: int) -> None:
    """Count the nodes `root` expands to (every alias repeating its anchor's whole subtree)
    against the nodes written, without expanding anything: one pass over the graph with
    each node's expanded size remembered."""
    sizes: dict[int, int] = {}
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            sizes[key] = 1 + sum(sizes[id(child)] for child in _children(node))
            continue
        seen = sizes.get(key)
        if seen == _OPEN:  # still being counted, so it is its own ancestor
            raise AliasCycleError(node.start_mark.line + 1)
        if seen is not None:
            continue
        sizes[key] = _OPEN
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node))
    if sizes[id(root)] - len(sizes) > limit:
        raise AliasExpansionError(limit)
