#!/usr/bin/env python3
"""Compares `lisp-find` answers of an MCP server that kept the tree with fresh ones.

The MCP server keeps the files `lisp-find` read between calls (docs/mcp.md). This asks
one server of NEW every query twice in a row, and a server of OLD started for that query
alone (a binary before the cache, or NEW itself: a fresh server has kept nothing), and
checks that the three answers are the same (the text view and every field). The queries are symbols
picked from the tree's own text (common and rare ones, package-qualified ones), in the
modes symbol, callers and name, some with features, kinds, a narrower path or a later
page, then a few of the other modes.

    scripts/compare-mcp-find.py OLD NEW [ROOT] [QUERIES]
"""

import json
import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

args = sys.argv[1:] + [None] * 4
OLD, NEW = args[0], args[1]
ROOT = args[2] or "/usr/share/sbcl-source"
COUNT = int(args[3] or 150)


class Server:
    def __init__(self, binary):
        self.process = subprocess.Popen([binary, "mcp", "--root", ROOT],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.next = 0
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "compare", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def call(self, method, params):
        self.next += 1
        self.send({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params})
        while True:
            message = json.loads(self.process.stdout.readline())
            if message.get("id") == self.next:
                return message

    def find(self, arguments):
        """The answer as `find --json` prints it: the text view is said once, in `content`."""
        result = self.call("tools/call", {"name": "lisp-find", "arguments": arguments})["result"]
        return dict(result["structuredContent"], content=result["content"][0]["text"])

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def fresh(request):
    """The answer of a server of OLD that has read nothing before."""
    server = Server(OLD)
    answer = server.find(request)
    server.close()
    return answer


def queries():
    """Symbols of the tree, by how often they occur, with variations."""
    rng = random.Random(25)
    files = sorted(p for p in Path(ROOT).rglob("*.lisp") if p.is_file())
    words = Counter()
    for path in rng.sample(files, min(60, len(files))):
        text = path.read_text(errors="replace")
        words.update(re.findall(r"(?<![\w:|-])([a-zA-Z*%+][\w*%+<>=/!?-]*(?::{1,2}[\w*%+<>=/!?-]+)?)", text))
    ranked = [w for w, _ in words.most_common()]
    picked = ranked[:20] + rng.sample(ranked[20:], min(len(ranked) - 20, COUNT))
    subdirectories = ["src/code", "src/compiler", "contrib"]
    for n, word in enumerate(picked):
        mode = ["symbol", "callers", "name"][n % 3]
        name = word.split(":")[-1] if mode == "name" and n % 2 else word
        request = {mode: name}
        if n % 7 == 0:
            request["features"] = ["sbcl", "x86-64", "unix"]
        if n % 11 == 0:
            request["path"] = subdirectories[n % len(subdirectories)]
        if n % 13 == 0:
            request["offset"], request["limit"] = 5, 20
        if n % 17 == 0 and mode != "callers":
            request["kinds"] = ["defun", "defmacro"]
        yield request
    yield {"callers": "(setf aref)"}
    yield {"symbol": "sb-impl::%vector-push"}
    yield {"text": "vector-push"}
    yield {"name_pattern": "^vector-push"}
    yield {"callees": "vector-push"}


new = Server(NEW)
compared = differ = found = 0
for request in queries():
    want = fresh(request)
    found += want["total"] > 0
    for round in ["first", "again"]:
        got = new.find(request)
        compared += 1
        if got != want:
            differ += 1
            print(f"differs ({round} call): {json.dumps(request)}")
new.close()
print(f"{compared} answers compared ({found} queries with entries), {differ} differ")
sys.exit(1 if differ else 0)
