"""The locale catalogue: every fallback, framing and chrome string the UI shows (§9.6).

Model-authored intents are never translated: the model already writes in the user's
language. Only what *we* write goes through here: the default card labels (`Ran {tool}`),
the error / cancel / background framings, the group counts and the chat page's chrome.

Lookup falls back step by step and never raises: the requested language (`es-MX`, then
its primary subtag `es`), then English, then the key itself (so a missing string is
visible, not a crash). A key may carry a singular form under `"{key}#one"`, chosen when
the `n` parameter is 1. A template whose parameters are missing keeps the placeholder
literally (`Ran {tool}`) rather than failing, and parameter *values* are never parsed as
templates, so a label containing `{{tool0turn0}}` stays literal (§10.6).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

__all__ = [
    "CATALOG",
    "DEFAULT_LANGUAGE",
    "SUPPORTED_LANGUAGES",
    "Catalog",
    "negotiate_language",
    "translate",
]

DEFAULT_LANGUAGE = "en"

_PLURAL_ONE = "#one"

_EN: dict[str, str] = {
    "card.running": "Running {tool}",
    "card.ran": "Ran {tool}",
    "card.in_server": "{label} in {server}",
    "card.failed": "Failed: {label}",
    "card.cancelled": "Cancelled: {label}",
    "card.background": "{label} · in background",
    "group.used": "Used {n} tools",
    "group.used#one": "Used 1 tool",
    "group.server_suffix": " — {server}",
    "group.agents_running": "Running {n} agents",
    "group.agents_running#one": "Running 1 agent",
    "group.agents_ran": "Ran {n} agents",
    "group.agents_ran#one": "Ran 1 agent",
    "group.questions_asking": "Asking {n} questions",
    "group.questions_asking#one": "Asking 1 question",
    "group.questions_asked": "Asked {n} questions",
    "group.questions_asked#one": "Asked 1 question",
    "group.aria": "{label}, {n} tools",
    "group.aria#one": "{label}, 1 tool",
    "live.running": "Running {tool}",
    "ui.send": "Send",
    "ui.stop": "Stop",
    "ui.new_chat": "New chat",
    "ui.placeholder": "Message the agent…",
    "ui.arguments": "Arguments",
    "ui.result": "Result",
    "ui.rename": "Rename",
    "ui.delete": "Delete",
    "ui.language": "Language",
    "ui.agents": "Agents",
}

_ES: dict[str, str] = {
    "card.running": "Ejecutando {tool}",
    "card.ran": "Se ejecutó {tool}",
    "card.in_server": "{label} en {server}",
    "card.failed": "Falló: {label}",
    "card.cancelled": "Cancelado: {label}",
    "card.background": "{label} · en segundo plano",
    "group.used": "Se usaron {n} herramientas",
    "group.used#one": "Se usó 1 herramienta",
    "group.server_suffix": " — {server}",
    "group.agents_running": "Ejecutando {n} agentes",
    "group.agents_running#one": "Ejecutando 1 agente",
    "group.agents_ran": "Se ejecutaron {n} agentes",
    "group.agents_ran#one": "Se ejecutó 1 agente",
    "group.questions_asking": "Haciendo {n} preguntas",
    "group.questions_asking#one": "Haciendo 1 pregunta",
    "group.questions_asked": "Se hicieron {n} preguntas",
    "group.questions_asked#one": "Se hizo 1 pregunta",
    "group.aria": "{label}, {n} herramientas",
    "group.aria#one": "{label}, 1 herramienta",
    "live.running": "Ejecutando {tool}",
    "ui.send": "Enviar",
    "ui.stop": "Detener",
    "ui.new_chat": "Nuevo chat",
    "ui.placeholder": "Escribe un mensaje al agente…",
    "ui.arguments": "Argumentos",
    "ui.result": "Resultado",
    "ui.rename": "Cambiar nombre",
    "ui.delete": "Eliminar",
    "ui.language": "Idioma",
    "ui.agents": "Agentes",
}

# Japanese has no grammatical plural, so no `#one` forms. The server is appended in
# full-width parentheses because "in {server}" has no natural postfix word order.
_JA: dict[str, str] = {
    "card.running": "{tool} を実行中",
    "card.ran": "{tool} を実行しました",
    "card.in_server": "{label}（{server}）",
    "card.failed": "失敗: {label}",
    "card.cancelled": "キャンセル済み: {label}",
    "card.background": "{label} · バックグラウンドで実行中",
    "group.used": "{n} 個のツールを使用しました",
    "group.server_suffix": " — {server}",
    "group.agents_running": "{n} 個のエージェントを実行中",
    "group.agents_ran": "{n} 個のエージェントを実行しました",
    "group.questions_asking": "{n} 件の質問をしています",
    "group.questions_asked": "{n} 件の質問をしました",
    "group.aria": "{label}、{n} 個のツール",
    "live.running": "{tool} を実行中",
    "ui.send": "送信",
    "ui.stop": "停止",
    "ui.new_chat": "新しいチャット",
    "ui.placeholder": "エージェントにメッセージを送信…",
    "ui.arguments": "引数",
    "ui.result": "結果",
    "ui.rename": "名前を変更",
    "ui.delete": "削除",
    "ui.language": "言語",
    "ui.agents": "エージェント",
}

_MESSAGES: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {
        "en": MappingProxyType(_EN),
        "es": MappingProxyType(_ES),
        "ja": MappingProxyType(_JA),
    }
)

SUPPORTED_LANGUAGES: tuple[str, ...] = tuple(_MESSAGES)
"""Language codes with a catalogue, the default (`en`) first."""

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class Catalog:
    """Message tables keyed by language code, with English as the fallback."""

    def __init__(self, messages: Mapping[str, Mapping[str, str]] = _MESSAGES) -> None:
        self._messages = messages

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(self._messages)

    def template(self, key: str, lang: str = DEFAULT_LANGUAGE, *, one: bool = False) -> str:
        """The raw template for `key` after fallback (the key itself when unknown)."""
        requested = _normalise(lang)
        for code in (requested, requested.split("-", 1)[0], DEFAULT_LANGUAGE):
            table = self._messages.get(code)
            if table is None:
                continue
            if one and (key + _PLURAL_ONE) in table:
                return table[key + _PLURAL_ONE]
            if key in table:
                return table[key]
        return key

    def translate(self, key: str, lang: str = DEFAULT_LANGUAGE, **params: object) -> str:
        """The message for `key` in `lang`, with `{name}` placeholders filled from params."""
        one = params.get("n") == 1 and not isinstance(params.get("n"), bool)
        return _fill(self.template(key, lang, one=one), params)


def _fill(template: str, params: Mapping[str, object]) -> str:
    # A hand-rolled substitution rather than str.format: unknown placeholders stay literal
    # and stray braces in a translation can never raise.
    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        return str(params[name]) if name in params else match.group(0)

    return _PLACEHOLDER.sub(replace, template)


def _normalise(lang: object) -> str:
    return lang.strip().lower().replace("_", "-") if isinstance(lang, str) else ""


CATALOG = Catalog()
"""The application's catalogue."""


def translate(key: str, lang: str = DEFAULT_LANGUAGE, **params: object) -> str:
    """`CATALOG.translate`: the message for `key` in `lang` (English fallback)."""
    return CATALOG.translate(key, lang, **params)


def negotiate_language(
    preference: str | None, supported: tuple[str, ...] = SUPPORTED_LANGUAGES
) -> str:
    """The best supported language for an `Accept-Language` header or `navigator.language`.

    `es-MX` -> `es`; `ja-JP,ja;q=0.9` -> `ja`; `fr-CA,es;q=0.5` -> `es`; anything
    unparsable, `*` or unsupported -> `en`. Ranges are tried by descending quality
    (ties keep header order); for each range an exact match wins over its primary subtag.
    """
    if not isinstance(preference, str) or not preference.strip():
        return DEFAULT_LANGUAGE
    ranked: list[tuple[float, int, str]] = []
    for index, item in enumerate(preference.split(",")):
        tag, _, rest = item.partition(";")
        tag = _normalise(tag)
        if not tag or tag == "*":
            continue
        quality = _quality(rest)
        if quality > 0:
            ranked.append((-quality, index, tag))
    lowered = {code.lower(): code for code in supported}
    for _, _, tag in sorted(ranked):
        for candidate in (tag, tag.split("-", 1)[0]):
            if candidate in lowered:
                return lowered[candidate]
    return DEFAULT_LANGUAGE


def _quality(params: str) -> float:
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "q":
            try:
                quality = float(value.strip())
            except ValueError:
                return 0.0
            # Also rejects `nan`, which fails every comparison.
            return quality if 0.0 <= quality <= 1.0 else 0.0
    return 1.0
