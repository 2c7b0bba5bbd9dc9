#!/usr/bin/env python3
"""Warm figures of `lisp-read-file lsp` on a source tree (default: SBCL's).

Starts the server over stdio on ROOT, sends `initialized`, times the first request (the
index filled), then runs `definition` and `references` of the symbol at NEEDLE in FILE and
`workspace/symbol` of QUERY, RUNS times each, and prints each one's median in ms.

    scripts/bench-lsp.py [BIN] [ROOT] [FILE] [NEEDLE] [QUERY] [RUNS]
"""

import json
import statistics
import subprocess
import sys
import time

args = sys.argv[1:] + [None] * 6
BIN = args[0] or "target/release/lisp-read-file"
ROOT = args[1] or "/usr/share/sbcl-source"
FILE = args[2] or "src/code/seq.lisp"
NEEDLE = args[3] or "(aver "
QUERY = args[4] or "vector-push"
RUNS = int(args[5] or 21)

server = subprocess.Popen([BIN, "lsp", "--root", ROOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
next_id = 0


def send(message):
    body = json.dumps(dict(message, jsonrpc="2.0")).encode()
    server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    server.stdin.flush()


def receive():
    length = 0
    while True:
        line = server.stdout.readline()
        if line == b"\r\n":
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(server.stdout.read(length))


def request(method, params):
    global next_id
    next_id += 1
    send({"id": next_id, "method": method, "params": params})
    while True:
        message = receive()
        if message.get("id") == next_id and "method" not in message:
            if "error" in message:
                sys.exit(f"{method}: {message['error']}")
            return message["result"]


def timed(method, params):
    start = time.perf_counter()
    result = request(method, params)
    return (time.perf_counter() - start) * 1000, result


request("initialize", {"capabilities": {}, "rootUri": None})
send({"method": "initialized", "params": {}})
path = f"{ROOT}/{FILE}"
lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
line = next(i for i, l in enumerate(lines) if NEEDLE in l)
character = lines[line].index(NEEDLE) + 1
at = {"textDocument": {"uri": f"file://{path}"}, "position": {"line": line, "character": character}}
first, _ = timed("workspace/symbol", {"query": QUERY})
print(f"first request after initialized (index filled): {first:.0f} ms")
for method, params in [
    ("textDocument/definition", at),
    ("textDocument/references", dict(at, context={"includeDeclaration": True})),
    ("workspace/symbol", {"query": QUERY}),
]:
    times, result = zip(*(timed(method, params) for _ in range(RUNS)))
    print(f"{method}: median {statistics.median(times):.1f} ms over {RUNS} runs ({len(result[0] or [])} results)")
request("shutdown", None)
send({"method": "exit"})
