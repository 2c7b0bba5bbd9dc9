#!/usr/bin/env bash
# Byte-for-byte comparison of this tree's binary with another build, for changes that must
# not change any output (optimisations, refactorings).
#
#   bash scripts/compare-outputs.sh OLD_BINARY [MODES]
#
# Builds target/release/lisp-read-file and runs it and OLD_BINARY on every .lisp and .asd
# file of Debian's sbcl-source and cl-* packages (/usr/share/sbcl-source,
# /usr/share/common-lisp/source) and of fixtures/, in four modes: `outline --json`,
# `outline`, the collapsed view, and the view expanding every name with a preceding
# comment. Prints each file whose output (stdout, stderr or exit code) differs, then the
# counts; exits 1 if any differs.
#
# An old binary: `git worktree add /tmp/old <commit> && (cd /tmp/old && cargo build
# --release)`, then pass /tmp/old/target/release/lisp-read-file.
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: scripts/compare-outputs.sh OLD_BINARY}
[ -x "$old" ] || { echo "not an executable: $old" >&2; exit 2; }
cargo build --release --quiet
new=$PWD/target/release/lisp-read-file
big="--max-file-bytes 1000000000"
modes=("outline --json $big" "outline $big" "$big" "--comments preceding -n a $big")

files=$(find /usr/share/sbcl-source /usr/share/common-lisp/source fixtures \
  -type f \( -name '*.lisp' -o -name '*.asd' \) 2>/dev/null | sort)
count=0
differ=0
for f in $files; do
  count=$((count + 1))
  for args in "${modes[@]}"; do
    # shellcheck disable=SC2086 # the modes are word lists
    a=$("$old" $args "$f" 2>&1; echo "exit $?")
    # shellcheck disable=SC2086
    b=$("$new" $args "$f" 2>&1; echo "exit $?")
    if [ "$a" != "$b" ]; then
      echo "differs: $args $f"
      differ=$((differ + 1))
    fi
  done
done
echo "files: $count; modes: ${#modes[@]}; differing outputs: $differ"
[ "$differ" -eq 0 ]
