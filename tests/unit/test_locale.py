from __future__ import annotations

import re

import pytest

from intent_ui.core.locale import (
    CATALOG,
    SUPPORTED_LANGUAGES,
    Catalog,
    negotiate_language,
    translate,
)


def _base_keys(lang: str) -> set[str]:
    return {key for key in CATALOG._messages[lang] if "#" not in key}


def test_supported_languages_start_with_english() -> None:
    assert SUPPORTED_LANGUAGES[0] == "en"
    assert {"en", "es", "ja"} <= set(SUPPORTED_LANGUAGES)


@pytest.mark.parametrize("lang", ["es", "ja"])
def test_every_english_key_is_translated(lang: str) -> None:
    assert _base_keys(lang) == _base_keys("en")


@pytest.mark.parametrize("lang", ["es", "ja"])
def test_every_translation_keeps_the_english_placeholders(lang: str) -> None:
    # A translation that drops `{tool}` or misspells `{tokens}` would show the wrong
    # sentence (or a literal placeholder) in that language only.
    placeholders = re.compile(r"\{[A-Za-z_]+\}")
    english = CATALOG._messages["en"]
    for key, text in CATALOG._messages[lang].items():
        assert set(placeholders.findall(text)) == set(placeholders.findall(english[key])), key


def test_the_builder_speaks_each_language() -> None:
    assert translate("builder.save", "es") == "Guardar"
    assert translate("builder.imported", "es", n=1, title="Slack") == (
        "Se importó 1 acción de Slack."
    )
    assert translate("builder.edit_agent", "ja", name="Reviewer") == "Reviewer を編集"
    assert translate("builder.agent_tools", "en", n=1) == "1 tool"


def test_default_card_labels_in_english() -> None:
    running = translate("card.running", tool="search_code")
    ran = translate("card.ran", tool="search_code")
    assert running == "Running search_code"
    assert translate("card.in_server", label=ran, server="github") == "Ran search_code in github"
    assert translate("card.failed", label="Reading x") == "Failed: Reading x"
    assert translate("card.cancelled", label="Reading x") == "Cancelled: Reading x"
    assert translate("card.background", label="Reading x") == "Reading x · in background"


def test_group_counts_pick_the_singular_for_one() -> None:
    assert translate("group.used", n=2) == "Used 2 tools"
    assert translate("group.used", n=1) == "Used 1 tool"
    assert translate("group.used", n=0) == "Used 0 tools"
    assert translate("group.agents_ran", n=1) == "Ran 1 agent"
    assert translate("group.questions_asking", n=3) == "Asking 3 questions"


def test_a_boolean_is_not_the_singular() -> None:
    assert translate("group.used", n=True) == "Used True tools"


def test_server_suffix_uses_an_em_dash() -> None:
    assert translate("group.server_suffix", server="github") == " — github"


def test_spanish_framings() -> None:
    assert translate("card.ran", "es", tool="search_code") == "Se ejecutó search_code"
    assert translate("card.failed", "es", label="Buscando") == "Falló: Buscando"
    assert translate("group.used", "es", n=2) == "Se usaron 2 herramientas"
    assert translate("group.used", "es", n=1) == "Se usó 1 herramienta"
    assert translate("ui.send", "es") == "Enviar"


def test_japanese_framings_have_no_plural_forms() -> None:
    assert translate("card.running", "ja", tool="search_code") == "search_code を実行中"
    assert translate("group.used", "ja", n=1) == "1 個のツールを使用しました"
    assert translate("group.used", "ja", n=2) == "2 個のツールを使用しました"
    assert translate("card.cancelled", "ja", label="検索中") == "キャンセル済み: 検索中"


def test_region_and_case_in_the_language_code_are_understood() -> None:
    assert translate("ui.stop", "ES") == "Detener"
    assert translate("ui.stop", "es_MX") == "Detener"
    assert translate("ui.stop", "ja-JP") == "停止"


def test_unknown_language_falls_back_to_english() -> None:
    assert translate("ui.send", "fr") == "Send"
    assert translate("ui.send", "") == "Send"


def test_key_missing_in_a_language_falls_back_to_english() -> None:
    catalog = Catalog({"en": {"a": "Alpha {x}", "b#one": "One b", "b": "{n} bs"}, "es": {}})
    assert catalog.translate("a", "es", x=1) == "Alpha 1"
    assert catalog.translate("b", "es", n=1) == "One b"


def test_unknown_key_is_shown_as_the_key() -> None:
    assert translate("no.such.key", "ja") == "no.such.key"


def test_missing_parameter_keeps_the_placeholder() -> None:
    assert translate("card.running") == "Running {tool}"


def test_parameter_values_are_never_templates() -> None:
    label = translate("card.failed", label="Reading {{tool0turn0}} and {tool}", tool="x")
    assert label == "Failed: Reading {{tool0turn0}} and {tool}"


def test_translation_with_stray_braces_does_not_raise() -> None:
    catalog = Catalog({"en": {"k": "odd { brace } {n"}})
    assert catalog.translate("k", n=2) == "odd { brace } {n"


@pytest.mark.parametrize(
    ("preference", "expected"),
    [
        ("es-MX", "es"),
        ("ja-JP,ja;q=0.9", "ja"),
        ("ja-JP", "ja"),
        ("en-US,en;q=0.9", "en"),
        ("fr-CA,fr;q=0.9,es;q=0.5", "es"),
        ("de;q=0.9,ja;q=0.95", "ja"),
        ("es;q=0,ja;q=0.1", "ja"),
        ("*", "en"),
        ("fr", "en"),
        ("", "en"),
        (None, "en"),
        (";;;,,,q=", "en"),
        ("es;q=abc,ja", "ja"),
        ("es;q=nan,ja;q=0.2", "ja"),
        ("  ES-es ", "es"),
    ],
)
def test_negotiate_language(preference: str | None, expected: str) -> None:
    assert negotiate_language(preference) == expected


def test_negotiate_language_keeps_header_order_on_equal_quality() -> None:
    assert negotiate_language("ja,es") == "ja"
    assert negotiate_language("es,ja") == "es"
