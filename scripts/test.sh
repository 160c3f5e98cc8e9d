#!/usr/bin/env bash
# Sets up what the tests need and runs the whole suite: lint, type check, unit tests, then the
# end-to-end browser tests (AppHarness + Playwright + Chromium).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
bash "$ROOT/scripts/setup.sh" test
cd "$ROOT"
ruff check .
ruff format --check .
mypy
# Two processes, each taking whole files (a module's app and browser stay in one process).
python -m pytest -q -p no:cacheprovider -n 2 --dist loadfile "$@"
