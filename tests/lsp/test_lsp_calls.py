"""Call hierarchy, document links and the features option through pytest-lsp."""

import pathlib

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import make_test_lsp_client

from conftest import BIN, PROJECT, uri

GEOMETRY = PROJECT / "src" / "geometry.lisp"
RENDER = PROJECT / "src" / "render.lisp"
ALEXANDRIA = pathlib.Path("/usr/share/common-lisp/source/alexandria")


def doc(path):
    return types.TextDocumentIdentifier(uri=uri(path))


def at(path, line, needle, offset=1):
    return types.Position(line=line, character=path.read_text().splitlines()[line].index(needle) + offset)


async def prepare(client, path, position):
    return await client.text_document_prepare_call_hierarchy_async(
        types.CallHierarchyPrepareParams(text_document=doc(path), position=position)
    )


def short(u):
    return u.rsplit("/", 1)[1]


async def test_call_hierarchy_incoming_lists_each_caller_with_its_call_sites(client):
    [item] = await prepare(client, RENDER, at(RENDER, 4, "(square", 2))
    assert (item.name, short(item.uri), item.range.start.line) == ("square", "geometry.lisp", 16)
    assert item.selection_range.start == types.Position(line=16, character=7)
    calls = await client.call_hierarchy_incoming_calls_async(
        types.CallHierarchyIncomingCallsParams(item=item)
    )
    got = sorted(
        (c.from_.name, short(c.from_.uri), [(r.start.line, r.start.character, r.end.character) for r in c.from_ranges])
        for c in calls
    )
    col = RENDER.read_text().splitlines()[4].index("(square") + 1
    assert got == [
        ("circle-area", "geometry.lisp", [(29, 11, 17)]),
        ("draw", "render.lisp", [(4, col, col + 6)]),
    ]


async def test_call_hierarchy_methods_are_items_one_by_one(client):
    items = await prepare(client, RENDER, at(RENDER, 4, "(area", 2))
    assert sorted((i.name, i.range.start.line) for i in items) == [("area", 8), ("area :around (shape)", 13)]
    outgoing = await client.call_hierarchy_outgoing_calls_async(
        types.CallHierarchyOutgoingCallsParams(item=next(i for i in items if i.name == "area"))
    )
    assert list(outgoing) == []
    [draw] = await prepare(client, RENDER, at(RENDER, 2, "draw"))
    outgoing = await client.call_hierarchy_outgoing_calls_async(
        types.CallHierarchyOutgoingCallsParams(item=draw)
    )
    # `format` is Common Lisp's: not a definition of the workspace. `area` is the generic
    # function and its method, each a target of the one call.
    got = sorted((c.to.name, c.to.range.start.line, [r.start.line for r in c.from_ranges]) for c in outgoing)
    assert got == [("area", 8, [4]), ("area :around (shape)", 13, [4]), ("square", 16, [4])]


async def test_call_hierarchy_sees_unsaved_buffers(client):
    text = RENDER.read_text() + "\n(defun twice (s) (square (square s)))\n"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri(RENDER), language_id="lisp", version=1, text=text)
        )
    )
    [item] = await prepare(client, GEOMETRY, at(GEOMETRY, 16, "square"))
    calls = await client.call_hierarchy_incoming_calls_async(types.CallHierarchyIncomingCallsParams(item=item))
    twice = next(c for c in calls if c.from_.name == "twice")
    assert [r.start.character for r in twice.from_ranges] == [18, 26]


async def test_document_links_of_asd_components(client):
    asd = PROJECT / "shapes.asd"
    links = await client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=doc(asd))
    )
    lines = asd.read_text().splitlines()
    got = [(lines[l.range.start.line][l.range.start.character:l.range.end.character], short(l.target)) for l in links]
    assert got == [('"package"', "package.lisp"), ('"geometry"', "geometry.lisp"), ('"render"', "render.lisp")]
    assert all(l.target == uri(PROJECT / "src" / short(l.target)) for l in links)


async def test_an_absolute_pathname_links_to_the_file_it_spells(tmp_path):
    # As ASDF merges it: an absolute :pathname is that file (inside the root: linked),
    # not one under the .asd's directory; outside the root nothing is linked.
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "real.lisp").write_text("(defun real ())\n")
    (tmp_path / "lib").mkdir()
    outside = tmp_path.parent / (tmp_path.name + "-outside.lisp")
    outside.write_text("(defun secret ())\n")
    asd = tmp_path / "sys.asd"
    asd.write_text(
        f'(defsystem "sys" :pathname "lib/" :components ((:file "a" :pathname "{tmp_path / "src" / "real"}")\n'
        f'  (:file "b" :pathname "{outside.with_suffix("")}")))\n'
    )
    async with session(tmp_path) as client:
        links = await client.text_document_document_link_async(types.DocumentLinkParams(text_document=doc(asd)))
        assert [l.target for l in links] == [uri(tmp_path / "src" / "real.lisp")]


@pytest.mark.skipif(not ALEXANDRIA.is_dir(), reason="Debian's cl-alexandria is not installed")
async def test_debian_system_call_hierarchy_and_links(tmp_path):
    """alexandria as Debian ships it: `ensure-function`'s callers across files, and the
    links of alexandria.asd to files in a module with its own :pathname."""
    async with session(ALEXANDRIA) as client:
        source = next(ALEXANDRIA.rglob("functions.lisp"))
        lines = source.read_text().splitlines()
        line = next(i for i, l in enumerate(lines) if l.startswith("(defun ensure-function"))
        [item] = await prepare(client, source, types.Position(line=line, character=8))
        calls = await client.call_hierarchy_incoming_calls_async(types.CallHierarchyIncomingCallsParams(item=item))
        files = {short(c.from_.uri) for c in calls}
        assert len(calls) >= 5 and len(files) >= 2, [(c.from_.name, short(c.from_.uri)) for c in calls]
        for c in calls:
            text = pathlib.Path(c.from_.uri[len("file://"):]).read_text().splitlines()
            for r in c.from_ranges:
                assert text[r.start.line][r.start.character:r.end.character].lower().endswith("ensure-function")
        asd = next(ALEXANDRIA.glob("alexandria.asd"))
        links = await client.text_document_document_link_async(types.DocumentLinkParams(text_document=doc(asd)))
        assert len(links) >= 15
        for l in links:
            assert pathlib.Path(l.target[len("file://"):]).is_file()


class session:
    """A server of its own on `root`, with `options` as initialization options."""

    def __init__(self, root, options=None):
        self.root, self.options = root, options

    async def __aenter__(self):
        self.client = make_test_lsp_client()
        await self.client.start_io(BIN, "lsp")
        await self.client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                workspace_folders=[types.WorkspaceFolder(uri=uri(self.root), name="root")],
                initialization_options=self.options,
            )
        )
        return self.client

    async def __aexit__(self, *_):
        await self.client.shutdown_session()
        await self.client.stop()
