#!/usr/bin/env bash
# The browser tests check every page with axe-core (the npm package), injected by the tests.
# Installs it once into .cache/axe (outside the package; nothing is fetched at run time).
set -uo pipefail
cd "$(dirname "$0")/.."
dest=.cache/axe
[ -f "$dest/node_modules/axe-core/axe.min.js" ] && exit 0
command -v npm >/dev/null || { echo "npm not found: install Node.js (Debian: nodejs npm)" >&2; exit 1; }
echo "==> installing axe-core from the npm registry into $dest (for the accessibility tests)" >&2
mkdir -p "$dest"
npm install --silent --no-audit --no-fund --prefix "$dest" axe-core@4 >/dev/null 2>&1 \
  || { echo "npm could not install axe-core" >&2; exit 1; }
[ -f "$dest/node_modules/axe-core/axe.min.js" ]
