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


def _code_positions(path, word):
    """(line, column) of each `word` in `path` outside comments and strings, by a small
    scan of its own (`;` to the end of a line, `"..."` with `\\` escapes, `#|...|#`); the
    column is the token's, a `#:` or `:` before the name included."""
    text = path.read_text()
    out, line, col, i, depth, in_string = [], 0, 0, 0, 0, False
    lower = text.lower()
    while i < len(text):
        c = text[i]
        if depth:
            if text.startswith("|#", i):
                depth, i, col = depth - 1, i + 2, col + 2
                continue
            if text.startswith("#|", i):
                depth, i, col = depth + 1, i + 2, col + 2
                continue
        elif in_string:
            if c == "\\":
                i, col = i + 2, col + 2
                continue
            in_string = c != '"'
        elif c == '"':
            in_string = True
        elif c == ";":
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        elif text.startswith("#|", i):
            depth, i, col = 1, i + 2, col + 2
            continue
        elif lower.startswith(word, i) and not (i and (lower[i - 1].isalnum() or lower[i - 1] in "-*%/")) \
                and not (i + len(word) < len(text) and (lower[i + len(word)].isalnum() or lower[i + len(word)] in "-*%/")):
            prefix = 2 if i >= 2 and text.startswith("#:", i - 2) else 1 if i >= 1 and text[i - 1] == ":" else 0
            out.append((line, col - prefix))
        if c == "\n":
            line, col = line + 1, 0
        else:
            col += 1
        i += 1
    return out


@pytest.mark.skipif(not ALEXANDRIA.is_dir(), reason="Debian's cl-alexandria is not installed")
async def test_debian_system_navigation_requests():
    """alexandria as Debian ships it: definition across files, references without the
    docstring's mention, workspace symbol, hover, folding and selection ranges, and the
    diagnostics of a half-edited buffer fixed by didChange."""
    functions = next(ALEXANDRIA.rglob("functions.lisp"))
    sequences = next(ALEXANDRIA.rglob("sequences.lisp"))
    lines = functions.read_text().splitlines()
    defun_line = next(i for i, l in enumerate(lines) if l.startswith("(defun ensure-function "))
    async with session(ALEXANDRIA) as client:
        # Definition from a use in another file.
        use_line = next(i for i, l in enumerate(sequences.read_text().splitlines()) if "(ensure-function" in l)
        use = at(sequences, use_line, "(ensure-function", 2)
        found = await client.text_document_definition_async(
            types.DefinitionParams(text_document=doc(sequences), position=use)
        )
        assert [(short(l.uri), l.range.start.line) for l in found] == [("functions.lisp", defun_line)], found

        # References: every use in code, none in the docstring "... for ENSURE-FUNCTION: ...".
        refs = await client.text_document_references_async(
            types.ReferenceParams(
                text_document=doc(sequences), position=use,
                context=types.ReferenceContext(include_declaration=True),
            )
        )
        got = {(short(r.uri), r.range.start.line, r.range.start.character) for r in refs}
        expected = {
            (path.name, line, col)
            for path in ALEXANDRIA.rglob("*.lisp")
            for line, col in _code_positions(path, "ensure-function")
        }
        # `#:ensure-function` of the package's exports names the symbol too.
        assert got == expected, (sorted(got), sorted(expected))
        docstring = next(i for i, l in enumerate(lines) if "for ENSURE-FUNCTION:" in l)
        assert ("functions.lisp", docstring) not in {(f, l) for f, l, _ in got}

        # Workspace symbol, by prefix.
        symbols = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="ensure-functi"))
        names = {(s.name.lower(), short(s.location.uri)) for s in symbols}
        assert ("ensure-function", "functions.lisp") in names, names

        # Hover: the signature and where it is defined.
        hover = await client.text_document_hover_async(types.HoverParams(text_document=doc(sequences), position=use))
        assert "ensure-function" in hover.contents.value.lower() and "functions.lisp" in hover.contents.value

        # Folding: each top-level form of more than one line folds, inside the document.
        folds = await client.text_document_folding_range_async(types.FoldingRangeParams(text_document=doc(functions)))
        starts = {f.start_line for f in folds}
        assert defun_line in starts and all(0 <= f.start_line < f.end_line < len(lines) for f in folds)

        # Selection: symbol, then ever larger forms, up to the top-level form.
        [chain] = await client.text_document_selection_range_async(
            types.SelectionRangeParams(text_document=doc(sequences), positions=[use])
        )
        spans = []
        while chain is not None:
            spans.append(((chain.range.start.line, chain.range.start.character), (chain.range.end.line, chain.range.end.character)))
            chain = chain.parent
        assert len(spans) >= 3
        for inner, outer in zip(spans, spans[1:]):
            assert outer[0] <= inner[0] and inner[1] <= outer[1] and outer != inner, spans

        # Diagnostics: the file as shipped has none; cut its last `)`, then put it back.
        text = functions.read_text()
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri(functions), language_id="lisp", version=1, text=text)
            )
        )
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        assert list(client.diagnostics[uri(functions)]) == []
        cut = text.rstrip().rfind(")")
        broken = text[:cut] + text[cut + 1:]
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri(functions), version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=broken)],
            )
        )
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        assert list(client.diagnostics[uri(functions)]), "an unbalanced form has a diagnostic"
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri(functions), version=3),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        assert list(client.diagnostics[uri(functions)]) == []
