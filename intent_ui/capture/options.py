"""What intent capture does for one server: the code options, and the env / file switch.

Off by default. Code options win: `with_intent_capture(server, intent=...)` decides alone
when `intent` is given. Otherwise the environment variable `INTENT_CAPTURE` (`1`/`0`,
`true`/`false`, `on`/`off`, `yes`/`no`) switches it, and the JSON or YAML file named by
`INTENT_CAPTURE_CONFIG` supplies the options and the sink:

    {"intent": {"required": true, "exclude": ["book_table"]},
     "sink": {"jsonl": "capture.jsonl"}}

`intent` there may be `true`, `false` or the options object; `sink` holds exactly one of
`jsonl` (a file path), `store` (a database URL) or `http` (an endpoint URL). A fallback is
code, so only `IntentOptions` in code can carry one. The environment variable beats the
file's `intent`, so `INTENT_CAPTURE=0` turns capture off without editing the file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

__all__ = [
    "CONFIG_ENV",
    "SWITCH_ENV",
    "CaptureConfigError",
    "CaptureFileConfig",
    "IntentOptions",
    "SinkConfig",
    "resolve_intent",
]

SWITCH_ENV = "INTENT_CAPTURE"
CONFIG_ENV = "INTENT_CAPTURE_CONFIG"

_TRUE = frozenset({"1", "true", "on", "yes"})
_FALSE = frozenset({"0", "false", "off", "no"})


class CaptureConfigError(ValueError):
    """The capture switch or its config file is invalid; the message says where and how."""


class IntentOptions(BaseModel):
    """How `context` is advertised and captured.

    `required=False` advertises it as optional everywhere (lower capture, but immune to
    clients that hard-validate required parameters). `description` replaces the
    model-facing text. `fallback(tool_name, args)` may infer an intent for a context-less
    call on a required-context tool; it runs before the handler on every such call, so it
    must be fast and synchronous. `exclude` names tools that get no `context` at all (the
    per-tool `intent=False`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    required: bool = True
    description: str | None = None
    fallback: Callable[[str, Mapping[str, Any]], str | None] | None = None
    exclude: frozenset[str] = frozenset()


class SinkConfig(BaseModel):
    """Where a config file sends call events: exactly one of the three."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    jsonl: str | None = None
    store: str | None = None
    http: str | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> SinkConfig:
        chosen = [name for name in ("jsonl", "store", "http") if getattr(self, name)]
        if len(chosen) != 1:
            raise ValueError(
                "give exactly one of 'jsonl' (a file path), 'store' (a database URL) or "
                f"'http' (an endpoint URL); got {chosen or 'none'}"
            )
        return self


class _FileIntentOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    required: bool = True
    description: str | None = None
    exclude: list[str] = Field(default_factory=list)


class CaptureFileConfig(BaseModel):
    """The config file named by `INTENT_CAPTURE_CONFIG`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    intent: bool | _FileIntentOptions = False
    sink: SinkConfig | None = None

    @classmethod
    def load(cls, path: str | Path) -> CaptureFileConfig:
        """Read and validate a JSON (`.json`) or YAML file; errors name the file and key."""
        where = Path(path)
        try:
            text = where.read_text(encoding="utf-8")
        except OSError as exc:
            raise CaptureConfigError(
                f"Cannot read the intent capture config {str(where)!r} (from {CONFIG_ENV}): "
                f"{exc.strerror or exc}. Fix the path or unset {CONFIG_ENV}."
            ) from exc
        try:
            data = json.loads(text) if where.suffix == ".json" else yaml.safe_load(text)
        except (ValueError, yaml.YAMLError) as exc:
            raise CaptureConfigError(
                f"The intent capture config {str(where)!r} is not valid "
                f"{'JSON' if where.suffix == '.json' else 'YAML'}: {exc}"
            ) from exc
        try:
            return cls.model_validate(data if data is not None else {})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in error['loc']) or '(top level)'}: {error['msg']}"
                for error in exc.errors()
            )
            raise CaptureConfigError(
                f"The intent capture config {str(where)!r} is invalid: {problems}. "
                'Expected e.g. {"intent": true, "sink": {"jsonl": "capture.jsonl"}}.'
            ) from None


@dataclass(frozen=True, slots=True)
class ResolvedIntent:
    """The outcome of the switch: options when capture is on (else None), and a file sink."""

    options: IntentOptions | None
    sink: SinkConfig | None


def _switch(environ: Mapping[str, str]) -> bool | None:
    raw = environ.get(SWITCH_ENV)
    if raw is None or not raw.strip():
        return None
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise CaptureConfigError(
        f"{SWITCH_ENV}={raw!r} is not an on/off value: use 1 or 0 (also true/false, "
        "on/off, yes/no), or unset it."
    )


def resolve_intent(
    intent: bool | IntentOptions | None, environ: Mapping[str, str] | None = None
) -> ResolvedIntent:
    """Combine the code option, `INTENT_CAPTURE` and the `INTENT_CAPTURE_CONFIG` file."""
    env = os.environ if environ is None else environ
    path = env.get(CONFIG_ENV, "").strip()
    file = CaptureFileConfig.load(path) if path else None
    sink = file.sink if file is not None else None
    if isinstance(intent, IntentOptions):
        return ResolvedIntent(intent, sink)
    if intent is not None and not isinstance(intent, bool):
        raise CaptureConfigError(
            f"intent={intent!r} is not an intent setting: pass True, False or IntentOptions(...)."
        )
    from_file = file.intent if file is not None else False
    file_options = (
        IntentOptions(
            required=from_file.required,
            description=from_file.description,
            exclude=frozenset(from_file.exclude),
        )
        if isinstance(from_file, _FileIntentOptions)
        else IntentOptions()
    )
    if intent is not None:
        return ResolvedIntent(file_options if intent else None, sink)
    switch = _switch(env)
    enabled = switch if switch is not None else from_file is not False
    return ResolvedIntent(file_options if enabled else None, sink)
