//! Hostile requests through the real binary (CLI and MCP server): huge patterns, numbers
//! at the integer maximum, a pattern whose matching explodes. Each must end soon with a
//! result or a short error; none may hang, panic, or echo the input back.
//!
//! The timeouts below only catch a hang; nothing asserts on how long a run took.

use serde_json::{json, Value};
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");
const MAX: &str = "18446744073709551615";
/// Generous: a debug build on a loaded machine. Only a hang gets near it.
const HANG: Duration = Duration::from_secs(60);
const HOSTILE: &str = "(?:[ab]*a[ab]{300}){40}x";

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A fresh directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let dir =
            std::env::temp_dir().join(format!("lrf-hostile-{}-{n}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Scratch(fs::canonicalize(&dir).unwrap())
    }

    fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) -> String {
        fs::write(self.0.join(rel), bytes).unwrap();
        rel.to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Runs the binary in `dir`; kills it and fails when it outlives [`HANG`].
fn run(dir: &Path, args: &[&str], stdin: Option<Vec<u8>>) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut pipe = child.stdin.take().unwrap();
    std::thread::spawn(move || {
        if let Some(bytes) = stdin {
            let _ = pipe.write_all(&bytes);
        }
    });
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > HANG {
            let _ = child.kill();
            panic!("lisp-read-file {args:?} still running after {HANG:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// One MCP session: initialize, the calls, then end of input once every call is
/// answered (the server may drop calls still running when its input ends). The
/// responses, in the order of the calls.
fn mcp(dir: &Path, tools: &str, calls: &[(&str, Value)]) -> Vec<Value> {
    let root = dir.to_string_lossy().into_owned();
    let mut child = Command::new(BIN)
        .args(["mcp", "--root", &root, "--tools", tools])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut send = |v: Value| {
        let mut line = serde_json::to_vec(&v).unwrap();
        line.push(b'\n');
        stdin.write_all(&line).unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "hostile", "version": "1"}}}),
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    for (k, (tool, arguments)) in calls.iter().enumerate() {
        send(
            json!({"jsonrpc": "2.0", "id": k + 1, "method": "tools/call",
                    "params": {"name": tool, "arguments": arguments}}),
        );
    }
    let mut responses = vec![Value::Null; calls.len()];
    let mut missing = calls.len();
    while missing > 0 {
        let line = rx.recv_timeout(HANG).unwrap_or_else(|_| {
            let _ = child.kill();
            panic!("no answer within {HANG:?}")
        });
        let message: Value = serde_json::from_str(&line).unwrap();
        if let Some(id) = message["id"].as_u64().filter(|&id| id > 0) {
            responses[id as usize - 1] = message;
            missing -= 1;
        }
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    responses
}

/// The text of a tool result, and whether it is an error.
fn text_of(response: &Value) -> (String, bool) {
    let result = &response["result"];
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    (text.to_string(), result["isError"] == true)
}

#[test]
fn a_megabyte_pattern_is_refused_at_once_without_echo() {
    let s = Scratch::new("huge-pattern");
    s.write("a.lisp", "(defun f () 1)\n");
    let huge = r"\w".repeat(524_288);
    let responses = mcp(
        &s.0,
        "lisp-read-file",
        &[
            (
                "lisp-read-file",
                json!({"path": "a.lisp", "name_pattern": huge}),
            ),
            (
                "lisp-read-file",
                json!({"path": "a.lisp", "content_pattern": huge}),
            ),
            // Just over the text limit, and a short one whose program is too large.
            (
                "lisp-read-file",
                json!({"path": "a.lisp", "name_pattern": "a".repeat(4097)}),
            ),
            (
                "lisp-read-file",
                json!({"path": "a.lisp", "name_pattern": r"\w{4000}"}),
            ),
        ],
    );
    for response in &responses {
        let (text, is_error) = text_of(response);
        assert!(is_error, "{text:.300} {response:.300}");
        assert!(text.contains("INVALID_ARGUMENT"), "{text:.300}");
        assert!(text.contains("a.lisp"), "names the path: {text:.300}");
        assert!(response.to_string().len() < 4096, "{text:.300}");
    }
    // The CLI: an argument of 100 KB (under the kernel's limit for one argument).
    let out = run(&s.0, &["-n", &r"\w".repeat(50_000), "a.lisp"], None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr:.300}");
    assert!(stderr.starts_with("INVALID_ARGUMENT: "), "{stderr:.300}");
    assert!(stderr.len() < 1024, "{stderr:.300}");
}

#[test]
fn every_number_at_the_integer_maximum_on_the_cli() {
    let s = Scratch::new("max-cli");
    s.write("a.lisp", "(defun f () 1) ; TODO\n(defun g () 2)\n");
    s.write("notes.txt", "one\nTODO two\nthree\n");
    for file in ["a.lisp", "notes.txt"] {
        for extra in [
            vec!["-c", "TODO", "--context", MAX],
            vec!["-c", "TODO", "--offset", MAX],
            vec!["-c", "TODO", "--limit", MAX],
            vec!["-c", "nothing", "--offset", MAX],
            vec!["-n", "f", "--offset", MAX, "--limit", MAX, "--context", MAX],
            vec!["--offset", MAX],
            vec!["--limit", MAX],
            vec!["--raw", "--line-numbers", "--offset", MAX],
            vec!["--raw", "--line-numbers", "--limit", MAX],
            vec!["--comments", "all", "--offset", MAX, "--limit", MAX],
            vec!["--json", "-c", "TODO", "--offset", MAX, "--context", MAX],
            vec!["-c", "TODO", "-m", MAX, "-B", MAX, "-A", MAX],
        ] {
            let mut args = extra.clone();
            args.push(file);
            let out = run(&s.0, &args, None);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(answered(&out), "{args:?}: {:?} {stderr}", out.status.code());
        }
    }
    // The text grep with a huge context still shows the match and its neighbours.
    let out = run(&s.0, &["-c", "TODO", "--context", MAX, "notes.txt"], None);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "1-one\n2:TODO two\n3-three\n"
    );
    let out = run(&s.0, &["-c", "TODO", "--offset", MAX, "notes.txt"], None);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("from line {MAX}")), "{stdout}");
}

#[test]
fn every_number_at_the_integer_maximum_over_mcp() {
    let s = Scratch::new("max-mcp");
    s.write("a.lisp", "(defun f () 1)\n(defun g () 2)\n");
    s.write("notes.txt", "one\nTODO two\nthree\n");
    let max = u64::MAX;
    let read = |extra: Value| {
        let mut args = json!({"path": "notes.txt", "content_pattern": "TODO"});
        args.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        ("lisp-read-file", args)
    };
    let calls = [
        read(json!({"context_lines": max})),
        read(json!({"offset": max})),
        read(json!({"max_count": max, "before_context": max, "after_context": max})),
        read(json!({"limit": max})),
        read(json!({"path": "a.lisp", "offset": max, "limit": max})),
        read(json!({"path": "a.lisp", "collapsed": false, "line_numbers": true, "offset": max})),
        ("read_file", json!({"path": "a.lisp", "start_line": max})),
        (
            "read_file",
            json!({"path": "a.lisp", "start_line": max, "max_lines": 500}),
        ),
        ("Read", json!({"path": "a.lisp", "start_line": max})),
        (
            "Read",
            json!({"path": "a.lisp", "start_line": 1, "limit": 2000}),
        ),
    ];
    let responses = mcp(&s.0, "lisp-read-file,read_file,Read", &calls);
    for ((tool, args), response) in calls.iter().zip(&responses) {
        assert!(response["result"].is_object(), "{tool} {args}: {response}");
    }
    assert_eq!(text_of(&responses[0]).0, "1-one\n2:TODO two\n3-three\n");
    assert_eq!(text_of(&responses[2]).0, "1-one\n2:TODO two\n3-three\n");
    // Read: past the end is its INVALID_PARAM, naming the path.
    let read_past = responses[8]["result"]["structuredContent"].to_string();
    assert!(
        read_past.contains("INVALID_PARAM") && read_past.contains("a.lisp"),
        "{read_past}"
    );
    // Out-of-range numbers: an error naming the path, not a crash.
    let calls = [
        ("read_file", json!({"path": "a.lisp", "max_lines": max})),
        ("Read", json!({"path": "a.lisp", "limit": max})),
    ];
    for response in mcp(&s.0, "lisp-read-file,read_file,Read", &calls) {
        let all = response["result"].to_string();
        assert!(all.contains("reading 'a.lisp'"), "{all}");
    }
}

#[test]
fn a_pattern_that_explodes_ends_with_a_result_or_a_clear_error() {
    let s = Scratch::new("explode");
    let line = "ab".repeat(512 * 1024);
    s.write("one.txt", &line);
    s.write("one.lisp", format!("({})", &line[2..]));
    s.write("small.txt", "ab\nabx\n");
    for file in ["one.txt", "one.lisp"] {
        let out = run(&s.0, &["-c", HOSTILE, file], None);
        let stderr = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => {}
            Some(1) => {
                assert!(stderr.starts_with("INVALID_ARGUMENT: "), "{stderr:.500}");
                assert!(
                    stderr.contains("too costly") && stderr.contains(file),
                    "{stderr:.500}"
                );
            }
            other => panic!("{other:?}: {stderr:.500}"),
        }
    }
    // The same pattern on a small file is answered.
    let out = run(&s.0, &["-c", HOSTILE, "small.txt"], None);
    assert!(answered(&out), "{:?}", out.status.code());
}

/// A file of stray `)`: the view lists the first 1,000 problems and says how many more
/// there are (before, a million notes were printed and 613 MB used for 1 MiB).
#[test]
fn problems_past_the_cap_are_counted_in_one_note() {
    let dir = std::env::temp_dir().join(format!("lrf-hostile-strays-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join("strays.lisp");
    fs::write(&path, ")".repeat(3_000)).unwrap();
    // Its output is over a pipe's capacity: read it while it runs (`output`), not after.
    let out = Command::new(BIN)
        .args(["--json", "strays.lisp"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let content = v["content"].as_str().unwrap();
    assert!(
        content.starts_with("[2000 more problems after the first 1000 are not listed;"),
        "{}",
        &content[..200.min(content.len())]
    );
    assert_eq!(content.matches("[Unmatched ) at line 1.]").count(), 1_000);
    assert_eq!(v["meta"]["diagnostics"].as_array().unwrap().len(), 1_000);
    assert_eq!(v["meta"]["diagnostics_omitted"], 2000);
    let _ = fs::remove_dir_all(&dir);
}

/// An answer, with or without a match: exit 0, or exit 1 with nothing on stderr (a pattern
/// that matches nothing exits 1, as grep's does; an error writes its code on stderr).
fn answered(out: &std::process::Output) -> bool {
    out.status.code() == Some(0) || (out.status.code() == Some(1) && out.stderr.is_empty())
}
