//! Definer tables on the real binary: `--definers FILE` is the operator's argument, read
//! wherever it is (outside `--root` too); a malformed `.lisp-read-file.lisp` at a root is
//! reported on stderr and the built-in table is used, for the CLI and the MCP server.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");

/// A fresh directory with `project/a.lisp` (a `route` form) and `outside/defs.lisp`
/// (a table that knows `route`), outside the project.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lrf-definers-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("project")).unwrap();
    std::fs::create_dir_all(dir.join("outside")).unwrap();
    std::fs::write(
        dir.join("project/a.lisp"),
        // On several lines, so that they are not shown whole; `route` is not a `def...`
        // operator, so only the table outside makes it a definition.
        "(route home (request)\n  (render request))\n(defun f (x)\n  x)\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("outside/defs.lisp"),
        "(route :name 1 :lambda-list 2 :body 3)\n",
    )
    .unwrap();
    dir
}

fn cli(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn cli_reads_a_definers_file_outside_the_root() {
    let dir = scratch("cli-outside");
    let defs = dir.join("outside/defs.lisp");
    let args = [
        "--root",
        "project",
        "--definers",
        defs.to_str().unwrap(),
        "a.lisp",
    ];
    let (ok, stdout, stderr) = cli(&dir, &args);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("(route home (request) ...)"), "{stdout}");
}

#[test]
fn cli_goes_on_with_the_builtin_table_past_a_malformed_project_file() {
    let dir = scratch("cli-malformed");
    std::fs::write(dir.join("project/.lisp-read-file.lisp"), "(defun :bogus 1)").unwrap();
    let (ok, stdout, stderr) = cli(&dir, &["--root", "project", "a.lisp"]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("(defun f (x) ...)"), "{stdout}");
    assert!(
        stderr.contains("warning: ignored") && stderr.contains(".lisp-read-file.lisp"),
        "{stderr}"
    );
    // Unconfined, the project file is the working directory's.
    let (ok, stdout, stderr) = cli(&dir.join("project"), &["a.lisp"]);
    assert!(ok && stdout.contains("(defun f (x) ...)"), "{stderr}");
}

#[test]
fn a_malformed_definers_argument_is_still_an_error() {
    let dir = scratch("cli-bad-arg");
    std::fs::write(dir.join("outside/bad.lisp"), "(defun :bogus 1)").unwrap();
    let bad = dir.join("outside/bad.lisp");
    let (ok, stdout, stderr) = cli(
        &dir,
        &[
            "--root",
            "project",
            "--definers",
            bad.to_str().unwrap(),
            "a.lisp",
        ],
    );
    assert!(!ok && stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("INVALID_ARGUMENT") && stderr.contains("bad.lisp"),
        "{stderr}"
    );
}

/// Starts `mcp` with `args` in `dir`, calls lisp-read-file on a.lisp, closes stdin.
/// Returns the tool's text and the server's stderr.
fn mcp_read(dir: &Path, args: &[&str]) -> (String, String) {
    let mut child = Command::new(BIN)
        .arg("mcp")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "lisp-read-file", "arguments": {"path": "a.lisp"}}}),
    ];
    for message in messages {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    let mut text = String::new();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let message: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if message["id"] == 1 {
            text = message["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or("")
                .into();
            break;
        }
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    (text, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn the_server_reads_a_definers_file_outside_the_root() {
    let dir = scratch("mcp-outside");
    let defs = dir.join("outside/defs.lisp");
    let (text, stderr) = mcp_read(
        &dir,
        &["--root", "project", "--definers", defs.to_str().unwrap()],
    );
    assert!(
        text.contains("(route home (request) ...)"),
        "{text}\n{stderr}"
    );
}

#[test]
fn the_server_starts_and_reads_past_a_malformed_project_file() {
    let dir = scratch("mcp-malformed");
    std::fs::write(dir.join("project/.lisp-read-file.lisp"), "(defun").unwrap();
    let (text, stderr) = mcp_read(&dir.join("project"), &[]);
    assert!(text.contains("(defun f (x) ...)"), "{text}\n{stderr}");
    assert!(stderr.contains(".lisp-read-file.lisp"), "{stderr}");
}
