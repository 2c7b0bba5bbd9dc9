"""Fixtures for the MCP client test: a temporary project root with generated files."""

from __future__ import annotations

import os
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness import BIN, FIXTURES


def pytest_sessionstart(session: pytest.Session) -> None:
    # Fail loudly (never skip) when there is no server to test.
    if not BIN.is_file():
        raise pytest.UsageError(
            f"lisp-read-file binary not found at {BIN}: run `cargo build --release` "
            "or set LISP_READ_FILE_BIN"
        )


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Project:
    root: Path  # the project root handed to the server
    outside: Path  # a sibling directory the server must never read
    tmp: Path

    def write(self, name: str, data: str | bytes) -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_bytes(data.encode())
        return path


LONG_LINES = [f"line {i:04d} of the long file" for i in range(1, 451)]


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = tmp_path / "project"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    shutil.copytree(FIXTURES, root / "fixtures")
    p = Project(root=root, outside=outside, tmp=tmp_path)
    (outside / "secret.txt").write_text("secret\n")
    (outside / "secret.lisp").write_text("(defun secret () 42)\n")
    p.write("long.txt", "".join(f"{line}\n" for line in LONG_LINES))
    p.write("huge.txt", "".join(f"row {i}\n" for i in range(1, 1201)))
    p.write(
        "many.lisp",
        "\n".join(f'(defun f{i} (x)\n  "Doc {i}."\n  (list x {i}))\n' for i in range(1, 31)),
    )
    p.write("empty.txt", "")
    p.write("empty.lisp", "")
    p.write("sub/inner.lisp", "(defun inner () t)\n")
    p.write("binary.dat", b"text\x00more text\n")
    p.write("crlf.txt", b"one\r\ntwo\r\nthree\r\n")
    p.write("invalid-utf8.txt", b"caf\xe9\nok\n")
    p.write("no-newline.txt", "alpha\nbeta")
    p.write("notes.md", (FIXTURES / "views" / "notes.md").read_text())
    shutil.copy(FIXTURES / "demo" / "demo.lisp", root / "demo.lisp")
    os.symlink(root / "demo.lisp", root / "inside-link.lisp")
    os.symlink(outside / "secret.txt", root / "escape-link.txt")
    os.symlink("../outside", root / "escape-dir")
    os.mkfifo(root / "fifo")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(root / "sock"))
    finally:
        sock.close()
    return p
