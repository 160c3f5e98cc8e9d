"""Reflex configuration. The database URL comes from `DB_URL`, else a SQLite file."""

import os

import reflex as rx

config = rx.Config(
    app_name="intent_ui",
    db_url=os.environ.get("DB_URL", "sqlite:///.data/intent_ui.db"),
    telemetry_enabled=False,
    show_built_with_reflex=False,
    plugins=[rx.plugins.RadixThemesPlugin()],
    disable_plugins=[rx.plugins.SitemapPlugin],
)
