#!/usr/bin/env bash
# Writes to OUT what SBCL itself records of the Debian systems of tests/oracle/systems.txt
# (where their names are defined, who calls them): one run of tests/oracle/sbcl-systems.lisp,
# read by the two oracle tests (tests/project/sbcl_systems.rs runs this script, or takes
# its output made beforehand through LRF_SBCL_SYSTEMS=OUT, as .ci/run does to run it
# while the tests build). Every file is compiled, in a fasl cache of the run's own (what
# SBCL records differs between compiling a file and loading its fasl). About 90 s of CPU.
# OUT appears whole (written as OUT.partial, then renamed), or OUT.failed does: a test
# started meanwhile waits for one of them (tests/project/sbcl_systems.rs).
# LIST names another list of systems (scripts/sbcl-held-out.sh gives tests/oracle/held-out.txt).
# Usage: bash scripts/sbcl-systems.sh OUT [LIST]
set -euo pipefail
out=${1:?usage: sbcl-systems.sh OUT [LIST]}
trap 'rc=$?; if [ "$rc" != 0 ]; then touch "$out.failed"; fi' EXIT
here=$(cd "$(dirname "$0")/.." && pwd)
list=${2:-$here/tests/oracle/systems.txt}
systems=$(grep -v '^\s*#' "$list" | grep -v '^\s*$' | sed 's/.*/"&"/' | tr '\n' ' ')
fasls=$(mktemp -d)
trap 'rc=$?; rm -rf "$fasls"; if [ "$rc" != 0 ]; then touch "$out.failed"; fi' EXIT
XDG_CACHE_HOME=$fasls sbcl --non-interactive --no-userinit \
  --load "$here/tests/oracle/sbcl-systems.lisp" \
  --eval "(oracle:run \"$out.partial\" (list $systems))" >/dev/null
test -s "$out.partial"
mv "$out.partial" "$out"
