from __future__ import annotations

from intent_ui.core.siblings import Sibling, sibling_suffixes
from tests.support.label_helpers import MCP, OAUTH

SAME = "Searching the codebase"


def sib(args: dict[str, object] | None, label: str = SAME, from_intent: bool = True) -> Sibling:
    return Sibling(label=label, from_intent=from_intent, arguments=args)


def test_identical_intents_are_told_apart_by_the_argument_that_differs() -> None:
    siblings = [
        sib({"intent": SAME, "repo": "acme/app", "query": "oauth"}),
        sib({"intent": SAME, "repo": "acme/app", "query": "mcp"}),
    ]
    assert sibling_suffixes(siblings) == [' · "oauth"', ' · "mcp"']


def test_distinct_labels_get_no_suffix() -> None:
    siblings = [sib({"query": "a"}, label=OAUTH), sib({"query": "b"}, label=MCP)]
    assert sibling_suffixes(siblings) == ["", ""]


def test_only_the_colliding_cards_are_suffixed() -> None:
    siblings = [
        sib({"query": "a"}),
        sib({"query": "x"}, label=OAUTH),
        sib({"query": "b"}),
    ]
    assert sibling_suffixes(siblings) == [' · "a"', "", ' · "b"']


def test_default_labels_are_not_intents_and_are_left_alone() -> None:
    siblings = [
        sib({"path": "a.py"}, label="Ran read_file", from_intent=False),
        sib({"path": "b.py"}, label="Ran read_file", from_intent=False),
    ]
    assert sibling_suffixes(siblings) == ["", ""]


def test_a_card_whose_arguments_do_not_parse_yet_waits_for_its_suffix() -> None:
    assert sibling_suffixes([sib({"query": "a"}), sib(None)]) == ["", ""]
    three = [sib({"query": "a"}), sib(None), sib({"query": "b"})]
    assert sibling_suffixes(three) == [' · "a"', "", ' · "b"']


def test_identical_arguments_give_nothing_to_tell_apart() -> None:
    assert sibling_suffixes([sib({"query": "a"}), sib({"query": "a"})]) == ["", ""]


def test_a_key_only_one_sibling_has_is_a_difference() -> None:
    siblings = [sib({"query": "a", "limit": 5}), sib({"query": "a"})]
    assert sibling_suffixes(siblings) == [' · "5"', ""]


def test_an_argument_named_intent_is_never_the_telling_one() -> None:
    siblings = [sib({"intent": "x", "query": "a"}), sib({"intent": "y", "query": "b"})]
    assert sibling_suffixes(siblings) == [' · "a"', ' · "b"']


def test_the_value_is_sanitised_and_capped() -> None:
    long = "oauth\n<b>" + "x" * 100
    siblings = [sib({"query": long}), sib({"query": ["a", 1]})]
    first, second = sibling_suffixes(siblings)
    assert "\n" not in first and first.endswith('…"')
    assert len(first) <= len(' · ""') + 40
    assert "<b>" in first  # shown as the characters written, never as markup
    assert second == ' · "["a", 1]"'


def test_the_suffix_is_translated() -> None:
    siblings = [sib({"query": "a"}), sib({"query": "b"})]
    assert sibling_suffixes(siblings, "ja") == ["・「a」", "・「b」"]
