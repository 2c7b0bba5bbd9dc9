#!/usr/bin/env bash
# Instructions a `tools/call` costs the MCP server (BENCHMARKS.md#a-dense-file-sbcls-fndblisp).
#
# Runs `lisp-read-file mcp` under `valgrind --tool=callgrind` twice, answering 1 and then
# N+1 sequential tools/call requests for the collapsed view of FILE, and prints the
# difference divided by N: the cost of one call without the start-up. The profiles stay
# in target/callgrind-mcp/ for `callgrind_annotate`.
# Usage: [LRF_BIN=BINARY] scripts/callgrind-mcp.sh [N] [FILE]   (defaults: 20, SBCL's fndb.lisp)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-20}
file=${2:-/usr/share/sbcl-source/src/compiler/fndb.lisp}
if [ -n "${LRF_BIN:-}" ]; then
  bin=$(realpath "$LRF_BIN")
else
  cargo build --release -q
  bin=$PWD/target/release/lisp-read-file
fi
out=$PWD/target/callgrind-mcp
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
cp "$file" "$work/file.lisp"
python3 - "$bin" "$work" "$n" "$out" <<'PY'
import json, re, subprocess, sys
bin, work, n, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
def run(calls):
    profile = f"{out}/callgrind.{calls}.out"
    p = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={profile}",
                          bin, "mcp", "--root", work],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    def send(m):
        p.stdin.write((json.dumps(m) + "\n").encode()); p.stdin.flush()
    def receive(i):
        while True:
            m = json.loads(p.stdout.readline())
            if m.get("id") == i:
                return m
    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "cg", "version": "1"}}})
    receive(0)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for i in range(1, calls + 1):
        send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
              "params": {"name": "lisp-read-file", "arguments": {"path": "file.lisp"}}})
        assert receive(i)["result"]["isError"] is False
    p.stdin.close()
    p.wait()
    text = subprocess.run(["callgrind_annotate", profile], capture_output=True, text=True).stdout
    return int(re.search(r"([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS", text).group(1).replace(",", ""))
one, many = run(1), run(n + 1)
print(f"{bin}: {(many - one) / n / 1e6:.2f} M instructions a call ({one:,} for 1 call, {many:,} for {n + 1})")
PY
