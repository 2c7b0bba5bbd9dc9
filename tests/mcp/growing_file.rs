//! Windows of files that never end: a log another process keeps extending, and a sparse
//! file of a terabyte. A line window is read up to the size the file had when it was
//! opened, so it ends; a window of a huge file stops when its request is cancelled, in
//! every MCP tool that reads windows (`lisp-read-file`, `read_file`, `Read`), so that
//! cancelled calls give their compute slots back at once.

use crate::client::{heavy, RawServer, BIN};
use serde_json::{json, Value};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lrf-growing-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// 16 KiB of text lines: the head the text rule looks at is text, whatever follows.
fn text_head() -> Vec<u8> {
    (0..400)
        .flat_map(|i| format!("log line {i:05} ........................\n").into_bytes())
        .collect()
}

/// A file that a thread keeps extending (by 64 MiB of holes every 2 ms, 32 GB/s) until
/// the returned flag is set. Reading zeros is slower than that, so a reader that follows
/// the end never finds it.
fn growing_log(path: &Path) -> (Arc<AtomicBool>, std::thread::JoinHandle<()>) {
    std::fs::write(path, text_head()).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let file = OpenOptions::new().write(true).open(path).unwrap();
    let flag = stop.clone();
    let grower = std::thread::spawn(move || {
        let mut len = file.metadata().unwrap().len();
        // At most 4 TiB, far below ext4's limit, in case the flag is never set.
        while !flag.load(Ordering::Relaxed) && len < 1 << 42 {
            len += 64 << 20;
            if file.set_len(len).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    });
    // The file is already growing when it is read.
    std::thread::sleep(Duration::from_millis(50));
    (stop, grower)
}

/// Runs the CLI, killing it after `limit`; its stdout, or `None` when it had to be killed.
fn run_with_limit(args: &[&str], limit: Duration) -> Option<String> {
    let mut child = Command::new(BIN)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            let output = child.wait_with_output().unwrap();
            return Some(String::from_utf8_lossy(&output.stdout).into_owned());
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_line_window_of_a_log_that_keeps_growing_ends() {
    let _heavy = heavy();
    let dir = scratch("cli");
    let log = dir.join("app.log");
    let (stop, grower) = growing_log(&log);
    let log_arg = log.to_str().unwrap();
    let lines = run_with_limit(&["--lines", "1..2", log_arg], Duration::from_secs(20));
    let bytes = run_with_limit(&["--bytes", "0..40", log_arg], Duration::from_secs(20));
    stop.store(true, Ordering::Relaxed);
    grower.join().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let lines = lines.expect("--lines 1..2 of a growing log was still running after 20 s");
    assert!(lines.contains("log line 00000"), "{lines}");
    assert!(lines.contains("log line 00001"), "{lines}");
    assert!(!lines.contains("log line 00002"), "{lines}");
    let bytes = bytes.expect("--bytes 0..40 of a growing log was still running after 20 s");
    assert!(bytes.contains("log line 00000"), "{bytes}");
}

/// The server with `dir` as its root and the three tools that read windows.
fn start(dir: &Path) -> RawServer {
    let root = dir.to_str().unwrap();
    let tools = "lisp-read-file,read_file,Read";
    RawServer::start_in(&["--root", root, "--tools", tools], dir, None)
}

/// A line window of each tool that reads windows: start line 1, two lines.
fn window_arguments(tool: &str, path: &str) -> Value {
    match tool {
        "read_file" => json!({"path": path, "start_line": 1, "max_lines": 2}),
        "Read" => json!({"path": path, "start_line": 1, "limit": 2}),
        _ => json!({"path": path, "strategy": {"type": "lineRange", "startLine": 1, "endLine": 2}}),
    }
}

/// Four windows of a file no scan finishes soon, cancelled after 1 s: the server computes
/// four calls at once, so a small call after them is answered only if the cancelled
/// scans gave their slots back.
fn cancelled_windows_free_their_slots(tool: &str) {
    let _heavy = heavy();
    let dir = scratch(tool);
    let huge = dir.join("huge.log");
    {
        let mut file = File::create(&huge).unwrap();
        file.write_all(&text_head()).unwrap();
        // A terabyte of holes: scanning it for lines takes minutes.
        file.set_len(1 << 40).unwrap();
    }
    std::fs::write(dir.join("small.lisp"), "(defun small () 1)\n").unwrap();
    let mut server = start(&dir);
    for id in 1..=4 {
        server.send_call(id, tool, window_arguments(tool, "huge.log"));
    }
    std::thread::sleep(Duration::from_secs(1));
    for id in 1..=4 {
        server.cancel(id);
    }
    let sent = Instant::now();
    server.send_call(9, "lisp-read-file", json!({"path": "small.lisp"}));
    let mut others = Vec::new();
    let small = server.answer(9, Duration::from_secs(20), &mut others);
    let waited = sent.elapsed();
    drop(server);
    std::fs::remove_dir_all(&dir).unwrap();
    let small = small.unwrap_or_else(|| {
        panic!("{tool}: a small call after four cancelled windows got no answer in 20 s")
    });
    assert_eq!(small["result"]["isError"], false, "{small}");
    eprintln!("{tool}: the small call after four cancelled windows waited {waited:?}");
    assert!(
        waited < Duration::from_secs(5),
        "{tool}: the small call waited {waited:?} behind four cancelled windows"
    );
    assert!(
        others.iter().all(|m| m.get("id").is_none()),
        "a cancelled call was answered: {others:?}"
    );
}

#[test]
fn cancelled_read_file_windows_free_their_slots() {
    cancelled_windows_free_their_slots("read_file");
}

#[test]
fn cancelled_read_windows_free_their_slots() {
    cancelled_windows_free_their_slots("Read");
}

#[test]
fn cancelled_lisp_read_file_windows_free_their_slots() {
    cancelled_windows_free_their_slots("lisp-read-file");
}

/// Over MCP, every tool's window of a growing log is answered (each tool gets a log that
/// starts growing just before its call).
#[test]
fn windows_of_a_growing_log_are_answered_by_every_tool() {
    let _heavy = heavy();
    let dir = scratch("mcp");
    let mut server = start(&dir);
    let mut answers = Vec::new();
    for (id, tool) in [(1, "read_file"), (2, "Read"), (3, "lisp-read-file")] {
        let name = format!("app-{id}.log");
        let (stop, grower) = growing_log(&dir.join(&name));
        server.send_call(id, tool, window_arguments(tool, &name));
        let mut others = Vec::new();
        answers.push((
            tool,
            server.answer(id, Duration::from_secs(20), &mut others),
        ));
        stop.store(true, Ordering::Relaxed);
        grower.join().unwrap();
        std::fs::remove_file(dir.join(&name)).unwrap();
    }
    drop(server);
    std::fs::remove_dir_all(&dir).unwrap();
    for (tool, answer) in answers {
        let answer = answer.unwrap_or_else(|| panic!("{tool}: no answer in 20 s"));
        assert_eq!(answer["result"]["isError"], false, "{tool}: {answer}");
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("log line 00001"), "{tool}: {text}");
    }
}
