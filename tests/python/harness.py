"""Drives the real `lisp-read-file mcp` binary with the official MCP Python SDK.

`serve(...)` starts the server over stdio, performs the handshake with the SDK's
`ClientSession` (or the high-level `Client` for the 2026-07-28 protocol), lists the tools
and yields a `Server` whose `ok`/`err` helpers check every result against the contract:
the text content, the structured content, the tool's `outputSchema` (Draft 2020-12).
"""

from __future__ import annotations

import json
import re
import os
import subprocess
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import mcp.types as types
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
BIN = Path(os.environ.get("LISP_READ_FILE_BIN") or REPO / "target" / "release" / "lisp-read-file")

# Seconds a single request may take before the test fails (a blocked server must not hang us).
REQUEST_TIMEOUT = 30

ALL_TOOLS = ("lisp-read-file", "lisp-find", "read_file", "Read")
DEFAULT_TOOLS = ("lisp-read-file", "lisp-find", "read_file")
# The tools that read one file given by `path` alone (lisp-find also needs what to find).
FILE_TOOLS = ("lisp-read-file", "read_file", "Read")


def validator(schema: dict[str, Any]) -> jsonschema.Draft202012Validator:
    """A Draft 2020-12 validator for `schema`, after checking the schema itself."""
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def schema_errors(schema: dict[str, Any], instance: Any) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
        for e in validator(schema).iter_errors(instance)
    ]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Runs the command-line surface of the same binary."""
    return subprocess.run(
        [str(BIN), *args], cwd=cwd, capture_output=True, text=True, timeout=REQUEST_TIMEOUT
    )


def cli_view(*args: str, cwd: Path) -> str:
    """The CLI's stdout for a successful read, its hints spelled as MCP arguments: the two
    surfaces show the same view, each with hints in its own syntax (docs/tool.md#hints)."""
    done = cli(*args, cwd=cwd)
    assert done.returncode == 0, f"CLI {args} exited {done.returncode}: {done.stderr}"
    if "--json" in args:
        return done.stdout
    out = re.sub(r"--raw --offset (\d+) --limit (\d+)", r"collapsed=false offset=\1 limit=\2", done.stdout)
    return re.sub(r"([Uu]se) --offset (\d+)", r"\1 offset=\2", out)


def cli_json(*args: str, cwd: Path) -> dict[str, Any]:
    return json.loads(cli_view("--json", *args, cwd=cwd))


def dump(result: types.CallToolResult) -> str:
    return json.dumps(result.model_dump(by_alias=True, mode="json", exclude_none=True), indent=1)


@dataclass
class Roots:
    """What the client answers to `roots/list`; tests may change `dirs` and notify."""

    dirs: list[Path]
    asked: int = 0

    async def callback(self, context: Any) -> types.ListRootsResult:
        self.asked += 1
        return types.ListRootsResult(
            roots=[types.Root(uri=d.as_uri(), name=d.name) for d in self.dirs]
        )


@dataclass
class Server:
    """A connected server: the SDK session plus what the handshake and tools/list said."""

    session: Any  # ClientSession, or mcp.Client for the 2026-07-28 protocol
    protocol_version: str
    server_info: types.Implementation | None
    instructions: str | None
    tools: dict[str, dict[str, Any]]
    stderr_path: Path
    stream_errors: list[Exception] = field(default_factory=list)

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    async def call(self, tool: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        return await self.session.call_tool(tool, arguments)

    async def ok(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Calls `tool`, expects success; checks text and structured content; returns the latter."""
        result = await self.call(tool, arguments)
        where = f"{tool} {json.dumps(arguments)} ->\n{dump(result)}"
        assert result.is_error is not True, f"unexpected tool error: {where}"
        content = result.structured_content
        assert isinstance(content, dict), f"no structuredContent: {where}"
        errors = schema_errors(self.tools[tool]["outputSchema"], content)
        assert not errors, f"structuredContent does not fit the outputSchema {errors}: {where}"
        texts = [block.text for block in result.content if block.type == "text"]
        assert len(texts) == len(result.content), f"non-text content: {where}"
        if tool in ("lisp-read-file", "lisp-find"):
            # The view is said once: the text content; the structured content has the facts.
            assert "content" not in content, f"the view twice: {where}"
            # A byte window cut short of the end asked says so in a second block.
            meta = content.get("meta", {})
            cut_window = meta.get("applied_strategy", {}).get("type") == "byteRange" and meta.get("truncated")
            assert len(texts) == (2 if cut_window else 1), f"the view (and a cut window's note): {where}"
            if cut_window:
                assert texts[1].startswith("[Showing bytes ") and texts[1].endswith(" to continue.]"), where
            content = dict(content, content=texts[0])
        elif tool == "read_file":
            expected = [content["content"]]
            if content["truncated"]:
                m = content["meta"]
                expected.append(
                    f"[Truncated: {m['returned_line_count']} of {m['line_count']} lines returned."
                    f" Use start_line={content['next_start_line']} to continue.]"
                )
            assert texts == expected, f"text content: {where}"
        elif tool == "Read":
            data = content["data"]
            joined = f"{data['content']}\n{content['text']}" if data["content"] else content["text"]
            assert texts == [joined], f"text content: {where}"
        return content

    async def err(self, tool: str, arguments: dict[str, Any] | None, code: str) -> dict[str, Any]:
        """Calls `tool`, expects a tool error (`isError: true`) with `code`; returns its structured content.

        For `lisp-read-file` and `read_file` the structured content is `{code, path, message}`
        and the text `CODE: message`; for `Read` it is the envelope with `status: "error"`.
        """
        result = await self.call(tool, arguments)
        where = f"{tool} {json.dumps(arguments)} ->\n{dump(result)}"
        assert result.is_error is True, f"expected a tool error {code}: {where}"
        content = result.structured_content
        assert isinstance(content, dict), f"no structuredContent: {where}"
        texts = [block.text for block in result.content if block.type == "text"]
        if tool == "Read":
            assert content["status"] == "error", where
            assert content["error"]["code"] == code, where
            assert content["error"]["message"], where
            assert content["data"] is None, where
            assert set(content) == {"status", "data", "text", "stats", "context", "error"}, where
            assert content["text"] == f"Error: {content['error']['message']}", where
            assert texts == [content["text"]], where
            assert content["context"]["cwd"] == "." and "time_ms" in content["stats"], where
            # The envelope is the same shape for errors: it fits Read's outputSchema too.
            errors = schema_errors(self.tools[tool]["outputSchema"], content)
            assert not errors, f"error envelope does not fit the outputSchema {errors}: {where}"
        else:
            assert set(content) == {"code", "path", "message"}, where
            assert content["code"] == code, where
            assert isinstance(content["path"], str) and content["message"], where
            assert texts == [f"{code}: {content['message']}"], where
            # The outputSchema describes the error object too (a second anyOf branch).
            errors = schema_errors(self.tools[tool]["outputSchema"], content)
            assert not errors, f"error object does not fit the outputSchema {errors}: {where}"
        return content

    async def still_serving(self, tool: str = "lisp-read-file", path: str = "fixtures/demo/demo.lisp") -> None:
        """After an error the server must keep answering: ping, list and read again."""
        if self.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:  # 2026-07-28 has no ping
            await self.session.send_ping()
        listed = await self.session.list_tools()
        assert {t.name for t in listed.tools} == set(self.tools)
        await self.ok(tool, {"path": path})


async def _collect_stream_errors(errors: list[Exception], message: Any) -> None:
    # The SDK hands lines of stdout that are not JSON-RPC to the message handler as
    # exceptions: stdout must carry protocol messages only.
    if isinstance(message, Exception):
        errors.append(message)


def _tools(listed: types.ListToolsResult) -> dict[str, dict[str, Any]]:
    tools: dict[str, dict[str, Any]] = {}
    for tool in listed.tools:
        raw = tool.model_dump(by_alias=True, mode="json", exclude_none=True)
        assert raw["name"] not in tools, f"tool listed twice: {raw['name']}"
        tools[raw["name"]] = raw
    return tools


def _single(group: BaseExceptionGroup) -> BaseException | None:
    """The one exception inside nested task-group wrappers, if there is exactly one."""
    leaves: list[BaseException] = []

    def walk(e: BaseException) -> None:
        if isinstance(e, BaseExceptionGroup):
            for inner in e.exceptions:
                walk(inner)
        else:
            leaves.append(e)

    walk(group)
    return leaves[0] if len(leaves) == 1 else None


@asynccontextmanager
async def serve(*args: str, **kwargs: Any) -> AsyncIterator[Server]:
    """`_serve`, with a failure inside the session unwrapped from the SDK's task groups."""
    try:
        async with _serve(*args, **kwargs) as server:
            yield server
    except BaseExceptionGroup as group:
        leaf = _single(group)
        if leaf is None:
            raise
        raise leaf from None


@asynccontextmanager
async def _serve(
    *args: str,
    cwd: Path,
    log: Path,
    roots: Roots | None = None,
    modern: bool = False,
) -> AsyncIterator[Server]:
    """Starts `lisp-read-file mcp ARGS...` in `cwd`, stderr to `log`, and connects.

    `roots`: the client offers the roots capability and answers `roots/list` with these.
    `modern`: connect with the SDK's high-level `Client` in its default `auto` mode, which
    probes `server/discover` (protocol 2026-07-28) before the initialize handshake.
    """
    assert BIN.is_file(), f"server binary not found: {BIN} (build it, or set LISP_READ_FILE_BIN)"
    params = StdioServerParameters(command=str(BIN), args=["mcp", *args], cwd=str(cwd))
    errors: list[Exception] = []

    async def handler(message: Any) -> None:
        await _collect_stream_errors(errors, message)

    callback = roots.callback if roots is not None else None
    with open(log, "w") as errlog:
        if modern:
            async with Client(
                stdio_client(params, errlog=errlog),
                list_roots_callback=callback,
                message_handler=handler,
                read_timeout_seconds=REQUEST_TIMEOUT,
                cache=None,
            ) as client:
                listed = await client.list_tools()
                yield Server(
                    session=client,
                    protocol_version=client.protocol_version,
                    server_info=client.server_info,
                    instructions=client.instructions,
                    tools=_tools(listed),
                    stderr_path=log,
                    stream_errors=errors,
                )
        else:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(
                    read,
                    write,
                    read_timeout_seconds=REQUEST_TIMEOUT,
                    list_roots_callback=callback,
                    message_handler=handler,
                ) as session:
                    init = await session.initialize()
                    listed = await session.list_tools()
                    yield Server(
                        session=session,
                        protocol_version=init.protocol_version,
                        server_info=init.server_info,
                        instructions=init.instructions,
                        tools=_tools(listed),
                        stderr_path=log,
                        stream_errors=errors,
                    )
    assert not errors, f"the server wrote non-protocol output to stdout: {errors!r}"


def lines_of(text: str) -> list[str]:
    return text.split("\n")


def numbered(lines: Sequence[str], first: int = 1) -> str:
    """What Read's `data.content` holds for `lines` starting at line `first`."""
    return "".join("%4d | %s\n" % (first + i, line) for i, line in enumerate(lines))
