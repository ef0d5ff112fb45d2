#!/usr/bin/env bash
# The browser tests drive Debian's Chromium (Playwright's own browser download is not
# needed): install the package when we can.
set -uo pipefail
[ -x "${CHARLESTON_CHROMIUM:-/usr/bin/chromium}" ] && exit 0
command -v apt-get >/dev/null || exit 1
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo -n "$@"; else return 1; fi; }
echo "==> installing Chromium from Debian's packages (for the browser tests)" >&2
as_root apt-get update -qq >/dev/null && \
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
[ -x "${CHARLESTON_CHROMIUM:-/usr/bin/chromium}" ]
