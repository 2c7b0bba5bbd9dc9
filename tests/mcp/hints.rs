//! Every hint the views and tools print, followed literally, works (docs/tool.md#hints):
//! over the cap, cut forms, forms sharing a line, paging (collapsed, raw, line windows,
//! grep, maps, find), matches outside the window, long lines, a container's children
//! past the cap, the budget steps of maps, skipped files and find's budget. Each case is
//! run through the real binary twice: on the command line, whose hints are flags (appended
//! to the same command), and over MCP, whose hints are arguments (merged into the same
//! call). Every hint found is followed and must give a successful, non-empty answer; a
//! case that prints no hint fails.

use regex::Regex;
use serde_json::{json, Map, Value};
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");

/// The files every case reads.
fn corpus(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lrf-hints-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("proj")).unwrap();
    fs::create_dir_all(dir.join("withbig")).unwrap();
    fs::create_dir_all(dir.join("huge")).unwrap();
    let w = |rel: &str, text: String| fs::write(dir.join(rel), text).unwrap();
    // 1,500 lines, about 30 KB: over a 10,000-byte cap, under 2,000 lines.
    w(
        "big.lisp",
        (0..1500).map(|k| format!("(defun f{k} (x) x)\n")).collect(),
    );
    let mut api = String::from("(in-package :api)\n\n");
    for k in 0..40 {
        api.push_str(&format!("(defun filler-{k} (x)\n  (list x {k}))\n\n"));
    }
    api.push_str("(defun wanted (a b)\n  \"Doc.\"\n  (handler-case (+ a b)\n    (error () nil)))\n\n(defun wanted-too ()\n  1)\n");
    w("api.lisp", api);
    w("three.lisp", "(a) (b) (c)\n(d)\n".into());
    w(
        "notes.txt",
        (0..50).map(|k| format!("line {k} TODO\n")).collect(),
    );
    w("long.txt", format!("{}\n", "x".repeat(5000)));
    let mut progn = String::from("(progn\n");
    for _ in 0..5001 {
        progn.push_str("(f)\n");
    }
    progn.push_str(")\n");
    w("progn.lisp", progn);
    for k in 0..3 {
        w(
            &format!("proj/p{k}.lisp"),
            (0..5)
                .map(|j| format!("(defun p{k}-{j} (x)\n  \"Doc of p{k}-{j}.\"\n  (used x))\n"))
                .collect(),
        );
    }
    w("withbig/small.lisp", "(defun f1 () (f1))\n".into());
    // Over find's own bound (32 times the cap: find searches files over the cap up to
    // it), so that the answer skips it and says how to read it.
    w(
        "withbig/big.lisp",
        (0..20_000)
            .map(|k| format!("(defun f{k} (x) x)\n"))
            .collect(),
    );
    // Over find's collection budget of 200,000 entries and uses.
    w(
        "huge/uses.lisp",
        format!("(progn {})\n(defun a () (a))\n", "a ".repeat(200_050)),
    );
    fs::canonicalize(&dir).unwrap()
}

/// One case: a tool, its arguments, the size cap.
struct Case {
    tool: &'static str,
    arguments: Value,
    cap: u64,
}

fn cases() -> Vec<Case> {
    let read = |arguments: Value, cap: u64| Case {
        tool: "lisp-read-file",
        arguments,
        cap,
    };
    let find = |arguments: Value| Case {
        tool: "lisp-find",
        arguments,
        cap: 10_000,
    };
    vec![
        read(json!({"path": "big.lisp"}), 10_000),
        read(json!({"path": "big.lisp", "name_pattern": "f1"}), 10_000),
        read(
            json!({"path": "api.lisp", "name_pattern": "^wanted$", "limit": 2}),
            10_000,
        ),
        read(
            json!({"path": "api.lisp", "name_pattern": "^wanted", "limit": 5}),
            10_000,
        ),
        read(json!({"path": "api.lisp", "limit": 3}), 10_000),
        read(json!({"path": "three.lisp", "limit": 2}), 10_000),
        read(
            json!({"path": "api.lisp", "collapsed": false, "limit": 3}),
            10_000,
        ),
        read(
            json!({"path": "api.lisp", "limit": 3, "strategy": {"type": "lineRange", "startLine": 1}}),
            10_000,
        ),
        read(
            json!({"path": "notes.txt", "content_pattern": "TODO", "limit": 2}),
            10_000,
        ),
        read(json!({"path": "long.txt"}), 10_000),
        // A text file over the cap is grepped streamed: its page continues.
        read(
            json!({"path": "notes.txt", "content_pattern": "TODO", "limit": 2}),
            100,
        ),
        // A page cut before max_count matching lines are shown continues, in memory and
        // streamed.
        read(
            json!({"path": "notes.txt", "content_pattern": "TODO", "limit": 2, "max_count": 3, "before_context": 0}),
            10_000,
        ),
        read(
            json!({"path": "notes.txt", "content_pattern": "TODO", "limit": 2, "max_count": 3, "after_context": 1}),
            100,
        ),
        read(json!({"path": "progn.lisp"}), 1 << 20),
        read(json!({"path": "proj", "limit": 4}), 10_000),
        read(json!({"path": "proj", "limit": 10}), 10_000),
        find(json!({"path": "proj", "symbol": "used", "limit": 1})),
        find(json!({"path": "proj", "symbol": "used", "detail": "names", "limit": 2})),
        find(json!({"path": "withbig", "symbol": "f1"})),
        Case {
            tool: "lisp-find",
            arguments: json!({"path": "huge", "symbol": "a"}),
            cap: 1 << 20,
        },
    ]
}

/// The hints of an answer, as printed: the text between the words that introduce one
/// and the words that end it.
fn hints(text: &str) -> Vec<String> {
    let phrases = [
        r"[Uu]se (.+?) to (?:continue|read more)",
        r": use (.+?)\.\]",
        r"Read (?:it|them)(?: whole)? with (.+?)(?:, or use |\.\])",
        r"Read it in windows(?: without [^:]+)?: (.+?), or (.+?); or (?:raise|ask)",
        r"pass (.+?) or a ",
        r"the rest is (.+?)\]",
        r"see (.+?) for why",
        r"continue with (.+?)\]",
        r"\[more after line \d+ of \d+: (.+?)\]",
        r"(?m)a smaller path or use (.+)\]$",
    ];
    let mut found = Vec::new();
    for phrase in phrases {
        for c in Regex::new(phrase).unwrap().captures_iter(text) {
            for m in c.iter().skip(1).flatten() {
                found.push(m.as_str().to_string());
            }
        }
    }
    found
}

/// The parameters a hint says to drop (`Read it in windows without A and B:`).
fn dropped(text: &str) -> Vec<String> {
    Regex::new(r"windows without (\S+) and (\S+):")
        .unwrap()
        .captures(text)
        .map(|c| vec![c[1].to_string(), c[2].to_string()])
        .unwrap_or_default()
}

// ---- the command line ----

/// The command line of a case: the request's arguments as flags.
fn command_line(case: &Case) -> Vec<String> {
    let mut args = Vec::new();
    if case.tool == "lisp-find" {
        args.push("find".to_string());
    }
    args.extend(["--max-file-bytes".to_string(), case.cap.to_string()]);
    let mut path = String::new();
    for (key, value) in case.arguments.as_object().unwrap() {
        match (key.as_str(), value) {
            ("path", Value::String(p)) => path = p.clone(),
            ("collapsed", Value::Bool(false)) => args.push("--raw".into()),
            ("strategy", s) => args.extend([
                "--lines".to_string(),
                format!("{}..", s["startLine"].as_u64().unwrap()),
            ]),
            (key, value) => {
                args.push(format!("--{}", key.replace('_', "-")));
                args.push(match value {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                });
            }
        }
    }
    args.push(path);
    args
}

fn run_cli(dir: &Path, args: &[String]) -> (bool, String) {
    let out = Command::new(BIN)
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    // Exit 1 with the view on stdout and nothing on stderr is an answer: "no match from
    // here" (a page after the last match), as grep says it (docs/cli.md).
    let answered = out.status.code() == Some(1) && !out.stdout.is_empty() && out.stderr.is_empty();
    let text = if out.stdout.is_empty() {
        String::from_utf8_lossy(&out.stderr).into_owned()
    } else {
        String::from_utf8(out.stdout).unwrap()
    };
    (out.status.success() || answered, text)
}

/// Follows a command-line hint: its flags appended to the command (they override the
/// command's own), without the flags it says to drop.
fn follow_on_cli(dir: &Path, base: &[String], hint: &str, drop: &[String]) {
    let mut args: Vec<String> = Vec::new();
    let mut k = 0;
    while k < base.len() {
        if drop.contains(&base[k]) {
            k += 2;
            continue;
        }
        args.push(base[k].clone());
        k += 1;
    }
    let path = args.pop().unwrap();
    for word in hint.split_whitespace() {
        // `(files_skipped)` names where to look in the output of `--json`.
        if !word.starts_with('(') {
            args.push(word.to_string());
        }
    }
    assert!(
        hint.starts_with("--"),
        "a command-line hint is flags: {hint:?} ({base:?})"
    );
    args.push(path);
    let (ok, text) = run_cli(dir, &args);
    assert!(ok, "following {hint:?}: {args:?} failed: {text}");
    assert!(
        !text.trim().is_empty(),
        "following {hint:?}: {args:?} is empty"
    );
    if hint.contains("files_skipped") {
        let result: Value = serde_json::from_str(&text).unwrap();
        assert!(
            !result["files_skipped"].as_array().unwrap().is_empty(),
            "{text}"
        );
    }
}

#[test]
fn every_command_line_hint_works_when_followed() {
    let dir = corpus("cli");
    for case in cases() {
        let base = command_line(&case);
        let (ok, text) = run_cli(&dir, &base);
        // A pattern over the cap matched nothing it could read: exit 1 with the note.
        let over_cap_pattern = text.contains("over the 10000-byte size cap");
        assert!(ok || over_cap_pattern, "{base:?}: {text}");
        let found = hints(&text);
        assert!(!found.is_empty(), "{base:?} printed no hint: {text}");
        for hint in found {
            follow_on_cli(&dir, &base, &hint, &dropped(&text));
        }
    }
    fs::remove_dir_all(dir).unwrap();
}

// ---- MCP ----

/// A server on a pipe, spoken to one line at a time.
struct Server {
    child: std::process::Child,
    stdout: BufReader<std::process::ChildStdout>,
    id: u64,
}

impl Server {
    fn start(dir: &Path, cap: u64) -> Server {
        let mut child = Command::new(BIN)
            .args(["mcp", "--root"])
            .arg(dir)
            .args(["--max-file-bytes", &cap.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut server = Server {
            child,
            stdout,
            id: 0,
        };
        server.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "hints", "version": "1"}}),
        );
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the server answers"
            );
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message["result"].clone();
            }
        }
    }

    /// The call's result: whether it succeeded, its text, its structured content.
    fn call(&mut self, tool: &str, arguments: &Value) -> (bool, String, Value) {
        let result = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let ok = result["isError"] != json!(true);
        (ok, text, result["structuredContent"].clone())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An MCP hint as arguments: `offset=10 limit=5` (JSON values), `strategy {...}`, a bare
/// strategy object (a long line's rest), `kinds=[...]`; `files_skipped` is a member of
/// the result (`None`).
fn hint_arguments(hint: &str) -> Option<Map<String, Value>> {
    let mut args = Map::new();
    if hint == "files_skipped" {
        return None;
    }
    if let Some(strategy) = hint.strip_prefix("strategy ") {
        args.insert("strategy".into(), serde_json::from_str(strategy).unwrap());
    } else if hint.starts_with('{') {
        args.insert("strategy".into(), serde_json::from_str(hint).unwrap());
    } else {
        for pair in hint.split_whitespace() {
            let (key, value) = pair
                .split_once('=')
                .unwrap_or_else(|| panic!("an MCP hint is key=value: {hint:?}"));
            args.insert(key.into(), serde_json::from_str(value).unwrap());
        }
    }
    Some(args)
}

#[test]
fn every_mcp_hint_works_when_followed() {
    let dir = corpus("mcp");
    for case in cases() {
        let mut server = Server::start(&dir, case.cap);
        let (ok, text, structured) = server.call(case.tool, &case.arguments);
        assert!(ok, "{}: {text}", case.arguments);
        let found = hints(&text);
        assert!(
            !found.is_empty(),
            "{} printed no hint: {text}",
            case.arguments
        );
        let drop = dropped(&text);
        for hint in found {
            let Some(extra) = hint_arguments(&hint) else {
                let skipped = structured["files_skipped"].as_array().unwrap();
                assert!(!skipped.is_empty(), "{hint}: {structured}");
                continue;
            };
            let mut arguments = case.arguments.as_object().unwrap().clone();
            for name in &drop {
                arguments.remove(name);
            }
            arguments.extend(extra);
            let arguments = Value::Object(arguments);
            let (ok, followed, _) = server.call(case.tool, &arguments);
            assert!(ok, "following {hint:?}: {arguments} failed: {followed}");
            assert!(
                !followed.trim().is_empty(),
                "following {hint:?}: {arguments}"
            );
        }
    }
    fs::remove_dir_all(dir).unwrap();
}

/// `hint_style` chooses how both tools write their hints (docs/mcp.md#hint-style):
/// `"lisp"` as the Common Lisp client's keyword arguments (followed in Lisp by
/// clients/common-lisp/tests/hint-tests.lisp); another value is refused, naming the two.
#[test]
fn hint_style_lisp_writes_keyword_arguments_and_other_styles_are_refused() {
    let dir = corpus("style");
    let mut server = Server::start(&dir, 10_000);
    let (ok, text, _) = server.call(
        "lisp-read-file",
        &json!({"path": "api.lisp", "limit": 3, "hint_style": "lisp"}),
    );
    assert!(ok && text.contains("Use :offset "), "{text}");
    let (ok, text, _) = server.call(
        "lisp-find",
        &json!({"path": "proj", "symbol": "used", "limit": 1, "hint_style": "lisp"}),
    );
    assert!(ok && text.contains("continue with :offset 1]"), "{text}");
    let (ok, text, _) = server.call(
        "lisp-read-file",
        &json!({"path": "api.lisp", "limit": 3, "hint_style": "cli"}),
    );
    assert!(
        !ok && text.contains("INVALID_ARGUMENT") && text.contains("\"arguments\" or \"lisp\""),
        "{text}"
    );
    drop(server);
    fs::remove_dir_all(dir).unwrap();
}
