"""Session-wide behaviour through pytest-lsp: the `features` initialization option,
watched files, work-done progress while the index fills."""

import asyncio
import os

from lsprotocol import types
from pytest_lsp.client import make_test_lsp_client

from test_lsp_calls import session
from conftest import BIN, uri

BRANCHES = """(defun common (x) x)
#+sbcl (defun only-sbcl () (common 1))
#-sbcl (defun not-sbcl () (common 2))
(progn #+sbcl (defun nested-sbcl () 1) #-(or sbcl ccl) (defun nested-other () 2))
(defun caller () (list #+sbcl (common 3) #-sbcl (common 4)))
"""


def doc(path):
    return types.TextDocumentIdentifier(uri=uri(path))


async def names(client, query):
    return sorted(s.name for s in await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query)))


def flat(symbols):
    out, stack = [], list(symbols)
    while stack:
        s = stack.pop()
        out.append(s.name)
        stack.extend(s.children or [])
    return sorted(out)


async def references_lines(client, path):
    found = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=doc(path), position=types.Position(line=0, character=8),
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    return sorted((r.range.start.line, r.range.start.character) for r in found)


async def test_features_option_leaves_out_excluded_branches(tmp_path):
    path = tmp_path / "branches.lisp"
    path.write_text(BRANCHES)
    async with session(tmp_path, {"features": ["sbcl", ":x86-64"]}) as client:
        assert await names(client, "sbcl") == ["nested-sbcl", "only-sbcl"]
        assert await names(client, "not-sbcl") == []
        symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=doc(path)))
        assert flat(symbols) == ["caller", "common", "nested-sbcl", "only-sbcl", "progn"]
        # The uses in #-sbcl branches are not read by SBCL.
        lines = BRANCHES.splitlines()
        assert await references_lines(client, path) == [(1, lines[1].index("(common") + 1), (4, lines[4].index("(common 3") + 1)]
        definition = await client.text_document_definition_async(
            types.DefinitionParams(text_document=doc(path), position=types.Position(line=1, character=28))
        )
        assert [d.range.start.line for d in definition] == [0]
        [item] = await client.text_document_prepare_call_hierarchy_async(
            types.CallHierarchyPrepareParams(text_document=doc(path), position=types.Position(line=0, character=8))
        )
        calls = await client.call_hierarchy_incoming_calls_async(types.CallHierarchyIncomingCallsParams(item=item))
        assert sorted((c.from_.name, [r.start.line for r in c.from_ranges]) for c in calls) == [
            ("caller", [4]), ("only-sbcl", [1])]
    # Without the option every branch is read; a comma-separated string works too.
    async with session(tmp_path) as client:
        assert await names(client, "sbcl") == ["nested-sbcl", "not-sbcl", "only-sbcl"]
        assert len(await references_lines(client, path)) == 4
    async with session(tmp_path, {"features": "ccl"}) as client:
        assert await names(client, "nested") == []
        assert await names(client, "not-sbcl") == ["not-sbcl"]


async def test_background_index_reports_work_done_progress(tmp_path):
    for n in range(60):
        (tmp_path / f"f{n}.lisp").write_text(f"(defun fn-{n} () {n})\n")
    client = make_test_lsp_client()
    registrations = []

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def registered(params):
        registrations.extend(params.registrations)

    await client.start_io(BIN, "lsp")
    caps = types.ClientCapabilities(
        window=types.WindowClientCapabilities(work_done_progress=True),
        workspace=types.WorkspaceClientCapabilities(
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)
        ),
    )
    await client.initialize_session(
        types.InitializeParams(capabilities=caps, workspace_folders=[types.WorkspaceFolder(uri=uri(tmp_path), name="t")])
    )
    for _ in range(200):
        reports = client.progress_reports.get("lisp-read-file/index-progress", [])
        if reports and reports[-1].kind == "end":
            break
        await asyncio.sleep(0.05)
    kinds = [r.kind for r in reports]
    assert kinds[0] == "begin" and kinds[-1] == "end" and set(kinds) <= {"begin", "report", "end"}, kinds
    assert reports[-1].message == "60 Lisp files indexed"
    percentages = [r.percentage for r in reports if r.kind != "end"]
    assert percentages == sorted(percentages) and all(0 <= p <= 100 for p in percentages)
    [watch] = registrations
    assert watch.method == "workspace/didChangeWatchedFiles"
    await client.shutdown_session()
    await client.stop()


async def test_watched_file_change_refreshes_a_file_of_the_same_size_and_time(tmp_path):
    path = tmp_path / "a.lisp"
    path.write_text("(defun alpha () 1)\n")
    stamp = (path.stat().st_atime_ns, path.stat().st_mtime_ns)
    async with session(tmp_path) as client:
        assert await names(client, "alpha") == ["alpha"]
        # Same size, same modification time: the size-and-time check cannot see it, and
        # a search that reads no text of the file (no kept definition matches) neither.
        path.write_text("(defun gamma () 1)\n")
        os.utime(path, ns=stamp)
        assert await names(client, "gamma") == []
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=uri(path), type=types.FileChangeType.Changed)])
        )
        assert await names(client, "gamma") == ["gamma"]
        assert await names(client, "alpha") == []


async def test_a_buffer_named_by_another_path_is_its_walked_file(tmp_path):
    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.lisp").write_text("(defun alpha () 1)\n")
    (root / "alias").symlink_to(root / "src")
    (tmp_path / "outside.lisp").write_text("(defun secret () 1)\n")
    spellings = [f"file://{root}/src/../src/a.lisp", f"file://{root}//src/a.lisp",
                 f"file://{root}/src/%2e/%2e%2e/src/a.lisp", uri(root / "alias" / "a.lisp")]
    async with session(root) as client:
        for n, spelled in enumerate(spellings):
            client.text_document_did_open(types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=spelled, language_id="lisp", version=1,
                                                     text=f"(defun edited-{n} () 1)\n")))
            # The unsaved text takes the file's place: once, and the file's old text is gone.
            assert await names(client, f"edited-{n}") == [f"edited-{n}"], spelled
            assert await names(client, "alpha") == [], spelled
            found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=f"edited-{n}"))
            assert [s.location.uri for s in found] == [uri(root / "src" / "a.lisp")], spelled
            # Asked by any of its names, the file is the buffer.
            for other in [uri(root / "src" / "a.lisp"), uri(root / "alias" / "a.lisp")]:
                symbols = await client.text_document_document_symbol_async(
                    types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=other)))
                assert [s.name for s in symbols] == [f"edited-{n}"], (spelled, other)
            client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=spelled)))
            assert await names(client, "alpha") == ["alpha"]
        # A file outside the roots, however spelled, is never read.
        for spelled in [f"file://{root}/../outside.lisp", f"file://{root}/%2e%2e/outside.lisp"]:
            try:
                await client.text_document_document_symbol_async(
                    types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=spelled)))
                raise AssertionError("read a file outside the roots")
            except Exception as e:  # the server's error, as pygls raises it
                assert "ACCESS_DENIED" in str(e) or "outside" in str(e), e


async def test_a_changed_definer_table_is_read_again(tmp_path):
    (tmp_path / "w.lisp").write_text('(register-widget button "Press")\n')
    async with session(tmp_path) as client:
        assert await names(client, "button") == []
        table = tmp_path / ".lisp-read-file.lisp"
        table.write_text("(register-widget :name 1)\n")
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=uri(table), type=types.FileChangeType.Created)])
        )
        assert await names(client, "button") == ["button"]


async def eventually(check, seconds=10):
    """Polls `check` (an async predicate) until it holds or `seconds` pass."""
    for _ in range(int(seconds / 0.1)):
        if await check():
            return True
        await asyncio.sleep(0.1)
    return False


async def test_a_file_edited_on_disk_without_a_notice_is_seen(tmp_path):
    a, b = tmp_path / "a.lisp", tmp_path / "b.lisp"
    a.write_text("(defun alpha () 1)\n")
    b.write_text("(defun beta () (alpha))\n")
    at_alpha = types.DefinitionParams(text_document=doc(b), position=types.Position(line=0, character=17))
    async with session(tmp_path) as client:
        assert await names(client, "alpha") == ["alpha"]
        assert len(await client.text_document_definition_async(at_alpha)) == 1
        # Another program rewrites a.lisp; the client says nothing.
        a.write_text("(defun gamma (x) x)\n")
        # An answer that cites the file checks it first: the old definition is gone at once.
        assert await names(client, "alpha") == []
        assert await client.text_document_definition_async(at_alpha) == []
        # The new one is seen by the background re-check.
        assert await eventually(lambda: names_are(client, "gamma", ["gamma"]))
        # A file created and one deleted, likewise.
        (tmp_path / "c.lisp").write_text("(defun delta () 1)\n")
        b.unlink()
        assert await eventually(lambda: names_are(client, "delta", ["delta"]))
        assert await eventually(lambda: names_are(client, "beta", []))


async def test_a_file_rewritten_with_the_same_size_and_time_is_not_answered_from_old_definitions(tmp_path):
    # The index keeps no text of the files the editor has not opened: an answer reads the
    # text again, and takes it only when it is the one the definitions were read from.
    path = tmp_path / "a.lisp"
    path.write_text("(defun alpha () 1)\n")
    stamp = (path.stat().st_atime_ns, path.stat().st_mtime_ns)
    async with session(tmp_path) as client:
        assert await names(client, "alpha") == ["alpha"]
        path.write_text("(defun gamma () 1)\n")
        os.utime(path, ns=stamp)
        assert await names(client, "alpha") == []
        assert await names(client, "gamma") == ["gamma"]


async def names_are(client, query, expected):
    return await names(client, query) == expected


async def test_a_buffer_changed_saved_and_closed_is_seen_at_once(tmp_path):
    a = tmp_path / "a.lisp"
    a.write_text("(defun alpha () 1)\n")
    async with session(tmp_path) as client:
        assert await names(client, "alpha") == ["alpha"]
        client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri(a), language_id="lisp", version=1, text=a.read_text())))
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri(a), version=2),
            content_changes=[types.TextDocumentContentChangePartial(
                range=types.Range(start=types.Position(line=0, character=7), end=types.Position(line=0, character=12)),
                text="omega")]))
        assert await names(client, "omega") == ["omega"]
        assert await names(client, "alpha") == []
        # Saved (same size: only the time tells), then closed: the file says omega now.
        a.write_text("(defun omega () 1)\n")
        client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=doc(a)))
        client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=doc(a)))
        assert await names(client, "omega") == ["omega"]
        assert await names(client, "alpha") == []


async def test_a_name_made_by_a_project_macro_is_found(tmp_path):
    # No form spells make-circle-shape: the project's own macro makes it. Definition lands
    # on the macro's call, as find --name does (its template instantiated, not evaluated).
    made = tmp_path / "macros.lisp"
    made.write_text(
        "(defmacro define-shape-kind (name)\n"
        "  `(defun ,(intern (format nil \"MAKE-~A-SHAPE\" (symbol-name name))) ()\n"
        "     (list ',name)))\n"
        "\n"
        "(define-shape-kind circle)\n"
    )
    use = tmp_path / "use.lisp"
    use.write_text("(defun use-made () (make-circle-shape))\n(defun use-unknown () (make-square-shape))\n")
    async with session(tmp_path) as client:
        found = await client.text_document_definition_async(
            types.DefinitionParams(text_document=doc(use), position=types.Position(line=0, character=22))
        )
        assert [(r.uri, r.range.start.line, r.range.start.character) for r in found] == [(uri(made), 4, 0)]
        # A name nothing makes stays unfound.
        assert await client.text_document_definition_async(
            types.DefinitionParams(text_document=doc(use), position=types.Position(line=1, character=25))
        ) == []


async def test_a_macro_edited_on_disk_between_two_definitions_changes_the_answer(tmp_path):
    # What each file taught is kept between requests while the file is unchanged: the
    # macro rewritten (same size, its modification time given back) makes another name.
    made = tmp_path / "macros.lisp"
    text = (
        "(defmacro define-shape-kind (name)\n"
        "  `(defun ,(intern (format nil \"MAKE-~A-SHAPE\" (symbol-name name))) ()\n"
        "     (list ',name)))\n"
        "\n"
        "(define-shape-kind circle)\n"
    )
    made.write_text(text)
    stamp = (made.stat().st_atime_ns, made.stat().st_mtime_ns)
    use = tmp_path / "use.lisp"
    use.write_text("(defun use-made () (make-circle-shape))\n(defun use-other () (made-circle-shape))\n")
    at_make = types.DefinitionParams(text_document=doc(use), position=types.Position(line=0, character=22))
    at_made = types.DefinitionParams(text_document=doc(use), position=types.Position(line=1, character=23))
    async with session(tmp_path) as client:
        for _ in range(2):
            found = await client.text_document_definition_async(at_make)
            assert [(r.uri, r.range.start.line) for r in found] == [(uri(made), 4)]
            assert await client.text_document_definition_async(at_made) == []
        made.write_text(text.replace("MAKE-", "MADE-"))
        os.utime(made, ns=stamp)
        assert await client.text_document_definition_async(at_make) == []
        found = await client.text_document_definition_async(at_made)
        assert [(r.uri, r.range.start.line) for r in found] == [(uri(made), 4)]


async def test_a_macro_made_name_lands_on_its_file_under_nested_roots_and_any_name(tmp_path):
    # Workspace folders a and a/sub: the file under both is one file, named by its real
    # path (not its shown path joined to another root), even when its name holds a
    # backslash or a tab, which answers show escaped.
    sub = tmp_path / "a" / "sub"
    sub.mkdir(parents=True)
    made = sub / "mac\\ro\tkinds.lisp"
    made.write_text(
        "(defmacro define-shape-kind (name)\n"
        "  `(defun ,(intern (format nil \"MAKE-~A-SHAPE\" (symbol-name name))) ()\n"
        "     (list ',name)))\n"
        "\n"
        "(define-shape-kind circle)\n"
    )
    use = tmp_path / "a" / "use.lisp"
    use.write_text("(defun use-made () (make-circle-shape))\n")
    client = make_test_lsp_client()
    await client.start_io(BIN, "lsp")
    folders = [types.WorkspaceFolder(uri=uri(tmp_path / "a"), name="a"), types.WorkspaceFolder(uri=uri(sub), name="sub")]
    await client.initialize_session(types.InitializeParams(capabilities=types.ClientCapabilities(), workspace_folders=folders))
    try:
        found = await client.text_document_definition_async(
            types.DefinitionParams(text_document=doc(use), position=types.Position(line=0, character=22))
        )
        assert [(r.uri, r.range.start.line) for r in found] == [(uri(made), 4)]
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_a_fill_held_back_does_not_bring_back_the_old_grammar(tmp_path):
    # The background fill waits for the client to accept its progress token; meanwhile a
    # request reads the files itself and a definer table changes (the index is cleared).
    # When the fill then runs, it must not cache the files read with the old grammar.
    (tmp_path / "w.lisp").write_text('(register-widget button "Press")\n')
    client = make_test_lsp_client()
    release = asyncio.Event()

    builtin = client.protocol.fm.features[types.WINDOW_WORK_DONE_PROGRESS_CREATE]

    async def create(params):
        await release.wait()
        return builtin(params)

    # The test client's own handler (it records the token), answered once released.
    client.protocol.fm.features[types.WINDOW_WORK_DONE_PROGRESS_CREATE] = create

    await client.start_io(BIN, "lsp")
    caps = types.ClientCapabilities(window=types.WindowClientCapabilities(work_done_progress=True))
    await client.initialize_session(
        types.InitializeParams(capabilities=caps, workspace_folders=[types.WorkspaceFolder(uri=uri(tmp_path), name="t")])
    )
    assert await names(client, "button") == []
    table = tmp_path / ".lisp-read-file.lisp"
    table.write_text("(register-widget :name 1)\n")
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=uri(table), type=types.FileChangeType.Created)])
    )
    # The fill runs now, after the index was cleared and before any request reads again.
    release.set()
    for _ in range(100):
        reports = client.progress_reports.get("lisp-read-file/index-progress", [])
        if reports and reports[-1].kind == "end":
            break
        await asyncio.sleep(0.05)
    assert reports and reports[-1].kind == "end"
    assert await names(client, "button") == ["button"]
    await client.shutdown_session()
    await client.stop()
