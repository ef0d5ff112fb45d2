#!/usr/bin/env bash
# Make a PostgreSQL server answer on 127.0.0.1:5432 for the tests: use a running one,
# start an installed but stopped cluster, or install Debian's package (as root).
set -uo pipefail
host=127.0.0.1 port=5432

ready() { pg_isready -q -h "$host" -p "$port" 2>/dev/null || (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; }

ready && exit 0
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo -n "$@"; else return 1; fi; }

if ! command -v pg_ctlcluster >/dev/null; then
  command -v apt-get >/dev/null || { echo "no PostgreSQL and no apt-get to install it" >&2; exit 1; }
  echo "==> installing PostgreSQL from Debian's packages" >&2
  as_root apt-get update -qq >/dev/null && \
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null || exit 1
  # a development server: local connections need no password (documented in README)
  for hba in /etc/postgresql/*/main/pg_hba.conf; do
    as_root sed -i -E 's/^(host\s+all\s+all\s+(127\.0\.0\.1\/32|::1\/128)\s+)\S+$/\1trust/' "$hba"
  done
fi
version=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1)
[ -n "$version" ] || { echo "PostgreSQL is installed but has no cluster" >&2; exit 1; }
echo "==> starting PostgreSQL $version" >&2
as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start 2>/dev/null || \
  as_root pg_ctlcluster "$version" main start || exit 1
for _ in $(seq 1 30); do ready && exit 0; sleep 1; done
echo "PostgreSQL did not come up on $host:$port" >&2
exit 1
