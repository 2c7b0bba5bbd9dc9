"""A small Common Lisp text reader for the token benchmark's ground truth.

Written for the benchmark and independent of lisp-read-file's Rust reader: it splits a
file into top-level forms and lists, and tokens, knowing only the standard readtable's
lexical rules (strings, `;` and `#|...|#` comments, `#\\x` characters, `|...|` and `\\`
escapes). Good enough for the files the tasks name; each task's facts were checked by
eye when the task file was made (benches/tokens/make_tasks.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

TERMINATORS = set(" \t\r\n\f()\"';`,")


@dataclass
class Node:
    """A list: where it starts and ends (offsets), its head token, its elements' texts."""

    start: int
    end: int = -1
    children: list = field(default_factory=list)  # Node or Tok
    parent: "Node | None" = None


@dataclass
class Tok:
    start: int
    end: int
    text: str
    kind: str  # "symbol", "string"


def parse(text: str) -> list:
    """Top-level items: Node (a list) or Tok (an atom), in order, comments dropped."""
    top: list = []
    stack: list[Node] = []
    i, n = 0, len(text)

    def add(item):
        if stack:
            item_parent = stack[-1]
            if isinstance(item, Node):
                item.parent = item_parent
            item_parent.children.append(item)
        else:
            top.append(item)

    while i < n:
        c = text[i]
        if c in " \t\r\n\f'`,@":
            i += 1
        elif c == ";":
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
        elif c == "(":
            node = Node(start=i)
            add(node)
            stack.append(node)
            i += 1
        elif c == ")":
            if stack:
                node = stack.pop()
                node.end = i + 1
            i += 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            add(Tok(i, min(j + 1, n), text[i : j + 1], "string"))
            i = j + 1
        elif c == "#" and i + 1 < n and text[i + 1] == "|":
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("|#", j):
                    depth -= 1
                    j += 2
                elif text.startswith("#|", j):
                    depth += 1
                    j += 2
                else:
                    j += 1
            i = j
        elif c == "#" and i + 1 < n and text[i + 1] == "\\":
            j = i + 3
            while j < n and text[j] not in TERMINATORS:
                j += 1
            add(Tok(i, j, text[i:j], "char"))
            i = j
        elif c == "#" and i + 1 < n and text[i + 1] in "'(":
            i += 1  # #'foo and #(...) read as what follows
        elif c == "#" and i + 1 < n and text[i + 1] in "+-":
            i += 2  # the feature expression is read as the next datum
        else:
            j = i
            while j < n and text[j] not in TERMINATORS:
                if text[j] == "\\":
                    j += 2
                elif text[j] == "|":
                    k = text.find("|", j + 1)
                    j = n if k < 0 else k + 1
                else:
                    j += 1
            add(Tok(i, j, text[i:j], "symbol"))
            i = j
    return top


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def symbol_name(token: str) -> str:
    """The symbol's name without package prefix or #:, case-folded, bars removed."""
    t = token.lstrip("#:")
    if ":" in t:
        t = t.rsplit(":", 1)[1]
    return t.replace("|", "").lower()


def head(node: Node) -> str:
    if node.children and isinstance(node.children[0], Tok):
        return node.children[0].text.lower()
    return ""


def name_of(node: Node, text: str) -> str:
    """The defined name as written: `foo`, `(setf foo)`."""
    if len(node.children) < 2:
        return ""
    second = node.children[1]
    if isinstance(second, Tok):
        return second.text
    return text[second.start : second.end]


def outermost_definition(node: Node | None) -> Node | None:
    best = None
    while node is not None:
        op = head(node).split(":")[-1]
        if op.startswith("def") and op != "def":  # (def ...) is a local macrolet's, by convention
            best = node
        node = node.parent
    return best


def walk_tokens(items: list):
    """Every token with its innermost enclosing list (None at top level)."""
    todo = [(item, None) for item in reversed(items)]
    while todo:
        item, parent = todo.pop()
        if isinstance(item, Tok):
            yield item, parent
        else:
            for child in reversed(item.children):
                todo.append((child, item))


def all_lists(items: list):
    todo = list(reversed(items))
    while todo:
        item = todo.pop()
        if isinstance(item, Node):
            yield item
            todo.extend(reversed(item.children))


def squeeze(s: str) -> str:
    """Whitespace runs to one space; spaces after ( and before ) removed."""
    s = re.sub(r"\s+", " ", s).strip()
    return re.sub(r"\(\s+", "(", re.sub(r"\s+\)", ")", s))


def strip_comments(s: str) -> str:
    """S without its `;` comments (outside strings and character objects)."""
    out, i, n, in_string = [], 0, len(s), False
    while i < n:
        c = s[i]
        if in_string:
            if c == "\\":
                out.append(s[i : i + 2])
                i += 2
                continue
            in_string = c != '"'
        elif c == '"':
            in_string = True
        elif c == "#" and s.startswith("#\\", i):
            out.append(s[i : i + 3])
            i += 3
            continue
        elif c == ";":
            j = s.find("\n", i)
            i = n if j < 0 else j
            continue
        out.append(c)
        i += 1
    return "".join(out)


FEATURE_PREFIX = re.compile(r"#[+-]\s*(\((?:[^()]|\([^()]*\))*\)|[^\s()]+)\s*$")


def constant_feature(expr: str):
    """The value of a feature expression whatever the features are (True, False), or
    None: three-valued logic, each feature unknown; `#:x` is in no feature list."""
    stack, items, i = [[]], None, 0
    while i < len(expr):
        c = expr[i]
        if c.isspace():
            i += 1
        elif c == "(":
            stack.append([])
            i += 1
        elif c == ")":
            if len(stack) < 2:
                return None
            done = stack.pop()
            stack[-1].append(done)
            i += 1
        else:
            j = i
            while j < len(expr) and not expr[j].isspace() and expr[j] not in "()":
                j += 1
            stack[-1].append(expr[i:j])
            i = j
    if len(stack) != 1 or len(stack[0]) != 1:
        return None
    items = stack[0][0]

    def value(x):
        if isinstance(x, str):
            return False if x.startswith("#:") else "?"
        if not x or not isinstance(x[0], str):
            return False if not x else None
        op = x[0].lower().split(":")[-1]
        if op in ("and", "or"):
            decides, unknown = op == "or", False
            for a in x[1:]:
                v = value(a)
                if v is None:
                    return None
                if v == decides:
                    return decides
                unknown |= v == "?"
            return "?" if unknown else not decides
        if op == "not" and len(x) == 2:
            v = value(x[1])
            return v if v in (None, "?") else not v
        return None

    v = value(items)
    return v if isinstance(v, bool) else None


def never_read(text: str, node: Node) -> bool:
    """Whether NODE's own #+/#- prefix is one no features could make the reader read
    (`#+#:disabled`, `#+(or)`, `#-(and)`)."""
    m = FEATURE_PREFIX.search(text, max(0, node.start - 200), node.start)
    if not m or m.end() != node.start:
        return False
    value = constant_feature(m.group(1))
    plus = text[m.start() + 1] == "+"
    return value is not None and value != plus


def lines_of(text: str, node: Node) -> list[int]:
    """The line of NODE, and first the line of its #+/#- prefix when it has one (either
    may be called the definition's line)."""
    line = line_of(text, node.start)
    m = FEATURE_PREFIX.search(text, max(0, node.start - 200), node.start)
    if m and m.end() == node.start:
        return [line_of(text, m.start()), line]
    return [line]
