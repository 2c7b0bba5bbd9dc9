//! The independent-client test: the MCP server driven by the official MCP Python
//! SDK. Runs `python -m pytest -q tests/python` against this build's binary and fails with
//! pytest's output when pytest fails.
//!
//! The Python is `$LISP_READ_FILE_PYTHON` when set, else `<repo>/.venv/bin/python`. Without
//! it the test is skipped with a notice, and fails under `CI=true`: create it with
//! `bash .ci/run`, or
//! `python3 -m venv .venv && .venv/bin/pip install -r tests/python/requirements.txt`.

use crate::common::pytest;

#[test]
fn the_official_python_sdk_client_passes_the_mcp_suite() {
    pytest::run_suite("tests/python", "the MCP SDK");
}
