#!/usr/bin/env bash
# The checker's teeth, measured (issue 38): cosmic-ray's mutants of the engine's rule
# modules, each judged by the bounded check (`charleston-fsm check --bounded --fail-fast`
# fails: killed), one at a time on a copy of the tracked tree; prints a line per mutant,
# then the score per module and every survivor. docs/mutation.md lists the survivors and
# the measured run.
#
#   scripts/mutation.sh                                  # the long form: every rule module
#   scripts/mutation.sh charleston_fsm/engine/guards.py  # one module
#   scripts/mutation.sh --report out.jsonl ...           # every outcome as JSON lines
#   scripts/mutation.sh --rerun out.jsonl                # the survivors of a report, again
#   scripts/mutation.sh --from-line 92 MODULE            # a sitting stopped at line 92, resumed
#
# MUTATION_MODULES and MUTATION_TEST (the kill test) still work as before. Needs
# cosmic-ray (the `test` extra).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-$ROOT/.venv/bin/python}"
[ -x "$PYTHON" ] || PYTHON="$(command -v python3)"
args=()
[ -z "${MUTATION_TEST:-}" ] || args+=(--test "$(dirname "$PYTHON")/$MUTATION_TEST")
# shellcheck disable=SC2206  # a list of paths, split on spaces
[ -z "${MUTATION_MODULES:-}" ] || args+=(${MUTATION_MODULES})
exec "$PYTHON" "$ROOT/scripts/mutation.py" "${args[@]}" "$@"
