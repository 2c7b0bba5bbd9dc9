#!/usr/bin/env python3
"""Runs the tests of `cargo test --release --workspace`, several test binaries at a time.

    python3 scripts/run-tests.py [--jobs N] [-- ARGS FOR EVERY TEST BINARY]

cargo runs a workspace's test binaries one after another, and most of ours leave a core
idle much of the time (they wait on the binary they drive, on SBCL, Emacs or Python):
this runs N of them at once (default 2), the longest first, the doc tests last. It builds
what `cargo test --release --workspace --no-run` builds (nothing, when that ran before),
takes the test binaries from cargo's JSON messages, and runs each the way cargo does: in
its package's directory with cargo's package variables. Each binary's output is kept
apart and printed whole when it ends; the run fails, naming them, if any failed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

# Wall time of the longest binaries in a fresh-clone CI run, longest first: they start
# first so that no long one starts last. `project` waits for SBCL's records
# (LRF_SBCL_SYSTEMS) much of its time. Binaries not named here start after these.
LONGEST_FIRST = ["project", "reader", "python", "mcp", "views", "lsp", "emacs", "cli"]

CARGO = os.environ.get("CARGO") or shutil.which("cargo") or "cargo"


@dataclass
class Job:
    name: str  # what the summary calls it
    shown: str  # what cargo prints for it ("Running ...")
    command: list[str]
    cwd: Path
    env: dict[str, str]
    status: int | None = None
    seconds: float = 0.0
    output: bytes = b""


def test_binaries(args: list[str]) -> list[Job]:
    """Builds the tests as `cargo test --release --workspace` does and lists their
    binaries, from cargo's JSON messages (diagnostics still go to stderr as text)."""
    build = subprocess.run(
        [CARGO, "test", "--release", "--workspace", "--no-run", "--message-format=json-render-diagnostics"],
        stdout=subprocess.PIPE,
        check=False,
    )
    if build.returncode != 0:
        sys.exit(build.returncode)
    packages = {p["id"]: p for p in json.loads(metadata())["packages"]}
    jobs = []
    for line in build.stdout.splitlines():
        message = json.loads(line)
        if message.get("reason") != "compiler-artifact" or not message["profile"]["test"]:
            continue
        package = packages[message["package_id"]]
        target = message["target"]
        manifest = Path(package["manifest_path"])
        unit = "unittests " if target["kind"] != ["test"] else ""
        shown = f"{unit}{os.path.relpath(target['src_path'])} ({os.path.relpath(message['executable'])})"
        name = target["name"] if target["kind"] == ["test"] else f"{package['name']} {target['kind'][0]}"
        jobs.append(
            Job(name, shown, [message["executable"], *args], manifest.parent, package_env(package, manifest))
        )
    return jobs


def metadata() -> str:
    return subprocess.run(
        [CARGO, "metadata", "--format-version=1", "--no-deps"], stdout=subprocess.PIPE, check=True, text=True
    ).stdout


def package_env(package: dict, manifest: Path) -> dict[str, str]:
    """The variables cargo gives a test binary it runs (`CARGO_MANIFEST_DIR` and the
    package's own); `CARGO` lets insta ask cargo for the workspace's root."""
    major, minor, patch = package["version"].split("-")[0].split("+")[0].split(".")
    return {
        **os.environ,
        "CARGO": CARGO,
        "CARGO_MANIFEST_DIR": str(manifest.parent),
        "CARGO_MANIFEST_PATH": str(manifest),
        "CARGO_PKG_NAME": package["name"],
        "CARGO_PKG_VERSION": package["version"],
        "CARGO_PKG_VERSION_MAJOR": major,
        "CARGO_PKG_VERSION_MINOR": minor,
        "CARGO_PKG_VERSION_PATCH": patch,
        "CARGO_PKG_DESCRIPTION": package.get("description") or "",
        "CARGO_PKG_LICENSE": package.get("license") or "",
        "CARGO_PKG_RUST_VERSION": package.get("rust_version") or "",
    }


def longest_first(jobs: list[Job]) -> list[Job]:
    def rank(job: Job) -> int:
        return LONGEST_FIRST.index(job.name) if job.name in LONGEST_FIRST else len(LONGEST_FIRST)

    return sorted(jobs, key=rank)  # stable: the others keep cargo's order


def run(job: Job) -> None:
    started = time.monotonic()
    with tempfile.TemporaryFile() as out:
        job.status = subprocess.run(
            job.command, cwd=job.cwd, env=job.env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
        ).returncode
        out.seek(0)
        job.output = out.read()
    job.seconds = time.monotonic() - started


def run_all(jobs: list[Job], parallel: int) -> None:
    """Runs the jobs, `parallel` at a time, in order; prints each whole as it ends."""
    queue = list(jobs)
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                if not queue:
                    return
                job = queue.pop(0)
                print(f"     Started {job.shown}", flush=True)
            run(job)
            with lock:
                verdict = "ok" if job.status == 0 else f"FAILED (exit status {job.status})"
                print(f"\n     Running {job.shown}: {verdict} in {job.seconds:.0f} s", flush=True)
                sys.stdout.buffer.write(job.output)
                sys.stdout.flush()

    workers = [threading.Thread(target=worker) for _ in range(parallel)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="test binaries at once (default 2)")
    parser.add_argument("args", nargs="*", help="arguments for every test binary (after --)")
    options = parser.parse_args()
    os.chdir(Path(__file__).resolve().parent.parent)
    # The doc tests last, as cargo runs them (rustdoc compiles them; nothing else holds
    # cargo's build lock by then).
    doc_command = [CARGO, "test", "--release", "--workspace", "--doc", "--", *options.args]
    doc = Job("doc tests", " ".join(doc_command[:5]), doc_command, Path.cwd(), dict(os.environ))
    jobs = [*longest_first(test_binaries(options.args)), doc]
    run_all(jobs, max(1, options.jobs))
    print("\nTest binaries (wall time):")
    for job in jobs:
        print(f"  {'ok    ' if job.status == 0 else 'FAILED'} {job.seconds:6.0f} s  {job.name}")
    failed = [job.name for job in jobs if job.status != 0]
    if failed:
        print(f"\nFailed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
