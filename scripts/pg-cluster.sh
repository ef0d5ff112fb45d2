#!/usr/bin/env bash
# A PostgreSQL cluster that fails over, on one machine, for the failover drill and for a
# newcomer (docs/deploy.md, "Running it on a PostgreSQL cluster"):
#
#   etcd (Debian etcd-server)        one member, the store Patroni elects its leader in
#   node1, node2 (PostgreSQL 15)     each run by its own Patroni (Debian patroni), one
#                                    primary and one synchronous streaming standby
#   PgBouncer (Debian pgbouncer)     transaction mode, in front of node1
#
# Each part has its own port and data directory under $CHARLESTON_CLUSTER_DIR (default
# /tmp/charleston-pg-cluster), which the script owns: `stop` stops every part and
# `stop --clean` also removes the folder. The system PostgreSQL (5432) is never touched.
# Ports (base $CHARLESTON_CLUSTER_PORT, default 26000): etcd 26379 (peers 26380),
# node1 26432, node2 26433, Patroni REST 26008/26009, PgBouncer 26439. They lie below the
# kernel's range for outgoing connections (Linux: 32768-60999), from which any client
# socket may take a port for as long as it is connected: PostgreSQL then cannot bind it
# and Patroni never bootstraps. `start` refuses a port some socket holds, naming it.
#
#   scripts/pg-cluster.sh start | stop [--clean] | status | url | bouncer-url
#   scripts/pg-cluster.sh install         only install the missing packages
#   scripts/pg-cluster.sh leader          the node that is primary now (node1|node2)
#   scripts/pg-cluster.sh kill NODE       SIGKILL that node's Patroni and PostgreSQL
#   scripts/pg-cluster.sh revive NODE     start that node's Patroni again (it rejoins)
#   scripts/pg-cluster.sh switchover NODE make NODE the primary (a planned switchover)
#
# PostgreSQL refuses to run as root: as root every part runs as the `postgres` user;
# otherwise as the caller. Missing packages are installed with apt-get (root or sudo).
set -euo pipefail

dir=${CHARLESTON_CLUSTER_DIR:-/tmp/charleston-pg-cluster}
base=${CHARLESTON_CLUSTER_PORT:-26000}
etcd_port=$((base + 379)) etcd_peer=$((base + 380))
pg_port_node1=$((base + 432)) pg_port_node2=$((base + 433))
rest_port_node1=$((base + 8)) rest_port_node2=$((base + 9))
bouncer_port=$((base + 439))
bin_dir=${CHARLESTON_PG_BIN:-$(ls -d /usr/lib/postgresql/15/bin 2>/dev/null || true)}
scope=charleston

say() { echo "==> $*" >&2; }
die() { echo "pg-cluster: $*" >&2; exit 1; }
# the last lines of a part's log, for a message (the drill's folder goes with it)
log_tail() { tail -n "${2:-5}" "$dir/$1.log" 2>/dev/null | sed "s/^/    $1: /" || true; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo -n "$@"; else return 1; fi; }
# every part runs as this user: postgres when we are root (PostgreSQL refuses root)
if [ "$(id -u)" = 0 ]; then owner=postgres; else owner=$(id -un); fi
as_owner() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

ensure_packages() {
  local missing=()
  command -v etcd >/dev/null || missing+=(etcd-server)
  command -v patroni >/dev/null || missing+=(patroni)
  command -v pgbouncer >/dev/null || missing+=(pgbouncer)
  [ -x "$bin_dir/postgres" ] || missing+=(postgresql-15)
  [ ${#missing[@]} = 0 ] && return 0
  command -v apt-get >/dev/null || die "missing ${missing[*]} and no apt-get to install them"
  say "installing ${missing[*]} from Debian's packages"
  as_root apt-get update -qq >/dev/null || die "apt-get update failed (root or sudo needed)"
  # policy-rc.d or not, the packages' own services are stopped below: ours have own ports
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null || die "apt-get install ${missing[*]} failed"
  bin_dir=/usr/lib/postgresql/15/bin
  for service in etcd patroni pgbouncer; do
    as_root systemctl disable --now "$service" >/dev/null 2>&1 || true
  done
}

pid_of() { [ -f "$dir/$1.pid" ] && kill -0 "$(cat "$dir/$1.pid")" 2>/dev/null && cat "$dir/$1.pid"; }

rest_port() { local var="rest_port_$1"; echo "${!var}"; }
pg_port() { local var="pg_port_$1"; echo "${!var}"; }

node_config() {  # node -> its Patroni configuration
  local node=$1 rest pg
  rest=$(rest_port "$node") pg=$(pg_port "$node")
  cat <<YAML
scope: $scope
name: $node
log:
  level: WARNING
restapi:
  listen: 127.0.0.1:$rest
  connect_address: 127.0.0.1:$rest
etcd3:
  host: 127.0.0.1:$etcd_port
bootstrap:
  dcs:
    # a dead primary's leader key lapses after ttl seconds; then the standby promotes
    ttl: 10
    loop_wait: 1
    retry_timeout: 4
    maximum_lag_on_failover: 1048576
    # a commit is acknowledged once the standby has it: a failover loses nothing
    # acknowledged (with one node left, the survivor accepts writes alone)
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      parameters:
        max_connections: 200
        wal_level: replica
        hot_standby: "on"
        wal_log_hints: "on"
        max_wal_senders: 10
        max_replication_slots: 10
        synchronous_commit: "on"
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
postgresql:
  listen: 127.0.0.1:$pg
  connect_address: 127.0.0.1:$pg
  data_dir: $dir/$node/data
  bin_dir: $bin_dir
  pgpass: $dir/$node/pgpass
  use_unix_socket: false
  parameters:
    unix_socket_directories: $dir/$node
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
  authentication:
    superuser: {username: postgres, password: postgres}
    replication: {username: replicator, password: replicator}
    rewind: {username: postgres, password: postgres}
YAML
}

start_etcd() {
  pid_of etcd >/dev/null && return 0
  say "etcd on 127.0.0.1:$etcd_port"
  as_owner mkdir -p "$dir/etcd"
  as_owner bash -c "exec etcd --name charleston --data-dir '$dir/etcd' \
    --listen-client-urls http://127.0.0.1:$etcd_port --advertise-client-urls http://127.0.0.1:$etcd_port \
    --listen-peer-urls http://127.0.0.1:$etcd_peer --initial-advertise-peer-urls http://127.0.0.1:$etcd_peer \
    --initial-cluster charleston=http://127.0.0.1:$etcd_peer \
    >'$dir/etcd.log' 2>&1 & echo \$! >'$dir/etcd.pid'"
  for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$etcd_port/health" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  die "etcd did not come up (see $dir/etcd.log)"
}

start_node() {
  local node=$1
  pid_of "$node" >/dev/null && return 0
  say "$node: Patroni (REST 127.0.0.1:$(rest_port "$node")), PostgreSQL 127.0.0.1:$(pg_port "$node")"
  as_owner mkdir -p "$dir/$node"
  as_owner chmod 700 "$dir/$node"
  node_config "$node" | as_owner tee "$dir/$node.yml" >/dev/null
  as_owner bash -c "exec patroni '$dir/$node.yml' >>'$dir/$node.log' 2>&1 & echo \$! >'$dir/$node.pid'"
}

rest() { curl -sf --max-time 2 "http://127.0.0.1:$(rest_port "$1")/$2" 2>/dev/null; }

leader() {
  local node
  for node in node1 node2; do
    rest "$node" primary >/dev/null && { echo "$node"; return 0; }
  done
  return 1
}

ports_free() {  # every port `start` listens on can be bound as its server will bind it
  local port held
  for port in "$etcd_port" "$etcd_peer" "$pg_port_node1" "$pg_port_node2" \
    "$rest_port_node1" "$rest_port_node2" "$bouncer_port"; do
    # SO_REUSEADDR, as PostgreSQL, etcd and Patroni bind: a connection of an earlier run
    # in TIME-WAIT does not stop them, a socket that holds the port does
    python3 -c 'import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))' "$port" 2>/dev/null && continue
    held=$(ss -Htanp exclude time-wait "( sport = :$port )" 2>/dev/null | head -n 1 || true)
    die "port $port is in use${held:+ ($held)}; stop what holds it or choose another base (CHARLESTON_CLUSTER_PORT)"
  done
}

wait_healthy() {  # a primary and a streaming synchronous standby, both answering
  local seconds=${1:-90}
  for _ in $(seq 1 $((seconds * 5))); do
    if leader >/dev/null && rest node1 health >/dev/null && rest node2 health >/dev/null &&
      { rest node1 sync >/dev/null || rest node2 sync >/dev/null; }; then
      return 0
    fi
    sleep 0.2
  done
  die "the cluster has no primary and synchronous standby after ${seconds}s (see $dir/node*.log)
$(log_tail node1)
$(log_tail node2)"
}

start_bouncer() {
  pid_of pgbouncer >/dev/null && return 0
  say "PgBouncer (transaction mode) on 127.0.0.1:$bouncer_port, in front of node1"
  as_owner tee "$dir/pgbouncer.ini" >/dev/null <<INI
[databases]
* = host=127.0.0.1 port=$pg_port_node1
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $bouncer_port
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
max_client_conn = 500
default_pool_size = 20
ignore_startup_parameters = extra_float_digits,options
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
INI
  echo '"postgres" ""' | as_owner tee "$dir/userlist.txt" >/dev/null
  as_owner pgbouncer -d -q "$dir/pgbouncer.ini"
  for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/127.0.0.1/$bouncer_port") 2>/dev/null && return 0; sleep 0.1; done
  die "PgBouncer did not come up (see $dir/pgbouncer.log)"
}

stop_pid() {  # name [signal]: stop it and wait until it is gone
  local pid
  pid=$(pid_of "$1") || { rm -f "$dir/$1.pid"; return 0; }
  kill "-${2:-TERM}" "$pid" 2>/dev/null || true
  for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  rm -f "$dir/$1.pid"
}

postmaster_of() { [ -f "$dir/$1/data/postmaster.pid" ] && head -n 1 "$dir/$1/data/postmaster.pid"; }

kill_node() {  # the machine dies: Patroni and its PostgreSQL, every backend, at once
  local node=$1 patroni_pid postmaster children
  patroni_pid=$(pid_of "$node" || true)
  postmaster=$(postmaster_of "$node" || true)
  children=$([ -n "$postmaster" ] && ps -o pid= --ppid "$postmaster" || true)
  say "SIGKILL $node: Patroni ${patroni_pid:-none}, PostgreSQL ${postmaster:-none}"
  # shellcheck disable=SC2086
  kill -KILL ${patroni_pid:-} ${postmaster:-} ${children:-} 2>/dev/null || true
  rm -f "$dir/$node.pid"
}

stop_node() {
  local node=$1 postmaster
  stop_pid "$node" TERM  # Patroni stops its PostgreSQL on SIGTERM
  postmaster=$(postmaster_of "$node" || true)
  if [ -n "$postmaster" ] && kill -0 "$postmaster" 2>/dev/null; then
    as_owner "$bin_dir/pg_ctl" -D "$dir/$node/data" -m immediate stop >/dev/null 2>&1 || true
  fi
}

case "${1:-}" in
  install) ensure_packages ;;
  start)
    ensure_packages
    [ -n "$bin_dir" ] || die "no PostgreSQL 15 binaries (set CHARLESTON_PG_BIN)"
    as_root mkdir -p "$dir" && as_root chown "$owner" "$dir" && chmod 755 "$dir"
    pid_of etcd >/dev/null || pid_of node1 >/dev/null || ports_free
    start_etcd
    start_node node1
    # node1 bootstraps the cluster first; node2 then copies it (pg_basebackup)
    for _ in $(seq 1 300); do rest node1 primary >/dev/null && break; sleep 0.2; done
    rest node1 primary >/dev/null || die "node1 did not become the primary in 60 s
$(log_tail node1 8)"
    start_node node2
    wait_healthy 120
    start_bouncer
    say "ready: primary $(leader); $("$0" url)"
    ;;
  stop)
    [ -d "$dir" ] || exit 0
    stop_pid pgbouncer TERM
    stop_node node2
    stop_node node1
    stop_pid etcd TERM
    if [ "${2:-}" = --clean ]; then as_root rm -rf "$dir"; fi
    ;;
  status)
    for part in etcd node1 node2 pgbouncer; do
      printf '%-10s %s\n' "$part" "$(pid_of "$part" >/dev/null && echo "running (pid $(pid_of "$part"))" || echo stopped)"
    done
    for node in node1 node2; do
      printf '%-10s %s\n' "$node" "$(rest "$node" patroni || echo 'not answering')"
    done
    ;;
  url)  # the multi-host URL the service takes: libpq finds the primary itself
    echo "postgresql://postgres@/${2:-postgres}?host=127.0.0.1:$pg_port_node1,127.0.0.1:$pg_port_node2&target_session_attrs=read-write"
    ;;
  bouncer-url)
    echo "postgresql://postgres@127.0.0.1:$bouncer_port/${2:-postgres}?prepare_threshold=none"
    ;;
  leader) leader || die "no primary now" ;;
  wait) wait_healthy "${2:-90}" ;;
  kill) kill_node "${2:?kill which node}" ;;
  revive) start_node "${2:?revive which node}" ;;
  switchover)
    target=${2:?switchover to which node}
    now=$(leader) || die "no primary to switch over from"
    [ "$now" = "$target" ] && exit 0
    curl -sf --max-time 30 -XPOST "http://127.0.0.1:$(rest_port "$now")/switchover" \
      -d "{\"leader\": \"$now\", \"candidate\": \"$target\"}" >&2 || die "the switchover was refused"
    echo >&2
    for _ in $(seq 1 300); do [ "$(leader || true)" = "$target" ] && exit 0; sleep 0.2; done
    die "$target did not become the primary"
    ;;
  *)
    sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
