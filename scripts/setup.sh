#!/usr/bin/env bash
# Installs what the project needs, from the package registries only.
#   scripts/setup.sh app    Python runtime deps + bun (what `reflex run` needs)
#   scripts/setup.sh test   the above + test deps + a Chromium for Playwright
# Each step is skipped when already done, so running it again is cheap.
set -euo pipefail
MODE="${1:-app}"
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "$ROOT"

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
# Where we are root on Debian: install one of its packages, quietly.
can_apt() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; }
apt_install() {
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null
}

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  say "Creating .venv with $("$PYTHON" --version)"
  "$PYTHON" -m venv .venv
fi

REQ=requirements.txt
[ "$MODE" = test ] && REQ=requirements-dev.txt
STAMP=".venv/.installed-$(cat requirements.txt "$REQ" | sha1sum | cut -c1-12)-$MODE"
if [ ! -f "$STAMP" ]; then
  say "Installing Python packages from $REQ"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$REQ"
  # Editable, so `python -m intent_ui` and `intent-ui` work from any folder.
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
  touch "$STAMP"
fi

if [ ! -x "$BUN_BIN_DIR/bun" ]; then
  say "Installing bun $BUN_VERSION from the npm registry"
  command -v npm >/dev/null || { echo "npm is required (Node.js 20+) to install bun" >&2; exit 1; }
  npm install --silent --no-audit --no-fund --prefix tools "$BUN_PKG@$BUN_VERSION"
fi

if [ "$MODE" = test ] && [ "$(node -p "require('$AXE_CORE_DIR/package.json').version" 2>/dev/null)" != "$AXE_CORE_VERSION" ]; then
  say "Installing axe-core $AXE_CORE_VERSION from the npm registry"
  command -v npm >/dev/null || { echo "npm is required (Node.js 20+) to install axe-core" >&2; exit 1; }
  npm install --silent --no-audit --no-fund --prefix tools "axe-core@$AXE_CORE_VERSION"
fi

# The sandbox bash_tool and run_tools_with_code run in; without it the app runs and
# those two tools are not offered (the tests of the sandbox need it).
if ! command -v bwrap >/dev/null 2>&1; then
  if can_apt; then
    say "Installing Debian's bubblewrap for the sandboxed tools"
    apt_install bubblewrap
  else
    echo "No bubblewrap (bwrap) found: install the 'bubblewrap' package to offer" \
      "bash_tool and run_tools_with_code; the app runs without them." >&2
  fi
fi

if [ "$MODE" = test ]; then
  if [ -n "${CHROMIUM_PATH:-}" ] && [ -x "$CHROMIUM_PATH" ]; then
    :
  elif [ -x /usr/bin/chromium ]; then
    :
  elif can_apt; then
    say "Installing Debian's chromium for the browser tests"
    apt_install chromium
  else
    echo "No Chromium found: install the 'chromium' package, set CHROMIUM_PATH," \
      "or run '.venv/bin/playwright install chromium' where downloads work." >&2
    exit 1
  fi
fi
