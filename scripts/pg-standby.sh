#!/usr/bin/env bash
# A PostgreSQL primary and one streaming standby on this machine, for the read-replica
# tests, the bench's standby row and a newcomer trying `serve --read-database-url`.
#
#   scripts/pg-standby.sh start    # initdb + start the primary, pg_basebackup -R the standby
#   scripts/pg-standby.sh status   # each server's state; exit 0 when both answer
#   scripts/pg-standby.sh urls     # the two URLs (primary, then standby), one a line
#   scripts/pg-standby.sh stop     # stop both (their data stays, for the next start)
#   scripts/pg-standby.sh destroy  # stop both and remove the folder
#
# Each server has its own port and data directory under one folder the script owns
# ($CHARLESTON_STANDBY_DIR, default /tmp/charleston-standby), runs as the `postgres` user
# when started by root (PostgreSQL refuses to run as root), and listens on 127.0.0.1 only
# (trust: a development topology). The system PostgreSQL on 5432 is left alone; Patroni's
# failover topology (scripts/pg-cluster.sh) uses 26xxx, this one 25432 and 25433
# ($CHARLESTON_PRIMARY_PORT, $CHARLESTON_STANDBY_PORT): below the kernel's range for
# outgoing connections (Linux: 32768-60999), so no client socket can be holding one.
# The binaries: $PG_BIN when set (only there), else PostgreSQL 15's (Debian's path), else
# whatever `pg_config --bindir` names.
# Exit 3 with a sentence when no PostgreSQL server binaries are installed.
set -euo pipefail

dir=${CHARLESTON_STANDBY_DIR:-/tmp/charleston-standby}
primary_port=${CHARLESTON_PRIMARY_PORT:-25432}
standby_port=${CHARLESTON_STANDBY_PORT:-25433}

find_bin() {
  local candidates=("${PG_BIN:-}")  # when set, only it
  if [ -z "${PG_BIN:-}" ]; then
    candidates=(/usr/lib/postgresql/15/bin "$(pg_config --bindir 2>/dev/null || true)")
  fi
  for candidate in "${candidates[@]}"; do
    if [ -n "$candidate" ] && [ -x "$candidate/initdb" ] && [ -x "$candidate/pg_basebackup" ]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

if ! bin=$(find_bin); then
  echo "no PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup): install PostgreSQL 15" \
    "(Debian: apt-get install postgresql-15) or set PG_BIN to their folder" >&2
  exit 3
fi

# as the postgres user when root; as oneself otherwise
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

primary=$dir/primary
standby=$dir/standby
url() { echo "postgresql://postgres@127.0.0.1:$1/postgres"; }
answers() { "$bin/pg_isready" -q -h 127.0.0.1 -p "$1" 2>/dev/null; }

start_server() {  # data directory, port, more server options
  if answers "$2"; then return 0; fi
  if ! as_owner "$bin/pg_ctl" -D "$1" -l "$1.log" -w -t 60 \
    -o "-p $2 -c listen_addresses=127.0.0.1 -c unix_socket_directories=$dir ${3:-}" start >/dev/null; then
    # pg_ctl says only "examine the log output": say what the log says
    echo "the server on port $2 ($1) did not start: $(tail -n 3 "$1.log" 2>/dev/null | tr '\n' ' ')" >&2
    return 1
  fi
}

start() {
  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; fi
  chmod 700 "$dir"
  if [ ! -f "$primary/PG_VERSION" ]; then
    as_owner "$bin/initdb" -D "$primary" -U postgres --auth=trust -E UTF8 >/dev/null
    # a standby may read while it replays; its queries hold back the primary's vacuum
    # rather than being cancelled by it (hot_standby_feedback)
    cat >>"$primary/postgresql.conf" <<EOF
wal_level = replica
max_wal_senders = 5
hot_standby = on
hot_standby_feedback = on
max_connections = 200
wal_keep_size = 256MB
EOF
  fi
  start_server "$primary" "$primary_port"
  if [ ! -f "$standby/PG_VERSION" ]; then
    # -R writes primary_conninfo and standby.signal: the copy starts as a streaming standby
    as_owner "$bin/pg_basebackup" -h 127.0.0.1 -p "$primary_port" -U postgres \
      -D "$standby" -R -X stream -c fast >/dev/null
  fi
  # the primary as this start names it: the copy's primary_conninfo keeps the port of the
  # start that made it (and the name of whatever made the connection)
  start_server "$standby" "$standby_port" \
    "-c 'primary_conninfo=host=127.0.0.1 port=$primary_port user=postgres application_name=standby'"
  local recovering
  recovering=$(as_owner "$bin/psql" -h 127.0.0.1 -p "$standby_port" -U postgres -Atc \
    "SELECT pg_is_in_recovery()")
  if [ "$recovering" != "t" ]; then
    echo "the server on $standby_port is not a standby (pg_is_in_recovery: $recovering)" >&2
    exit 1
  fi
  echo "primary $(url "$primary_port")"
  echo "standby $(url "$standby_port")"
}

stop_server() {  # data directory
  if [ -f "$1/postmaster.pid" ]; then
    as_owner "$bin/pg_ctl" -D "$1" -m fast -w stop >/dev/null || true
  fi
}

status() {
  local ok=0
  for pair in "primary:$primary_port" "standby:$standby_port"; do
    local name=${pair%%:*} port=${pair##*:}
    if answers "$port"; then
      local role
      role=$(as_owner "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -Atc \
        "SELECT CASE WHEN pg_is_in_recovery() THEN 'standby' ELSE 'primary' END")
      echo "$name $(url "$port") answers as $role"
    else
      echo "$name on port $port: not running"
      ok=1
    fi
  done
  return $ok
}

case "${1:-}" in
  start) start ;;
  stop) stop_server "$standby"; stop_server "$primary" ;;
  status) status ;;
  urls) url "$primary_port"; url "$standby_port" ;;
  destroy) stop_server "$standby"; stop_server "$primary"; rm -rf "$dir" ;;
  *) echo "usage: $0 start|stop|status|urls|destroy" >&2; exit 2 ;;
esac
