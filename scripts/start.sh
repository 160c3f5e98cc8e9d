#!/usr/bin/env bash
# Sets everything up and starts Intent UI on http://localhost:3000 (the offline demo
# model and a SQLite file unless intent_ui.yaml / the environment say otherwise). The
# backend listens on this machine only (rxconfig.py reads `server.bind`, 127.0.0.1 by
# default), and answers only the app's own page and `server.allowed_origins`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
bash "$ROOT/scripts/setup.sh" app
cd "$ROOT"
exec reflex run --frontend-port "${FRONTEND_PORT:-3000}" --backend-port "${BACKEND_PORT:-8000}" "$@"
