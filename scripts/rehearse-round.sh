#!/usr/bin/env bash
# A tournament round, rehearsed end to end (the long form of the test
# test_a_round_with_clocks_is_played_through_two_processes):
# a scratch PostgreSQL database, two `charleston-fsm serve` processes on it (same anchor
# key), then `simulate` creates a round of TABLES tables in one call with clocks on,
# leaves IDLE seats of every table to the clock, plays the rest over both processes,
# records a ruling on table 1, and checks every table: finished, verified, each late seat
# in its audit. The database is dropped at the end.
#   scripts/rehearse-round.sh                 100 tables, 2 s clocks, North idle
#   TABLES=300 CLOCK=1 IDLE=2 scripts/rehearse-round.sh
# Environment: CHARLESTON_TEST_DATABASE_URL (admin URL, default the local server).
set -euo pipefail
cd "$(dirname "$0")/.."
tables=${TABLES:-100}
clock=${CLOCK:-2}
idle=${IDLE:-1}
concurrency=${CONCURRENCY:-$tables}  # every table played at once, as in a real round
admin_url=${CHARLESTON_TEST_DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/postgres}
admin_url=${admin_url/postgresql+psycopg:/postgresql:}
scripts/ensure-postgres.sh >/dev/null || { echo "!! rehearse-round needs PostgreSQL" >&2; exit 1; }
./dev cli --help >/dev/null  # sets up .venv on first use
py=.venv/bin/python
cli=.venv/bin/charleston-fsm

work=$(mktemp -d "${TMPDIR:-/tmp}/charleston-round.XXXXXX")
database="charleston_round_$(basename "$work" | sed 's/.*\.//' | tr 'A-Z' 'a-z' | tr -dc 'a-z0-9')"
url="postgresql+psycopg://${admin_url#postgresql://}"
url="${url%/*}/$database"
pids=()
admin_sql() {
  "$py" - "$admin_url" "$1" <<'EOF'
import sys, psycopg
with psycopg.connect(sys.argv[1], autocommit=True) as conn:
    conn.execute(sys.argv[2])
EOF
}
cleanup() {
  local status=$?
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  admin_sql "DROP DATABASE IF EXISTS $database WITH (FORCE)" || true
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

admin_sql "CREATE DATABASE $database"
"$cli" migrate --database-url "$url" >/dev/null
free_port() { "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
urls=()
for i in 1 2; do
  port=$(free_port)
  "$cli" serve --database-url "$url" --port "$port" --anchor-key-file "$work/anchor.key" \
    2>"$work/serve$i.log" &
  pids+=($!)
  urls+=(--url "http://127.0.0.1:$port")
  for _ in $(seq 100); do
    curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
    sleep 0.2
  done
  curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null || {
    tail -n 20 "$work/serve$i.log" >&2; echo "!! serve $i did not become ready" >&2; exit 1; }
done
echo "==> two service processes on $database; a round of $tables tables, clocks $clock s," \
  "$idle idle seat(s) per table" >&2
"$cli" simulate "${urls[@]}" --tables "$tables" --clock-seconds "$clock" \
  --idle-seats "$idle" --concurrency "$concurrency" --timeout 1800 \
  --ruling "Rehearsal: a director's note on table 1."
