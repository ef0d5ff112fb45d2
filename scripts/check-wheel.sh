#!/usr/bin/env bash
# The built wheel installs and serves outside the checkout (called by .ci/run):
# build it, install it in a fresh venv in a temporary directory (dependencies from PyPI,
# through pip's cache), then from that directory migrate a fresh empty PostgreSQL
# database, serve it with two workers, wait for /readyz, create a game and read it.
# Environment: PYTHON (3.11+, default: the first python3* that is), CHARLESTON_TEST_DATABASE_URL (an admin
# URL of the server, default postgresql://postgres@127.0.0.1:5432/postgres).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
python=""
for candidate in "${PYTHON:-}" python3 python3.13 python3.12 python3.11; do
  if [ -n "$candidate" ] && command -v "$candidate" >/dev/null \
    && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    python=$candidate; break
  fi
done
[ -n "$python" ] || { echo "!! check-wheel needs Python 3.11 or newer (set PYTHON=...)" >&2; exit 1; }
admin_url=${CHARLESTON_TEST_DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/postgres}
admin_url=${admin_url/postgresql+psycopg:/postgresql:}
unset CHARLESTON_DATABASE_URL CHARLESTON_PLATFORM_KEY CHARLESTON_ANCHOR_KEY CHARLESTON_WORKERS

work=$(mktemp -d "${TMPDIR:-/tmp}/charleston-wheel.XXXXXX")
database="charleston_wheel_$(basename "$work" | sed 's/.*\.//' | tr 'A-Z' 'a-z' | tr -dc 'a-z0-9')"
server_pid=""
database_made=""
current="starting"
started=$SECONDS

step() { current=$1; echo "==> check-wheel: $1 (at $((SECONDS - started)) s)" >&2; }
quietly() { # run a noisy tool; show its output only when it fails
  "$@" >"$work/tool.log" 2>&1 || { cat "$work/tool.log" >&2; return 1; }
}
fail() {
  echo "!! check-wheel FAILED at '$current': $1" >&2
  if [ -s "$work/serve.log" ]; then
    echo "!! last lines of serve's log:" >&2
    tail -n 20 "$work/serve.log" >&2
  fi
  exit 1
}
admin_sql() { # one statement on the admin database, through the wheel's own psycopg
  "$work/venv/bin/python" - "$admin_url" "$1" <<'EOF'
import sys, psycopg
with psycopg.connect(sys.argv[1], autocommit=True) as conn:
    conn.execute(sys.argv[2])
EOF
}
cleanup() {
  local status=$?
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  if [ -n "$database_made" ]; then
    admin_sql "DROP DATABASE IF EXISTS $database WITH (FORCE)" \
      || echo "!! check-wheel: could not drop the database $database" >&2
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

step "build the wheel"
quietly "$python" -m pip wheel "$repo" --no-deps --disable-pip-version-check -w "$work/dist" \
  || fail "pip wheel could not build the package"
wheel=$(ls "$work"/dist/charleston_fsm-*.whl 2>/dev/null | head -n 1)
[ -n "$wheel" ] || fail "no charleston_fsm wheel in $work/dist"
"$python" - "$wheel" <<'EOF' || fail "the wheel lacks the migrations"
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
need = ["charleston_fsm/migrations/env.py", "charleston_fsm/migrations/script.py.mako"]
missing = [n for n in need if n not in names]
versions = [n for n in names if n.startswith("charleston_fsm/migrations/versions/0")]
if missing or not versions:
    sys.exit(f"missing from {sys.argv[1]}: {missing or 'migrations/versions/*.py'}")
print(f"    {len(names)} files, {len(versions)} migration(s)", file=sys.stderr)
EOF

step "install it in a fresh venv outside the checkout"
"$python" -m venv "$work/venv" || fail "cannot create a venv with $python"
quietly "$work/venv/bin/python" -m pip install --no-compile --disable-pip-version-check "$wheel" \
  || fail "pip could not install $wheel with its dependencies"
cd "$work"  # from here on, nothing of the checkout is reachable
installed=$("$work/venv/bin/python" -c 'import charleston_fsm; print(charleston_fsm.__file__)')
case $installed in
  "$work/venv/"*) ;;
  *) fail "charleston_fsm was imported from $installed, not from the fresh venv" ;;
esac
cli="$work/venv/bin/charleston-fsm"

step "create an empty PostgreSQL database $database"
admin_sql "CREATE DATABASE $database" || fail "cannot create a database through $admin_url"
database_made=yes
url="postgresql://${admin_url#postgresql://}"
url="${url%/*}/$database"

step "charleston-fsm migrate"
"$cli" migrate --database-url "$url" 2>&1 | tee "$work/migrate.log" >&2 \
  || fail "migrate failed"
grep -q "schema empty -> current" "$work/migrate.log" || fail "migrate did not say 'empty -> current'"

step "charleston-fsm serve --workers 2, until /readyz says ready"
port=$("$work/venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$cli" serve --port "$port" --workers 2 --database-url "$url" \
  --anchor-key-file "$work/anchor.key" >"$work/serve.log" 2>&1 &
server_pid=$!
"$work/venv/bin/python" - "http://127.0.0.1:$port" "$server_pid" <<'EOF' || fail "not ready"
import json, os, sys, time, urllib.request
base, pid = sys.argv[1], int(sys.argv[2])
deadline, last = time.monotonic() + 60, "no answer"
while time.monotonic() < deadline:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        sys.exit("serve exited")
    try:
        with urllib.request.urlopen(base + "/readyz", timeout=2) as answer:
            body = json.load(answer)
            if body.get("status") == "ready" and body.get("notifier") == "postgres-listen":
                print(f"    ready: {body}", file=sys.stderr)
                sys.exit(0)
            last = body
    except Exception as exc:
        last = f"{type(exc).__name__}: {exc}"
    time.sleep(0.2)
sys.exit(f"/readyz did not say ready in 60 s (last: {last})")
EOF

step "create a game over HTTP and read it"
"$work/venv/bin/python" - "http://127.0.0.1:$port" <<'EOF' || fail "the game round trip failed"
import json, sys, urllib.request
base = sys.argv[1]

def call(path, body=None, token=None):
    request = urllib.request.Request(base + path, method="POST" if body else "GET")
    if body:
        request.data = json.dumps(body).encode()
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=10) as answer:
        return answer.status, json.load(answer)

status, created = call("/v1/games", {"ruleset": "nmjl", "seed": 42})
if status != 201:
    sys.exit(f"POST /v1/games answered {status}: {created}")
game, tokens = created["game_id"], created["tokens"]
status, east = call(f"/v1/games/{game}", token=tokens["east"])
rack = east["view"]["rack"]
if status != 200 or len(rack) != 14:  # East, the dealer, holds 14
    sys.exit(f"GET /v1/games/{game} as east answered {status} with {len(rack)} tiles")
status, audit = call(f"/v1/games/{game}/verify", token=tokens["director"])
if status != 200 or not audit.get("ok"):
    sys.exit(f"verify of {game} answered {status}: {audit}")
print(f"    game {game}: east holds 14 tiles, verify ok", file=sys.stderr)
EOF

step "stop the server"
kill "$server_pid"
wait "$server_pid" || true
server_pid=""
grep -q '"level": "error"' "$work/serve.log" && fail "serve logged errors"
echo "==> check-wheel: ok in $((SECONDS - started)) s (wheel $(basename "$wheel"))" >&2
