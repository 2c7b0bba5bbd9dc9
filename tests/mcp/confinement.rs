//! Confinement under attack: a local user who can write inside the root (or next to it)
//! swaps links while the reader resolves paths. Nothing outside the roots may ever be read.
//!
//! The attack that leaked before (the check after `open` read the file's name back from
//! `/proc/self/fd` and accepted `<root> (deleted)` as the root): a sibling file named
//! `<root> (deleted)` holds a secret, and a symlink inside the root is swapped in a loop
//! between a harmless file and a link to that sibling. About 3% of reads returned the
//! secret. Here the same swap runs against the library, the CLI and the MCP server.

use lisp_read_file::error::ErrorCode;
use lisp_read_file::guard::{Guard, DEFAULT_MAX_FILE_BYTES};
use serde_json::{json, Value};
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");
const SECRET: &str = "TOP-SECRET-OUTSIDE";

/// `base/root/` with `harmless.lisp`, and `base/root (deleted)`, a file outside the root
/// holding the secret; `root/f.lisp` is what the attacker swaps.
struct Arena {
    base: PathBuf,
}

impl Arena {
    fn new(name: &str) -> Arena {
        let base = std::env::temp_dir().join(format!("lrf-confine-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        fs::create_dir_all(base.join("root/dir")).unwrap();
        fs::write(base.join("root/harmless.lisp"), "(defun harmless () 1)\n").unwrap();
        fs::write(base.join("root/dir/inner.lisp"), "(defun inner () 2)\n").unwrap();
        fs::write(
            base.join("root (deleted)"),
            format!("(defvar *s* \"{SECRET}\")\n"),
        )
        .unwrap();
        fs::create_dir_all(base.join("outside")).unwrap();
        fs::write(
            base.join("outside/inner.lisp"),
            format!("(defvar *s* \"{SECRET}\")\n"),
        )
        .unwrap();
        Arena { base }
    }

    fn root(&self) -> PathBuf {
        self.base.join("root")
    }

    /// Swaps `root/f.lisp` between a regular file and a symlink to the sibling
    /// `root (deleted)` (relative, then absolute), and `root/sub` between a real directory
    /// and a symlink to a directory outside, until `stop` is set. A path checked while it
    /// is the regular file or directory is opened while it is the link, unless the open
    /// itself refuses to follow.
    /// Swaps in a loop until `stop`; `swaps` counts the renames as they happen.
    fn start_swapping(
        &self,
        stop: Arc<AtomicBool>,
        swaps: Arc<AtomicU64>,
    ) -> thread::JoinHandle<()> {
        let root = self.root();
        let sibling_abs = self.base.join("root (deleted)");
        thread::spawn(move || {
            let link = |target: &Path, name: &str| {
                let tmp = root.join(".swap-link");
                let _ = fs::remove_file(&tmp);
                symlink(target, &tmp).unwrap();
                fs::rename(&tmp, root.join(name)).unwrap();
            };
            let file = |name: &str| {
                let tmp = root.join(".swap-file");
                fs::write(&tmp, "(defun harmless () 1)\n").unwrap();
                fs::rename(&tmp, root.join(name)).unwrap();
            };
            let real_dir = root.join(".real-sub");
            fs::create_dir_all(&real_dir).unwrap();
            fs::write(real_dir.join("inner.lisp"), "(defun inner () 2)\n").unwrap();
            while !stop.load(Ordering::Relaxed) {
                file("f.lisp");
                link(Path::new("../root (deleted)"), "f.lisp");
                file("f.lisp");
                link(&sibling_abs, "f.lisp");
                // `sub`: the real directory, then a link out (a directory cannot be renamed
                // over a link, so the link goes first and the directory is moved aside).
                let _ = fs::remove_file(root.join("sub"));
                fs::rename(&real_dir, root.join("sub")).unwrap();
                fs::rename(root.join("sub"), &real_dir).unwrap();
                link(Path::new("../outside"), "sub");
                swaps.fetch_add(6, Ordering::Relaxed);
            }
        })
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.base);
    }
}

/// What a read may give: the harmless content, or a refusal; never the secret.
fn check_library_read(result: Result<Vec<u8>, lisp_read_file::ToolError>, ok: &mut u32) {
    match result {
        Ok(bytes) => {
            let text = String::from_utf8(bytes).unwrap();
            assert!(!text.contains(SECRET), "read outside the root: {text}");
            *ok += 1;
        }
        Err(e) => assert!(
            matches!(e.code, ErrorCode::AccessDenied | ErrorCode::NotFound),
            "unexpected refusal: {e:?}"
        ),
    }
}

#[test]
fn swapped_symlinks_never_reach_outside_the_root_library() {
    let arena = Arena::new("lib");
    let guard = Guard::confined(&[arena.root()], DEFAULT_MAX_FILE_BYTES).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swapper = arena.start_swapping(stop.clone(), swaps.clone());
    let (mut ok_f, mut ok_sub) = (0, 0);
    // At least 20,000 rounds, and on until the swapper has really raced them and a read
    // of each file got through between swaps (a loaded machine may starve either side):
    // bounded in count, never in time.
    for round in 0..400_000 {
        if round >= 20_000 {
            if swaps.load(Ordering::Relaxed) > 1_000 && ok_f > 0 && ok_sub > 0 {
                break;
            }
            // A starved swapper (a loaded machine) gets the core back.
            std::thread::yield_now();
        }
        check_library_read(guard.read("f.lisp").map(|f| f.bytes), &mut ok_f);
        check_library_read(guard.read("sub/inner.lisp").map(|f| f.bytes), &mut ok_sub);
        let abs = arena.root().join("f.lisp");
        check_library_read(
            guard.read(abs.to_str().unwrap()).map(|f| f.bytes),
            &mut ok_f,
        );
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    let swaps = swaps.load(Ordering::Relaxed);
    // The race was really run: the swapper made progress and some reads got through.
    assert!(swaps > 1_000, "only {swaps} swaps");
    assert!(ok_f > 0 && ok_sub > 0, "no read succeeded: {ok_f} {ok_sub}");
}

/// The same attack through the real binary's MCP server, one process answering every call
/// (the shape that leaked 3% of calls), with all three tools.
#[test]
fn swapped_symlinks_never_reach_outside_the_root_mcp() {
    let arena = Arena::new("mcp");
    let mut child = Command::new(BIN)
        .args(["mcp", "--tools", "lisp-read-file,read_file,Read", "--root"])
        .arg(arena.root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = arena.start_swapping(stop.clone(), Arc::new(AtomicU64::new(0)));
    let calls = 1_500;
    // Requests are written from their own thread, so that neither side can fill a pipe
    // while the other waits.
    let writer = thread::spawn(move || {
        let mut send = |v: Value| writeln!(stdin, "{v}").unwrap();
        send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "attacker", "version": "1"}}}),
        );
        send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let tools = [
            (
                "lisp-read-file",
                json!({"path": "f.lisp", "collapsed": false}),
            ),
            ("read_file", json!({"path": "f.lisp"})),
            ("Read", json!({"path": "sub/inner.lisp"})),
        ];
        for id in 1..=calls {
            let (name, args) = &tools[id % 3];
            send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                        "params": {"name": name, "arguments": args}}));
        }
        stdin
    });
    let mut answered = 0;
    let mut line = String::new();
    while answered < calls {
        line.clear();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "server closed");
        assert!(!line.contains(SECRET), "read outside the root: {line}");
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"].as_u64().is_some_and(|id| id >= 1) {
            answered += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    drop(writer.join().unwrap());
    let _ = child.wait();
}

/// Symlinks out of the root are refused however they are spelled, also when they dangle
/// or run into a loop out there: the answer is the same ACCESS_DENIED, so probing tells
/// nothing about what exists outside.
#[test]
fn links_out_are_access_denied_whatever_is_behind_them() {
    let arena = Arena::new("out");
    let root = arena.root();
    let outside = arena.base.join("outside");
    symlink(outside.join("loop-a"), outside.join("loop-b")).unwrap();
    symlink(outside.join("loop-b"), outside.join("loop-a")).unwrap();
    symlink(outside.join("loop-a"), root.join("to-loop")).unwrap();
    symlink(outside.join("missing.lisp"), root.join("dangling")).unwrap();
    symlink("../outside", root.join("out-dir")).unwrap();
    symlink("../root (deleted)", root.join("sibling")).unwrap();
    let guard = Guard::confined(std::slice::from_ref(&root), DEFAULT_MAX_FILE_BYTES).unwrap();
    for path in [
        "to-loop",
        "dangling",
        "out-dir/inner.lisp",
        "out-dir/missing",
        "sibling",
    ] {
        let e = guard.read(path).unwrap_err();
        assert_eq!(e.code, ErrorCode::AccessDenied, "{path}: {e:?}");
        assert_eq!(e.path, path);
    }
    // A loop inside the root is a NOT_FOUND that says so.
    symlink("in-b", root.join("in-a")).unwrap();
    symlink("in-a", root.join("in-b")).unwrap();
    let e = guard.read("in-a").unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound, "{e:?}");
    assert!(e.message.contains("symbolic links"), "{e:?}");
    // Through the binary too (the CLI with --root).
    let out = Command::new(BIN)
        .args(["--root", root.to_str().unwrap(), "to-loop"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ACCESS_DENIED"), "{stderr}");
}

/// A directory that may be searched but not listed is walked through, as the system would.
#[test]
fn search_only_directories_are_walked() {
    use std::os::unix::fs::PermissionsExt;
    let arena = Arena::new("search");
    let dir = arena.root().join("dir");
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o311)).unwrap();
    let guard = Guard::confined(&[arena.root()], DEFAULT_MAX_FILE_BYTES).unwrap();
    let got = guard.read("dir/inner.lisp");
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(got.unwrap().bytes, b"(defun inner () 2)\n");
}

/// Pseudo-files that look regular but cannot be read are refused with a code, not called
/// a bug.
#[test]
fn proc_self_mem_is_not_a_bug() {
    let out = Command::new(BIN).arg("/proc/self/mem").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("NOT_FILE"), "{stderr}");
    assert!(!stderr.contains("bug"), "{stderr}");
    assert!(stderr.contains("/proc/self/mem"), "{stderr}");
}
