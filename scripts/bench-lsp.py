#!/usr/bin/env python3
"""Warm figures of `lisp-read-file lsp` on a source tree (default: SBCL's).

Starts the server over stdio on ROOT, sends `initialized`, times the first request (the
index filled), then runs `definition` and `references` of the symbol at NEEDLE in FILE and
`workspace/symbol` of QUERY, RUNS times each, and prints each one's median in ms. Then it
opens a buffer of BIG_BYTES (BIG_FILES of ROOT one after the other, cut at a line), types
one character into it RUNS times (`didChange`), timing each until its diagnostics come
back and until `documentSymbol` answers with the new text, and prints the server's
resident memory (VmRSS, VmHWM) against the bytes of the tree's Lisp files; then times
`definition` of a name no file defines (`find --name` over the roots, what each file taught
kept between requests) and prints the memory again. Last, the MCP
server on ROOT answers `lisp-find` of QUERY as a symbol, as callers and as a name, RUNS
times each (the first call apart), with its CPU time per call and resident memory.

    scripts/bench-lsp.py [BIN] [ROOT] [FILE] [NEEDLE] [QUERY] [RUNS]
"""

import os
import pathlib

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


def notification(method):
    """The next notification `method` the server sends."""
    while True:
        message = receive()
        if message.get("method") == method and "id" not in message:
            return message["params"]


def cpu_ms():
    """The server's CPU time so far (user and system, all threads), in ms."""
    fields = open(f"/proc/{server.pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


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
    cpu = cpu_ms()
    times, result = zip(*(timed(method, params) for _ in range(RUNS)))
    cpu = (cpu_ms() - cpu) / RUNS
    print(f"{method}: median {statistics.median(times):.1f} ms over {RUNS} runs, "
          f"{cpu:.1f} ms of CPU each ({len(result[0] or [])} results)")
BIG_BYTES = 500 * 1024
BIG_FILES = ["contrib/asdf/uiop.lisp", "src/code/seq.lisp", "src/code/target-format.lisp"]
big = b"".join(open(f"{ROOT}/{f}", "rb").read() for f in BIG_FILES)
big = big[: big.index(b"\n", BIG_BYTES) + 1].decode("utf-8", errors="replace")
big_uri = f"file://{ROOT}/bench-buffer-not-on-disk.lisp"
send({"method": "textDocument/didOpen", "params": {"textDocument": {
    "uri": big_uri, "languageId": "lisp", "version": 1, "text": big}}})
notification("textDocument/publishDiagnostics")
diagnostics, symbols = [], []
cpu = cpu_ms()
for n in range(RUNS):
    start = time.perf_counter()
    # One character typed at the start of line 1 (a space: the text stays readable).
    send({"method": "textDocument/didChange", "params": {
        "textDocument": {"uri": big_uri, "version": n + 2},
        "contentChanges": [{"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}}, "text": " "}]}})
    notification("textDocument/publishDiagnostics")
    diagnostics.append((time.perf_counter() - start) * 1000)
    request("textDocument/documentSymbol", {"textDocument": {"uri": big_uri}})
    symbols.append((time.perf_counter() - start) * 1000)
print(f"didChange of one character in a {len(big.encode()) // 1024} KB buffer: diagnostics "
      f"median {statistics.median(diagnostics):.1f} ms, fresh documentSymbol median "
      f"{statistics.median(symbols):.1f} ms over {RUNS} runs, {(cpu_ms() - cpu) / RUNS:.1f} ms "
      f"of CPU each (both)")
status = dict(l.split(":", 1) for l in open(f"/proc/{server.pid}/status").read().splitlines() if ":" in l)
lisp = sum(p.stat().st_size for e in ["lisp", "lsp", "cl", "asd", "ros"] for p in pathlib.Path(ROOT).rglob(f"*.{e}"))
rss, hwm = (int(status[k].split()[0]) * 1024 for k in ["VmRSS", "VmHWM"])
print(f"memory: VmRSS {rss / 2**20:.0f} MiB, VmHWM {hwm / 2**20:.0f} MiB, Lisp files "
      f"{lisp / 2**20:.0f} MiB (RSS {rss / lisp:.2f}x the source bytes)")
# Then a name no file defines (a local variable): `definition` asks `find --name` of the roots.
UNDEFINED = "(result"
line = next(i for i, l in enumerate(lines) if UNDEFINED in l)
unknown = dict(at, position={"line": line, "character": lines[line].index(UNDEFINED) + 1})
cpu = cpu_ms()
times, result = zip(*(timed("textDocument/definition", unknown) for _ in range(RUNS)))
print(f"textDocument/definition of a name no file defines: median {statistics.median(times):.1f} ms "
      f"over {RUNS} runs, {(cpu_ms() - cpu) / RUNS:.1f} ms of CPU each ({len(result[0] or [])} results)")
status = dict(l.split(":", 1) for l in open(f"/proc/{server.pid}/status").read().splitlines() if ":" in l)
rss, hwm = (int(status[k].split()[0]) * 1024 for k in ["VmRSS", "VmHWM"])
print(f"memory after it: VmRSS {rss / 2**20:.0f} MiB, VmHWM {hwm / 2**20:.0f} MiB "
      f"(RSS {rss / lisp:.2f}x the source bytes)")
request("shutdown", None)
send({"method": "exit"})


def mcp_find():
    """Medians of `lisp-find` of QUERY (symbol, callers, name) over ROOT through
    `lisp-read-file mcp`: the first call apart, then RUNS calls of each, with the server's
    CPU time per call and its resident memory at the end."""
    mcp = subprocess.Popen([BIN, "mcp", "--root", ROOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def call(id, method, params):
        mcp.stdin.write((json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}) + "\n").encode())
        mcp.stdin.flush()
        while True:
            message = json.loads(mcp.stdout.readline())
            if message.get("id") == id:
                return message

    def mcp_cpu_ms():
        fields = open(f"/proc/{mcp.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")

    call(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}})
    mcp.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
    next_id = 1
    for mode in ["symbol", "callers", "name"]:
        times, cpus = [], []
        for n in range(RUNS + 1):
            cpu = mcp_cpu_ms()
            start = time.perf_counter()
            answer = call(next_id, "tools/call", {"name": "lisp-find", "arguments": {mode: QUERY}})
            times.append((time.perf_counter() - start) * 1000)
            cpus.append(mcp_cpu_ms() - cpu)
            next_id += 1
            assert not answer["result"].get("isError"), answer
        print(f"MCP lisp-find {mode} {QUERY}: first call {times[0]:.0f} ms ({cpus[0]:.0f} ms of CPU), "
              f"then median {statistics.median(times[1:]):.1f} ms over {RUNS} calls, "
              f"{sum(cpus[1:]) / RUNS:.1f} ms of CPU each")
    status = dict(l.split(":", 1) for l in open(f"/proc/{mcp.pid}/status").read().splitlines() if ":" in l)
    print(f"MCP memory: VmRSS {int(status['VmRSS'].split()[0]) / 1024:.0f} MiB, "
          f"VmHWM {int(status['VmHWM'].split()[0]) / 1024:.0f} MiB")
    mcp.stdin.close()
    mcp.wait()


mcp_find()
