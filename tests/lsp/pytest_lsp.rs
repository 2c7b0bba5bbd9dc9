//! The language server through a real LSP client: pytest-lsp (pygls) runs
//! `python -m pytest -q tests/lsp` against this build's binary and fails with pytest's
//! output when pytest fails.
//!
//! The Python is `$LISP_READ_FILE_PYTHON` when set, else `<repo>/.venv/bin/python`. Without
//! it the test is skipped with a notice, and fails under `CI=true`: create it with
//! `python3 -m venv .venv && .venv/bin/pip install -r tests/lsp/requirements.txt`.

use crate::common::pytest;

#[test]
fn pytest_lsp_passes_the_language_server_suite() {
    pytest::run_suite("tests/lsp", "pytest-lsp");
}
