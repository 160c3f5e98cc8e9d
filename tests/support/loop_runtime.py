"""The real agent runtime (its tools, the capability pipeline, the run loop) answered by a
scripted provider, for tests that drive whole turns through `TurnSessions` without a
network: every endpoint's provider is the one given."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from intent_ui.agent.providers.base import Provider
from intent_ui.agent.runtime import AgentRuntime
from intent_ui.config import AppConfig

CAREFUL_SPEC = "spec:careful"
"""The agent-picker id of `loop_config`'s model spec whose workspace-changing tools ask
before they run."""


def loop_config(workspace: Path, **also: Any) -> AppConfig:
    """The demo endpoint over `workspace`, with the `careful` model spec."""
    return AppConfig.model_validate(
        {
            "endpoints": [{"kind": "demo"}],
            "workspace": str(workspace),
            "model_specs": [
                {"name": "careful", "endpoint": "demo", "model": "m", "require_approval": True}
            ],
            **also,
        }
    )


class LoopRuntime(AgentRuntime):
    """`AgentRuntime` whose providers are all `provider` (e.g. a scripted one)."""

    def __init__(self, config: AppConfig, provider: Provider) -> None:
        super().__init__(config)
        self.provider = provider

    def provider_for(self, endpoint_name: str | None = None) -> Provider:
        self.endpoint(endpoint_name)  # an unknown endpoint still fails as it would
        return self.provider
