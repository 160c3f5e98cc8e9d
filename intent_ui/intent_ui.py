"""Builds the Reflex app and registers its pages; nothing else."""

import sys

import reflex as rx
from reflex.state import reload_state_module

from intent_ui.config import load_config

# AppHarness re-imports only this module for each app it starts, with a fresh state
# registry: forget the page and state modules' states and import them again, so they
# register with the app being built (also when a test imported them beforehand). A state
# is forgotten only while it is reachable from the root, through the states it is built
# on: forget the modules of the deepest states first (`intent_ui.ui.auth`, the base of
# every page state, last).


def _state_depth(module_name: str) -> int:
    """How deep below the root the module's deepest state is (0: it defines none)."""
    module = sys.modules[module_name]
    return max(
        (
            len(value.get_full_name().split("."))
            for value in vars(module).values()
            if isinstance(value, type)
            and issubclass(value, rx.State)
            and value.__module__ == module_name
        ),
        default=0,
    )


_reloaded = [n for n in sys.modules if n.startswith("intent_ui.ui.") and n != "intent_ui.ui.host"]
for _name in sorted(_reloaded, key=_state_depth, reverse=True):
    reload_state_module(module=_name)
    del sys.modules[_name]

from intent_ui.ui.auth import LOGIN_ROUTE  # noqa: E402
from intent_ui.ui.builder_state import AgentsState  # noqa: E402
from intent_ui.ui.chat_state import ChatState  # noqa: E402
from intent_ui.ui.heap import freeze_startup_heap  # noqa: E402
from intent_ui.ui.host import close_host_at_shutdown  # noqa: E402
from intent_ui.ui.intents_state import IntentsState  # noqa: E402

# Imported for its state: the chat's handlers start `LiveView.follow` by name, so it must
# be registered with the app before the pages compile.
from intent_ui.ui.live_view import LiveView  # noqa: E402, F401
from intent_ui.ui.origin_guard import GuardedApp  # noqa: E402
from intent_ui.ui.pages.agents import agents_page  # noqa: E402
from intent_ui.ui.pages.chat import chat_page  # noqa: E402
from intent_ui.ui.pages.intents import intents_page  # noqa: E402
from intent_ui.ui.pages.login import login_page  # noqa: E402
from intent_ui.ui.pages.shared import shared_page  # noqa: E402
from intent_ui.ui.shared_state import SHARE_ROUTE, SharedState  # noqa: E402

# Refuse an invalid configuration at start, naming the key and the problem.
load_config()

app = GuardedApp(
    stylesheets=["/intent_ui.css"],
    head_components=[rx.el.script(src="/intent_ui.js", defer=True)],
)
app.register_lifespan_task(freeze_startup_heap)
app.register_lifespan_task(close_host_at_shutdown)
app.add_page(chat_page, route="/", title="Intent UI", on_load=ChatState.load_page)
app.add_page(
    agents_page, route="/agents", title="Agents · Intent UI", on_load=AgentsState.load_page
)
app.add_page(
    intents_page, route="/intents", title="Intents · Intent UI", on_load=IntentsState.load_page
)
app.add_page(login_page, route=LOGIN_ROUTE, title="Sign in · Intent UI")
app.add_page(
    shared_page,
    route=SHARE_ROUTE,
    title="Shared conversation · Intent UI",
    on_load=SharedState.load_page,
)
