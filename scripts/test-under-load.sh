#!/usr/bin/env bash
# The test suite on a busy machine and a busy database, as CI may meet them: BUSY processes
# spinning on the CPU and another job holding HOLD PostgreSQL connections (idle, as a
# pool would) for the whole run. Extra arguments go to ./dev test.
#
#   scripts/test-under-load.sh                 # 6 busy processes, 60 held connections
#   BUSY=2 HOLD=30 scripts/test-under-load.sh -x
#
# What "holds" means: every test passes; none may assert what an idle machine allowed.
set -euo pipefail
cd "$(dirname "$0")/.."
BUSY=${BUSY:-6}
HOLD=${HOLD:-60}
ADMIN=${CHARLESTON_TEST_DATABASE_URL:-postgresql://postgres@127.0.0.1:5432}

./dev cli -h >/dev/null  # the .venv exists before the load starts

pids=()
stop_load() { [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null || true; }
trap stop_load EXIT

for _ in $(seq "$BUSY"); do
  ( while :; do :; done ) &
  pids+=($!)
done

# the other job: HOLD connections opened and then left idle until this script ends
.venv/bin/python - "$ADMIN" "$HOLD" <<'EOF' &
import signal, sys, time
import psycopg
url, count = sys.argv[1], int(sys.argv[2])
held = [psycopg.connect(url, dbname="postgres", autocommit=True) for _ in range(count)]
print(f"==> holding {len(held)} PostgreSQL connections", file=sys.stderr, flush=True)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
while True:
    time.sleep(3600)
EOF
pids+=($!)
sleep 3
echo "==> $BUSY busy processes beside the suite" >&2

./dev test "$@"
