"""Tests for `intent_ui.core.streaming`: the partial-JSON intent reader."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from intent_ui.core.streaming import IntentStream, StreamingIntent, read_streaming_intent

REPLACEMENT = "\ufffd"


def partial(text: str) -> StreamingIntent:
    return StreamingIntent(text, False)


def done(text: str) -> StreamingIntent:
    return StreamingIntent(text, True)


def feed_all(chunks: list[str]) -> list[StreamingIntent | None]:
    stream = IntentStream()
    return [stream.feed(chunk) for chunk in chunks]


# --- the fragment table: every edge of a partial argument text ----------------------------

FRAGMENT_TABLE: list[tuple[str, StreamingIntent | None]] = [
    ("", None),
    ("{", None),
    ('{"in', None),
    ('{"intent"', None),
    ('{"intent":"', partial("")),
    ('{"intent":"Sea', partial("Sea")),
    ('{"intent":"Say \\"hi', partial('Say "hi')),
    ('{"intent":"C:\\\\Users', partial("C:\\Users")),
    ('{"intent":"line one\\nline', partial("line one\nline")),
    ('{"intent":"Find \\uD83D', partial("Find ")),
    ('{"intent":"Searching for OAuth handling"', done("Searching for OAuth handling")),
    ('{"intent":"Searching","query":"oauth"}', done("Searching")),
    ('{"query":"oauth","intent":"Searching"}', None),
    ("not json at all", None),
]


@pytest.mark.parametrize(("fragment", "expected"), FRAGMENT_TABLE)
def test_fragment_table(fragment: str, expected: StreamingIntent | None) -> None:
    assert read_streaming_intent(fragment) == expected


@pytest.mark.parametrize(("fragment", "expected"), FRAGMENT_TABLE)
def test_fragment_table_char_by_char(fragment: str, expected: StreamingIntent | None) -> None:
    results = feed_all(list(fragment))
    assert (results[-1] if results else None) == expected


# --- mapping and non-string args -----------------------------------------------------------


def test_mapping_with_intent_first_is_complete() -> None:
    assert read_streaming_intent({"intent": "Reading config", "path": "a"}) == done(
        "Reading config"
    )


def test_mapping_with_intent_not_first_is_none() -> None:
    assert read_streaming_intent({"path": "a", "intent": "Reading config"}) is None


def test_mapping_with_non_string_intent_is_none() -> None:
    assert read_streaming_intent({"intent": 42}) is None


def test_empty_mapping_is_none() -> None:
    assert read_streaming_intent({}) is None


def test_none_args_is_none() -> None:
    assert read_streaming_intent(None) is None


def test_unsupported_type_is_none() -> None:
    assert read_streaming_intent(b'{"intent":"x"}') is None  # type: ignore[arg-type]


class ExplodingMapping(Mapping[str, object]):
    def __getitem__(self, key: str) -> object:
        raise RuntimeError("boom")

    def __iter__(self) -> Iterator[str]:
        raise RuntimeError("boom")

    def __len__(self) -> int:
        return 1


def test_hostile_mapping_does_not_raise() -> None:
    assert read_streaming_intent(ExplodingMapping()) is None


# --- first key only --------------------------------------------------------------------------


def test_key_that_starts_with_intent_is_not_intent() -> None:
    assert read_streaming_intent('{"intents":"plural"}') is None


def test_key_prefix_of_intent_is_not_intent() -> None:
    assert read_streaming_intent('{"inten":"short"}') is None


def test_empty_object_is_none() -> None:
    assert read_streaming_intent("{}") is None


@pytest.mark.parametrize("value", ["5", "null", "true", '["a"]', '{"text":"a"}'])
def test_first_value_not_a_string_is_none(value: str) -> None:
    assert read_streaming_intent('{"intent":' + value + "}") is None


def test_business_intent_later_in_object_is_none() -> None:
    assert read_streaming_intent('{"action":"buy","intent":"purchase"}') is None


def test_nested_intent_is_none() -> None:
    assert read_streaming_intent('{"meta":{"intent":"x"}}') is None


def test_top_level_array_is_none() -> None:
    assert read_streaming_intent('[{"intent":"x"}]') is None


def test_escaped_key_spelling_intent_counts() -> None:
    assert read_streaming_intent('{"\\u0069ntent":"Reading"}') == done("Reading")


def test_key_split_across_chunks() -> None:
    assert feed_all(['{"in', 'tent":"', "Sea", "rch"]) == [
        None,
        partial(""),
        partial("Sea"),
        partial("Search"),
    ]


# --- whitespace -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{ "intent" : "Reading" }',
        '\n{\n\t"intent"\n:\n\t"Reading"\n}',
        '  \r\n{"intent":   "Reading"}',
        '\ufeff{"intent":"Reading"}',
    ],
)
def test_whitespace_variants(text: str) -> None:
    assert read_streaming_intent(text) == done("Reading")


# --- escapes -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("escape", "decoded"),
    [
        ('\\"', '"'),
        ("\\\\", "\\"),
        ("\\/", "/"),
        ("\\b", "\b"),
        ("\\f", "\f"),
        ("\\n", "\n"),
        ("\\r", "\r"),
        ("\\t", "\t"),
        ("\\u00e9", "é"),
        ("\\u4E2D", "中"),
        ("\\ud83d\\ude00", "😀"),
    ],
)
def test_every_json_escape_decodes(escape: str, decoded: str) -> None:
    assert read_streaming_intent('{"intent":"a' + escape + 'b"}') == done("a" + decoded + "b")


def test_dangling_backslash_is_held_back() -> None:
    assert feed_all(['{"intent":"a\\', 'nb"']) == [partial("a"), done("a\nb")]


def test_partial_unicode_escape_is_held_back() -> None:
    assert feed_all(['{"intent":"caf\\u00', 'e9"']) == [partial("caf"), done("café")]


def test_lone_high_surrogate_at_edge_is_held_back() -> None:
    assert feed_all(['{"intent":"hi \\ud83d', "\\ude00", '"']) == [
        partial("hi "),
        partial("hi 😀"),
        done("hi 😀"),
    ]


def test_high_surrogate_with_half_of_low_escape_is_held_back() -> None:
    assert feed_all(['{"intent":"x\\ud83d\\', "u", "de", "00"]) == [
        partial("x"),
        partial("x"),
        partial("x"),
        partial("x😀"),
    ]


def test_surrogate_pair_is_one_character() -> None:
    result = read_streaming_intent('{"intent":"\\ud83d\\ude00"}')
    assert result is not None
    assert len(result.text) == 1


def test_invalid_escape_becomes_replacement_then_the_character() -> None:
    assert read_streaming_intent('{"intent":"a\\xb"}') == done("a" + REPLACEMENT + "xb")


def test_invalid_hex_digit_becomes_replacement_then_the_rest() -> None:
    assert read_streaming_intent('{"intent":"a\\u12G4"}') == done("a" + REPLACEMENT + "G4")


def test_unicode_escape_cut_by_closing_quote() -> None:
    assert read_streaming_intent('{"intent":"a\\u12"}') == done("a" + REPLACEMENT)


def test_lone_low_surrogate_becomes_replacement() -> None:
    assert read_streaming_intent('{"intent":"a\\udc00b"}') == done("a" + REPLACEMENT + "b")


def test_high_surrogate_then_plain_text_becomes_replacement() -> None:
    assert read_streaming_intent('{"intent":"a\\ud83db"}') == done("a" + REPLACEMENT + "b")


def test_high_surrogate_then_non_low_escape() -> None:
    assert read_streaming_intent('{"intent":"a\\ud83d\\u0041"}') == done("a" + REPLACEMENT + "A")


def test_high_surrogate_then_other_escape() -> None:
    assert read_streaming_intent('{"intent":"a\\ud83d\\n"}') == done("a" + REPLACEMENT + "\n")


def test_two_high_surrogates_then_low() -> None:
    text = '{"intent":"\\ud83d\\ud83d\\ude00"}'
    assert read_streaming_intent(text) == done(REPLACEMENT + "😀")


def test_high_surrogate_then_closing_quote() -> None:
    assert read_streaming_intent('{"intent":"a\\ud83d"}') == done("a" + REPLACEMENT)


def test_raw_control_character_is_kept() -> None:
    assert read_streaming_intent('{"intent":"a\tb"}') == done("a\tb")


def test_raw_non_ascii_is_kept() -> None:
    assert read_streaming_intent('{"intent":"Buscando 検索 😀"}') == done("Buscando 検索 😀")


# --- IntentStream lifecycle -----------------------------------------------------------------


def test_current_tracks_latest_feed() -> None:
    stream = IntentStream()
    assert stream.current is None
    stream.feed('{"intent":"Rea')
    assert stream.current == partial("Rea")


def test_later_chunks_are_ignored_once_complete() -> None:
    stream = IntentStream()
    first = stream.feed('{"intent":"Reading"')
    assert stream.feed(',"content":"' + "x" * 10_000) is first
    assert stream.feed("garbage }}}") is first


def test_later_chunks_are_ignored_once_first_key_is_wrong() -> None:
    stream = IntentStream()
    assert stream.feed('{"path":"a"') is None
    assert stream.feed(',"intent":"late"}') is None


def test_empty_chunk_returns_current() -> None:
    stream = IntentStream()
    stream.feed('{"intent":"ab')
    assert stream.feed("") == partial("ab")


def test_flush_drops_held_back_escape() -> None:
    stream = IntentStream()
    stream.feed('{"intent":"ab\\ud83d')
    assert stream.flush() == partial("ab")


def test_flush_after_complete_returns_final_value() -> None:
    stream = IntentStream()
    stream.feed('{"intent":"ab"}')
    assert stream.flush() == done("ab")


def test_flush_without_intent_is_none() -> None:
    stream = IntentStream()
    stream.feed('{"in')
    assert stream.flush() is None


def test_feed_after_flush_is_ignored() -> None:
    stream = IntentStream()
    stream.feed('{"intent":"ab')
    stream.flush()
    assert stream.feed('cd"') == partial("ab")


def test_empty_intent_value_completes() -> None:
    assert read_streaming_intent('{"intent":""}') == done("")


# --- every split point ------------------------------------------------------------------------

SPLIT_FIXTURES = [
    '{"intent":"Searching for OAuth handling","query":"oauth"}',
    '{ "intent" : "Say \\"hi\\" to C:\\\\tmp\\n\\tnow" , "x": 1}',
    '{"intent":"Emoji \\ud83d\\ude00 and caf\\u00e9 \\/ done"}',
    '{"in\\u0074ent":"bad \\x escape \\u12G4 and \\udc00 low"}',
    '{"intent":"raw 😀 검색 text"}',
    '{"path":"a","intent":"reordered"}',
    '{"intents":"nope"}',
    '{"intent":"unterminated \\ud83d',
]


@pytest.mark.parametrize("fixture", SPLIT_FIXTURES)
def test_char_by_char_matches_whole(fixture: str) -> None:
    stream = IntentStream()
    for char in fixture:
        stream.feed(char)
    assert stream.current == read_streaming_intent(fixture)


@pytest.mark.parametrize("fixture", SPLIT_FIXTURES)
def test_every_two_way_split_matches_whole(fixture: str) -> None:
    expected = read_streaming_intent(fixture)
    for cut in range(len(fixture) + 1):
        stream = IntentStream()
        stream.feed(fixture[:cut])
        assert stream.feed(fixture[cut:]) == expected, cut


# --- properties -----------------------------------------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=20)
other_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)
# Pieces rather than characters so multi-code-point clusters (flags, ZWJ) show up too.
intent_text = st.lists(
    st.characters(codec="utf-8")
    | st.sampled_from(['"', "\\", "\n", "\t", "\u2028", "😀", "🇺🇸", "👩‍💻", "é", "\x00"]),
    max_size=40,
).map("".join)


@st.composite
def chunked_objects(draw: st.DrawFn, *, ensure_ascii: bool) -> tuple[str, list[str]]:
    intent = draw(intent_text)
    others = draw(st.dictionaries(st.text(max_size=8), other_values, max_size=4))
    obj = {"intent": intent, **{k: v for k, v in others.items() if k != "intent"}}
    text = json.dumps(obj, ensure_ascii=ensure_ascii)
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    bounds = [0, *cuts, len(text)]
    return text, [text[a:b] for a, b in itertools.pairwise(bounds)]


@pytest.mark.parametrize("ensure_ascii", [True, False])
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_property_any_chunking_grows_to_the_decoded_intent(
    ensure_ascii: bool, data: st.DataObject
) -> None:
    text, chunks = data.draw(chunked_objects(ensure_ascii=ensure_ascii))
    expected = json.loads(text)["intent"]
    stream = IntentStream()
    previous = ""
    for chunk in chunks:
        result = stream.feed(chunk)
        if result is None:
            assert previous == ""
            continue
        assert expected.startswith(result.text)
        assert result.text.startswith(previous)
        previous = result.text
    assert stream.flush() == done(expected)


@settings(max_examples=300, deadline=None)
@given(st.text(), st.lists(st.integers(0, 200), max_size=8))
def test_property_arbitrary_text_never_raises(text: str, cuts: list[int]) -> None:
    read_streaming_intent(text)
    stream = IntentStream()
    bounds = [0, *sorted(c % (len(text) + 1) for c in cuts), len(text)]
    for a, b in itertools.pairwise(bounds):
        result = stream.feed(text[a:b])
        assert result is None or isinstance(result.text, str)
    stream.flush()


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet='{}":\\u0123456789abcdefDdintet ,\n', max_size=60))
def test_property_json_ish_text_never_raises(text: str) -> None:
    stream = IntentStream()
    for char in text:
        stream.feed(char)
    assert stream.current == read_streaming_intent(text)
