#!/usr/bin/env bash
# Installs what the tests need (Debian's PostgreSQL, the SDKs), starts a throwaway
# PostgreSQL cluster on a free port in a temporary directory, runs every test on SQLite
# and PostgreSQL, and stops the cluster. Idempotent; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin

log() { printf '\n==> %s\n' "$*"; }

apt_install() {  # install Debian packages that are missing
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "apt-get install ${missing[*]}"
  local sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

apt_install postgresql chromium
log "installing SDKs for the SDK tests"
scripts/install-sdks.sh

PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
PG_DIR=$(mktemp -d /tmp/tracebox-pg.XXXXXX)
PG_PORT=$($BIN/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_pg() {  # PostgreSQL refuses to run as root: use the postgres system user then
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
[ "$(id -u)" -eq 0 ] && chown postgres "$PG_DIR"
stop_pg() {
  as_pg "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$PG_DIR"
}
trap stop_pg EXIT

log "starting PostgreSQL on 127.0.0.1:$PG_PORT ($PG_DIR)"
as_pg "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust -E UTF8 >/dev/null
as_pg "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w \
  -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200" start >/dev/null
export TRACEBOX_TEST_POSTGRES_URL="postgresql://postgres@127.0.0.1:$PG_PORT/postgres"
export TRACEBOX_REQUIRE_POSTGRES=1

log "running every test (SQLite and PostgreSQL)"
set +e
$BIN/pytest -q -n 2 -p no:cacheprovider "$@"
status=$?
set -e
exit $status
