#!/usr/bin/env bash
# Graphviz's `dot` renders the SVG diagrams; install Debian's package when we can.
set -uo pipefail
command -v dot >/dev/null && exit 0
command -v apt-get >/dev/null || exit 1
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo -n "$@"; else return 1; fi; }
echo "==> installing Graphviz from Debian's packages" >&2
as_root apt-get update -qq >/dev/null && \
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null
command -v dot >/dev/null
