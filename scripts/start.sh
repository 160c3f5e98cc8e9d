#!/usr/bin/env bash
# Sets everything up and starts Intent UI on http://localhost:3000 (the offline demo
# model and a SQLite file unless intent_ui.yaml / the environment say otherwise). The
# backend listens on this machine only (rxconfig.py reads `server.bind`, 127.0.0.1 by
# default), and answers only the app's own page and `server.allowed_origins`.
#
#   bash scripts/start.sh          the production build: page and backend on one port
#                                  (FRONTEND_PORT, default 3000); built at each start
#   bash scripts/start.sh --dev    Reflex's development server: hot reload, page on
#                                  FRONTEND_PORT, backend on BACKEND_PORT (default 8000)
#
# Any other argument goes to `reflex run` (for example --loglevel debug).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

dev=0
args=()
for arg in "$@"; do
  case "$arg" in
    --dev) dev=1 ;;
    *) args+=("$arg") ;;
  esac
done

bash "$ROOT/scripts/setup.sh" app
cd "$ROOT"
if [ "$dev" = 1 ]; then
  exec reflex run --env dev --frontend-port "${FRONTEND_PORT:-3000}" \
    --backend-port "${BACKEND_PORT:-8000}" ${args[@]+"${args[@]}"}
fi
# Production serves the page from the backend, so there is one port; naming only the
# frontend's keeps Reflex from refusing two different ones.
exec reflex run --env prod --frontend-port "${FRONTEND_PORT:-3000}" ${args[@]+"${args[@]}"}
