#!/usr/bin/env bash
# CLI benchmarks of BENCHMARKS.md, in one run (machines are noisy: compare the ratios).
#
#   bash scripts/bench-cli.sh [RUNS]        # default 30 runs per command
#
# Needs: hyperfine (Debian package `hyperfine`), GNU time (`time`, for peak memory),
# python3 (reads hyperfine's JSON), and Debian's `sbcl-source` (the corpus). Nothing is
# installed silently: when something is missing the script says what to install and stops.
#
# It builds the release binary and, in a temporary directory, a Rust hello-world (cargo new
# + cargo build --release), then times with hyperfine (medians):
#   1. the collapsed view of src/compiler/srctran.lisp vs the hello-world (process start);
#   2. `lisp-read-file outline` over every .lisp file of the SBCL tree in one command;
#   3. peak memory (/usr/bin/time -v) of those and of the collapsed view (and the outline
#      --json) of a generated 50 MB file: the SBCL sources concatenated (repeated) and cut
#      before a line that starts with `(`;
#   4. peak memory of every view (collapsed, --json, -n, -c, --comments all, --raw,
#      outline, outline --json) of 1 MiB dense files (`()`, `(a)` lines, `'a `, `;` lines)
#      and of the 50 MB file.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${1:-30}
CORPUS=${LISP_READ_FILE_CORPUS:-/usr/share/sbcl-source}
SRCTRAN=$CORPUS/src/compiler/srctran.lisp

missing=()
command -v hyperfine >/dev/null || missing+=(hyperfine)
[ -x /usr/bin/time ] || missing+=(time)
command -v python3 >/dev/null || missing+=(python3)
[ -f "$SRCTRAN" ] || missing+=(sbcl-source)
if ((${#missing[@]})); then
  echo "bench-cli: missing: ${missing[*]}" >&2
  echo "install with: apt-get install ${missing[*]}" >&2
  exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "==> building (release)"
cargo build --release --quiet
BIN=$PWD/target/release/lisp-read-file
(cd "$work" && cargo new --quiet hello && cd hello && cargo build --release --quiet)
HELLO=$work/hello/target/release/hello

find "$CORPUS" -name '*.lisp' -type f | sort >"$work/files"
nfiles=$(wc -l <"$work/files")
corpus_bytes=$(xargs -a "$work/files" cat | wc -c)
srctran_bytes=$(wc -c <"$SRCTRAN")
MAXB=1000000000

echo "==> generating a 50 MB file from the corpus"
python3 - "$work/files" "$work/gen50.lisp" <<'EOF'
import sys
files = [l.rstrip("\n") for l in open(sys.argv[1])]
out = bytearray()
while len(out) < 50_000_000:
    for f in files:
        out += open(f, "rb").read() + b"\n"
        if len(out) >= 50_000_000:
            break
cut = out.rfind(b"\n(", 0, 50_000_000)
open(sys.argv[2], "wb").write(out[: cut + 1])
EOF
gen_bytes=$(wc -c <"$work/gen50.lisp")

# Dense files of 1 MiB: a form every 2 or 3 bytes, a comment on every line.
python3 - "$work" <<'EOF'
import sys
for name, unit in [("parens", b"()"), ("lists", b"(a)\n"), ("quotes", b"'a "), ("comments", b";\n")]:
    open(f"{sys.argv[1]}/dense-{name}.lisp", "wb").write((unit * (1 << 20))[: 1 << 20])
EOF

# The whole tree as one argument list (no shell, no xargs in the timing).
mapfile -t files <"$work/files"
printf -v outline_cmd '%q ' "$BIN" outline --max-file-bytes "$MAXB" "${files[@]}"
printf -v outline_json_cmd '%q ' "$BIN" outline --json --max-file-bytes "$MAXB" "${files[@]}"

echo "==> hyperfine: $RUNS runs each, medians"
hyperfine -N --warmup 10 --runs "$RUNS" --export-json "$work/start.json" \
  --command-name "collapsed srctran.lisp" "$BIN $SRCTRAN" \
  --command-name "hello-world" "$HELLO" >/dev/null
hyperfine -N --warmup 2 --runs "$(( RUNS < 15 ? RUNS : 15 ))" --export-json "$work/tree.json" \
  --command-name "outline, whole tree" "$outline_cmd" \
  --command-name "outline --json, whole tree" "$outline_json_cmd" >/dev/null

peak() { # peak resident set in KB of one run of "$@"
  /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident set size/ {print $2}'
}
echo "==> peak memory (/usr/bin/time -v)"
{
  echo "hello-world 0 $(peak "$HELLO")"
  echo "collapsed-srctran $srctran_bytes $(peak "$BIN" "$SRCTRAN")"
  echo "outline-whole-tree $corpus_bytes $(peak "$BIN" outline --max-file-bytes "$MAXB" "${files[@]}")"
  echo "collapsed-50MB $gen_bytes $(peak "$BIN" --max-file-bytes "$MAXB" "$work/gen50.lisp")"
  echo "outline-json-50MB $gen_bytes $(peak "$BIN" outline --json --max-file-bytes "$MAXB" "$work/gen50.lisp")"
  # Every view of each dense file, and of the 50 MB file.
  for f in "$work"/dense-*.lisp "$work/gen50.lisp"; do
    name=$(basename "$f" .lisp)
    bytes=$(wc -c <"$f")
    for view in collapsed --json "-n foo" "-c foo" "--comments all" --raw outline "outline --json"; do
      args=()
      [ "$view" = collapsed ] || read -ra args <<<"$view"
      if [ "${args[0]:-}" = outline ]; then
        kb=$(peak "$BIN" outline "${args[@]:1}" --max-file-bytes "$MAXB" "$f")
      else
        kb=$(peak "$BIN" --max-file-bytes "$MAXB" "${args[@]}" "$f")
      fi
      echo "${name}:${view// /_} $bytes $kb"
    done
  done
} >"$work/peak.txt"
hyperfine -N --warmup 1 --runs 5 --export-json "$work/big.json" \
  --command-name "collapsed 50 MB" "$BIN --max-file-bytes $MAXB $work/gen50.lisp" \
  --command-name "outline --json 50 MB" "$BIN outline --json --max-file-bytes $MAXB $work/gen50.lisp" >/dev/null

python3 - "$work" "$nfiles" "$corpus_bytes" "$srctran_bytes" "$gen_bytes" <<'EOF'
import json, sys
work, nfiles, corpus, srctran, gen = sys.argv[1], *map(int, sys.argv[2:])
def load(name):
    return {r["command"]: r for r in json.load(open(f"{work}/{name}.json"))["results"]}
start, tree, big = load("start"), load("tree"), load("big")
ms = lambda r: r["median"] * 1e3
def verdict(ok): return "PASS" if ok else "FAIL"
print()
print(f"corpus: {nfiles} .lisp files, {corpus} bytes; srctran.lisp {srctran} bytes; generated file {gen} bytes")
print()
print(f"{'command':<30} {'median ms':>10} {'min ms':>8} {'max ms':>8}")
for r in [*start.values(), *tree.values(), *big.values()]:
    print(f"{r['command']:<30} {ms(r):>10.2f} {min(r['times'])*1e3:>8.2f} {max(r['times'])*1e3:>8.2f}")
s, h = ms(start["collapsed srctran.lisp"]), ms(start["hello-world"])
t = ms(tree["outline, whole tree"])
print()
print("BENCHMARKS.md targets:")
print(f"  collapsed srctran.lisp: {s:.2f} ms (target < 3 ms) {verdict(s < 3)}; "
      f"{s/h:.2f}x hello-world {h:.2f} ms (target < 3x) {verdict(s/h < 3)}")
print(f"  outline, whole tree: {t:.1f} ms (target < 100 ms) {verdict(t < 100)}; "
      f"{corpus/1e6/(t/1e3):.0f} MB/s including process start, reading and printing")
print()
print(f"{'peak memory':<30} {'file bytes':>12} {'peak KB':>10} {'limit KB':>10}")
for line in open(f"{work}/peak.txt"):
    name, size, kb = line.split()
    size, kb = int(size), int(kb)
    if size == 0 or name.startswith("outline-whole"):
        # hello-world: the floor; the whole tree is many files: the largest one bounds it.
        print(f"{name:<30} {size:>12} {kb:>10} {'':>10}")
        continue
    limit = (4 * size + 8 * 1024 * 1024) // 1024
    print(f"{name:<30} {size:>12} {kb:>10} {limit:>10}  {verdict(kb < limit)} (4x file + 8 MB)")
EOF
