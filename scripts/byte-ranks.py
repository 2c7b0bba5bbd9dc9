#!/usr/bin/env python3
"""Prints the byte frequency ranks of Common Lisp source, for crates/lib/src/caseless.rs.

usage: python3 scripts/byte-ranks.py DIR...   (e.g. /usr/share/sbcl-source
/usr/share/common-lisp/source): the bytes of every *.lisp file under the directories
are counted, an ASCII letter with its other case. A rank is 0..255, higher for a more
frequent byte (as memchr's ranks), by the order of the counts.
"""
import os
import sys

counts = [0] * 256
for top in sys.argv[1:]:
    for root, _, files in os.walk(top):
        for name in files:
            if name.endswith(".lisp"):
                with open(os.path.join(root, name), "rb") as f:
                    data = f.read()
                for b in range(256):
                    counts[b] += data.count(bytes([b]))
for c in range(ord("a"), ord("z") + 1):
    counts[c] = counts[c - 32] = counts[c] + counts[c - 32]
# Stable: equal counts keep byte order.
order = sorted(range(256), key=lambda b: counts[b])
rank = [0] * 256
for r, b in enumerate(order):
    rank[b] = r
print("const RANK: [u8; 256] = [")
for i in range(0, 256, 16):
    print("    " + ", ".join(str(r) for r in rank[i : i + 16]) + ",")
print("];")
