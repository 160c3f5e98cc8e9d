"""Reflex configuration. The database URL comes from `DB_URL`, else a SQLite file; the
backend listens on intent_ui.yaml's `server.bind`, this machine only (127.0.0.1) unless it
says otherwise (`reflex run --backend-host` and `REFLEX_BACKEND_HOST` still win)."""

import os

import reflex as rx

from intent_ui.config import ConfigError, ServerConfig, load_config


def _server() -> ServerConfig:
    try:
        return load_config().server
    except ConfigError:
        # The app refuses the file when it starts, naming the key; until then, loopback.
        return ServerConfig()


config = rx.Config(
    app_name="intent_ui",
    db_url=os.environ.get("DB_URL", "sqlite:///.data/intent_ui.db"),
    backend_host=_server().bind,
    # Keeps Reflex's client_ip the socket's TCP peer: the app reads X-Forwarded-For
    # itself, trusting only server.trusted_proxies (core/proxies.py).
    trusted_proxy_hops=0,
    telemetry_enabled=False,
    show_built_with_reflex=False,
    plugins=[rx.plugins.RadixThemesPlugin()],
    disable_plugins=[rx.plugins.SitemapPlugin],
)
