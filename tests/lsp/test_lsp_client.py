"""The language server through pytest-lsp (pygls's client) on fixtures/lsp/project."""

import random

from lsprotocol import types

from conftest import PROJECT, uri

GEOMETRY = PROJECT / "src" / "geometry.lisp"
RENDER = PROJECT / "src" / "render.lisp"


def doc(path):
    return types.TextDocumentIdentifier(uri=uri(path))


def pos(line, character):
    return types.Position(line=line, character=character)


def open_file(client, path, text=None, version=1):
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri(path), language_id="lisp", version=version,
                text=path.read_text() if text is None else text,
            )
        )
    )


def column_of(path, line, needle):
    return path.read_text().splitlines()[line].index(needle)


async def test_definition_across_files(client):
    # `square` in render.lisp is defined in geometry.lisp.
    col = column_of(RENDER, 4, "(square") + 2
    result = await client.text_document_definition_async(
        types.DefinitionParams(text_document=doc(RENDER), position=pos(4, col))
    )
    assert [(r.uri, r.range.start.line) for r in result] == [(uri(GEOMETRY), 16)]


async def test_references_exclude_strings_and_comments(client):
    col = column_of(RENDER, 4, "(square") + 2
    with_decl = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=doc(RENDER), position=pos(4, col),
            context=types.ReferenceContext(include_declaration=True),
        )
    )
    found = sorted((r.uri.rsplit("/", 1)[1], r.range.start.line, r.range.start.character) for r in with_decl)
    # The definition's name, the use in circle-area, the call in draw; not the comment
    # nor the "square: ~a" string of render.lisp.
    assert found == [("geometry.lisp", 16, 7), ("geometry.lisp", 29, 11), ("render.lisp", 4, col - 1)]
    without = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=doc(RENDER), position=pos(4, col),
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    assert len(without) == 2


async def test_workspace_symbol_prefix_substring_fuzzy(client):
    async def names(query):
        result = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
        return [s.name for s in result]

    assert (await names("circ"))[0] == "circle-area"
    assert "circle-area" in await names("area")
    assert (await names("area"))[0] == "area"
    assert await names("crcar") == ["circle-area"]
    assert await names("shapes::squ") == ["square"]
    assert await names("zzzz") == []


async def test_hover_shows_signature_doc_and_place(client):
    col = column_of(RENDER, 4, "(square") + 2
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=doc(RENDER), position=pos(4, col))
    )
    text = hover.contents.value
    assert "(defun square (x) ...)" in text
    assert "X times X." in text
    assert "src/geometry.lisp:17" in text


async def test_folding_ranges(client):
    folds = await client.text_document_folding_range_async(
        types.FoldingRangeParams(text_document=doc(GEOMETRY))
    )
    got = [(f.start_line, f.end_line, f.kind) for f in folds]
    assert (2, 3, "comment") in got  # the two ;;; lines
    assert (20, 23, "comment") in got  # the #| ... |# block
    assert (8, 11, "region") in got  # defgeneric
    assert (25, 29, "region") in got  # eval-when


async def test_selection_range_grows_from_symbol_to_form(client):
    col = column_of(RENDER, 4, "(area") + 2
    [chain] = await client.text_document_selection_range_async(
        types.SelectionRangeParams(text_document=doc(RENDER), positions=[pos(4, col)])
    )
    lines = RENDER.read_text().splitlines()

    def text(r):
        if r.start.line == r.end.line:
            return lines[r.start.line][r.start.character:r.end.character]
        return None

    shown = []
    while chain is not None:
        shown.append(text(chain.range) or (chain.range.start.line, chain.range.end.line))
        chain = chain.parent
    assert shown == ["area", "(area s)", "(square (area s))", '(format t "square: ~a~%" (square (area s)))', (2, 4)]


async def test_diagnostics_of_a_half_edited_buffer_then_fixed(client):
    broken = "(defun half (x)\n  (let ((y \"open string))\n    y))\n\n(defun next () 1)\n"
    path = PROJECT / "src" / "scratch.lisp"
    open_file(client, path, broken)
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    problems = client.diagnostics[uri(path)]
    assert problems, "a broken buffer has diagnostics"
    assert any("recovered at line" in d.message or "Unterminated" in d.message for d in problems), problems
    assert all(d.range.start.line <= 2 for d in problems if d.severity == types.DiagnosticSeverity.Error)
    # Close the string: a change of one character, by range.
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri(path), version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(start=pos(1, 22), end=pos(1, 22)), text='"'
                )
            ],
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert list(client.diagnostics[uri(path)]) == []


async def test_unsaved_buffer_definition_is_found_from_another_file(client):
    # render.lisp gets a new function, never saved; geometry.lisp's use finds it.
    text = RENDER.read_text() + "\n(defun brand-new-helper (a) a)\n"
    open_file(client, RENDER, text)
    geometry = GEOMETRY.read_text() + "\n(defun use-it () (brand-new-helper 1))\n"
    open_file(client, GEOMETRY, geometry)
    line = len(geometry.splitlines()) - 1
    col = geometry.splitlines()[line].index("brand-new") + 1
    result = await client.text_document_definition_async(
        types.DefinitionParams(text_document=doc(GEOMETRY), position=pos(line, col))
    )
    assert [(r.uri, r.range.start.line) for r in result] == [(uri(RENDER), len(text.splitlines()) - 1)]
    assert not (PROJECT / "src" / "render.lisp").read_text().count("brand-new")


async def test_derived_definitions_are_found_hovered_and_listed_under_their_form(client):
    # A structure's accessors and constructor, a class slot's accessor: no form spells
    # them, yet definition lands on the slot or option that makes them (as find does).
    text = RENDER.read_text() + (
        "\n(defstruct (pt (:constructor new-pt (x y))) x y)"
        "\n(defclass box () ((side :accessor box-side)))"
        "\n(defun use-pt (p b) (list (pt-y p) (new-pt 1 2) (box-side b)))\n"
    )
    open_file(client, RENDER, text)
    lines = text.splitlines()
    struct_line = len(lines) - 3
    use_line = len(lines) - 1
    expected = {"pt-y": (struct_line, lines[struct_line].rindex(" y)") + 1),
                "new-pt": (struct_line, lines[struct_line].index("(:constructor")),
                "box-side": (struct_line + 1, lines[struct_line + 1].index("(side"))}
    for name, (line, character) in expected.items():
        col = lines[use_line].index("(" + name) + 2
        found = await client.text_document_definition_async(
            types.DefinitionParams(text_document=doc(RENDER), position=pos(use_line, col))
        )
        assert [(r.range.start.line, r.range.start.character) for r in found] == [(line, character)], name
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=doc(RENDER), position=pos(use_line, lines[use_line].index("(pt-y") + 2))
    )
    assert "accessor pt-y, made by" in hover.contents.value
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=doc(RENDER))
    )
    pt = next(s for s in symbols if s.name == "pt")
    # In the order of the places that make them: the copier and predicate at the name.
    assert sorted(c.name for c in pt.children) == sorted(["new-pt", "copy-pt", "pt-p", "pt-x", "(setf pt-x)", "pt-y", "(setf pt-y)"])
    starts = [(c.range.start.line, c.range.start.character) for c in pt.children]
    assert starts == sorted(starts)


async def test_a_new_unsaved_file_is_seen_from_another_file(client):
    # A buffer of a file that does not exist on disk yet is a file of the workspace.
    fresh = PROJECT / "src" / "not-saved-yet.lisp"
    assert not fresh.exists()
    open_file(client, fresh, "(defun fresh-fn (a) a)\n")
    text = RENDER.read_text() + "\n(defun call-fresh () (fresh-fn 1))\n"
    open_file(client, RENDER, text)
    line = len(text.splitlines()) - 1
    col = text.splitlines()[line].index("(fresh-fn") + 2
    result = await client.text_document_definition_async(
        types.DefinitionParams(text_document=doc(RENDER), position=pos(line, col))
    )
    assert [(r.uri, r.range.start.line) for r in result] == [(uri(fresh), 0)]
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="fresh-fn"))
    assert [s.name for s in found] == ["fresh-fn"]
    assert not fresh.exists()


def inside(inner, outer):
    key = lambda p: (p.line, p.character)
    return key(outer.start) <= key(inner.start) and key(inner.end) <= key(outer.end)


async def test_property_symbols_nest_and_selection_chains_grow(client):
    """Every documentSymbol range inside the document, children inside parents; every
    selection chain strictly growing, at random positions of the fixture files and of
    sample files with every kind of syntax."""
    files = sorted(PROJECT.rglob("*.lisp")) + sorted((PROJECT.parents[1] / "reader").glob("*.lisp"))[:40]
    rng = random.Random(25)
    for path in files:
        text = path.read_text(errors="replace")
        open_file(client, path, text)
        lines = text.split("\n")
        end = types.Position(line=len(lines) - 1, character=len(lines[-1].encode("utf-16-le")) // 2)
        whole = types.Range(start=pos(0, 0), end=end)
        symbols = await client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=doc(path))
        )
        stack = [(s, whole) for s in symbols or []]
        while stack:
            s, parent = stack.pop()
            assert inside(s.range, parent), (path, s.name)
            assert inside(s.selection_range, s.range), (path, s.name)
            stack.extend((c, s.range) for c in s.children or [])
        positions = []
        for _ in range(30):
            line = rng.randrange(len(lines))
            positions.append(pos(line, rng.randrange(len(lines[line]) + 1)))
        chains = await client.text_document_selection_range_async(
            types.SelectionRangeParams(text_document=doc(path), positions=positions)
        )
        for chain in chains:
            while chain.parent is not None:
                assert inside(chain.range, chain.parent.range) and chain.range != chain.parent.range, path
                chain = chain.parent


async def test_declaration_and_document_highlight(client):
    col = column_of(GEOMETRY, 29, "(square") + 2
    declared = await client.text_document_declaration_async(
        types.DeclarationParams(text_document=doc(GEOMETRY), position=pos(29, col))
    )
    assert [(r.uri, r.range.start.line) for r in declared] == [(uri(GEOMETRY), 16)]
    highlights = await client.text_document_document_highlight_async(
        types.DocumentHighlightParams(text_document=doc(GEOMETRY), position=pos(29, col))
    )
    # The definition's name and the use; not the docstring "X times X.".
    assert sorted(h.range.start.line for h in highlights) == [16, 29]


async def test_symbols_after_ranged_edits_are_those_of_the_whole_text(client):
    # Each keystroke reads again only the forms it touches (docs/lsp.md): after every one
    # the buffer's symbols are those of its whole text opened as a new buffer.
    path = PROJECT / "src" / "typed.lisp"
    text = GEOMETRY.read_text()
    open_file(client, path, text)
    rng = random.Random(27)
    # Edits that keep the text readable first (the forms they touch are read again), then
    # any (a `"` or `#|` typed reaches past them: the whole text is read).
    benign = ["\n", " ", "x", "(defun typed (y) y)", "#+sbcl "]
    pieces = benign + ["(", ")", '"', "#|", "|#", ";"]
    for version in range(2, 42):
        lines = text.split("\n")
        line = rng.randrange(len(lines))
        column = rng.randrange(len(lines[line]) + 1)
        piece = rng.choice(benign if version < 22 else pieces)
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri(path), version=version),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(start=pos(line, column), end=pos(line, column)), text=piece
                    )
                ],
            )
        )
        lines[line] = lines[line][:column] + piece + lines[line][column:]
        text = "\n".join(lines)
        fresh = PROJECT / "src" / f"fresh-{version}.lisp"
        open_file(client, fresh, text)
        edited = await client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=doc(path))
        )
        whole = await client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=doc(fresh))
        )
        assert edited == whole, (version, piece, line, column)
        client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=doc(fresh)))
    assert edited, "the buffer still has symbols"
