# Environment shared by scripts/start.sh and scripts/test.sh (sourced, not run).
# Everything Reflex, bun and Chromium would write or fetch stays inside the checkout,
# and the probes that cannot succeed on a registries-only network are switched off.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ROOT
case "$(uname -m)" in
  aarch64|arm64) BUN_PKG="@oven/bun-linux-aarch64" ;;
  *) BUN_PKG="@oven/bun-linux-x64" ;;
esac
BUN_VERSION="1.4.4"
BUN_BIN_DIR="$ROOT/tools/node_modules/$BUN_PKG/bin"
# The accessibility rules the browser tests scan both pages with (tests/e2e/axe.py).
AXE_CORE_VERSION="4.14.1"
AXE_CORE_DIR="$ROOT/tools/node_modules/axe-core"
export PATH="$ROOT/.venv/bin:$BUN_BIN_DIR:$PATH"
export REFLEX_USE_SYSTEM_BUN=1
export REFLEX_CHECK_LATEST_VERSION=0
export REFLEX_TELEMETRY_ENABLED=false
export REFLEX_DIR="$ROOT/.cache/reflex"
export BUN_INSTALL_CACHE_DIR="$ROOT/.cache/bun"
export XDG_CACHE_HOME="$ROOT/.cache/xdg"
export XDG_CONFIG_HOME="$ROOT/.cache/xdg-config"
export PLAYWRIGHT_BROWSERS_PATH="${PLAYWRIGHT_BROWSERS_PATH:-$ROOT/.cache/ms-playwright}"
if [ -z "${NPM_CONFIG_REGISTRY:-}" ] && command -v npm >/dev/null 2>&1; then
  NPM_CONFIG_REGISTRY="$(npm config get registry 2>/dev/null || echo https://registry.npmjs.org/)"
  export NPM_CONFIG_REGISTRY
fi
