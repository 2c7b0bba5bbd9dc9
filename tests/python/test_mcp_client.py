"""The MCP server through an independent client: the official MCP Python SDK.

Every test starts the real `lisp-read-file mcp` binary over stdio on a temporary project
(see conftest.py) and checks the contracts of docs/tool.md, docs/guard.md and docs/mcp.md, and the published
definitions the compatibility tools `read_file` and `Read` keep verbatim
(docs/mcp.md#compatibility-tools).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import MCPError
from mcp_types import INVALID_PARAMS
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

from conftest import LONG_LINES, Project
from harness import (
    ALL_TOOLS,
    FILE_TOOLS,
    REPO,
    BIN,
    DEFAULT_TOOLS,
    Roots,
    cli_json,
    cli_view,
    numbered,
    schema_errors,
    serve,
    validator,
)

pytestmark = pytest.mark.anyio

ALL = ("--tools", ",".join(ALL_TOOLS))

# ---- the published definitions of the compatibility tools, kept verbatim ----

# read_file's published definition, kept verbatim (a TypeScript object, as JSON).
SEED_000_DESCRIPTION = (
    "Reads a UTF-8 text file in the workspace and returns a line-limited content window."
)
SEED_000_PARAMETERS = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": 'Workspace-root-relative file path to read (e.g., "src/main.ts").',
        },
        "start_line": {
            "type": "number",
            "default": 1,
            "description": "1-based start line of the returned window (default: 1).",
        },
        "max_lines": {
            "type": "number",
            "default": 200,
            "description": "Maximum number of lines to return (default: 200).",
        },
    },
    "required": ["path"],
}

# Read's published definition, kept verbatim (JSON).
SEED_001_DEFINITION = json.loads(
    r"""
{
  "name": "Read",
  "description": "Reads a file from the local filesystem with line numbers. Optimized for code editing.",
  "parameters": {
    "type": "object",
    "properties": {
      "path": {
        "type": "string",
        "description": "Path to the file (relative to project root). Required."
      },
      "start_line": {
        "type": "integer",
        "description": "The line number to start reading from (1-based). Default is 1.",
        "default": 1
      },
      "limit": {
        "type": "integer",
        "description": "The maximum number of lines to read. Default is 500. Hard limit is 2000.",
        "default": 500
      }
    },
    "required": ["path"]
  }
}
"""
)

# docs/views.md#collapsed-view: the collapsed view of fixtures/demo/demo.lisp.
DEMO_VIEW = (REPO / "fixtures/demo/demo.collapsed.txt").read_text()


def connect(project: Project, *args: str, **kwargs: Any):
    """The server on the project, with `--root` the project (unless `cwd`/`roots` say otherwise)."""
    cwd = kwargs.pop("cwd", project.root)
    log = project.tmp / f"server-{os.urandom(4).hex()}.log"
    return serve(*args, cwd=cwd, log=log, **kwargs)


def mtime_ms(path: Path) -> int:
    return os.stat(path).st_mtime_ns // 1_000_000


# ======================================================================================
# Handshake and tools/list (docs/mcp.md)
# ======================================================================================


async def test_initialize_names_the_server_gives_instructions_and_negotiates(project: Project) -> None:
    async with connect(project, "--root", str(project.root)) as server:
        assert server.server_info is not None
        assert server.server_info.name == "lisp-read-file"
        assert server.server_info.version
        assert server.instructions and "lisp-read-file" in server.instructions
        # The SDK offers its newest handshake version; the server supports it and must echo it.
        assert server.protocol_version == LATEST_HANDSHAKE_VERSION
        assert server.session.server_capabilities is not None
        assert server.session.server_capabilities.tools is not None


def test_initialize_echoes_every_handshake_protocol_version_the_sdk_knows() -> None:
    """MCP: a server that supports the requested version must answer with it."""
    for version in HANDSHAKE_PROTOCOL_VERSIONS:
        request = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "pytest", "version": "1"},
            },
        }
        done = subprocess.run(
            [str(BIN), "mcp"],
            input=json.dumps(request) + "\n",
            capture_output=True,
            text=True,
            timeout=30,
        )
        first = json.loads(done.stdout.splitlines()[0])
        assert first["id"] == 1 and first["result"]["protocolVersion"] == version, done.stdout


async def test_default_tools_are_lisp_read_file_lisp_find_and_read_file(project: Project) -> None:
    async with connect(project, "--root", str(project.root)) as server:
        assert sorted(server.tools) == sorted(DEFAULT_TOOLS)
        # A tool that is not offered is unknown.
        with pytest.raises(MCPError) as raised:
            await server.call("Read", {"path": "demo.lisp"})
        assert raised.value.code == INVALID_PARAMS
        await server.still_serving()


async def test_tools_flag_offers_all_four(project: Project) -> None:
    async with connect(project, "--root", str(project.root), *ALL) as server:
        assert sorted(server.tools) == sorted(ALL_TOOLS)


async def test_tools_flag_offers_only_what_it_names(project: Project) -> None:
    async with connect(project, "--root", str(project.root), "--tools", "Read") as server:
        assert list(server.tools) == ["Read"]
        with pytest.raises(MCPError) as raised:
            await server.call("lisp-read-file", {"path": "demo.lisp"})
        assert raised.value.code == INVALID_PARAMS
        await server.ok("Read", {"path": "demo.lisp"})


@pytest.mark.parametrize("name", ALL_TOOLS)
async def test_every_tool_is_fully_described(project: Project, name: str) -> None:
    async with connect(project, "--root", str(project.root), *ALL) as server:
        tool = server.tools[name]
        for key in ("inputSchema", "outputSchema"):
            schema = tool[key]
            validator(schema)  # a valid Draft 2020-12 schema
            assert schema["type"] == "object", key
            assert schema["properties"], key
            # lisp-find's path is optional (default ".", the first root).
            assert schema.get("required") or (name, key) == ("lisp-find", "inputSchema"), key
        if name == "lisp-find":
            assert "required" not in tool["inputSchema"]
            assert tool["inputSchema"]["properties"]["path"]["default"] == "."
        else:
            assert tool["inputSchema"]["required"] == ["path"]
        assert tool["inputSchema"]["properties"]["path"]["type"] == "string"
        annotations = tool["annotations"]
        assert annotations["readOnlyHint"] is True
        assert annotations["idempotentHint"] is True
        assert annotations["openWorldHint"] is False
        assert isinstance(tool.get("title"), str) and tool["title"].strip()
        assert isinstance(tool["description"], str) and tool["description"].strip()
        assert "\n" not in tool["description"], "a one-line description"


async def test_lisp_find_callers_and_callees_fit_the_output_schema(project: Project) -> None:
    # server.ok checks every structuredContent against the tool's outputSchema.
    project.write(
        "src/c.lisp",
        "(defun helper (x) x)\n(defun caller (y) (helper y) (funcall 'helper y) (print y))\n",
    )
    async with connect(project, "--root", str(project.root)) as server:
        callers = await server.ok("lisp-find", {"callers": "helper", "path": "src"})
        assert [c["name"] for c in callers["callers"]] == ["caller"]
        callees = await server.ok("lisp-find", {"callees": "caller", "path": "src"})
        report = callees["callees"][0]
        assert [c["name"] for c in report["callees"]] == ["helper"]
        # Definitions and uses carry their package.
        uses = await server.ok("lisp-find", {"symbol": "helper", "path": "src"})
        assert {r["package"] for r in uses["references"]} == {"common-lisp-user"}
        await server.still_serving()


async def test_lisp_find_derived_definitions_and_features(project: Project) -> None:
    project.write(
        "src/s.lisp",
        "(defstruct (point (:conc-name pt-))\n  x\n  #+lispworks (lw 0))\n(defclass shape ()\n  ((area :accessor area)))\n",
    )
    async with connect(project, "--root", str(project.root)) as server:
        found = await server.ok("lisp-find", {"name": "pt-x", "path": "src"})
        d = found["definitions"][0]
        assert (d["file"], d["line"], d["column"], d["kind"], d["name"]) == ("src/s.lisp", 2, 2, "accessor", "pt-x")
        assert d["form"] == {"line": 1, "end_line": 3, "kind": "defstruct", "name": "point"}
        assert "accessor pt-x, made by 1: (defstruct" in found["content"]
        setf = await server.ok("lisp-find", {"name": "(setf area)", "path": "src", "kinds": ["defclass"]})
        assert [(d["kind"], d["name"], d["line"]) for d in setf["definitions"]] == [("setf-accessor", "(setf area)", 5)]
        lw = await server.ok("lisp-find", {"name_pattern": "^pt-lw$", "path": "src"})
        assert lw["total"] == 1
        sbcl = await server.ok("lisp-find", {"name_pattern": "^pt-lw$", "path": "src", "features": ["sbcl"]})
        assert sbcl["total"] == 0
        await server.still_serving()


async def test_lisp_find_definitions_references_and_refusals(project: Project) -> None:
    project.write("src/a.lisp", "(defun make-point (x y)\n  (list x y))\n(defun norm (p)\n  ;; make-point\n  (make-point p \"make-point\"))\n")
    project.write("src/b.lisp", "(defvar *origin* (make-point 0 0))\n")
    async with connect(project, "--root", str(project.root)) as server:
        found = await server.ok("lisp-find", {"name_pattern": "^make-", "path": "src"})
        assert found["mode"] == "definitions" and found["total"] == 1
        d = found["definitions"][0]
        assert (d["file"], d["line"], d["end_line"], d["column"], d["kind"], d["name"]) == ("src/a.lisp", 1, 2, 0, "defun", "make-point")
        assert "body" not in d
        refs = await server.ok("lisp-find", {"symbol": "MAKE-POINT", "path": "src"})
        assert refs["mode"] == "references" and "definitions" not in refs
        assert [(r["file"], r["line"], r["definition"], [(u["line"], u["column"]) for u in r["uses"]]) for r in refs["references"]] == [
            ("src/a.lisp", 1, True, [(1, 7)]),
            ("src/a.lisp", 3, False, [(5, 3)]),
            ("src/b.lisp", 1, False, [(1, 18)]),
        ]
        # A form whose uses are all on its first line is that line; a whole answer has no count line.
        assert refs["content"].startswith("==> src/a.lisp <==\n1: (defun make-point (x y)  [definition]\n3: (defun norm ...)\n 5: (make-point p")
        assert "searched]" not in refs["content"]
        mentions = await server.ok("lisp-find", {"text": "make-point", "path": "src"})
        assert mentions["mode"] == "references" and mentions["total"] == 3
        # Comments and strings inside a form count: a text, not a symbol.
        assert [(r["file"], r["line"], sorted({u["line"] for u in r["uses"]})) for r in mentions["references"]] == [
            ("src/a.lisp", 1, [1]), ("src/a.lisp", 3, [4, 5]), ("src/b.lisp", 1, [1])]
        assert not any(r["definition"] for r in mentions["references"])
        assert mentions["content"].startswith("==> src/a.lisp <==\n1: (defun make-point (x y)\n3: (defun norm ...)\n 4: ;; make-point\n")
        page = await server.ok("lisp-find", {"symbol": "make-point", "path": "src", "limit": 1})
        assert page["truncated"] is True and page["next_offset"] == 1 and len(page["references"]) == 1
        await server.err("lisp-find", {"path": "src"}, "INVALID_ARGUMENT")
        await server.err("lisp-find", {"symbol": "x", "name": "x"}, "INVALID_ARGUMENT")
        await server.err("lisp-find", {"symbol": "x", "unknown": 1}, "INVALID_ARGUMENT")
        await server.err("lisp-find", {"symbol": "x", "path": "missing"}, "NOT_FOUND")
        await server.err("lisp-find", {"symbol": "x", "path": str(project.outside)}, "ACCESS_DENIED")
        await server.still_serving()


async def test_lisp_read_file_description_tells_to_read_before_editing(project: Project) -> None:
    async with connect(project, "--root", str(project.root)) as server:
        description = server.tools["lisp-read-file"]["description"].lower()
        assert "read" in description and "edit" in description


async def test_read_file_definition_is_seed_000_verbatim(project: Project) -> None:
    async with connect(project, "--root", str(project.root)) as server:
        tool = server.tools["read_file"]
        assert tool["description"] == SEED_000_DESCRIPTION
        assert tool["inputSchema"] == SEED_000_PARAMETERS


async def test_read_definition_is_seed_001_verbatim(project: Project) -> None:
    async with connect(project, "--root", str(project.root), *ALL) as server:
        tool = server.tools["Read"]
        assert tool["name"] == SEED_001_DEFINITION["name"]
        assert tool["description"] == SEED_001_DEFINITION["description"]
        assert tool["inputSchema"] == SEED_001_DEFINITION["parameters"]


async def test_lisp_read_file_schemas_match_the_reference_docs(project: Project) -> None:
    async with connect(project, "--root", str(project.root)) as server:
        tool = server.tools["lisp-read-file"]
        props = tool["inputSchema"]["properties"]
        assert set(props) == {
            "path", "collapsed", "name_pattern", "content_pattern", "offset", "limit",
            "comments", "context_lines", "line_numbers", "strategy", "include_metadata",
            "kinds", "features", "matches_only", "detail",
            "before_context", "after_context", "max_count", "hint_style",
        }
        assert tool["inputSchema"]["required"] == ["path"]
        expected = {
            "path": ("string", None),
            "collapsed": ("boolean", True),
            "name_pattern": ("string", None),
            "content_pattern": ("string", None),
            "offset": ("integer", 0),
            "limit": ("integer", 2000),
            "comments": ("string", "none"),
            "context_lines": ("integer", 5),
            "line_numbers": ("boolean", False),
            "strategy": ("object", {"type": "default"}),
            "include_metadata": ("boolean", False),
            "kinds": ("array", None),
            "features": ("array", None),
            "matches_only": ("boolean", False),
            "detail": ("string", None),
            "before_context": ("integer", None),
            "after_context": ("integer", None),
            "max_count": ("integer", None),
            "hint_style": ("string", "arguments"),
        }
        for name, (kind, default) in expected.items():
            assert props[name]["type"] == kind, name
            assert props[name].get("default") == default, name
        assert props["offset"]["minimum"] == 0
        assert props["limit"]["minimum"] == 1
        assert props["context_lines"]["minimum"] == 0
        assert props["comments"]["enum"] == ["none", "headers", "preceding", "all"]
        assert props["detail"]["enum"] == ["full", "no-docstrings", "names", "counts"]
        assert props["hint_style"]["enum"] == ["arguments", "lisp"]
        out = tool["outputSchema"]
        # One object schema for the result and the error object (docs/mcp.md): the result's
        # members are required in the first branch of anyOf, the error's in the second.
        assert out["required"] == ["path"]
        assert set(out["anyOf"][0]["required"]) == {"path", "mode", "meta"}  # the view is the text content (docs/mcp.md#results-said-once)
        assert set(out["anyOf"][1]["required"]) == {"code", "path", "message"}
        assert out["properties"]["mode"]["enum"] == ["lisp-collapsed", "raw", "text-filtered", "project"]
        assert set(out["properties"]["meta"]["required"]) == {
            "total_forms", "expanded_forms", "truncated", "next_offset", "total_lines",
            "byte_length", "mtime_ms", "diagnostics", "applied_strategy",
        }
        for name in ("fallback_encoding", "remaining_bytes", "remaining_lines", "cut_lines"):
            assert name in out["properties"]["meta"]["properties"], name
        assert "metadata" in out["properties"]
        # The schema still tells a result from an error object.
        check = validator(out)
        error = {"code": "NOT_FOUND", "path": "a", "message": "m"}
        assert check.is_valid(error)
        assert not check.is_valid({**error, "content": "x"})
        assert not check.is_valid({"path": "a"})


async def test_read_file_output_schema_follows_seed_000(project: Project) -> None:
    async with connect(project, "--root", str(project.root)) as server:
        out = server.tools["read_file"]["outputSchema"]
        assert out["required"] == ["path"]
        assert set(out["anyOf"][0]["required"]) == {"path", "content", "truncated", "next_start_line", "meta"}
        assert set(out["anyOf"][1]["required"]) == {"code", "path", "message"}
        assert "BINARY_NOT_SUPPORTED" in out["properties"]["code"]["enum"]
        assert set(out["properties"]["meta"]["required"]) == {
            "byte_length", "line_count", "returned_line_count", "mtime_ms",
        }


# ======================================================================================
# lisp-read-file: the views (docs/views.md, docs/tool.md)
# ======================================================================================


async def test_collapsed_view_equals_the_cli_and_the_spec(project: Project) -> None:
    path = "fixtures/demo/demo.lisp"
    async with connect(project, "--root", str(project.root)) as server:
        result = await server.ok("lisp-read-file", {"path": path})
    assert result["content"] == cli_view(path, cwd=project.root)
    assert result["content"] == DEMO_VIEW
    # The whole result object is the CLI's --json object (same path as given, relative).
    assert result == cli_json(path, cwd=project.root)
    meta = result["meta"]
    assert result["path"] == path and result["mode"] == "lisp-collapsed"
    assert meta["total_forms"] == 9 and meta["expanded_forms"] == 0
    assert meta["truncated"] is False and meta["next_offset"] is None
    assert meta["total_lines"] == 35
    assert meta["byte_length"] == (project.root / path).stat().st_size
    assert meta["mtime_ms"] == mtime_ms(project.root / path)
    assert meta["diagnostics"] == []
    assert "fallback_encoding" not in meta


async def test_name_pattern_expands_matching_definitions_verbatim(project: Project) -> None:
    path = "fixtures/demo/demo.lisp"
    async with connect(project, "--root", str(project.root)) as server:
        area = await server.ok("lisp-read-file", {"path": path, "name_pattern": "^AREA$"})
        around = await server.ok("lisp-read-file", {"path": path, "name_pattern": "area :around"})
        nested = await server.ok("lisp-read-file", {"path": path, "name_pattern": "with-shape"})
        none = await server.ok("lisp-read-file", {"path": path, "name_pattern": "no-such-name"})
    assert area["content"] == cli_view("-n", "^AREA$", path, cwd=project.root)
    assert area["meta"]["expanded_forms"] == 3
    assert (
        "16: (defgeneric area (shape)\n"
        '17:   (:documentation "Area of SHAPE."))\n'
        "19: (defmethod area ((s shape))\n"
        "20:   (* (size s) (size s)))\n"
        "22: (defmethod area :around ((s shape))\n"
        "23:   (max 0 (call-next-method)))\n"
    ) in area["content"]
    assert " 2: (defpackage #:demo ...)\n" in area["content"]
    # A method matches as NAME QUALIFIERS (SPECIALIZERS): only the :around method expands.
    assert around["meta"]["expanded_forms"] == 1
    assert "19: (defmethod area ((s shape)) ...)\n" in around["content"]
    assert "23:   (max 0 (call-next-method)))\n" in around["content"]
    assert around["content"] == cli_view("-n", "area :around", path, cwd=project.root)
    # A child of a container expands alone, verbatim with its inner comment.
    assert "32:     ;; Count every shape made through the macro.\n" in nested["content"]
    assert "30: (eval-when (:compile-toplevel :load-toplevel :execute)\n" in nested["content"]
    assert nested["content"] == cli_view("-n", "with-shape", path, cwd=project.root)
    # Nothing is lost silently: a pattern that matched nothing says so in the text.
    assert '[No definition matched name_pattern "no-such-name".]' in none["content"]
    assert none["meta"]["expanded_forms"] == 0


async def test_content_pattern_expands_forms_whose_text_matches(project: Project) -> None:
    path = "fixtures/demo/demo.lisp"
    async with connect(project, "--root", str(project.root)) as server:
        result = await server.ok("lisp-read-file", {"path": path, "content_pattern": "call-next-method"})
    assert result["content"] == cli_view("-c", "call-next-method", path, cwd=project.root)
    assert result["meta"]["expanded_forms"] == 1
    assert "23:   (max 0 (call-next-method)))\n" in result["content"]


@pytest.mark.parametrize("comments", ["none", "headers", "preceding", "all"])
async def test_comments_modes_equal_the_cli(project: Project, comments: str) -> None:
    path = "fixtures/views/commented.lisp"
    async with connect(project, "--root", str(project.root)) as server:
        result = await server.ok("lisp-read-file", {"path": path, "comments": comments})
    assert result["content"] == cli_view("--comments", comments, path, cwd=project.root)
    assert result == cli_json("--comments", comments, path, cwd=project.root)


async def test_raw_mode_with_offset_and_limit(project: Project) -> None:
    path = "demo.lisp"
    async with connect(project, "--root", str(project.root)) as server:
        raw = await server.ok("lisp-read-file", {"path": path, "collapsed": False, "offset": 5, "limit": 3})
        numbered_raw = await server.ok(
            "lisp-read-file",
            {"path": path, "collapsed": False, "offset": 5, "limit": 3, "line_numbers": True},
        )
        rest = await server.ok("lisp-read-file", {"path": path, "collapsed": False, "offset": 33})
        past = await server.ok("lisp-read-file", {"path": path, "collapsed": False, "offset": 40})
    assert raw["mode"] == "raw"
    assert raw["content"] == (
        "(in-package #:demo)\n"
        "\n"
        "(defvar *count* 0\n"
        "[Showing lines 6-8 of 35. Use offset=8 to read more.]\n"
    )
    assert raw["meta"]["truncated"] is True and raw["meta"]["next_offset"] == 8
    assert raw["content"] == cli_view("--raw", "--offset", "5", "--limit", "3", path, cwd=project.root)
    assert numbered_raw["content"] == (
        " 6: (in-package #:demo)\n"
        " 7: \n"
        " 8: (defvar *count* 0\n"
        "[Showing lines 6-8 of 35. Use offset=8 to read more.]\n"
    )
    assert rest["content"] == "       (incf *count*)\n       ,@body)))\n"
    assert rest["meta"]["truncated"] is False and rest["meta"]["next_offset"] is None
    assert past["content"] == "[Offset 40 is past end of file (35 lines).]\n"
    assert past["meta"]["truncated"] is False


async def test_collapsed_view_cut_by_limit_continues_at_next_offset(project: Project) -> None:
    async with connect(project, "--root", str(project.root)) as server:
        first = await server.ok("lisp-read-file", {"path": "many.lisp", "limit": 5})
        assert first["meta"]["truncated"] is True
        offset = first["meta"]["next_offset"]
        assert isinstance(offset, int) and offset > 0
        assert f"Use offset={offset} to continue." in first["content"]
        second = await server.ok("lisp-read-file", {"path": "many.lisp", "limit": 5, "offset": offset})
    assert first["content"].startswith("  1: (defun f1 (x) ...) ;; Doc 1.\n")
    assert first["meta"]["total_forms"] == 30
    shown_first = re.findall(r"\(defun (f\d+)", first["content"])
    shown_second = re.findall(r"\(defun (f\d+)", second["content"])
    assert shown_first == ["f1", "f2", "f3", "f4", "f5"]
    assert shown_second == ["f6", "f7", "f8", "f9", "f10"]
    assert second["content"] == cli_view("--limit", "5", "--offset", str(offset), "many.lisp", cwd=project.root)


async def test_text_filtered_on_a_non_lisp_file(project: Project) -> None:
    async with connect(project, "--root", str(project.root)) as server:
        grep = await server.ok("lisp-read-file", {"path": "notes.md", "content_pattern": "TODO", "context_lines": 1})
        default_context = await server.ok("lisp-read-file", {"path": "notes.md", "content_pattern": "TODO"})
        nothing = await server.ok("lisp-read-file", {"path": "notes.md", "content_pattern": "absent-word"})
        plain = await server.ok("lisp-read-file", {"path": "notes.md"})
    assert grep["mode"] == "text-filtered"
    assert grep["content"] == cli_view("-c", "TODO", "--context", "1", "notes.md", cwd=project.root)
    assert grep["content"].startswith("2-Intro paragraph.\n3:TODO: write the summary.\n")
    assert "\n--\n" in grep["content"]
    assert "24:Last line: TODO at the end of the file.\n" in grep["content"]
    # The default context is 5 lines.
    assert default_context["content"].startswith("1-# Release notes\n")
    assert default_context["content"] == cli_view("-c", "TODO", "notes.md", cwd=project.root)
    assert nothing["mode"] == "text-filtered"
    assert '[No line matched content_pattern "absent-word".]' in nothing["content"]
    # A non-Lisp file without a pattern is raw.
    assert plain["mode"] == "raw"
    assert plain["content"] == (project.root / "notes.md").read_text()


async def test_patterns_on_a_text_file_name_is_case_insensitive_content_is_not(project: Project) -> None:
    async with connect(project, "--root", str(project.root)) as server:
        by_name = await server.ok("lisp-read-file", {"path": "notes.md", "name_pattern": "todo", "context_lines": 0})
        by_content = await server.ok("lisp-read-file", {"path": "notes.md", "content_pattern": "todo", "context_lines": 0})
    assert by_name["mode"] == by_content["mode"] == "text-filtered"
    assert by_name["content"].count("--\n") == 4 and "21:a lower-case todo" in by_name["content"]
    assert by_content["content"] == "21:a lower-case todo (matches only case-insensitively).\n"
    assert by_name["content"] == cli_view("-n", "todo", "--context", "0", "notes.md", cwd=project.root)


async def test_same_call_same_bytes(project: Project) -> None:
    """Determinism (docs/views.md#paging, the read_file definition (docs/mcp.md#read_file)): identical input, identical output, across servers."""
    calls = [
        ("lisp-read-file", {"path": "fixtures/demo/demo.lisp"}),
        ("lisp-read-file", {"path": "many.lisp", "name_pattern": "f1\\d", "limit": 7}),
        ("lisp-read-file", {"path": "notes.md", "content_pattern": "TODO"}),
        ("read_file", {"path": "long.txt", "start_line": 7, "max_lines": 9}),
    ]
    answers: list[list[str]] = []
    for _ in range(2):
        async with connect(project, "--root", str(project.root)) as server:
            round_: list[str] = []
            for tool, args in calls:
                result = await server.call(tool, args)
                assert result.is_error is not True, (tool, args)
                again = await server.call(tool, args)
                assert again == result, (tool, args)
                round_.append(json.dumps(result.model_dump(by_alias=True, mode="json"), sort_keys=True))
            answers.append(round_)
    assert answers[0] == answers[1]


async def test_special_content_is_reported_in_meta(project: Project) -> None:
    async with connect(project, "--root", str(project.root)) as server:
        invalid = await server.ok("lisp-read-file", {"path": "invalid-utf8.txt"})
        empty = await server.ok("lisp-read-file", {"path": "empty.lisp"})
        unbalanced = await server.ok("lisp-read-file", {"path": "fixtures/views/unbalanced.lisp"})
    assert invalid["meta"]["fallback_encoding"] == "replace"
    assert "caf\ufffd" in invalid["content"]
    assert empty["content"] == "" and empty["meta"]["total_lines"] == 0
    assert empty["meta"]["total_forms"] == 0
    assert unbalanced["meta"]["diagnostics"], "a recovered region is a diagnostic"
    assert "[Unclosed form at line" in unbalanced["content"]


async def test_every_fixture_through_every_tool(project: Project) -> None:
    """All fixtures: MCP result == CLI --json result, and all results fit their schemas."""
    # Documents (fixtures/documents/: PDF, DOCX, notebooks) are read as extracted text by
    # lisp-read-file and as files by the others: test_documents.py covers them.
    documents = project.root / "fixtures" / "documents"
    files = sorted(
        p for p in (project.root / "fixtures").rglob("*") if p.is_file() and documents not in p.parents
    )
    assert len(files) > 50
    problems: list[str] = []
    async with connect(project, "--root", str(project.root), *ALL) as server:
        for file in files:
            rel = file.relative_to(project.root).as_posix()
            try:
                view = await server.ok("lisp-read-file", {"path": rel})
                expected = cli_json(rel, cwd=project.root)
                if view["mode"] == "project":
                    # An .asd file's map: the refusals of missing components are worded for
                    # the confined server and the unconfined command line.
                    for skipped in view["files_skipped"] + expected["files_skipped"]:
                        skipped.pop("message")
                if view != expected:
                    problems.append(f"{rel}: MCP result differs from the CLI's --json")
                window = await server.ok("read_file", {"path": rel, "max_lines": 500})
                read = await server.ok("Read", {"path": rel, "limit": 2000})
                total = view["meta"]["total_lines"]
                if view["mode"] == "project":  # an .asd file: the map's lines (docs/project.md)
                    total = window["meta"]["line_count"]
                if window["meta"]["line_count"] != total:
                    problems.append(f"{rel}: read_file line_count {window['meta']['line_count']} != {total}")
                if window["meta"]["byte_length"] != file.stat().st_size:
                    problems.append(f"{rel}: read_file byte_length")
                if read["stats"]["total_lines"] != total or read["stats"]["file_size_bytes"] != file.stat().st_size:
                    problems.append(f"{rel}: Read stats {read['stats']}")
                # The same lines, formatted by each tool's rule.
                lines = window["content"].split("\n")
                if window["content"].endswith("\n"):
                    lines.pop()
                if total and read["data"]["content"] != numbered(lines[:2000]):
                    problems.append(f"{rel}: Read content is not read_file's lines numbered")
            except AssertionError as e:
                problems.append(f"{rel}: {e}")
    assert not problems, "\n".join(problems)


# ======================================================================================
# read_file (docs/mcp.md#read_file)
# ======================================================================================


async def test_read_file_default_window_is_200_lines(project: Project) -> None:
    async with connect(project, "--root", str(project.root)) as server:
        first = await server.ok("read_file", {"path": "long.txt"})
        second = await server.ok("read_file", {"path": "long.txt", "start_line": first["next_start_line"]})
        third = await server.ok("read_file", {"path": "long.txt", "start_line": second["next_start_line"]})
    assert first["path"] == "long.txt"
    assert first["content"] == "".join(f"{line}\n" for line in LONG_LINES[:200])
    assert first["truncated"] is True and first["next_start_line"] == 201
    assert first["meta"] == {
        "byte_length": (project.root / "long.txt").stat().st_size,
        "line_count": 450,
        "returned_line_count": 200,
        "mtime_ms": mtime_ms(project.root / "long.txt"),
    }
    assert second["content"] == "".join(f"{line}\n" for line in LONG_LINES[200:400])
    assert second["next_start_line"] == 401
    assert third["content"] == "".join(f"{line}\n" for line in LONG_LINES[400:])
    assert third["truncated"] is False and third["next_start_line"] is None
    assert third["meta"]["returned_line_count"] == 50


async def test_read_file_bounds_of_max_lines_and_start_line(project: Project) -> None:
    async with connect(project, "--root", str(project.root)) as server:
        most = await server.ok("read_file", {"path": "huge.txt", "max_lines": 500})
        assert most["meta"]["returned_line_count"] == 500 and most["next_start_line"] == 501
        window = await server.ok("read_file", {"path": "long.txt", "start_line": 10, "max_lines": 3})
        assert window["content"] == "".join(f"{line}\n" for line in LONG_LINES[9:12])
        assert window["next_start_line"] == 13
        # The compatibility definition's schema says "number": an integral number is a line number.
        integral = await server.ok("read_file", {"path": "long.txt", "start_line": 10.0, "max_lines": 3.0})
        assert integral == window
        for bad in (
            {"max_lines": 501},
            {"max_lines": 0},
            {"max_lines": -1},
            {"start_line": 0},
            {"start_line": 2.5},
            {"start_line": "2"},
            {"max_lines": True},
        ):
            e = await server.err("read_file", {"path": "long.txt", **bad}, "INVALID_ARGUMENT")
            assert e["path"] == "long.txt"
        await server.still_serving("read_file", "long.txt")


async def test_read_file_start_line_past_the_end_is_empty_not_an_error(project: Project) -> None:
    async with connect(project, "--root", str(project.root)) as server:
        past = await server.ok("read_file", {"path": "long.txt", "start_line": 451})
        far = await server.ok("read_file", {"path": "long.txt", "start_line": 10**6})
        empty = await server.ok("read_file", {"path": "empty.txt"})
        empty_past = await server.ok("read_file", {"path": "empty.txt", "start_line": 5})
    for result in (past, far):
        assert result["content"] == ""
        assert result["truncated"] is False and result["next_start_line"] is None
        assert result["meta"]["returned_line_count"] == 0 and result["meta"]["line_count"] == 450
    for result in (empty, empty_past):
        assert result["content"] == "" and result["truncated"] is False
        assert result["meta"]["line_count"] == 0 and result["meta"]["byte_length"] == 0


async def test_read_file_normalizes_line_breaks_and_reports_encoding(project: Project) -> None:
    async with connect(project, "--root", str(project.root)) as server:
        crlf = await server.ok("read_file", {"path": "crlf.txt"})
        invalid = await server.ok("read_file", {"path": "invalid-utf8.txt"})
        tail = await server.ok("read_file", {"path": "no-newline.txt"})
        absolute = await server.ok("read_file", {"path": str(project.root / "sub" / "inner.lisp")})
        linked = await server.ok("read_file", {"path": "inside-link.lisp", "max_lines": 1})
    assert crlf["content"] == "one\ntwo\nthree\n" and crlf["meta"]["line_count"] == 3
    assert invalid["content"] == "caf\ufffd\nok\n"
    assert invalid["meta"]["fallback_encoding"] == "replace"
    assert tail["content"].startswith("alpha\nbeta") and tail["meta"]["line_count"] == 2
    # The returned path is always relative to the root (the read_file definition (docs/mcp.md#read_file)).
    assert absolute["path"] == "sub/inner.lisp"
    assert not linked["path"].startswith("/")
    assert linked["content"].startswith(";;;; demo.lisp")


# ======================================================================================
# Read (docs/mcp.md#read)
# ======================================================================================

TOOK = r"\(Took \d+ms\)"


async def test_read_success_envelope(project: Project) -> None:
    args = {"path": "demo.lisp"}
    source = (project.root / "demo.lisp").read_text().split("\n")[:-1]
    async with connect(project, "--root", str(project.root), *ALL) as server:
        env = await server.ok("Read", args)
    assert set(env) == {"status", "data", "text", "stats", "context"}
    assert env["status"] == "success"
    assert env["data"] == {"content": numbered(source), "truncated": False}
    assert env["data"]["content"].startswith("   1 | ;;;; demo.lisp")
    assert re.fullmatch(r"Read 35 lines from 'demo\.lisp' \(Lines 1-35\)\.\n" + TOOK, env["text"]), env["text"]
    stats = env["stats"]
    assert stats["lines_read"] == 35 and stats["total_lines"] == 35
    assert stats["file_size_bytes"] == (project.root / "demo.lisp").stat().st_size
    assert stats["file_mtime_ms"] == mtime_ms(project.root / "demo.lisp")
    assert stats["encoding"] == "utf-8" and stats["time_ms"] >= 0
    assert stats["chars_read"] >= sum(len(line) for line in source)
    assert env["context"] == {"cwd": ".", "params_input": args, "path_resolved": "demo.lisp"}


async def test_read_partial_envelope_and_line_number_format(project: Project) -> None:
    async with connect(project, "--root", str(project.root), *ALL) as server:
        cut = await server.ok("Read", {"path": "long.txt", "limit": 100})
        middle = await server.ok("Read", {"path": "long.txt", "start_line": 101, "limit": 100})
        default = await server.ok("Read", {"path": "huge.txt"})
        wide = await server.ok("Read", {"path": "huge.txt", "start_line": 998, "limit": 2000})
        last = await server.ok("Read", {"path": "no-newline.txt"})
        invalid = await server.ok("Read", {"path": "invalid-utf8.txt"})
        absolute = await server.ok("Read", {"path": str(project.root / "sub" / "inner.lisp")})
    assert cut["status"] == "partial" and cut["data"]["truncated"] is True
    assert cut["data"]["content"] == numbered(LONG_LINES[:100])
    assert cut["text"].endswith("\n[Truncated: Showing first 100 of 450 lines. Use start_line=101 to continue.]")
    assert re.match(r"Read 100 lines from 'long\.txt' \(Lines 1-100\)\.\n" + TOOK, cut["text"])
    assert middle["data"]["content"] == numbered(LONG_LINES[100:200], first=101)
    assert "Use start_line=201 to continue." in middle["text"]
    # Default limit 500.
    assert default["stats"]["lines_read"] == 500 and default["status"] == "partial"
    assert "Use start_line=501 to continue." in default["text"]
    # "%4d | %s\n": four columns, wider numbers widen.
    assert wide["status"] == "success" and wide["data"]["truncated"] is False
    assert wide["data"]["content"].startswith(" 998 | row 998\n 999 | row 999\n1000 | row 1000\n")
    assert wide["data"]["content"].endswith("1200 | row 1200\n")
    # Every line ends with a newline, the last one too.
    assert last["data"]["content"] == "   1 | alpha\n   2 | beta\n"
    # Encoding fallback: partial, and said in data.
    assert invalid["status"] == "partial"
    assert invalid["data"]["fallback_encoding"] == "replace"
    assert invalid["data"]["content"] == "   1 | caf\ufffd\n   2 | ok\n"
    assert absolute["context"]["path_resolved"] == "sub/inner.lisp"


async def test_read_parameter_errors_are_invalid_param(project: Project) -> None:
    async with connect(project, "--root", str(project.root), *ALL) as server:
        ok = await server.ok("Read", {"path": "long.txt", "limit": 2000})
        assert ok["stats"]["lines_read"] == 450
        last = await server.ok("Read", {"path": "long.txt", "start_line": 450})
        assert last["data"]["content"] == numbered(LONG_LINES[449:], first=450)
        for bad in (
            {"start_line": 451},
            {"start_line": 0},
            {"limit": 2001},
            {"limit": 0},
            {"limit": "10"},
            {"start_line": 1.5},
        ):
            args = {"path": "long.txt", **bad}
            env = await server.err("Read", args, "INVALID_PARAM")
            assert env["context"]["params_input"] == args
        # Past the end says how long the file is.
        env = await server.err("Read", {"path": "long.txt", "start_line": 451}, "INVALID_PARAM")
        assert "450" in env["error"]["message"]
        await server.still_serving("Read", "long.txt")


async def test_read_empty_file(project: Project) -> None:
    async with connect(project, "--root", str(project.root), *ALL) as server:
        env = await server.ok("Read", {"path": "empty.txt"})
        assert env["status"] == "success"
        assert env["data"] == {"content": "", "truncated": False}
        assert env["text"] == "Read 0 lines from 'empty.txt' (file is empty)."
        assert env["stats"]["lines_read"] == 0 and env["stats"]["total_lines"] == 0
        # An empty file accepts start_line 1 only (the Read definition (docs/mcp.md#read)).
        await server.err("Read", {"path": "empty.txt", "start_line": 2}, "INVALID_PARAM")


# ======================================================================================
# Errors through MCP (docs/guard.md): a result with isError, the server keeps serving
# ======================================================================================

# kind -> (path, {tool: expected code}); a tool left out takes the path (a directory is
# lisp-find's scope).
FILE_ERRORS = {
    "missing": ("no/such/file.lisp", {"lisp-read-file": "NOT_FOUND", "lisp-find": "NOT_FOUND", "read_file": "NOT_FOUND", "Read": "NOT_FOUND"}),
    # lisp-read-file gives a directory's project map (docs/project.md): not an error.
    "directory": ("sub", {"lisp-read-file": None, "read_file": "NOT_FILE", "Read": "IS_DIRECTORY"}),
    "dot-dot": ("../outside/secret.txt", {t: "ACCESS_DENIED" for t in ALL_TOOLS}),
    "dot-dot-inside": ("sub/../../outside/secret.lisp", {t: "ACCESS_DENIED" for t in ALL_TOOLS}),
    "symlink-out": ("escape-link.txt", {t: "ACCESS_DENIED" for t in ALL_TOOLS}),
    "symlinked-dir-out": ("escape-dir/secret.txt", {t: "ACCESS_DENIED" for t in ALL_TOOLS}),
    "binary": ("binary.dat", {"lisp-read-file": "BINARY_FILE", "lisp-find": "BINARY_FILE", "read_file": "BINARY_NOT_SUPPORTED", "Read": "BINARY_FILE"}),
    "fifo": ("fifo", {t: "NOT_FILE" for t in ALL_TOOLS}),
    "socket": ("sock", {t: "NOT_FILE" for t in ALL_TOOLS}),
}


@pytest.mark.parametrize("kind", list(FILE_ERRORS))
async def test_file_errors(project: Project, kind: str) -> None:
    path, codes = FILE_ERRORS[kind]
    async with connect(project, "--root", str(project.root), *ALL) as server:
        for tool in (t for t in ALL_TOOLS if t in codes):
            if codes[tool] is None:
                assert (await server.ok(tool, {"path": path}))["mode"] == "project"
                continue
            # lisp-find needs what to find; the path is refused all the same.
            arguments = {"path": path, "symbol": "x"} if tool == "lisp-find" else {"path": path}
            with anyio.fail_after(10):  # a FIFO must never block the server
                e = await server.err(tool, arguments, codes[tool])
            if tool == "Read":
                assert e["context"]["params_input"] == {"path": path}
            else:
                assert e["path"] == path
                assert path in e["message"], "the message names the path"
            await server.still_serving()


async def test_absolute_path_outside_the_root_is_access_denied(project: Project) -> None:
    outside = str(project.outside / "secret.txt")
    async with connect(project, "--root", str(project.root), *ALL) as server:
        for tool in FILE_TOOLS:
            e = await server.err(tool, {"path": outside}, "ACCESS_DENIED")
            assert "secret\n" not in json.dumps(e)
            await server.still_serving()
        for tool in FILE_TOOLS:
            e = await server.err(tool, {"path": "/etc/passwd"}, "ACCESS_DENIED")
        # Inside the root, an absolute path is fine and is answered relative to the root.
        inside = await server.ok("lisp-read-file", {"path": str(project.root / "demo.lisp")})
        assert inside["path"] == "demo.lisp"


async def test_paths_that_stay_inside_are_answered_relative_to_the_root(project: Project) -> None:
    link = project.tmp / "root-link"
    os.symlink(project.root, link)
    # The root given through a symlink: paths through the link and through the target both work.
    async with connect(project, "--root", str(link), *ALL, cwd=project.tmp) as server:
        for path in (
            "demo.lisp",
            "./demo.lisp",
            "sub/../demo.lisp",
            str(link / "demo.lisp"),
            str(project.root / "demo.lisp"),
        ):
            view = await server.ok("lisp-read-file", {"path": path})
            assert view["path"] == "demo.lisp" and view["content"] == DEMO_VIEW, path
            window = await server.ok("read_file", {"path": path, "max_lines": 1})
            assert window["path"] == "demo.lisp", path
            env = await server.ok("Read", {"path": path, "limit": 1})
            assert env["context"]["path_resolved"] == "demo.lisp", path
        # A symlink that stays inside the root is followed.
        linked = await server.ok("lisp-read-file", {"path": "inside-link.lisp"})
        assert linked["content"] == DEMO_VIEW and not linked["path"].startswith("/")
        for path in (".", str(link)):
            project_map = await server.ok("lisp-read-file", {"path": path, "limit": 5})
            assert project_map["mode"] == "project" and project_map["path"] == ".", path
        for tool, code in (("read_file", "NOT_FILE"), ("Read", "IS_DIRECTORY")):
            await server.err(tool, {"path": "."}, code)
            await server.err(tool, {"path": str(link)}, code)
            await server.err(tool, {"path": str(link / ".." / "outside" / "secret.txt")}, "ACCESS_DENIED")


async def test_size_limit(project: Project) -> None:
    project.write("at-cap.txt", "x" * 99 + "\n")
    project.write("over-cap.txt", "x" * 100 + "\n")
    async with connect(project, "--root", str(project.root), "--max-file-bytes", "100", *ALL) as server:
        for tool in FILE_TOOLS:
            await server.ok(tool, {"path": "at-cap.txt"})
            await server.still_serving(tool, "at-cap.txt")
        # The whole text of a file over the cap is refused...
        whole = {"strategy": {"type": "complete"}}
        e = await server.err("lisp-read-file", {"path": "over-cap.txt", **whole}, "SIZE_LIMIT_EXCEEDED")
        assert e["path"] == "over-cap.txt"
        await server.err("lisp-read-file", {"path": "demo.lisp", **whole}, "SIZE_LIMIT_EXCEEDED")
        # ...while line windows of it are read, by every tool (the cap bounds the window).
        r = await server.ok("read_file", {"path": "demo.lisp", "start_line": 2, "max_lines": 1})
        assert r["content"] == "(defpackage #:demo\n" and r["meta"]["line_count"] == 35
        r = await server.ok("Read", {"path": "demo.lisp", "start_line": 35})
        assert r["data"]["content"].startswith("  35 | ")
        # Over the cap, the default strategy gives a raw window of a text file, and the
        # collapsed view of a Lisp file says which window to ask for.
        r = await server.ok("lisp-read-file", {"path": "over-cap.txt", "limit": 1})
        assert r["content"].startswith("x" * 99) and r["meta"]["total_lines"] == 1
        r = await server.ok("lisp-read-file", {"path": "demo.lisp"})
        assert '"type":"lineRange","startLine":1' in r["content"], r
        assert r["meta"]["truncated"] is True


async def test_binary_means_a_nul_byte_in_the_first_8_kib(project: Project) -> None:
    # Binary: a NUL in the first 8 KiB of a file that is not UTF-8 text (docs/guard.md).
    project.write("nul-late.txt", b"\xff" + b"a" * 8190 + b"\x00" + b"\n")
    project.write("nul-after.txt", b"\xff" + b"a" * 8191 + b"\x00" + b"\n")
    # Text: valid UTF-8 with a few NUL characters (a Lisp string may hold one).
    project.write("nul-in-string.lisp", b'(defvar *k* "\x00")\n' + b" " * 100)
    async with connect(project, "--root", str(project.root), *ALL) as server:
        await server.err("lisp-read-file", {"path": "nul-late.txt"}, "BINARY_FILE")
        await server.err("read_file", {"path": "nul-late.txt"}, "BINARY_NOT_SUPPORTED")
        await server.err("Read", {"path": "nul-late.txt"}, "BINARY_FILE")
        for tool in FILE_TOOLS:
            await server.ok(tool, {"path": "nul-after.txt"})
            await server.ok(tool, {"path": "nul-in-string.lisp"})


LISP_READ_FILE_BAD_ARGUMENTS = [
    # (arguments, the input schema rejects them too)
    ({"path": "demo.lisp", "content_pattern": "\\w{5000}"}, False),
    ({"path": "demo.lisp", "matches_only": True}, False),
    ({"path": "demo.lisp", "limit": 0}, True),
    ({"path": "demo.lisp", "limit": "ten"}, True),
    ({"path": "demo.lisp", "offset": -1}, True),
    ({"path": "demo.lisp", "collapsed": "no"}, True),
    ({"path": "demo.lisp", "comments": "some"}, True),
    ({"path": "demo.lisp", "context_lines": 1.5}, True),
    ({"path": "demo.lisp", "no_such_parameter": 1}, True),
    ({"path": 7}, True),
    ({"path": ""}, True),
    ({}, True),
]


async def test_lisp_read_file_invalid_arguments(project: Project) -> None:
    async with connect(project, "--root", str(project.root)) as server:
        schema = server.tools["lisp-read-file"]["inputSchema"]
        for arguments, schema_rejects in LISP_READ_FILE_BAD_ARGUMENTS:
            e = await server.err("lisp-read-file", arguments, "INVALID_ARGUMENT")
            assert bool(schema_errors(schema, arguments)) == schema_rejects, arguments
            if isinstance(arguments.get("path"), str):
                assert e["path"] == arguments["path"]
            await server.still_serving()
        # Both patterns are also literal text (docs/views.md): "(unclosed" is text to find.
        literal = await server.ok("lisp-read-file", {"path": "demo.lisp", "content_pattern": "(unclosed"})
        assert literal["meta"]["expanded_forms"] == 0
        too_large = await server.err("lisp-read-file", {"path": "demo.lisp", "content_pattern": "\\w{5000}"}, "INVALID_ARGUMENT")
        assert "regex" in too_large["message"]
        # No arguments at all.
        await server.err("lisp-read-file", None, "INVALID_ARGUMENT")
        await server.still_serving()


async def test_strategies_on_a_small_and_a_large_file(project: Project) -> None:
    small = "".join(f"line {i}\n" for i in range(1, 11))
    project.write("small.txt", small)
    # 3.3 MB, over three times the default cap: 100,000 lines of 33 bytes.
    project.write("large.log", "".join(f"{i:09d} entry of the large log\n" for i in range(1, 100_001)))
    async with connect(project, "--root", str(project.root)) as server:
        call = lambda path, strategy, **more: server.ok(
            "lisp-read-file", {"path": path, "strategy": strategy, **more})
        r = await call("small.txt", {"type": "default"})
        assert r["content"] == small and r["meta"]["applied_strategy"] == {"type": "default"}
        r = await call("small.txt", {"type": "complete"}, include_metadata=True)
        assert r["content"] == small and r["meta"]["remaining_bytes"] == 0
        assert r["metadata"]["size"] == len(small) and len(r["metadata"]["permissions"]) == 9
        assert r["metadata"]["mtime_ms"] == r["meta"]["mtime_ms"]
        r = await call("small.txt", {"type": "byteRange", "start": 7, "end": 14})
        assert r["content"] == "line 2\n" and r["meta"]["remaining_bytes"] == len(small) - 14
        assert "metadata" not in r
        r = await call("small.txt", {"type": "lineRange", "startLine": 9})
        assert r["content"] == "line 9\nline 10\n"
        assert r["meta"]["applied_strategy"] == {"type": "lineRange", "startLine": 9, "endLine": 10}
        # The large file: windows anywhere, never a size error.
        r = await call("large.log", {"type": "lineRange", "startLine": 99_999, "endLine": 100_000})
        assert r["content"] == "000099999 entry of the large log\n000100000 entry of the large log\n"
        assert r["meta"]["total_lines"] == 100_000 and r["meta"]["remaining_lines"] == 0
        r = await call("large.log", {"type": "byteRange", "start": 33 * 50_000, "end": 33 * 50_001})
        assert r["content"] == "000050001 entry of the large log\n"
        r = await call("large.log", {"type": "byteRange", "start": 0})
        assert r["meta"]["applied_strategy"] == {"type": "byteRange", "start": 0, "end": 1_048_576}
        assert r["meta"]["truncated"] is True
        assert r["meta"]["remaining_bytes"] == 3_300_000 - 1_048_576
        r = await server.ok("lisp-read-file", {"path": "large.log", "offset": 99_998})
        assert r["content"].endswith("000100000 entry of the large log\n")
        await server.err("lisp-read-file", {"path": "large.log", "strategy": {"type": "complete"}}, "SIZE_LIMIT_EXCEEDED")


async def test_invalid_ranges_name_the_valid_range(project: Project) -> None:
    project.write("ten.txt", "0123456789")
    async with connect(project, "--root", str(project.root)) as server:
        for strategy, words in [
            ({"type": "byteRange", "start": 11}, "the file has 10 bytes: start must be at most 10"),
            ({"type": "byteRange", "start": 0, "end": 11}, "the file has 10 bytes: end must be at most 10"),
            ({"type": "byteRange", "start": 5, "end": 4}, "end (4) must be at least its start (5)"),
            ({"type": "lineRange", "startLine": 2}, "the file has 1 lines: startLine must be at most 1"),
            ({"type": "lineRange", "startLine": 0}, "startLine must be at least 1"),
            ({"type": "lineRange", "startLine": 1, "endLine": 2**64 - 1}, "endLine must be at most 1"),
        ]:
            e = await server.err("lisp-read-file", {"path": "ten.txt", "strategy": strategy}, "INVALID_ARGUMENT")
            assert words in e["message"], (strategy, e)
        for strategy in ({"type": "nope"}, {"type": "byteRange"}, {"type": "byteRange", "start": -1},
                         {"type": "lineRange", "startLine": 1, "end": 3}, "complete"):
            await server.err("lisp-read-file", {"path": "ten.txt", "strategy": strategy}, "INVALID_ARGUMENT")
        await server.still_serving()


async def test_long_lines_name_the_byte_range_of_their_rest(project: Project) -> None:
    project.write("one-line.json", '{"k": "' + "v" * 5000 + '"}')
    async with connect(project, "--root", str(project.root)) as server:
        r = await server.ok("lisp-read-file", {"path": "one-line.json"})
        assert r["meta"]["truncated"] is True
        assert r["meta"]["cut_lines"] == [{"line": 1, "start": 2000, "end": 5009}]
        assert r["content"].endswith('…[+3009 chars; the rest is {"type":"byteRange","start":2000,"end":5009}]\n')
        rest = await server.ok("lisp-read-file", {"path": "one-line.json", "strategy": {"type": "byteRange", "start": 2000, "end": 5009}})
        assert r["content"][:2000] + rest["content"] == '{"k": "' + "v" * 5000 + '"}'


async def test_compat_tools_refuse_unknown_arguments(project: Project) -> None:
    async with connect(project, "--root", str(project.root), *ALL) as server:
        e = await server.err("read_file", {"path": "demo.lisp", "start_line": 5, "end_line": 6}, "INVALID_ARGUMENT")
        assert e["message"] == ("unknown argument end_line: read_file accepts path, start_line, max_lines "
                                "(end_line is not supported: use max_lines)")
        e = await server.err("read_file", {"path": "demo.lisp", "maxLines": 3}, "INVALID_ARGUMENT")
        assert e["message"].endswith("(did you mean max_lines?)")
        await server.err("read_file", {"path": "demo.lisp", "strategy": {"type": "complete"}}, "INVALID_ARGUMENT")
        e = await server.err("Read", {"path": "demo.lisp", "end_line": 6}, "INVALID_PARAM")
        assert e["error"]["message"] == ("unknown argument end_line: Read accepts path, start_line, limit "
                                         "(end_line is not supported: use limit)")
        # Their published definitions are unchanged.
        assert set(server.tools["read_file"]["inputSchema"]["properties"]) == {"path", "start_line", "max_lines"}
        assert set(server.tools["Read"]["inputSchema"]["properties"]) == {"path", "start_line", "limit"}
        await server.still_serving("Read", "demo.lisp")


async def test_compat_tools_invalid_path_arguments(project: Project) -> None:
    async with connect(project, "--root", str(project.root), *ALL) as server:
        for arguments in ({"path": ""}, {"path": 7}, {"path": None}, {}):
            await server.err("read_file", arguments, "INVALID_ARGUMENT")
            await server.err("Read", arguments, "INVALID_PARAM")
        await server.still_serving("Read", "demo.lisp")


async def test_unknown_tool_is_a_json_rpc_error(project: Project) -> None:
    async with connect(project, "--root", str(project.root), *ALL) as server:
        for name in ("no-such-tool", "read", "READ_FILE", ""):
            with pytest.raises(MCPError) as raised:
                await server.call(name, {"path": "demo.lisp"})
            assert raised.value.code == INVALID_PARAMS, raised.value
            await server.still_serving()


async def test_accepted_arguments_fit_the_input_schema(project: Project) -> None:
    calls = [
        {"path": "demo.lisp"},
        {"path": "demo.lisp", "collapsed": False, "offset": 3, "limit": 4, "line_numbers": True},
        {"path": "demo.lisp", "name_pattern": "area", "content_pattern": "max", "comments": "all"},
        {"path": "notes.md", "content_pattern": "TODO", "context_lines": 0},
    ]
    async with connect(project, "--root", str(project.root)) as server:
        schema = server.tools["lisp-read-file"]["inputSchema"]
        for arguments in calls:
            assert not schema_errors(schema, arguments), arguments
            await server.ok("lisp-read-file", arguments)


# ======================================================================================
# Protocol behaviour: concurrency, stdout hygiene
# ======================================================================================


async def test_concurrent_calls_each_get_their_own_answer(project: Project) -> None:
    async with connect(project, "--root", str(project.root), *ALL) as server:
        results: dict[int, Any] = {}

        async def one(i: int) -> None:
            tool = FILE_TOOLS[i % 3]
            if tool == "lisp-read-file":
                args = {"path": "long.txt", "collapsed": False, "offset": i, "limit": 1}
            elif tool == "read_file":
                args = {"path": "long.txt", "start_line": i + 1, "max_lines": 1}
            else:
                args = {"path": "long.txt", "start_line": i + 1, "limit": 1}
            if i % 5 == 4:
                results[i] = await server.err(tool, {"path": f"missing-{i}.txt"}, "NOT_FOUND")
            else:
                results[i] = await server.ok(tool, args)

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                for i in range(60):
                    tg.start_soon(one, i)
        for i, result in results.items():
            tool = FILE_TOOLS[i % 3]
            if i % 5 == 4:
                continue
            line = LONG_LINES[i]
            if tool == "lisp-read-file":
                assert result["content"].startswith(f"{line}\n"), (i, result)
            elif tool == "read_file":
                assert result["content"] == f"{line}\n", (i, result)
            else:
                assert result["data"]["content"] == numbered([line], first=i + 1), (i, result)


async def test_logs_go_to_stderr_only(project: Project) -> None:
    async with connect(project, "--root", str(project.root), "--log-level", "trace", *ALL) as server:
        for tool in FILE_TOOLS:
            await server.ok(tool, {"path": "demo.lisp"})
            await server.err(tool, {"path": "missing.txt"}, "NOT_FOUND")
        with pytest.raises(MCPError):
            await server.call("no-such-tool", {})
        await server.still_serving()
        assert server.stream_errors == []
    # (serve() also asserts, on exit, that no stdout line failed to parse as JSON-RPC.)
    assert server.stderr().strip(), "trace logging should have written to stderr"


# ======================================================================================
# Roots (docs/guard.md, docs/mcp.md): --root, the client's MCP roots, or the working directory
# ======================================================================================


def two_places(project: Project) -> tuple[Path, Path]:
    """A client project (a name that needs percent-encoding in a URI) and a decoy working dir."""
    client_root = project.tmp / "client project ü"
    decoy = project.tmp / "server-cwd"
    for directory, marker in ((client_root, "in-client-root"), (decoy, "in-working-dir")):
        directory.mkdir()
        (directory / "a.lisp").write_text(f"(defun {marker} () t)\n")
        (directory / "only-here.txt").write_text(f"{marker}\n")
    return client_root, decoy


async def test_client_roots_are_the_allowed_directories(project: Project) -> None:
    client_root, decoy = two_places(project)
    roots = Roots([client_root])
    async with connect(project, *ALL, cwd=decoy, roots=roots) as server:
        for tool in FILE_TOOLS:
            result = await server.ok(tool, {"path": "a.lisp"})
            text = json.dumps(result)
            assert "in-client-root" in text and "in-working-dir" not in text, result
        view = await server.ok("lisp-read-file", {"path": "a.lisp"})
        assert view["path"] == "a.lisp"
        assert view["content"] == "1: (defun in-client-root () t)\n"
        inside = await server.ok("read_file", {"path": str(client_root / "only-here.txt")})
        assert inside["path"] == "only-here.txt" and inside["content"] == "in-client-root\n"
        for tool in FILE_TOOLS:
            await server.err(tool, {"path": str(decoy / "a.lisp")}, "ACCESS_DENIED")
            await server.err(tool, {"path": "../server-cwd/a.lisp"}, "ACCESS_DENIED")
            await server.err(tool, {"path": str(project.root / "demo.lisp")}, "ACCESS_DENIED")
        await server.still_serving(path="a.lisp")
    assert roots.asked >= 1, "the server never asked the client for its roots"


async def test_without_roots_capability_the_working_directory_is_the_root(project: Project) -> None:
    client_root, decoy = two_places(project)
    async with connect(project, *ALL, cwd=decoy) as server:
        for tool in FILE_TOOLS:
            result = await server.ok(tool, {"path": "a.lisp"})
            assert "in-working-dir" in json.dumps(result), result
            await server.err(tool, {"path": str(client_root / "a.lisp")}, "ACCESS_DENIED")
            await server.err(tool, {"path": "../outside/secret.txt"}, "ACCESS_DENIED")
        absolute = await server.ok("lisp-read-file", {"path": str(decoy / "a.lisp")})
        assert absolute["path"] == "a.lisp"


async def test_several_client_roots(project: Project) -> None:
    client_root, decoy = two_places(project)
    second = project.tmp / "second root"
    second.mkdir()
    (second / "b.lisp").write_text("(defun in-second-root () t)\n")
    roots = Roots([client_root, second])
    async with connect(project, *ALL, cwd=decoy, roots=roots) as server:
        # Relative paths resolve in the first root.
        first = await server.ok("lisp-read-file", {"path": "a.lisp"})
        assert "in-client-root" in first["content"]
        await server.err("lisp-read-file", {"path": "b.lisp"}, "NOT_FOUND")
        # An absolute path inside the second root is allowed, answered absolute: the only
        # form that reads back (a relative path names the first root).
        shown = str((second / "b.lisp").resolve())
        other = await server.ok("lisp-read-file", {"path": str(second / "b.lisp")})
        assert other["path"] == shown and "in-second-root" in other["content"]
        again = await server.ok("lisp-read-file", {"path": other["path"]})
        assert again["content"] == other["content"]
        env = await server.ok("Read", {"path": str(second / "b.lisp")})
        assert env["context"]["path_resolved"] == shown
        await server.err("read_file", {"path": str(decoy / "a.lisp")}, "ACCESS_DENIED")


async def test_root_flag_wins_over_client_roots(project: Project) -> None:
    client_root, decoy = two_places(project)
    roots = Roots([client_root])
    async with connect(project, "--root", str(project.root), *ALL, cwd=decoy, roots=roots) as server:
        demo = await server.ok("lisp-read-file", {"path": "demo.lisp"})
        assert demo["content"] == DEMO_VIEW
        await server.err("lisp-read-file", {"path": "a.lisp"}, "NOT_FOUND")
        await server.err("lisp-read-file", {"path": str(client_root / "a.lisp")}, "ACCESS_DENIED")


async def test_roots_list_changed_switches_the_root(project: Project) -> None:
    client_root, decoy = two_places(project)
    other = project.tmp / "other-root"
    other.mkdir()
    (other / "a.lisp").write_text("(defun in-other-root () t)\n")
    roots = Roots([client_root])
    async with connect(project, *ALL, cwd=decoy, roots=roots) as server:
        before = await server.ok("lisp-read-file", {"path": "a.lisp"})
        assert "in-client-root" in before["content"]
        roots.dirs = [other]
        await server.session.send_roots_list_changed()
        # The notification is handled asynchronously: the next calls must soon see the new root.
        with anyio.fail_after(10):
            while True:
                after = await server.ok("lisp-read-file", {"path": "a.lisp"})
                if "in-other-root" in after["content"]:
                    break
                assert "in-client-root" in after["content"], after
                await anyio.sleep(0.05)
        await server.err("lisp-read-file", {"path": str(client_root / "a.lisp")}, "ACCESS_DENIED")
    assert roots.asked == 2


async def test_concurrent_first_calls_wait_for_the_client_roots(project: Project) -> None:
    client_root, decoy = two_places(project)
    roots = Roots([client_root])
    async with connect(project, *ALL, cwd=decoy, roots=roots) as server:
        seen: list[str] = []

        async def one(i: int) -> None:
            result = await server.ok(FILE_TOOLS[i % 3], {"path": "a.lisp"})
            seen.append(json.dumps(result))

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                for i in range(12):
                    tg.start_soon(one, i)
        assert len(seen) == 12
        assert all("in-client-root" in s and "in-working-dir" not in s for s in seen), seen
    assert roots.asked == 1


# ======================================================================================
# The SDK's high-level Client in its default mode: it probes server/discover (2026-07-28);
# the server does not offer 2026-07-28 (it forbids the server-to-client roots/list that
# docs/mcp.md's client roots need), so the client falls back to initialize at 2025-11-25.
# ======================================================================================


async def test_modern_protocol_client_reads_and_gets_errors(project: Project) -> None:
    async with connect(project, "--root", str(project.root), *ALL, modern=True) as server:
        assert server.protocol_version == "2025-11-25"
        assert server.server_info is not None and server.server_info.name == "lisp-read-file"
        assert sorted(server.tools) == sorted(ALL_TOOLS)
        assert server.tools["read_file"]["inputSchema"] == SEED_000_PARAMETERS
        view = await server.ok("lisp-read-file", {"path": "fixtures/demo/demo.lisp"})
        assert view["content"] == DEMO_VIEW
        await server.ok("read_file", {"path": "long.txt"})
        await server.ok("Read", {"path": "long.txt"})
        await server.err("lisp-read-file", {"path": "../outside/secret.txt"}, "ACCESS_DENIED")
        await server.err("read_file", {"path": "sub"}, "NOT_FILE")
        await server.err("Read", {"path": "long.txt", "limit": 2001}, "INVALID_PARAM")
        with pytest.raises(MCPError) as raised:
            await server.call("no-such-tool", {"path": "demo.lisp"})
        assert raised.value.code == INVALID_PARAMS
        await server.still_serving()


async def test_modern_protocol_client_roots_are_the_allowed_directories(project: Project) -> None:
    """docs/mcp.md: without --root, a client that offers roots confines the server to them.

    The auto-mode client negotiates 2025-11-25 (the server does not offer 2026-07-28), and
    the server asks it for its roots; it must not fall back to its own working directory.
    """
    client_root, decoy = two_places(project)
    roots = Roots([client_root])
    async with connect(project, *ALL, cwd=decoy, roots=roots, modern=True) as server:
        assert server.protocol_version == "2025-11-25"
        result = await server.ok("lisp-read-file", {"path": "a.lisp"})
        assert "in-client-root" in result["content"], (
            f"server read {result['content']!r} from its working directory, not the client's root"
        )
        await server.err("lisp-read-file", {"path": str(decoy / "a.lisp")}, "ACCESS_DENIED")


# ======================================================================================
# The read tool (docs/mcp.md#read-tool): a file by path, ASDF component name or main
# ======================================================================================

READ_TOOL_DESCRIPTION = "파일 읽기. edit/write 전에 반드시 먼저 확인."


async def test_read_tool_by_path_component_and_main(project: Project) -> None:
    queue = '(defun enqueue (q x)\n  "큐에 넣기 — λ"\n  (push x q))\n'
    project.write("project.asd", '(defsystem "project" :components ((:module "src" :serial t :components ((:file "queue") (:file "util")))))\n')
    project.write("extra.asd", '(defsystem "extra" :components ((:file "util" :pathname "lib/util")))\n')
    project.write("src/queue.lisp", queue)
    project.write("src/util.lisp", "(defun u ())\n")
    project.write("lib/util.lisp", "(defun lu ())\n")
    project.write("empty.lisp", "")
    async with connect(project, "--root", str(project.root), "--tools", "read") as server:
        assert list(server.tools) == ["read"]
        tool = server.tools["read"]
        assert tool["description"] == READ_TOOL_DESCRIPTION
        assert tool["inputSchema"]["required"] == ["file"]
        assert list(tool["inputSchema"]["properties"]) == ["file"]
        for name, path, content in (
            ("queue", "src/queue.lisp", queue),
            ("src/queue", "src/queue.lisp", queue),
            ("src/queue.lisp", "src/queue.lisp", queue),
            ("main", "project.asd", None),
            ("empty.lisp", "empty.lisp", ""),
        ):
            out = await server.ok("read", {"file": name})
            assert out["success"] is True and out["error"] is None, name
            assert out["data"]["file"] == path, name
            if content is not None:
                assert out["data"]["content"] == content, name
        for name, expected in (
            ("nothing-here", "File not found: nothing-here"),
            ("util", "Ambiguous name util"),
            # A lossy copy would destroy the bad bytes when written back.
            ("invalid-utf8.txt", "Not UTF-8: invalid-utf8.txt has a byte that is not UTF-8 at offset 3"),
        ):
            result = await server.call("read", {"file": name})
            assert result.is_error is True, name
            out = result.structured_content
            assert out["success"] is False and out["data"] is None, out
            assert out["error"].startswith(expected), out
            assert not schema_errors(server.tools["read"]["outputSchema"], out)
        ambiguous = (await server.call("read", {"file": "util"})).structured_content["error"]
        assert "src/util.lisp" in ambiguous and "lib/util.lisp" in ambiguous, ambiguous
