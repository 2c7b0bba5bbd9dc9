#!/bin/sh
# scripts/oracle-report.sh — run the SBCL oracle (tests/oracle/form-ends.lisp) alone.
#
# Usage: scripts/oracle-report.sh [ROOT...]
#   ROOTs default to /usr/share/sbcl-source and /usr/share/common-lisp/source.
#   Prints the number of files, OK/FAIL counts, the wall time, and every FAIL line;
#   the raw oracle output is left in ${ORACLE_OUT:-/tmp/lrf-oracle.txt}.
#
# The full comparison against our binary is the integration test:
#   cargo test --release --test reader sbcl_oracle -- --nocapture
#   LRF_ORACLE_ROOTS=dir1:dir2 cargo test --release --test reader sbcl_oracle -- --nocapture
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
script="$here/tests/oracle/form-ends.lisp"
out=${ORACLE_OUT:-/tmp/lrf-oracle.txt}
[ $# -gt 0 ] || set -- /usr/share/sbcl-source /usr/share/common-lisp/source
command -v sbcl >/dev/null || { echo "sbcl not found (apt-get install sbcl sbcl-source)" >&2; exit 2; }

list=$(mktemp)
trap 'rm -f "$list"' EXIT
for root in "$@"; do
  [ -d "$root" ] || { echo "not a directory: $root" >&2; exit 2; }
  find -L "$root" -type f \( -name '*.lisp' -o -name '*.asd' \) -exec realpath {} +
done | LC_ALL=C sort -u > "$list"

start=$(date +%s.%N)
sbcl --script "$script" < "$list" > "$out" 2>/dev/null
end=$(date +%s.%N)

files=$(wc -l < "$list")
ok=$(grep -c '^OK	' "$out" || true)
fail=$(grep -c '^FAIL	' "$out" || true)
bytes=$(tr '\n' '\0' < "$list" | xargs -0 cat | wc -c)
echo "files: $files  bytes: $bytes  OK: $ok  FAIL: $fail  lines: $(wc -l < "$out")"
awk -v s="$start" -v e="$end" 'BEGIN { printf "time: %.2f s\n", e - s }'
grep '^FAIL	' "$out" | cut -f2,3 || true
