"""`python -m intent_ui`: the command line (see `intent_ui.agent.cli`)."""

from __future__ import annotations

from intent_ui.agent.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
