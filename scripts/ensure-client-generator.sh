#!/usr/bin/env bash
# tests/test_api_client.py generates a typed client with openapi-python-client, as a
# platform's developers would. The generator pins its own command-line library (typer
# <0.28) below what the service's CLI is built and tested on, so it lives in a venv of its
# own, .cache/client-generator, never in .venv (there it would downgrade typer and change
# every command's help). Installed once; nothing is fetched at run time.
set -uo pipefail
cd "$(dirname "$0")/.."
dest=.cache/client-generator
[ -x "$dest/bin/openapi-python-client" ] && exit 0
py=.venv/bin/python
[ -x "$py" ] || py=python3
echo "==> installing openapi-python-client into $dest (for the typed-client test)" >&2
rm -rf "$dest"
"$py" -m venv "$dest" \
  && "$dest/bin/python" -m pip install --disable-pip-version-check --progress-bar off -q \
    "openapi-python-client>=0.26,<0.30" >/dev/null 2>&1 \
  || { echo "pip could not install openapi-python-client" >&2; rm -rf "$dest"; exit 1; }
[ -x "$dest/bin/openapi-python-client" ]
