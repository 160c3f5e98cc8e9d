#!/usr/bin/env bash
# Runs Intent UI as several backend workers on this machine, behind one address
# (http://localhost:3000, FRONTEND_PORT changes it), sharing one Redis and one PostgreSQL:
#
#   bash scripts/scale.sh              2 workers
#   bash scripts/scale.sh --workers 4  (or WORKERS=4)
#
# Redis: REFLEX_REDIS_URL when set, else the server on 127.0.0.1:6379 (REDIS_PORT) when it
#   answers, else a redis-server started here (Debian's `redis-server` package, installed
#   when missing and run as root), stopped when this script ends.
# PostgreSQL: DB_URL when set, else the server on 127.0.0.1:5432 (PG_PORT) when the role
#   `postgres` may connect (database `intent_ui`, made when missing), else a cluster of
#   this checkout in .data/postgres (Debian's `postgresql` package, installed likewise),
#   reachable only through its socket in .data/postgres/run, stopped when this script ends.
#
# Then it runs the migrations once and `reflex run --env prod` with the production build:
# Reflex's granian server forks the workers, which share the one listening port (the
# kernel spreads the connections), keep each tab's UI state in Redis and the store in
# PostgreSQL, and read the same intent_ui.yaml (auth.secret included, e.g. through
# INTENT_UI_SECRET). Other arguments go to `reflex run`. README, "More than one machine".
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

workers="${WORKERS:-2}"
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --workers) workers="$2"; shift 2 ;;
    --workers=*) workers="${1#--workers=}"; shift ;;
    *) args+=("$1"); shift ;;
  esac
done
case "$workers" in
  '' | *[!0-9]* | 0) echo "--workers takes a whole number of at least 1, not '$workers'" >&2; exit 2 ;;
esac

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

bash "$ROOT/scripts/setup.sh" app
cd "$ROOT"
PY="$ROOT/.venv/bin/python"

# What this script started, stopped (servers last) however it ends.
started=()
stop_started() {
  local pid
  for pid in ${started[@]+"${started[@]}"}; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in ${started[@]+"${started[@]}"}; do
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  done
}
trap stop_started EXIT

# Installs a Debian package when allowed to (root with apt-get); otherwise says what to do.
apt_install() {
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "Installing Debian's $1"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$1" >/dev/null
  else
    echo "Install Debian's '$1' package (apt-get install $1), or point $2 at a running server." >&2
    exit 1
  fi
}

# Waits until "$@" succeeds (a server answering), for at most a minute.
wait_for() {
  local what="$1"; shift
  for _ in $(seq 600); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  echo "$what did not start; its log is in .data/" >&2
  exit 1
}

redis_answers() {
  "$PY" -c 'import redis, sys; sys.exit(0 if redis.Redis.from_url(sys.argv[1], socket_connect_timeout=1).ping() else 1)' "$1" 2>/dev/null
}

# --- Redis --------------------------------------------------------------------------------
if [ -n "${REFLEX_REDIS_URL:-}" ]; then
  redis_answers "$REFLEX_REDIS_URL" || { echo "REFLEX_REDIS_URL ($REFLEX_REDIS_URL) does not answer" >&2; exit 1; }
else
  REFLEX_REDIS_URL="redis://127.0.0.1:${REDIS_PORT:-6379}/0"
  if ! redis_answers "$REFLEX_REDIS_URL"; then
    command -v redis-server >/dev/null || apt_install redis-server REFLEX_REDIS_URL
    mkdir -p .data/redis
    say "Starting redis-server on 127.0.0.1:${REDIS_PORT:-6379}"
    # Nothing kept on disk: tab states and live turns are rebuilt from the database.
    setsid redis-server --bind 127.0.0.1 --port "${REDIS_PORT:-6379}" --save "" \
      --appendonly no --dir "$ROOT/.data/redis" >.data/redis/redis.log 2>&1 &
    started+=("$!")
    wait_for "redis-server" redis_answers "$REFLEX_REDIS_URL"
  fi
fi
export REFLEX_REDIS_URL

# --- PostgreSQL ---------------------------------------------------------------------------
pg_answers() {
  "$PY" -c 'import psycopg, sys; psycopg.connect(sys.argv[1], connect_timeout=2).close()' "$1" 2>/dev/null
}
ensure_database() {  # $1: a libpq conninfo of the server; makes database intent_ui
  "$PY" - "$1" <<'EOF'
import sys

import psycopg

with psycopg.connect(sys.argv[1], autocommit=True) as connection:
    found = connection.execute("SELECT 1 FROM pg_database WHERE datname = 'intent_ui'").fetchone()
    if found is None:
        connection.execute("CREATE DATABASE intent_ui")
EOF
}

if [ -z "${DB_URL:-}" ]; then
  pg_port="${PG_PORT:-5432}"
  if pg_answers "host=127.0.0.1 port=$pg_port user=postgres dbname=postgres"; then
    ensure_database "host=127.0.0.1 port=$pg_port user=postgres dbname=postgres"
    DB_URL="postgresql+psycopg://postgres@127.0.0.1:$pg_port/intent_ui"
  else
    bindir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
    if [ -z "$bindir" ]; then
      apt_install postgresql DB_URL
      bindir="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
    fi
    pgdata="$ROOT/.data/postgres"
    mkdir -p "$pgdata"
    as_owner=()
    if [ "$(id -u)" = 0 ]; then
      # PostgreSQL refuses to run as root: Debian's `postgres` user owns the cluster.
      chown postgres:postgres "$pgdata"
      as_owner=(setpriv --reuid=postgres --regid=postgres --init-groups)
    fi
    if [ ! -f "$pgdata/data/PG_VERSION" ]; then
      say "Creating a PostgreSQL cluster in .data/postgres"
      "${as_owner[@]}" "$bindir/initdb" -D "$pgdata/data" -U postgres --auth-local=trust \
        --auth-host=reject --encoding=UTF8 --locale=C >"$pgdata/initdb.log"
      "${as_owner[@]}" mkdir -p "$pgdata/run"
      chmod 700 "$pgdata/run"
    fi
    say "Starting PostgreSQL (socket in .data/postgres/run)"
    # No TCP listener: only this machine's workers reach it, through the socket folder.
    setsid "${as_owner[@]}" "$bindir/postgres" -D "$pgdata/data" -k "$pgdata/run" \
      -c listen_addresses='' >"$pgdata/postgres.log" 2>&1 &
    started+=("$!")
    wait_for "PostgreSQL" pg_answers "host=$pgdata/run user=postgres dbname=postgres"
    ensure_database "host=$pgdata/run user=postgres dbname=postgres"
    DB_URL="postgresql+psycopg://postgres@/intent_ui?host=$pgdata/run"
  fi
fi
export DB_URL

say "Migrating the database"
"$PY" -c 'from intent_ui.store.db import init_db; init_db()'

say "Starting $workers workers on http://localhost:${FRONTEND_PORT:-3000}"
# Granian (Reflex's own server) forks the workers: they share the one listening socket.
# Reflex reads the worker count from GRANIAN_WORKERS; without a Redis it would run one.
export REFLEX_USE_GRANIAN=1 GRANIAN_WORKERS="$workers"
reflex run --env prod --frontend-port "${FRONTEND_PORT:-3000}" ${args[@]+"${args[@]}"}
