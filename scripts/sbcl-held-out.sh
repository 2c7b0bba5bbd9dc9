#!/usr/bin/env bash
# The two SBCL oracles (definitions, callers) over systems their floors were not measured
# on: the Debian systems of tests/oracle/held-out.txt, none of them in
# tests/oracle/systems.txt. One SBCL run (scripts/sbcl-systems.sh, a few minutes of CPU;
# a system that does not load is skipped and named), then the oracle tests read its output
# through LRF_SBCL_HELD_OUT and print their tables, checking no floor.
# Usage: bash scripts/sbcl-held-out.sh [OUT]   (OUT: keep SBCL's output there; reused if present)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/target/tmp/sbcl-held-out.txt}
mkdir -p "$(dirname "$out")"
if [ ! -s "$out" ]; then
  bash "$here/scripts/sbcl-systems.sh" "$out" "$here/tests/oracle/held-out.txt"
fi
cd "$here"
LRF_SBCL_HELD_OUT=$out cargo test --release --test project \
  -- model_oracle callers_oracle --nocapture --test-threads 1
