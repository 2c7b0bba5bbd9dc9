#!/usr/bin/env python3
"""An independent count of symbol uses, for tests/project/find_oracle.rs.

Written apart from the Rust lexer (crates/reader/src/scan/), from the reader algorithm of CLHS 2.2 and
the rule of docs/find.md#what-is-a-use: it reads each whole file character by character
(no prefilter, no top-level split) and prints, for each symbol asked, every token that
is that symbol, as JSON: {"symbol": {"file": [[line, column], ...]}} with 1-based lines
and 0-based columns in characters.

Usage: find-uses.py ROOT SYMBOL...   (the .lisp/.lsp/.cl/.asd/.ros files under ROOT;
hidden files and directories are left out; files that are not valid UTF-8, or that do
not read cleanly (an unclosed list, a stray `)`, a string, comment or `|` escape that
runs to the end), are left out and listed under the key "" as {"file": []}.)
"""

import bisect
import json
import os
import sys

WHITESPACE = set("\t\n\x0c\r ")
TERMINATING = set("()\"';`,")
LISP_EXTENSIONS = (".lisp", ".lsp", ".cl", ".asd", ".ros")


def ends_token(ch):
    return ch in WHITESPACE or ch in TERMINATING


class Reader:
    def __init__(self, text):
        self.t = text
        self.n = len(text)
        self.tokens = []  # (start index, token text)
        # Whether the file reads cleanly: every list closed, no string, comment or escape
        # running to the end. Only such files are compared (a broken file's forms are
        # where the tolerant scanner resynchronizes, which is its own rule).
        self.clean = True

    # -- pieces that are never tokens -------------------------------------------------
    def string_end(self, i):
        i += 1
        while i < self.n:
            if self.t[i] == "\\":
                i += 2
            elif self.t[i] == '"':
                return i + 1
            else:
                i += 1
        self.clean = False
        return self.n

    def block_comment_end(self, i):
        # i at '#', '|' follows (possibly after digits): nested #| |# pairs.
        while self.t[i] != "|":
            i += 1
        i += 1
        depth = 1
        while i < self.n and depth:
            pair = self.t[i : i + 2]
            if pair == "|#":
                depth -= 1
                i += 2
            elif pair == "#|":
                depth += 1
                i += 2
            else:
                i += 1
        if depth:
            self.clean = False
        return min(i, self.n)

    def token_end(self, i):
        while i < self.n and not ends_token(self.t[i]):
            ch = self.t[i]
            if ch == "\\":
                i += 2
            elif ch == "|":
                i += 1
                while i < self.n and self.t[i] != "|":
                    i += 2 if self.t[i] == "\\" else 1
                if i >= self.n:
                    self.clean = False
                i += 1
            else:
                i += 1
        return min(i, self.n)

    def skip_blank(self, i):
        while i < self.n:
            ch = self.t[i]
            if ch in WHITESPACE:
                i += 1
            elif ch == ";":
                j = self.t.find("\n", i)
                i = self.n if j < 0 else j
            elif self.t.startswith("#|", i):
                i = self.block_comment_end(i)
            else:
                break
        return i

    def skip_datum(self, i):
        """Skips one datum without recording tokens (a feature expression)."""
        i = self.skip_blank(i)
        if i >= self.n:
            return i
        if self.t[i] != "(":
            return max(self.token_end(i), i + 1)
        depth = 0
        while i < self.n:
            ch = self.t[i]
            if ch == "(":
                depth += 1
                i += 1
            elif ch == ")":
                depth -= 1
                i += 1
                if depth == 0:
                    return i
            elif ch == '"':
                i = self.string_end(i)
            elif ch == ";":
                j = self.t.find("\n", i)
                i = self.n if j < 0 else j
            elif self.t.startswith("#|", i):
                i = self.block_comment_end(i)
            elif self.t.startswith("#\\", i):
                i = self.token_end(i + 3)
            elif ch in WHITESPACE or ch in "'`,":
                i += 1
            else:
                i = max(self.token_end(i), i + 1)
        return self.n

    def skip_read_datum(self, i):
        """Skips the datum the reader reads at i (with its prefixes), recording nothing."""
        i = self.skip_blank(i)
        if i >= self.n:
            return i
        ch = self.t[i]
        if ch in "'`":
            return self.skip_read_datum(i + 1)
        if ch == ",":
            return self.skip_read_datum(i + (2 if self.t[i + 1 : i + 2] in ("@", ".") else 1))
        if ch == '"':
            return self.string_end(i)
        if ch == "(":
            return self.skip_datum(i)
        if ch != "#":
            return max(self.token_end(i), i + 1)
        j = i + 1
        while j < self.n and self.t[j].isdigit() and self.t[j].isascii():
            j += 1
        sub = self.t[j : j + 1]
        if sub in ("'", "."):
            return self.skip_read_datum(j + 1)
        if sub == "(":
            return self.skip_datum(j)
        if sub in ("+", "-"):
            return self.skip_read_datum(self.skip_datum(j + 1))
        if sub == "\\":
            return self.token_end(min(j + 2, self.n))
        return max(self.token_end(j + 1), j + 1)

    # -- the walk ------------------------------------------------------------------------
    def read(self):
        i = 0
        depth = 0
        while i < self.n:
            ch = self.t[i]
            if ch == "(":
                depth += 1
                i += 1
            elif ch == ")":
                depth -= 1
                if depth < 0:
                    self.clean = False
                i += 1
            elif ch in WHITESPACE or ch in "'`":
                i += 1
            elif ch == ",":
                i += 2 if self.t[i + 1 : i + 2] in ("@", ".") and i + 1 < self.n else 1
            elif ch == '"':
                i = self.string_end(i)
            elif ch == ";":
                j = self.t.find("\n", i)
                i = self.n if j < 0 else j
            elif ch == "#":
                i = self.dispatch(i)
            else:
                end = self.token_end(i)
                self.tokens.append((i, self.t[i:end]))
                i = max(end, i + 1)
        if depth:
            self.clean = False
        return self.tokens

    def dispatch(self, i):
        j = i + 1
        while j < self.n and self.t[j].isdigit() and self.t[j].isascii():
            j += 1
        if j >= self.n:
            return self.n
        sub = self.t[j]
        if sub == "|":
            return self.block_comment_end(i)
        if sub == "\\":
            # The character after the backslash, whatever it is, then a token's rest.
            return self.token_end(min(j + 2, self.n))
        if sub in "+-" and j == i + 1:
            start = self.skip_blank(j + 1)
            end = self.skip_datum(j + 1)
            value = constant_feature_value(self.t[start:end])
            # A datum no features could make the reader read is not read
            # (docs/find.md#features): `#-(and) x`, `#+(or) x`.
            if value is not None and value != (sub == "+"):
                return self.skip_read_datum(end)
            return end
        if sub == ":":
            end = self.token_end(j + 1)
            self.tokens.append((i, self.t[i:end]))
            return max(end, j + 1)
        if sub.lower() in "xbor*" and sub != "":
            return self.token_end(j + 1)
        if sub == "(" or sub in WHITESPACE or sub == ")":
            return j
        if sub == "<":
            k = self.t.find(">", j, self.t.find("\n", j) if "\n" in self.t[j:] else self.n)
            return k + 1 if k >= 0 else self.token_end(j + 1)
        return j + 1


def constant_feature_value(text):
    """The value of a feature expression whatever the features are (True, False), or None
    when it depends on them or is not one: three-valued logic, each feature unknown;
    `(and)` is true, `(or)` false, `#:x` a symbol in no feature list."""
    items = []
    stack = [items]
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in WHITESPACE:
            i += 1
        elif ch == "(":
            stack.append([])
            i += 1
        elif ch == ")":
            if len(stack) < 2:
                return None
            done = stack.pop()
            stack[-1].append(done)
            i += 1
        elif ch in "\"|;#" and not text.startswith("#:", i):
            return None
        else:
            j = i
            while j < len(text) and not (text[j] in WHITESPACE or text[j] in "()"):
                j += 1
            stack[-1].append(text[i:j])
            i = j
    if len(stack) != 1 or len(items) != 1:
        return None

    def value(x):
        if isinstance(x, str):
            return False if x.startswith("#:") else "unknown"
        if not x:
            return False
        head = x[0].lower() if isinstance(x[0], str) else None
        for prefix in (":", "cl:", "common-lisp:", "keyword:"):
            if head and head.startswith(prefix):
                head = head[len(prefix):]
        if head in ("and", "or"):
            # Left to right, stopping at the argument that decides, as featurep does.
            decides = head == "or"
            unknown = False
            for a in x[1:]:
                v = value(a)
                if v is None:
                    return None
                if v == decides:
                    return decides
                unknown |= v == "unknown"
            return "unknown" if unknown else not decides
        if head == "not" and len(x) == 2:
            v = value(x[1])
            return v if v in (None, "unknown") else not v
        return None

    v = value(items[0])
    return v if isinstance(v, bool) else None


def fold(token):
    """(package or None, name): lowercase, escapes removed; '#:x' has no package."""
    if token.startswith("#:"):
        return None, fold(token[2:])[1]
    package = None
    out = []
    i = 0
    in_bars = False
    while i < len(token):
        ch = token[i]
        if ch == "|":
            in_bars = not in_bars
        elif ch == "\\":
            if i + 1 < len(token):
                out.append(token[i + 1].lower())
            i += 1
        elif ch == ":" and not in_bars:
            if package is None:
                package = "".join(out)
            out = []
        else:
            out.append(ch.lower())
        i += 1
    return package, "".join(out)


def main():
    root, symbols = sys.argv[1], sys.argv[2:]
    wanted = {}
    for s in symbols:
        package, name = fold(s)
        wanted[s] = (package, name)
    answer = {s: {} for s in symbols}
    answer[""] = {}
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for f in sorted(files):
            if f.startswith(".") or not f.lower().endswith(LISP_EXTENSIONS):
                continue
            path = os.path.join(directory, f)
            rel = os.path.relpath(path, root)
            try:
                with open(path, encoding="utf-8", newline="") as handle:
                    text = handle.read()
            except UnicodeDecodeError:
                answer[""][rel] = []
                continue
            if "\x00" in text[:8192]:
                answer[""][rel] = []
                continue
            if text.startswith("\ufeff"):
                text = " " + text[1:]
            starts = [0] + [k + 1 for k, ch in enumerate(text) if ch == "\n"]
            reader = Reader(text)
            tokens = reader.read()
            if not reader.clean:
                answer[""][rel] = []
                continue
            for start, token in tokens:
                package, name = fold(token)
                for s, (want_package, want_name) in wanted.items():
                    if name != want_name:
                        continue
                    if want_package is not None and package is not None and want_package != package:
                        continue
                    line = bisect.bisect_right(starts, start)
                    answer[s].setdefault(rel, []).append([line, start - starts[line - 1]])
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
