#!/usr/bin/env python3
"""The token benchmark (BENCHMARKS.md#token-benchmark): what a code agent receives to
answer each task of benches/tokens/tasks.json with the plain tools every host has (a
line-window reader and rg) against this project's tools, with every answer checked.

    .venv/bin/python scripts/bench-tokens.py              # all tasks, the table
    .venv/bin/python scripts/bench-tokens.py --check      # 3 tasks, answers verified (CI)
    .venv/bin/python scripts/bench-tokens.py --only ID,ID --show   # print what was received

Needs: ripgrep, Debian's Common Lisp sources and sbcl-source (the corpus), the release
binary (built if missing), and the tokenizer package of benches/tokens/requirements.txt
(bpe-openai: OpenAI's o200k_base BPE vocabulary ships inside the wheel; nothing is
downloaded at run time). Exit status: 1 when an answer of the plain side is wrong (the
benchmark itself is broken); with --check, also when an answer of ours is wrong or the
self-test fails; with --require-goal, also unless the goal is met (every answer of ours correct, at least 5x
fewer tokens in total, and more tokens than the plain tools on no task); else 0, whatever
the ratios.

Each side runs a fixed, scripted call sequence, the best a competent agent would use (see
PLAIN and OURS below); follow-up calls are decided from the text received, as an agent
would, never from the expected facts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benches" / "tokens"))
import gen_log  # noqa: E402
import lisp_truth as lt  # noqa: E402

TASKS = REPO / "benches" / "tokens" / "tasks.json"
CHECK_TASKS = ["where-ppcre-scan", "callers-drakma-url-encode", "exports-yason"]

# The line-window reader: Claude Code's Read (cat -n numbering, a 2,000-line default
# window, lines over 2,000 characters cut, a refusal past 25,000 tokens).
READ_DEFAULT_LIMIT = 2000
READ_MAX_LINE = 2000
READ_MAX_TOKENS = 25000
# The windows the scripted plain agent asks for when it reads on from a line rg gave.
SIGNATURE_WINDOW = 20
BODY_WINDOW = 60
PACKAGE_WINDOW = 100
RG_LISP = ["-t", "lisp"]
DEF_LINES = r"^\s*\(def"  # the definitions, nested ones too, to name the enclosing one


@dataclass
class Call:
    tool: str
    args: str
    text: str
    structured: str = ""  # MCP only: the structuredContent, as JSON


@dataclass
class Side:
    calls: list[Call] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n".join(c.text for c in self.calls)


class Tokenizer:
    def __init__(self):
        try:
            import bpe_openai
        except ImportError:
            sys.exit("bench-tokens: the tokenizer is missing: "
                     ".venv/bin/pip install -r benches/tokens/requirements.txt")
        self.name = "o200k_base (bpe-openai)"
        self.enc = bpe_openai.get_encoding("o200k_base")

    def count(self, text: str) -> int:
        return len(self.enc.encode(text)) if text else 0


# ---------------------------------------------------------------- the plain tools


def read_tool(tok: Tokenizer, root: str, rel: str, offset: int | None = None,
              limit: int | None = None) -> str:
    """Claude Code's Read: `offset` the 1-based first line, `limit` the line count."""
    lines = Path(root, rel).read_text(encoding="utf-8", errors="replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    first = max(1, offset or 1)
    window = lines[first - 1: first - 1 + (limit or READ_DEFAULT_LIMIT)]
    out = "".join(f"{first + i:6d}\t{line[:READ_MAX_LINE]}\n" for i, line in enumerate(window))
    n = tok.count(out)
    if n > READ_MAX_TOKENS:
        return (f"File content ({n} tokens) exceeds maximum allowed tokens ({READ_MAX_TOKENS}). "
                "Please use offset and limit parameters to read specific portions of the file, "
                "or use the GrepTool to search for specific content.")
    return out


def rg_tool(cwd: str, args: list[str]) -> str:
    # stdin /dev/null: rg searches the directory, never a pipe it happens to inherit
    r = subprocess.run(["rg", *args], cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if r.returncode > 1:
        raise RuntimeError(f"rg {args}: {r.stderr}")
    return r.stdout + r.stderr


def rg_call(side: Side, cwd: str, args: list[str]) -> str:
    text = rg_tool(cwd, args)
    side.calls.append(Call("rg", " ".join(quote(a) for a in args), text))
    return text


def read_call(side: Side, tok: Tokenizer, root: str, rel: str, offset=None, limit=None) -> str:
    text = read_tool(tok, root, rel, offset, limit)
    desc = rel + (f" offset={offset}" if offset else "") + (f" limit={limit}" if limit else "")
    side.calls.append(Call("Read", desc, text))
    return text


def quote(a: str) -> str:
    return a if re.fullmatch(r"[\w./=,:+-]+", a) else "'" + a.replace("'", "'\\''") + "'"


def rx(text: str) -> str:
    """TEXT as a literal in rg's regex syntax."""
    return re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\1", text)


def token_rx(symbol: str) -> str:
    return r"(?i)(^|[\s('`,@:])" + rx(symbol) + r"($|[\s)])"


def rg_hits(text: str) -> list[tuple[str, int, str]]:
    hits = []
    for line in text.splitlines():
        m = re.match(r"^(.+?):(\d+):(.*)$", line)
        if m:
            hits.append((m.group(1), int(m.group(2)), m.group(3)))
    return hits


def read_lines(text: str) -> list[str]:
    return [re.sub(r"^\s*\d+\t", "", l) for l in text.splitlines()]


def closed(lines: list[str]) -> bool:
    """Whether the first form of LINES ends within them (the agent reads until it does)."""
    items = lt.parse("\n".join(lines))
    return bool(items) and isinstance(items[0], lt.Node) and items[0].end > 0


def read_form(side: Side, tok: Tokenizer, root: str, rel: str, line: int, window: int,
              done=closed) -> None:
    """Read windows from LINE on until DONE says the lines read are enough (by default:
    the form that starts there is closed)."""
    got: list[str] = []
    offset = line
    while True:
        text = read_call(side, tok, root, rel, offset, window)
        lines = read_lines(text)
        got += lines
        if done(got) or len(lines) < window:
            return
        offset += window


def pick_definition(hits, name: str, operator: str):
    pat = re.compile(r"(?i)\((\S+:)?" + re.escape(operator) + r"\s+" + re.escape(name) + r"(\s|\)|$)")
    for hit in hits:
        if pat.search(hit[2]):
            return hit
    return hits[0] if hits else None


def plain_where(task, tok, side):
    root, name = task["root"], task["name"]
    hits = rg_hits(rg_call(side, root, ["-n", "-i", *RG_LISP, r"\(def\S*\s+" + rx(name) + r"(\s|\)|$)"]))
    hit = pick_definition(hits, name, task["operator"])
    if hit and not lambda_list_closed([hit[2]], name):
        read_form(side, tok, root, hit[0], hit[1], SIGNATURE_WINDOW,
                  lambda got: lambda_list_closed(got, name))


def lambda_list_closed(lines: list[str], name: str) -> bool:
    """Whether the lambda list after NAME on the first of LINES is closed within them."""
    text = "\n".join(lines)
    rest = text[text.lower().find(name.lower()) + len(name):]
    items = lt.parse(rest)
    return bool(items) and isinstance(items[0], lt.Node) and items[0].end > 0


def plain_body(task, tok, side):
    root, name = task["root"], task["name"]
    hits = rg_hits(rg_call(side, root, ["-n", "-i", *RG_LISP, r"\(def\S*\s+" + rx(name) + r"(\s|\)|$)"]))
    hit = pick_definition(hits, name, task["operator"])
    if hit:
        read_form(side, tok, root, hit[0], hit[1], BODY_WINDOW)


def plain_uses(side, root, pattern: str):
    files = rg_call(side, root, ["-l", *RG_LISP, pattern]).split()
    if files:
        rg_call(side, root, ["-n", *RG_LISP, "-e", pattern, "-e", DEF_LINES, *files])


def plain_callers(task, tok, side):
    plain_uses(side, task["root"], token_rx(task["symbol"]))


def plain_mentions(task, tok, side):
    plain_uses(side, task["root"], rx(task["text"]))


def plain_methods(task, tok, side):
    rg_call(side, task["root"], ["-n", "-i", *RG_LISP, r"\(defmethod\s+" + rx(task["name"]) + r"(\s|$)"])


def plain_system(task, tok, side):
    read_call(side, tok, task["root"], task["asd"])


def plain_exports(task, tok, side):
    root, p = task["root"], task["package"]
    hits = rg_hits(rg_call(side, root, ["-n", "-i", *RG_LISP, r"\(defpackage\s+[#:\x22]*" + rx(p) + r"([\s\x22)]|$)"]))
    if hits:
        read_form(side, tok, root, hits[0][0], hits[0][1], PACKAGE_WINDOW)


def plain_outline(task, tok, side):
    rg_call(side, task["root"], ["-n", r"^\s*(#[+-]\S+\s+)?\(def\S*\s", task["file"]])


def plain_log(task, tok, side):
    root = log_dir(task)
    if task["id"] == "log-error-backtrace":
        rg_call(side, root, ["-n", "-B", "5", "-A", "20", "ERROR", "app.log"])
    elif task["id"] == "log-first-timeout":
        rg_call(side, root, ["-n", "-m", "1", "-B", "5", "timed out", "app.log"])
    else:
        hits = rg_hits("app.log:" + rg_call(side, root, ["-n", "server restarted", "app.log"]).replace("\n", "\napp.log:"))
        if hits:
            read_call(side, tok, root, "app.log", hits[-1][1], 10)


PLAIN = {"where": plain_where, "body": plain_body, "callers": plain_callers, "methods": plain_methods,
         "system": plain_system, "mentions": plain_mentions, "exports": plain_exports,
         "outline": plain_outline, "log": plain_log}

# ---------------------------------------------------------------- this project's tools


def ours_call(side: Side, binary: str, cwd: str, args: list[str]) -> str:
    r = subprocess.run([binary, *args], cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    text = r.stdout + r.stderr  # a shell tool shows both
    side.calls.append(Call("lisp-read-file", " ".join(quote(a) for a in args), text))
    return text


def ours_args(task) -> tuple[str, list[str]]:
    k = task["kind"]
    if k == "where":
        return task["root"], ["find", "--name", task["name"]]
    if k == "body":
        return task["root"], ["find", "--name", task["name"], "--kinds", task["operator"], "--body"]
    if k == "callers":
        # "Which definitions use X": their names (docs/find.md#names), not the use lines.
        return task["root"], ["find", "--symbol", task["symbol"], "--detail", "names"]
    if k == "methods":
        return task["root"], ["find", "--name", task["name"], "--kinds", "defmethod"]
    if k == "system":
        return task["root"], ["--detail", "counts", task["asd"]]
    if k == "mentions":
        return task["root"], ["find", "--text", task["text"]]
    if k == "exports":
        # A defpackage's entry lists its exports (docs/find.md#packages): not the whole form.
        return task["root"], ["find", "--name", task["package"], "--kinds", "defpackage"]
    if k == "outline":
        return task["root"], ["--detail", "names", task["file"]]
    if task["id"] == "log-first-timeout":
        # The first match and the 5 lines before it, as grep -m 1 -B 5 (docs/views.md).
        return log_dir(task), ["-c", "timed out", "-m", "1", "-B", "5", "app.log"]
    pattern, context = {"log-error-backtrace": ("ERROR", "12"),
                        "log-last-restart": ("server restarted", "0")}[task["id"]]
    return log_dir(task), ["-c", pattern, "--context", context, "app.log"]


def run_ours(task, binary: str, side: Side, surface: str) -> None:
    cwd, args = ours_args(task)
    call = (lambda a: mcp_call(side, binary, cwd, a)) if surface == "mcp" else \
        (lambda a: ours_call(side, binary, cwd, a))
    call(args)
    if task["id"] == "log-last-restart":
        # As the plain side: the matching lines, then a window from the last one.
        # The grep of a text file prints matching lines as grep -n does: N:text.
        hits = re.findall(r"(?m)^(\d+):", side.calls[-1].text)
        if hits:
            last = int(hits[-1])
            call(["--lines", f"{last}..{last + 5}", "app.log"])


def mcp_arguments(args: list[str]) -> tuple[str, dict]:
    """The MCP tool call that is the command line ARGS (the same request)."""
    tool = "lisp-find" if args[0] == "find" else "lisp-read-file"
    rest = args[1:] if args[0] == "find" else args
    out: dict = {}
    names = {"--name": "name", "--symbol": "symbol", "-c": "content_pattern", "--text": "text", "--limit": "limit",
             "--context": "context_lines", "--detail": "detail", "-m": "max_count", "-B": "before_context"}
    i = 0
    while i < len(rest):
        a = rest[i]
        if a == "--body":
            out["include_body"] = True
        elif a == "--kinds":
            i += 1
            out["kinds"] = rest[i].split(",")
        elif a == "--lines":
            i += 1
            first, last = rest[i].split("..")
            out["strategy"] = {"type": "lineRange", "startLine": int(first), "endLine": int(last)}
        elif a in names:
            i += 1
            out[names[a]] = int(rest[i]) if a in ("--limit", "--context", "-m", "-B") else rest[i]
        else:
            out["path"] = a
        i += 1
    return tool, out


def mcp_call(side: Side, binary: str, cwd: str, args: list[str]) -> None:
    """One tools/call to `lisp-read-file mcp --root CWD` over stdio. What the model sees
    is the text content; the structuredContent a host may forward too is kept apart."""
    tool, arguments = mcp_arguments(args)
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench-tokens", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments}},
    ]
    proc = subprocess.Popen([binary, "mcp", "--root", cwd], cwd=cwd, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdin and proc.stdout
    result = None
    for m in msgs:
        proc.stdin.write(json.dumps(m) + "\n")
        proc.stdin.flush()
        if "id" in m:
            while True:
                reply = json.loads(proc.stdout.readline())
                if reply.get("id") == m["id"]:
                    result = reply.get("result") or {"content": [{"type": "text", "text": json.dumps(reply)}]}
                    break
    proc.stdin.close()
    proc.wait(timeout=30)
    text = "".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")
    call = Call("mcp " + tool, json.dumps(arguments), text)
    call.structured = json.dumps(result.get("structuredContent"), ensure_ascii=False) \
        if result.get("structuredContent") is not None else ""
    side.calls.append(call)


# ---------------------------------------------------------------- checking answers

PREFIXES = [
    re.compile(r"^\s*\d+\t"),  # Read (cat -n)
    re.compile(r"^[\w./+-]+[:-]\d+[:-]"),  # rg -n with a file name
    re.compile(r"^\d+[:-]"),  # rg -n on one file
    re.compile(r"^\s*\d+: ?"),  # lisp-read-file views and find
]


def normalize(text: str) -> str:
    """The received text without the tools' line-number prefixes."""
    out = []
    for line in text.splitlines():
        for p in PREFIXES:
            m = p.match(line)
            if m:
                line = line[m.end():]
                break
        out.append(line)
    return "\n".join(out)


def has_symbol(text: str, name: str) -> bool:
    return re.search(r"(?i)(?<![\w*+%&-])" + re.escape(name) + r"(?![\w*+%&-])", text) is not None


def has_line(text: str, lines: list[int]) -> bool:
    """Whether one of LINES (the definition's, or its #+/#- prefix's) is named."""
    return any(re.search(rf"(?<!\d){line}(?!\d)", text) for line in lines)


def check(task, received: str) -> list[str]:
    """The facts missing from RECEIVED (empty: the answer is correct)."""
    e, k = task["expect"], task["kind"]
    norm = normalize(received)
    flat = lt.squeeze(re.sub(r";[^\n]*", "", norm)).lower()  # comments are not part of a lambda list
    missing = []
    if k == "where":
        if e["file"] not in received:
            missing.append(f"file {e['file']}")
        if not has_line(received, e["lines"]):
            missing.append(f"line {e['lines'][-1]}")
        if e["lambda_list"].lower() not in flat:
            missing.append(f"lambda list {e['lambda_list']}")
    elif k == "body":
        missing += [f"line {l!r}" for l in e["lines"] if l not in norm]
    elif k in ("callers", "mentions"):
        missing += [n for n in e["names"] if not has_symbol(norm, n)]
    elif k == "methods":
        for m in e["methods"]:
            if not has_line(received, m["lines"]) or m["specializer"].lower() not in flat:
                missing.append(f"{m['file']}:{m['lines'][-1]} {m['specializer']}")
    elif k == "system":
        # Every file the system loads. The order is not checked: read from an .asd file
        # with :depends-on it is derived by the reader (alexandria), not printed.
        for f in e["files"]:
            stem = f.rsplit("/", 1)[-1].removesuffix(".lisp")
            if not re.search(r"(?i)(?<![\w-])" + re.escape(stem) + r"(\.lisp)?(?![\w-])", norm):
                missing.append(f)
    elif k == "exports":
        missing += [s for s in e["symbols"] if not has_symbol(norm, s)]
    elif k == "outline":
        missing += [f"{d['lines'][-1]} {d['name']}" for d in e["definitions"]
                    if not has_symbol(norm, d["name"]) or not has_line(received, d["lines"])]
    elif k == "log":
        missing += [f"log line {l[:40]!r}" for l in e["lines"] if l not in received]
    return missing


# ---------------------------------------------------------------- where our tokens go

PART_NAMES = ["notes", "errors", "headers", "line numbers", "docstring tails", "signatures",
              "use lines", "repeated first lines", "verbatim text"]


def parts(text: str) -> dict[str, str]:
    """OUR output cut into what it is made of (BENCHMARKS.md#where-the-tokens-go)."""
    out = {k: [] for k in PART_NAMES}
    group_line = None
    seen_header = False
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\n")
        if re.fullmatch(r"\[.*\]", body):
            out["notes"].append(line)
            continue
        if re.match(r"^[A-Z_]+: ", body):
            out["errors"].append(line)
            continue
        if body.startswith("==> "):
            out["headers"].append(line)
            seen_header = True
            continue
        m = re.match(r"^( *)(\d+): ", body)
        grep = None if m else re.match(r"^\d+[:-]", body)  # a text grep's N:text, N-text
        if grep:
            out["line numbers"].append(grep.group(0))
            out["verbatim text"].append(line[grep.end():])
            continue
        if not m:
            out["verbatim text"].append(line)
            continue
        out["line numbers"].append(m.group(0))
        rest = line[m.end():]
        number = int(m.group(2))
        # find --symbol: use lines are marked by one space under their form's line
        # (which starts with its number), after a file header; a single file's view
        # right-aligns its numbers.
        use = len(m.group(1)) >= 1 and group_line is not None and seen_header
        if use and number == group_line:  # a use on the form's first line
            out["repeated first lines"].append(rest)
            continue
        if use:
            out["use lines"].append(rest)
            continue
        group_line = number
        tail = re.search(r"\.\.\.\)( ;; .*)?(  \[definition\])?$", rest.rstrip("\n"))
        if tail:
            cut = rest.rfind(" ;; ") if tail.group(1) else -1
            if cut >= 0:
                out["docstring tails"].append(rest[cut:])
                rest = rest[:cut] + "\n"
            out["signatures"].append(rest)
        else:
            out["verbatim text"].append(rest)
    return {k: "".join(v) for k, v in out.items()}


def breakdown(rows: list[Row], tok: Tokenizer) -> str:
    lines = ["| task | ours tokens | " + " | ".join(PART_NAMES) + " |",
             "| --- | ---: | " + " | ".join("---:" for _ in PART_NAMES) + " |"]
    total = {k: 0 for k in PART_NAMES}
    for r in rows:
        counts = {k: 0 for k in PART_NAMES}
        for c in r.ours.calls:
            for k, v in parts(c.text).items():
                counts[k] += tok.count(v)
        for k in PART_NAMES:
            total[k] += counts[k]
        n = sum(counts.values()) or 1
        lines.append(f"| {r.task['id']} | {n:,} | " + " | ".join(
            f"{100 * counts[k] / n:.0f}%" if counts[k] else "" for k in PART_NAMES) + " |")
    n = sum(total.values()) or 1
    lines.append("| **all** | " + f"{n:,} | " + " | ".join(f"{100 * total[k] / n:.0f}%" for k in PART_NAMES) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------- running


def log_dir(task) -> str:
    d = REPO / "target" / "bench-tokens" / f"log-{task['seed']}"
    path = d / "app.log"
    if not path.exists():
        d.mkdir(parents=True, exist_ok=True)
        text, _ = gen_log.make_log(task["seed"])
        path.write_text(text)
    return str(d)


@dataclass
class Row:
    task: dict
    plain: Side
    ours: Side
    plain_missing: list[str]
    ours_missing: list[str]


def run_task(task, tok, binary, surface) -> Row:
    plain, ours = Side(), Side()
    PLAIN[task["kind"]](task, tok, plain)
    run_ours(task, binary, ours, surface)
    return Row(task, plain, ours, check(task, plain.text), check(task, ours.text))


def measure(side: Side, tok: Tokenizer) -> tuple[int, int, int]:
    return (sum(len(c.text) for c in side.calls), sum(tok.count(c.text) for c in side.calls), len(side.calls))


def table(rows: list[Row], tok: Tokenizer) -> tuple[str, dict]:
    out = ["| task | plain chars | plain tokens | plain calls | ours chars | ours tokens | ours calls "
           "| ratio (tokens) | correct (plain/ours) |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    tp = [0, 0, 0]
    to = [0, 0, 0]
    worse, under5, wrong = [], [], []
    for r in rows:
        p, o = measure(r.plain, tok), measure(r.ours, tok)
        tp = [a + b for a, b in zip(tp, p)]
        to = [a + b for a, b in zip(to, o)]
        ratio = p[1] / o[1] if o[1] else float("inf")
        ok = ("yes" if not r.plain_missing else "NO") + "/" + ("yes" if not r.ours_missing else "NO")
        out.append(f"| {r.task['id']} | {p[0]:,} | {p[1]:,} | {p[2]} | {o[0]:,} | {o[1]:,} | {o[2]} "
                   f"| {ratio:.2f}× | {ok} |")
        if ratio < 1:
            worse.append(r.task["id"])
        if ratio < 5:
            under5.append(r.task["id"])
        if r.ours_missing:
            wrong.append(r.task["id"])
    ratio = tp[1] / to[1] if to[1] else float("inf")
    out.append(f"| **total ({len(rows)} tasks)** | {tp[0]:,} | {tp[1]:,} | {tp[2]} | {to[0]:,} | {to[1]:,} "
               f"| {to[2]} | {ratio:.2f}× | {sum(not r.plain_missing for r in rows)}/"
               f"{sum(not r.ours_missing for r in rows)} correct |")
    both = [r for r in rows if not r.plain_missing and not r.ours_missing]
    bp = sum(measure(r.plain, tok)[1] for r in both)
    bo = sum(measure(r.ours, tok)[1] for r in both)
    summary = {"tasks": len(rows), "plain": tp, "ours": to, "ratio_tokens": ratio,
               "both_correct": len(both), "ratio_tokens_both_correct": bp / bo if bo else None,
               "ratio_chars": tp[0] / to[0] if to[0] else None,
               "ours_costlier": worse, "under_5x": under5, "ours_incorrect": wrong}
    return "\n".join(out), summary


def by_kind(rows: list[Row], tok: Tokenizer) -> str:
    out = ["| kind | tasks | plain tokens | ours tokens | ratio | ours costlier on | ours incorrect on |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    kinds: dict[str, list[Row]] = {}
    for r in rows:
        kinds.setdefault(r.task["kind"], []).append(r)
    for k, rs in kinds.items():
        p = sum(measure(r.plain, tok)[1] for r in rs)
        o = sum(measure(r.ours, tok)[1] for r in rs)
        worse = sum(measure(r.plain, tok)[1] < measure(r.ours, tok)[1] for r in rs)
        wrong = sum(bool(r.ours_missing) for r in rs)
        out.append(f"| {k} | {len(rs)} | {p:,} | {o:,} | {p / o if o else float('inf'):.2f}× | {worse} | {wrong} |")
    return "\n".join(out)


def find_binary(arg: str | None) -> str:
    if arg:  # made absolute: the calls run in each task's directory
        return str(Path(arg).resolve()) if "/" in arg else (shutil.which(arg) or arg)
    binary = REPO / "target" / "release" / "lisp-read-file"
    if not binary.exists():
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=REPO, check=True)
    return str(binary)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help=f"run {', '.join(CHECK_TASKS)} and require correct answers")
    ap.add_argument("--only", help="comma-separated task ids")
    ap.add_argument("--show", action="store_true", help="print every call and what it returned")
    ap.add_argument("--require-goal", action="store_true",
                    help="exit 1 unless the goal is met: every answer of ours correct, at least 5x fewer "
                         "tokens in total, and more than the plain tools on no task")
    ap.add_argument("--breakdown", action="store_true",
                    help="also print where our tokens go (notes, headers, docstring tails, ...)")
    ap.add_argument("--json", help="write the rows and totals to this file")
    ap.add_argument("--surface", choices=["cli", "mcp"], default="cli",
                    help="our calls on the command line (default) or as MCP tools/call over stdio")
    ap.add_argument("--bin", help="the lisp-read-file binary (default: target/release, built if missing)")
    a = ap.parse_args()

    if not shutil.which("rg"):
        sys.exit("bench-tokens: ripgrep is missing: apt-get install ripgrep")
    for need in ["/usr/share/common-lisp/source/cl-ppcre", "/usr/share/sbcl-source/src"]:
        if not os.path.isdir(need):
            sys.exit(f"bench-tokens: {need} is missing (apt-get install cl-ppcre sbcl-source ...)")
    tasks = json.loads(TASKS.read_text())["tasks"]
    if a.check:
        tasks = [t for t in tasks if t["id"] in CHECK_TASKS]
    elif a.only:
        want = a.only.split(",")
        tasks = [t for t in tasks if t["id"] in want]
    tok = Tokenizer()
    binary = find_binary(a.bin)
    rows = [run_task(t, tok, binary, a.surface) for t in tasks]

    if a.show:
        for r in rows:
            for name, side, miss in (("plain", r.plain, r.plain_missing), ("ours", r.ours, r.ours_missing)):
                print(f"==== {r.task['id']} [{name}] missing: {miss or 'nothing'}")
                for c in side.calls:
                    print(f"---- {c.tool} {c.args}  ({len(c.text)} chars, {tok.count(c.text)} tokens)")
                    print(c.text, end="" if c.text.endswith("\n") else "\n")
    text, summary = table(rows, tok)
    print(text)
    if len(rows) > 3:
        print()
        print(by_kind(rows, tok))
    print(f"\ntokenizer: {tok.name}; ratio = plain tokens / ours tokens (goal: >= 5 in total, >= 1 on every task, every answer correct)")
    print(f"total: {summary['ratio_tokens']:.2f}x fewer tokens, {summary['ratio_chars'] or 0:.2f}x fewer characters; "
          f"ours costlier on {len(summary['ours_costlier'])} tasks, under 5x on {len(summary['under_5x'])}, "
          f"incorrect on {len(summary['ours_incorrect'])}; on the {summary['both_correct']} tasks both answer "
          f"correctly: {summary['ratio_tokens_both_correct'] or 0:.2f}x fewer tokens")
    for r in rows:
        for name, miss in (("plain", r.plain_missing), ("ours", r.ours_missing)):
            if miss:
                print(f"  {r.task['id']} [{name}] missing {len(miss)}: {'; '.join(miss[:4])}"
                      + (" ..." if len(miss) > 4 else ""))
    if a.breakdown:
        print("\nWhere our tokens go (share of each task's tokens; parts tokenized apart):\n")
        print(breakdown(rows, tok))
    if a.surface == "mcp":
        sc = sum(len(c.structured) for r in rows for c in r.ours.calls)
        st = sum(tok.count(c.structured) for r in rows for c in r.ours.calls)
        print(f"MCP structuredContent beside the text (not counted above; a host that forwards it "
              f"pays it too): {sc:,} characters, {st:,} tokens")
    if a.json:
        Path(a.json).write_text(json.dumps({"summary": summary, "rows": [
            {"id": r.task["id"], "plain": measure(r.plain, tok), "ours": measure(r.ours, tok),
             "plain_calls": [c.tool + " " + c.args for c in r.plain.calls],
             "ours_calls": [c.tool + " " + c.args for c in r.ours.calls],
             "plain_missing": r.plain_missing, "ours_missing": r.ours_missing} for r in rows]}, indent=1))
    if a.check and not self_test(rows, tok):
        return 1
    if any(r.plain_missing for r in rows):
        return 1
    if a.check and any(r.ours_missing for r in rows):
        return 1
    if a.require_goal and (summary["ours_costlier"] or summary["ours_incorrect"] or summary["ratio_tokens"] < 5):
        print("goal not met", file=sys.stderr)
        return 1
    return 0


def self_test(rows: list[Row], tok: Tokenizer) -> bool:
    """The checks can fail and the tokenizer counts: an empty answer and each side's
    answer without its last fact-bearing line are refused; a known text has its known
    count."""
    ok = True
    if list(tok.enc.encode("hello world")) != [24912, 2375]:  # o200k_base's ids
        print("self-test: the tokenizer does not count as o200k_base does", file=sys.stderr)
        ok = False
    for r in rows:
        if not check(r.task, ""):
            print(f"self-test: {r.task['id']}: an empty answer passes the check", file=sys.stderr)
            ok = False
        for name, side in (("plain", r.plain), ("ours", r.ours)):
            lines = side.text.splitlines()
            cut = [i for i in range(len(lines)) if check(r.task, "\n".join(lines[:i] + lines[i + 1:]))]
            if not cut:
                print(f"self-test: {r.task['id']} [{name}]: no single line's removal fails the check",
                      file=sys.stderr)
                ok = False
    print("self-test: " + ("the checks refuse incomplete answers; the tokenizer counts as expected"
                           if ok else "FAILED"))
    return ok


if __name__ == "__main__":
    sys.exit(main())
