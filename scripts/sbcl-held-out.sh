#!/usr/bin/env bash
# The two SBCL oracles (definitions, callers) over systems their floors were not measured
# on: the Debian systems of tests/oracle/held-out.txt (or of LIST: tests/oracle/held-out-2.txt
# is a second set), none of them in tests/oracle/systems.txt. One SBCL run (scripts/sbcl-systems.sh, a few minutes of CPU;
# a system that does not load is skipped and named), then the oracle tests read its output
# through LRF_SBCL_HELD_OUT and print their tables, checking no floor.
# Usage: bash scripts/sbcl-held-out.sh [OUT [LIST]]   (OUT, "" for the default: keep SBCL's output there; reused if
# present. LIST: the systems, tests/oracle/held-out.txt by default)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
list=${2:-$here/tests/oracle/held-out.txt}
out=${1:-$here/target/tmp/sbcl-$(basename "$list" .txt).txt}
mkdir -p "$(dirname "$out")"
if [ ! -s "$out" ]; then
  bash "$here/scripts/sbcl-systems.sh" "$out" "$list"
fi
cd "$here"
LRF_SBCL_HELD_OUT=$out cargo test --release --test project \
  -- model_oracle callers_oracle --nocapture --test-threads 1
