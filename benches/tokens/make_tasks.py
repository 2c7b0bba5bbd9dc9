#!/usr/bin/env python3
"""Make benches/tokens/tasks.json: the token benchmark's tasks and their checked facts.

Run once (the output is committed): `python3 benches/tokens/make_tasks.py`. The facts come
from ripgrep (which files, which lines) and the small independent reader in
lisp_truth.py (where a form ends, which definition encloses a use), never from
lisp-read-file; the system orders come from ASDF itself (SBCL plans each system's
load-op), also recorded in the file. Each list of facts was read by eye once.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lisp_truth as lt  # noqa: E402

CL = "/usr/share/common-lisp/source"
SBCL = "/usr/share/sbcl-source"
GLOBS = ["-g", "*.lisp", "-g", "*.lsp", "-g", "*.cl", "-g", "*.asd"]
OUT = Path(__file__).resolve().parent / "tasks.json"

# (id, root, name, operator) -- where is NAME defined, and what is its lambda list
WHERE = [
    ("where-ppcre-scan", f"{CL}/cl-ppcre", "scan", "defgeneric"),
    ("where-ppcre-regex-replace-all", f"{CL}/cl-ppcre", "regex-replace-all", "defun"),
    ("where-alexandria-curry", f"{CL}/alexandria", "curry", "defun"),
    ("where-drakma-http-request", f"{CL}/drakma", "http-request", "defun"),
    ("where-flexi-make-flexi-stream", f"{CL}/cl-flexi-streams", "make-flexi-stream", "defun"),
    ("where-ironclad-digest-sequence", f"{CL}/ironclad", "digest-sequence", "defgeneric"),
    ("where-local-time-format-timestring", f"{CL}/local-time", "format-timestring", "defun"),
    ("where-babel-string-to-octets", f"{CL}/babel", "string-to-octets", "defun"),
    ("where-yason-parse", f"{CL}/yason", "parse", "defun"),
    ("where-postmodern-query", f"{CL}/postmodern", "query", "defmacro"),
    ("where-sbcl-specifier-type", SBCL, "specifier-type", "defun"),
    ("where-sbcl-make-lexenv", SBCL, "make-lexenv", "defun"),
]

# (id, root, name, operator) -- show the source of NAME
BODY = [
    ("body-ppcre-split", f"{CL}/cl-ppcre", "split", "defun"),
    ("body-alexandria-flatten", f"{CL}/alexandria", "flatten", "defun"),
    ("body-drakma-url-encode", f"{CL}/drakma", "url-encode", "defun"),
    ("body-babel-octets-to-string", f"{CL}/babel", "octets-to-string", "defun"),
    ("body-iterate-iterate", f"{CL}/iterate", "iterate", "defmacro"),
    ("body-sbcl-make-values-type", SBCL, "make-values-type", "defun"),
    ("body-sbcl-copy-list", SBCL, "copy-list", "defun"),
    ("body-sbcl-delete-ref", SBCL, "delete-ref", "defun"),
]

# (id, root, symbol) -- which definitions use SYMBOL
CALLERS = [
    ("callers-ppcre-create-scanner", f"{CL}/cl-ppcre", "create-scanner"),
    ("callers-alexandria-ensure-function", f"{CL}/alexandria", "ensure-function"),
    ("callers-drakma-url-encode", f"{CL}/drakma", "url-encode"),
    ("callers-flexi-make-flexi-stream", f"{CL}/cl-flexi-streams", "make-flexi-stream"),
    ("callers-babel-octets-to-string", f"{CL}/babel", "octets-to-string"),
    ("callers-sbcl-make-values-type", f"{SBCL}/src/compiler", "make-values-type"),
]

# (id, root, generic function) -- its methods
METHODS = [
    ("methods-ppcre-create-scanner", f"{CL}/cl-ppcre", "create-scanner"),
    ("methods-ppcre-create-matcher-aux", f"{CL}/cl-ppcre", "create-matcher-aux"),
    ("methods-flexi-stream-read-byte", f"{CL}/cl-flexi-streams", "stream-read-byte"),
    ("methods-postmodern-dao-keys", f"{CL}/postmodern", "dao-keys"),
    ("methods-yason-encode", f"{CL}/yason", "encode"),
]

# (id, root, asd path relative to root, system) -- its files in load order
SYSTEMS = [
    ("system-cl-ppcre", f"{CL}/cl-ppcre", "cl-ppcre.asd", "cl-ppcre"),
    ("system-drakma", f"{CL}/drakma", "drakma.asd", "drakma"),
    ("system-flexi-streams", f"{CL}/cl-flexi-streams", "flexi-streams.asd", "flexi-streams"),
    ("system-babel", f"{CL}/babel", "babel.asd", "babel"),
    ("system-postmodern", f"{CL}/postmodern", "postmodern.asd", "postmodern"),
    ("system-alexandria", f"{CL}/alexandria", "alexandria.asd", "alexandria"),
]

# (id, root, literal text) -- which definitions mention TEXT
MENTIONS = [
    ("mentions-drakma-content-length", f"{CL}/drakma", "Content-Length"),
    ("mentions-ppcre-quantifier", f"{CL}/cl-ppcre", "Quantifier"),
    ("mentions-flexi-handler-case", f"{CL}/cl-flexi-streams", "(handler-case"),
    ("mentions-local-time-utc-offset", f"{CL}/local-time", "utc-offset"),
    ("mentions-sbcl-unknown-type-specifier", f"{SBCL}/src/code", "unknown type specifier"),
]

# (id, root, package) -- its exported symbols
EXPORTS = [
    ("exports-cl-ppcre", f"{CL}/cl-ppcre", "cl-ppcre"),
    ("exports-drakma", f"{CL}/drakma", "drakma"),
    ("exports-yason", f"{CL}/yason", "yason"),
    ("exports-babel", f"{CL}/babel", "babel"),
]

# (id, root, file) -- which definitions the file has, in order
OUTLINES = [
    ("outline-ppcre-api", f"{CL}/cl-ppcre", "api.lisp"),
    ("outline-drakma-request", f"{CL}/drakma", "request.lisp"),
    ("outline-sbcl-list", SBCL, "src/code/list.lisp"),
]

# (id, question, the log's seed) -- the lines around an event in a generated 2 MB log
LOGS = [
    ("log-error-backtrace", "Show the ERROR in app.log and the lines around it", 26),
    ("log-first-timeout", "Show the first request timeout in app.log and what came before", 27),
    ("log-last-restart", "Show the last server restart in app.log and the lines after it", 28),
]


def rg(args: list[str], cwd: str) -> str:
    r = subprocess.run(["rg", *args], cwd=cwd, capture_output=True, text=True)
    if r.returncode > 1:
        raise SystemExit(f"rg {args}: {r.stderr}")
    return r.stdout


def read(root: str, rel: str) -> str:
    return Path(root, rel).read_text(encoding="utf-8", errors="replace")


def definitions(root: str, name: str, operator: str):
    """(file, node, text) of every OPERATOR form named NAME under ROOT."""
    pat = r"(?i)\((\S+:)?" + re.escape(operator) + r"\s+" + re.escape(name) + r"(\s|\)|$)"
    found = []
    for rel in sorted(set(rg(["-l", *GLOBS, pat], root).split())):
        text = read(root, rel)
        for node in lt.all_lists(lt.parse(text)):
            if lt.head(node).split(":")[-1] == operator and lt.symbol_name(lt.name_of(node, text)) == name:
                found.append((rel, node, text))
    return found


def where_task(tid, root, name, operator):
    (rel, node, text), *rest = definitions(root, name, operator)
    assert not rest, (tid, [r[0] for r in rest])
    args = node.children[2]
    return {
        "id": tid, "kind": "where", "root": root, "name": name, "operator": operator,
        "question": f"Where is {name} defined, and what is its lambda list?",
        "expect": {"file": rel, "lines": lt.lines_of(text, node),
                   "lambda_list": lt.squeeze(lt.strip_comments(text[args.start:args.end]))},
    }


def body_task(tid, root, name, operator):
    (rel, node, text), *rest = definitions(root, name, operator)
    assert not rest, (tid, [r[0] for r in rest])
    start, end = lt.line_of(text, node.start), lt.line_of(text, node.end - 1)
    lines = text.split("\n")[start - 1:end]
    return {
        "id": tid, "kind": "body", "root": root, "name": name, "operator": operator,
        "question": f"Show the source of {operator} {name}.",
        "expect": {"file": rel, "line": start, "end_line": end,
                   "lines": [l.strip() for l in lines if l.strip()]},
    }


def token_pattern(symbol: str) -> str:
    """A use of SYMBOL as a Lisp token, for rg (case-insensitive)."""
    return r"(?i)(^|[\s('`,@:])" + re.escape(symbol) + r"($|[\s)])"


def enclosing_names(text: str, offsets: list[int]) -> set[str]:
    items = lt.parse(text)
    lists = list(lt.all_lists(items))
    names = set()
    for off in offsets:
        inner = None
        for node in lists:
            if node.start <= off < node.end and (inner is None or node.start >= inner.start):
                inner = node
        d = lt.outermost_definition(inner)
        # A definition no features could make the reader read is not code.
        if d is not None and not lt.never_read(text, d):
            names.add((lt.head(d).split(":")[-1], lt.name_of(d, text)))
    return names


def callers_task(tid, root, symbol):
    names = set()
    for rel in sorted(set(rg(["-l", *GLOBS, token_pattern(symbol)], root).split())):
        text = read(root, rel)
        offs = [tok.start for tok, _ in lt.walk_tokens(lt.parse(text))
                if tok.kind == "symbol" and lt.symbol_name(tok.text) == symbol]
        names |= enclosing_names(text, offs)
    callers = sorted({n for op, n in names
                      if op not in ("defpackage",) and lt.symbol_name(n) != symbol})
    return {
        "id": tid, "kind": "callers", "root": root, "symbol": symbol,
        "question": f"Which definitions call or use {symbol}?",
        "expect": {"names": callers},
    }


def methods_task(tid, root, name):
    out = []
    for rel, node, text in definitions(root, name, "defmethod"):
        rest = node.children[2:]
        k = next(i for i, c in enumerate(rest) if isinstance(c, lt.Node))
        quals, args = [c.text for c in rest[:k]], rest[k]
        first = args.children[0] if args.children else None
        spec = text[first.start:first.end] if isinstance(first, lt.Node) else (first.text if first else "")
        out.append({"file": rel, "lines": lt.lines_of(text, node), "specializer": lt.squeeze(spec),
                    "qualifiers": quals})
    out.sort(key=lambda m: (m["file"], m["lines"][-1]))
    return {
        "id": tid, "kind": "methods", "root": root, "name": name,
        "question": f"Which methods does the generic function {name} have?",
        "expect": {"methods": out},
    }


def asdf_orders(systems: list[str]) -> dict[str, list[str]]:
    script = Path(__file__).resolve().parent / "asdf-order.lisp"
    r = subprocess.run(["sbcl", "--script", str(script), *systems], capture_output=True, text=True)
    orders, cur = {}, None
    for line in r.stdout.splitlines():
        if line.startswith("SYSTEM "):
            cur = line.split()[1]
            orders[cur] = []
        elif cur and line.strip():
            orders[cur].append(line.strip())
    return orders


def system_tasks():
    orders = asdf_orders([s[3] for s in SYSTEMS])
    return [{
        "id": tid, "kind": "system", "root": root, "asd": asd, "system": system,
        "question": f"Which files does the system {system} load, in which order?",
        "expect": {"files": orders[system]},
    } for tid, root, asd, system in SYSTEMS]


def mentions_task(tid, root, needle):
    names = set()
    for rel in sorted(set(rg(["-l", "-F", *GLOBS, needle], root).split())):
        text = read(root, rel)
        offs = [m.start() for m in re.finditer(re.escape(needle), text)]
        names |= enclosing_names(text, offs)
    return {
        "id": tid, "kind": "mentions", "root": root, "text": needle,
        "question": f"Which definitions mention the text {needle!r}?",
        "expect": {"names": sorted({n for _, n in names})},
    }


def exports_task(tid, root, package):
    for rel in sorted(set(rg(["-l", *GLOBS, r"(?i)\(defpackage"], root).split())):
        text = read(root, rel)
        for node in lt.all_lists(lt.parse(text)):
            if lt.head(node) == "defpackage" and lt.symbol_name(lt.name_of(node, text)) == package:
                syms = []
                for clause in node.children:
                    if isinstance(clause, lt.Node) and lt.head(clause) == ":export":
                        syms += [lt.symbol_name(t.text) if t.kind == "symbol" else t.text.strip('"').lower()
                                 for t in clause.children[1:] if isinstance(t, lt.Tok)]
                return {
                    "id": tid, "kind": "exports", "root": root, "package": package,
                    "question": f"Which symbols does the package {package} export?",
                    "expect": {"file": rel, "line": lt.line_of(text, node.start), "symbols": syms},
                }
    raise SystemExit(f"{tid}: no defpackage {package}")


def outline_task(tid, root, rel):
    text = read(root, rel)
    names = []
    for item in lt.parse(text):
        if not isinstance(item, lt.Node):
            continue
        def named(node):  # (def ...) calls a local macrolet's, by convention: not a definition
            return lt.head(node).startswith("def") and lt.head(node) != "def"
        nodes = [item] if named(item) else [c for c in item.children if isinstance(c, lt.Node) and named(c)]
        for node in nodes:
            names.append({"lines": lt.lines_of(text, node), "operator": lt.head(node),
                          "name": lt.name_of(node, text)})
    return {
        "id": tid, "kind": "outline", "root": root, "file": rel,
        "question": f"What does {rel} define, in order?",
        "expect": {"definitions": names},
    }


def log_task(tid, question, seed):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import gen_log
    _, expect = gen_log.make_log(seed)
    return {"id": tid, "kind": "log", "seed": seed, "question": question, "expect": expect}


def main():
    tasks = []
    tasks += [where_task(*t) for t in WHERE]
    tasks += [body_task(*t) for t in BODY]
    tasks += [callers_task(*t) for t in CALLERS]
    tasks += [methods_task(*t) for t in METHODS]
    tasks += system_tasks()
    tasks += [mentions_task(*t) for t in MENTIONS]
    tasks += [exports_task(*t) for t in EXPORTS]
    tasks += [outline_task(*t) for t in OUTLINES]
    tasks += [log_task(*t) for t in LOGS]
    OUT.write_text(json.dumps({"tasks": tasks}, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(tasks)} tasks -> {OUT}")


if __name__ == "__main__":
    main()
