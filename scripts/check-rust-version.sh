#!/usr/bin/env bash
# Checks the `rust-version` declared in Cargo.toml:
# 1. it is at least the rust-version of every normal (non-dev) dependency, so a toolchain
#    of that version can build the library and the binary;
# 2. clippy's `incompatible_msrv` lint (run by .ci/run with -D warnings) reports our own
#    uses of standard-library items newer than it.
# Only one toolchain exists on our machines, so this is the check that can be made here.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo metadata --format-version 1 --locked | python3 -c '
import json, sys
m = json.load(sys.stdin)
v = lambda s: (tuple(int(x) for x in s.split(".")) + (0, 0))[:3]
pkgs = {p["id"]: p for p in m["packages"]}
members = [p for p in m["packages"] if p["id"] in m["workspace_members"]]
declared = members[0]["rust_version"]
assert all(p["rust_version"] == declared for p in members), "every crate takes the workspace rust-version"
# Normal dependencies only, transitively, through the resolve graph.
nodes = {n["id"]: n for n in m["resolve"]["nodes"]}
seen, todo = set(), [p["id"] for p in members]
while todo:
    n = nodes[todo.pop()]
    for d in n["deps"]:
        if any(k["kind"] is None for k in d["dep_kinds"]) and d["pkg"] not in seen:
            seen.add(d["pkg"]); todo.append(d["pkg"])
need = max((v(pkgs[i]["rust_version"]), pkgs[i]["name"], pkgs[i]["rust_version"]) for i in seen if pkgs[i].get("rust_version"))
print(f"rust-version {declared}; newest needed by a dependency: {need[1]} {need[2]}")
if v(declared) < need[0]:
    sys.exit(f"rust-version {declared} is older than {need[1]} needs; raise it in Cargo.toml")
'
