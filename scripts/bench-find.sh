#!/usr/bin/env bash
# `lisp-read-file find` against ripgrep over SBCL's sources (BENCHMARKS.md#find), whole
# commands, in one run (machines are noisy: compare the ratios of one run).
#
#   bash scripts/bench-find.sh [RUNS]        # default 20 runs per command
#
# Needs: ripgrep (`apt-get install ripgrep`), hyperfine (`apt-get install hyperfine`),
# python3 (reads hyperfine's JSON) and Debian's `sbcl-source` (the corpus). A missing tool
# is named with how to install it, and the benchmark is skipped (exit 0 for ripgrep, so
# that a CI step can run it without ripgrep; exit 2 for the others).
#
# No index, no cache on either side: both read every Lisp file of the tree each time
# (the page cache is warm after the warm-up runs, for both). Three pairs:
#   1. references of a common symbol: `find --symbol node` vs `rg -w -i node`;
#   2. the same for `lvar`;
#   3. definitions across the tree: `find --name-pattern '^make-'` vs the corresponding
#      plain search with the issue's flags, `rg -w -i 'make-\w*'` (words that begin with
#      make-: the target's pair); shown too, not targets: the bare literal without -w,
#      `rg -i 'make-'`, and the search for definitions so named, `rg -i '\(def\S*\s+make-'`.
# rg is given the same files: --no-ignore and the Lisp extensions the walk takes. The find
# side raises the size cap (--max-file-bytes) so that no file is skipped that rg reads.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${1:-20}
CORPUS=${LISP_READ_FILE_CORPUS:-/usr/share/sbcl-source}

if ! command -v rg >/dev/null; then
  echo "bench-find: ripgrep is missing; install it with: apt-get install -y ripgrep (skipped)" >&2
  exit 0
fi
missing=()
command -v hyperfine >/dev/null || missing+=(hyperfine)
command -v python3 >/dev/null || missing+=(python3)
[ -d "$CORPUS/src" ] || missing+=(sbcl-source)
if ((${#missing[@]})); then
  echo "bench-find: missing: ${missing[*]}" >&2
  echo "install with: apt-get install ${missing[*]}" >&2
  exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "==> building (release)"
cargo build --release --quiet
BIN=$PWD/target/release/lisp-read-file
GLOBS=(-g '*.lisp' -g '*.lsp' -g '*.cl' -g '*.asd' -g '*.ros' -g '*.LISP' -g '*.CL')
FIND=("$BIN" find --max-file-bytes 1000000000)
RG=(rg --no-ignore "${GLOBS[@]}")

cd "$CORPUS"
nfiles=$("${FIND[@]}" --symbol zzzzzz-none . | tail -1 | sed 's/.*; \([0-9]*\) files searched.*/\1/')
echo "==> $CORPUS: $nfiles Lisp files; $(nproc) cores; $RUNS runs each"
echo "==> what each side finds"
for s in node lvar; do
  echo "find --symbol $s: $("${FIND[@]}" --symbol "$s" . | grep '^\[[0-9]* form')"
  echo "rg -w -i $s: $("${RG[@]}" -w -i -c "$s" . | awk -F: '{n+=$NF} END {print n " lines"}')"
done
echo "find --name-pattern ^make-: $("${FIND[@]}" --name-pattern '^make-' . | grep '^\[[0-9]* def')"
echo "rg -w -i make-\\w*: $("${RG[@]}" -w -i -c 'make-\w*' . | awk -F: '{n+=$NF} END {print n " lines"}')"
echo "rg -i make-: $("${RG[@]}" -i -c 'make-' . | awk -F: '{n+=$NF} END {print n " lines"}')"
echo "rg -i (def...make-: $("${RG[@]}" -i -c '\(def\S*\s+make-' . | awk -F: '{n+=$NF} END {print n " lines"}')"

q() { printf '%q ' "$@"; }
hyperfine -N --warmup 3 --runs "$RUNS" --export-json "$work/find.json" \
  -n 'find --symbol node' "$(q "${FIND[@]}" --symbol node .)" \
  -n 'rg -w -i node' "$(q "${RG[@]}" -w -i node .)" \
  -n 'find --symbol lvar' "$(q "${FIND[@]}" --symbol lvar .)" \
  -n 'rg -w -i lvar' "$(q "${RG[@]}" -w -i lvar .)" \
  -n 'find --name-pattern ^make-' "$(q "${FIND[@]}" --name-pattern '^make-' .)" \
  -n 'rg -w -i make-\w*' "$(q "${RG[@]}" -w -i 'make-\w*' .)" \
  -n 'rg -i make-' "$(q "${RG[@]}" -i 'make-' .)" \
  -n 'rg -i (def\S*\s+make-' "$(q "${RG[@]}" -i '\(def\S*\s+make-' .)" \
  >/dev/null

python3 - "$work/find.json" <<'PY'
import json, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
ms = lambda name: results[name]["median"] * 1e3
print(f"{'command':<30} {'median ms':>10} {'min ms':>8} {'max ms':>8}")
for name, r in results.items():
    print(f"{name:<30} {r['median']*1e3:>10.1f} {r['min']*1e3:>8.1f} {r['max']*1e3:>8.1f}")
print()
for ours, theirs, target in [("find --symbol node", "rg -w -i node", True),
                             ("find --symbol lvar", "rg -w -i lvar", True),
                             ("find --name-pattern ^make-", "rg -w -i make-\\w*", True),
                             ("find --name-pattern ^make-", "rg -i make-", False),
                             ("find --name-pattern ^make-", "rg -i (def\\S*\\s+make-", False)]:
    ratio = ms(ours) / ms(theirs)
    verdict = ("PASS" if ratio <= 1.5 else "FAIL") if target else "not a target"
    print(f"{ours} / {theirs}: {ratio:.2f}x  (<= 1.5x: {verdict})")
PY
