"""The endpoint and model pickers, shared by the chat (`ui.chat_state.ChatState`) and the agents
page (`ui.builder_state.AgentsState`).

A Reflex mixin: each state that inherits it gets vars and handlers of its own, so the
chat's choice and the builder's stay apart. The pickers accept only what the server
offers: a configured endpoint, and a model of the chosen endpoint.
"""

from __future__ import annotations

import reflex as rx

from intent_ui.ui.host import Host, get_host

__all__ = ["EndpointPicker"]


class EndpointPicker(rx.State, mixin=True):
    endpoints: list[str] = []
    models: list[str] = []
    endpoint: str = ""
    model: str = ""

    def _sync_models(self, host: Host) -> None:
        """Offer the chosen endpoint's models, keeping the model when it is one of them."""
        endpoint = host.config.endpoint(self.endpoint)
        self.models = list(endpoint.models) if endpoint else []
        if self.model not in self.models:
            self.model = self.models[0] if self.models else ""

    @rx.event
    async def set_endpoint(self, value: str) -> None:
        host = await get_host()
        if host.config.endpoint(value) is None:
            return  # only configured endpoints
        self.endpoint = value
        self._sync_models(host)

    @rx.event
    def set_model(self, value: str) -> None:
        # `models` is the chosen endpoint's list, computed on the server.
        if value in self.models:
            self.model = value
