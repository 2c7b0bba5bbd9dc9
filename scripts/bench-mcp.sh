#!/usr/bin/env bash
# MCP tools/call latency (BENCHMARKS.md: under 1 ms inside the server for a 100 KB file).
#
# Starts `lisp-read-file mcp --log-level debug`, makes N sequential tools/call requests for
# the collapsed view of a 100 KB Lisp file (the first 100 KB of SBCL's srctran.lisp, cut at
# a line end), and prints the median and p90 of
#   * the time inside the server: the handler's own `micros=` log line per call (the view
#     is computed from the file on disk each time: open, read, scan, outline, render);
#   * over the raw pipe: from the request's write to the answer's last byte read, before
#     the client parses it (the client's JSON parsing is its own cost, ~70 µs in Python);
#   * the round trip seen by the client over the pipe (JSON encoding, pipe, tokio), in a
#     second server at the default log level: at debug, rmcp logs every answer whole on
#     stderr (a 50 KB answer formatted and written again), which a server as clients run
#     it does not do.
# Usage: [LRF_BIN=BINARY] scripts/bench-mcp.sh [CALLS] [FILE]   (defaults: 1000, the srctran.lisp slice)
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-1000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "${2:-}" ]; then
  cp "$2" "$work/file.lisp"
else
  src=/usr/share/sbcl-source/src/compiler/srctran.lisp
  test -f "$src" || { echo "needs $src: apt-get install sbcl-source" >&2; exit 1; }
  head -c 102400 "$src" | sed '$d' > "$work/file.lisp"
fi
# LRF_BIN: another build to measure (a baseline), instead of this tree's release binary.
if [ -n "${LRF_BIN:-}" ]; then
  bin=$(realpath "$LRF_BIN")
else
  cargo build --release -q
  bin=$PWD/target/release/lisp-read-file
fi
echo "file: $(wc -c < "$work/file.lisp") bytes, $(wc -l < "$work/file.lisp") lines; $calls calls"
python3 - "$bin" "$work" "$calls" <<'PY'
import json, re, statistics, subprocess, sys, time
bin, work, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
def start(level):
    return subprocess.Popen([bin, "mcp", "--root", work, "--log-level", level],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=open(f"{work}/stderr-{level}.log", "w"))
def send(message):
    server.stdin.write((json.dumps(message) + "\n").encode())
    server.stdin.flush()
def receive(id):
    """The answer to `id`, and when its last byte was read (before the client parses it)."""
    while True:
        line = server.stdout.readline()
        read = time.perf_counter()
        message = json.loads(line)
        if message.get("id") == id:
            return message, read
def run(level):
    """The round trips of CALLS sequential calls to a server logging at LEVEL, and the last answer."""
    global server
    server = start(level)
    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}})
    receive(0)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    round_trips, raw = [], []
    for i in range(1, calls + 1):
        started = time.perf_counter()
        send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
              "params": {"name": "lisp-read-file", "arguments": {"path": "file.lisp"}}})
        response, read = receive(i)
        round_trips.append((time.perf_counter() - started) * 1e6)
        raw.append((read - started) * 1e6)
        assert response["result"]["isError"] is False, response
    server.stdin.close()
    server.wait()
    return round_trips, raw, response
round_trips_debug, _, _ = run("debug")
round_trips, raw, response = run("warn")
inside = [int(m) for m in re.findall(r'tools/call.*?micros=(\d+)|micros=(\d+).*?tools/call',
                                      open(f"{work}/stderr-debug.log").read()) for m in m if m]
assert len(inside) == calls, f"{len(inside)} server timings for {calls} calls"
def summary(name, values):
    values = sorted(values)
    print(f"{name:<34} median {statistics.median(values):8.0f} µs   p90 {values[int(len(values)*0.9)]:8.0f} µs")
forms = response["result"]["structuredContent"]["meta"]["total_forms"]
print(f"view: lisp-collapsed, {forms} forms, {len(response['result']['content'][0]['text'])} chars")
summary("inside the server (handler)", inside)
summary("raw pipe (request to answer read)", raw)
summary("round trip (client over the pipe)", round_trips)
summary("round trip, server logging at debug", round_trips_debug)
PY
