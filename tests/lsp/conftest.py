import os
import pathlib

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

REPO = pathlib.Path(__file__).resolve().parents[2]
PROJECT = REPO / "fixtures" / "lsp" / "project"
BIN = os.environ.get("LISP_READ_FILE_BIN", str(REPO / "target" / "release" / "lisp-read-file"))


def uri(path: pathlib.Path) -> str:
    return path.resolve().as_uri()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[BIN, "lsp"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            workspace_folders=[types.WorkspaceFolder(uri=uri(PROJECT), name="project")],
        )
    )
    yield
    await lsp_client.shutdown_session()
