"""Documents through MCP with the official Python SDK (docs/documents.md).

The fixtures in fixtures/documents/ were made by independent tools (fpdf2, pikepdf,
python-docx, nbformat: fixtures/documents/make.py); the ZIP bomb is written here with
Python's own zipfile module. Every structuredContent is checked against the tool's
outputSchema by the harness.
"""

from __future__ import annotations

import io
import os
import zipfile

import pytest

from conftest import Project
from harness import ALL_TOOLS, serve

pytestmark = pytest.mark.anyio

ALL = ("--tools", ",".join(ALL_TOOLS))
DOCS = "fixtures/documents"


def connect(project: Project, *args: str):
    log = project.tmp / f"server-{os.urandom(4).hex()}.log"
    return serve("--root", str(project.root), *args, cwd=project.root, log=log)


def bomb_docx(size: int) -> bytes:
    """A DOCX whose word/document.xml is `size` spaces: about a thousandth of that zipped."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        with z.open("word/document.xml", "w", force_zip64=True) as f:
            chunk = b" " * (1 << 20)
            for _ in range(size >> 20):
                f.write(chunk)
    return out.getvalue()


async def test_pdf_docx_and_lisp_notebook_through_mcp(project: Project) -> None:
    async with connect(project, *ALL) as server:
        r = await server.ok("lisp-read-file", {"path": f"{DOCS}/sample.pdf"})
        assert r["mode"] == "raw"
        assert r["content"].startswith("--- page 1 ---\nReading Lisp without evaluating it\n"), r
        assert "--- page 3 ---\nThird page, the last one.\n" in r["content"], r
        assert r["meta"]["document"] == {"format": "pdf", "pages": 3}

        r = await server.ok(
            "lisp-read-file",
            {"path": f"{DOCS}/sample.pdf", "strategy": {"type": "lineRange", "startLine": 4, "endLine": 4}},
        )
        assert r["content"] == "--- page 2 ---\n", r

        r = await server.ok("lisp-read-file", {"path": f"{DOCS}/sample.docx"})
        assert r["content"].startswith("# Lisp Read File\n"), r
        assert "## Operators\noperator | defines\ndefun | a function\n" in r["content"], r
        assert r["meta"]["document"] == {"format": "docx"}

        r = await server.ok("lisp-read-file", {"path": f"{DOCS}/sample.docx", "content_pattern": "defclass", "context_lines": 0})
        assert r["mode"] == "text-filtered"
        assert "defclass | a class" in r["content"], r

        r = await server.ok("lisp-read-file", {"path": f"{DOCS}/lisp.ipynb"})
        assert r["mode"] == "lisp-collapsed"
        assert " 6: (defun square (x) ...) ;; X times X.\n" in r["content"], r
        assert r["meta"]["document"] == {"format": "ipynb", "cells": 5, "language": "common-lisp"}

        r = await server.ok("lisp-read-file", {"path": f"{DOCS}/lisp.ipynb", "name_pattern": "square"})
        assert " 8:   (* x x))\n" in r["content"], r
        assert r["meta"]["expanded_forms"] == 1


async def test_unreadable_documents_are_unsupported_document(project: Project) -> None:
    project.write("bomb.docx", bomb_docx(1 << 30))
    project.write("text.docx", "not a zip\n")
    async with connect(project, *ALL) as server:
        for path, words in [
            (f"{DOCS}/encrypted.pdf", "encrypted (password-protected)"),
            (f"{DOCS}/corrupt.pdf", "not a readable PDF"),
            ("bomb.docx", "ZIP bomb is refused"),
            ("text.docx", "not a ZIP archive"),
        ]:
            e = await server.err("lisp-read-file", {"path": path}, "UNSUPPORTED_DOCUMENT")
            assert words in e["message"], e
        # The compatibility tools read files as they are: a PDF is binary there.
        e = await server.err("read_file", {"path": f"{DOCS}/sample.pdf"}, "BINARY_NOT_SUPPORTED")
        assert "extract the text of PDF" in e["message"], e
        await server.err("Read", {"path": f"{DOCS}/sample.pdf"}, "BINARY_FILE")
