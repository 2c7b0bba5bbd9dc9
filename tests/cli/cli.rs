//! The command line (docs/cli.md, docs/tool.md#outline-json, docs/guard.md) through the real binary: exit codes, the
//! stdout/stderr split, `--json`, every flag of the read command, the `outline`
//! subcommand, `--help` and `--version`.
//!
//! Every test works in its own directory under the system temp dir (removed on drop), and
//! runs the binary Cargo built for this package; nothing is mocked.

use serde_json::Value;
use std::collections::BTreeSet;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The demo file and its collapsed view (docs/views.md#collapsed-view).
const DEMO: &str = "fixtures/demo/demo.lisp";
const DEMO_COLLAPSED: &str = include_str!("../../fixtures/demo/demo.collapsed.txt");

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A fresh directory for one test; removed on drop.
struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Scratch {
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let dir =
            std::env::temp_dir().join(format!("lrf-cli-{}-{}-{}", std::process::id(), n, name));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        // Canonical, so that the absolute paths we pass match what the guard sees.
        let dir = fs::canonicalize(&dir).unwrap();
        Scratch { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, bytes).unwrap();
        p
    }

    fn mkdir(&self, rel: &str) -> PathBuf {
        let p = self.path(rel);
        fs::create_dir_all(&p).unwrap();
        p
    }

    fn str(&self, rel: &str) -> String {
        self.path(rel).to_string_lossy().into_owned()
    }

    /// Runs the binary in this directory.
    fn run(&self, args: &[&str]) -> Run {
        run_in(&self.dir, args, None)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// What one run of the binary did.
#[derive(Debug)]
struct Run {
    args: Vec<String>,
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    /// The command line, for messages.
    fn command(&self) -> String {
        format!("lisp-read-file {}", self.args.join(" "))
    }

    /// Exit 0 and nothing on stderr; returns stdout.
    fn ok(&self) -> &str {
        assert_eq!(self.code, 0, "{self:#?}");
        assert_eq!(
            self.stderr, "",
            "success prints nothing on stderr: {self:#?}"
        );
        &self.stdout
    }

    /// A pattern that matched nothing: the view on stdout, nothing on stderr, exit 1 (as
    /// `grep` and `rg` say "no match"; docs/cli.md).
    fn no_match(&self) -> &str {
        assert_eq!(self.code, 1, "{self:#?}");
        assert_eq!(self.stderr, "", "{self:#?}");
        assert!(!self.stdout.is_empty(), "{self:#?}");
        &self.stdout
    }

    /// A tool error without --json: exit 1, nothing on stdout, one `CODE: message` line on
    /// stderr. Returns the message.
    fn tool_error(&self, code: &str) -> &str {
        assert_eq!(self.code, 1, "{self:#?}");
        assert_eq!(
            self.stdout, "",
            "a tool error prints nothing on stdout: {self:#?}"
        );
        let prefix = format!("{code}: ");
        assert!(self.stderr.starts_with(&prefix), "{self:#?}");
        assert_eq!(
            self.stderr.lines().count(),
            1,
            "one line on stderr: {self:#?}"
        );
        self.stderr[prefix.len()..].trim_end()
    }

    /// A usage error: exit 2, nothing on stdout, a message on stderr.
    fn usage_error(&self) {
        assert_eq!(self.code, 2, "{}: {self:#?}", self.command());
        assert_eq!(self.stdout, "", "{self:#?}");
        assert!(!self.stderr.is_empty(), "{self:#?}");
    }

    /// The single JSON object on stdout (exactly one line).
    fn json(&self) -> Value {
        assert!(
            self.stdout.ends_with('\n') && self.stdout.trim_end().lines().count() == 1,
            "exactly one line of JSON on stdout: {self:#?}"
        );
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("{e}: {self:#?}"))
    }
}

fn run_in(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Run {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    if let Some(bytes) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        let bytes = bytes.to_vec();
        // A writer thread, so a child that stops reading cannot deadlock the test.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        });
    }
    let out = child.wait_with_output().expect("the binary finishes");
    Run {
        args: args.iter().map(|s| s.to_string()).collect(),
        code: out.status.code().expect("exited, not killed"),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}

/// Runs in the crate directory (where `fixtures/` is).
fn run(args: &[&str]) -> Run {
    run_in(Path::new(ROOT), args, None)
}

fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .map(String::as_str)
        .collect()
}

fn set<'a>(items: &[&'a str]) -> BTreeSet<&'a str> {
    items.iter().copied().collect()
}

// ---------------------------------------------------------------------------------------
// Success, and the stdout/stderr split

#[test]
fn collapsed_view_on_stdout_nothing_on_stderr() {
    let r = run(&[DEMO]);
    assert_eq!(r.ok(), DEMO_COLLAPSED);
    // Deterministic: the same file and arguments give the same bytes.
    assert_eq!(run(&[DEMO]).stdout, r.stdout);
}

#[test]
fn kinds_and_features_flags() {
    let file = "fixtures/views/kinds_features.lisp";
    let r = run(&[
        "--kinds",
        "defclass,DEFMETHOD",
        "--features",
        "sbcl,unix",
        file,
    ]);
    assert_eq!(
        r.ok(),
        "[features: 2 forms not shown, excluded by #+/#- under (sbcl unix).]
[kinds: 7 other forms not shown (kinds defclass DEFMETHOD).]
 5: (defclass shape () (name))
11: (defmethod area ((s shape)) ...)
14: (cl:defmethod describe-shape ((s shape)) ...)
17: (eval-when (:compile-toplevel :load-toplevel :execute)
20:   (defmethod area :around ((s shape)) ...))
"
    );
    // Other strategies refuse them.
    let r = run(&["--kinds", "defun", "--strategy", "complete", file]);
    assert_eq!(r.code, 1, "{r:#?}");
    assert!(
        r.stderr
            .contains("kinds and features apply to the default strategy"),
        "{r:#?}"
    );
    // An empty list would hide everything: refused.
    let r = run(&["--kinds", "", file]);
    assert_eq!(r.code, 1, "{r:#?}");
    assert!(r.stderr.contains("kinds is empty"), "{r:#?}");
}

// ---------------------------------------------------------------------------------------
// Tool errors: exit 1, `CODE: message` on stderr, nothing on stdout

#[test]
fn missing_file_is_not_found() {
    let s = Scratch::new("missing");
    let msg = s
        .run(&["no-such-file.lisp"])
        .tool_error("NOT_FOUND")
        .to_string();
    assert!(msg.contains("no-such-file.lisp"), "{msg}");
    // Confined: the message names the path relative to the root, never the root itself.
    s.mkdir("root");
    let r = s.run(&["--root", "root", "sub/gone.lisp"]);
    let msg = r.tool_error("NOT_FOUND");
    assert!(msg.contains("sub/gone.lisp"), "{msg}");
    assert!(!msg.contains(&*s.dir.to_string_lossy()), "{msg}");
}

#[test]
fn invalid_regex_is_invalid_argument_quoting_the_error() {
    for flag in ["-c", "--content-pattern"] {
        let r = run(&[flag, r"\w{5000}", DEMO]);
        let msg = r.tool_error("INVALID_ARGUMENT");
        assert!(msg.contains(r#""\\w{5000}""#), "quotes the pattern: {msg}");
        assert!(
            msg.contains("must compile to at most"),
            "says the bound: {msg}"
        );
        // Not regex syntax: literal text (docs/views.md#expanded-forms).
        let out = run(&[flag, "(defgeneric", DEMO]).ok().to_string();
        assert!(out.contains("16: (defgeneric area (shape)\n17:"), "{out}");
    }
    // A name pattern that is not a regex is literal text (docs/views.md#expanded-forms).
    for flag in ["-n", "--name-pattern"] {
        let out = run(&[flag, "(setf", DEMO]).no_match().to_string();
        assert!(
            out.starts_with("[No definition matched --name-pattern \"(setf\".]"),
            "{out}"
        );
    }
    // Lookaround is not Rust regex syntax: literal text, which matches nothing here.
    let out = run(&["-c", "(?=x)", DEMO]).no_match().to_string();
    assert!(
        out.starts_with("[No form matched --content-pattern \"(?=x)\".]"),
        "{out}"
    );
}

#[test]
fn paths_escaping_the_root_are_access_denied() {
    let s = Scratch::new("escape");
    s.write("root/inside.lisp", "(defun inside () 1)\n");
    s.write("outside/secret.lisp", "(defvar *secret* \"xyzzy-plugh\")\n");
    symlink(s.path("outside/secret.lisp"), s.path("root/link.lisp")).unwrap();
    let secret = s.str("outside/secret.lisp");
    for path in [
        "../outside/secret.lisp",
        secret.as_str(),
        "link.lisp",
        "/etc/passwd",
    ] {
        let r = s.run(&["--root", "root", path]);
        let msg = r.tool_error("ACCESS_DENIED");
        // The content never leaks (a number would also match the pid in temp paths).
        assert!(!msg.contains("xyzzy-plugh"), "{msg}");
        let r = s.run(&["--root", "root", "--json", path]);
        assert_eq!(r.code, 1);
        assert_eq!(r.json()["error"]["code"], "ACCESS_DENIED", "{r:#?}");
    }
    // Without --root the CLI is not confined: a person at a shell may read any file.
    assert!(s.run(&[&secret]).ok().contains("*secret*"));
}

/// A directory gives its project map (docs/project.md); the strategies and raw lines
/// that read one file are refused on it.
#[test]
fn a_directory_gives_its_map() {
    let s = Scratch::new("dir");
    s.mkdir("root/sub");
    assert_eq!(
        s.run(&["root/sub"]).ok(),
        "[No Lisp files (.lisp .lsp .cl .asd .ros) under root/sub]\n"
    );
    s.write("root/sub/a.lisp", "(defun a (x)\n  x)\n");
    assert_eq!(
        s.run(&["--root", "root", "sub"]).ok(),
        "==> sub/a.lisp <==\n1: (defun a (x) ...)\n"
    );
    assert_eq!(
        s.run(&["--root", "root", "--json", "."]).json()["mode"],
        "project"
    );
    for flags in [
        &["--raw"][..],
        &["--lines", "1..2"],
        &["--bytes", "0..2"],
        &["--strategy", "complete"],
    ] {
        let mut args = vec!["--root", "root"];
        args.extend_from_slice(flags);
        args.push("sub");
        let r = s.run(&args);
        let message = r.tool_error("INVALID_ARGUMENT");
        assert!(message.contains("sub is a directory"), "{message}");
    }
}

/// Several paths print the map of them, in the order given; one that cannot be read is
/// listed as skipped and makes the exit status 1.
#[test]
fn several_paths_give_their_map() {
    let s = Scratch::new("several");
    s.write("b.lisp", "(defun b () 1)\n");
    s.write("d/a.lisp", "(defun a () 1)\n");
    assert_eq!(
        s.run(&["b.lisp", "d"]).ok(),
        "==> b.lisp <==\n1: (defun b () 1)\n\n==> d/a.lisp <==\n1: (defun a () 1)\n"
    );
    let r = s.run(&["b.lisp", "missing.lisp", "b.lisp"]);
    assert_eq!(r.code, 1, "{r:#?}");
    assert_eq!(
        r.stdout,
        "==> b.lisp <==\n1: (defun b () 1)\n[Skipped 1 file (1 NOT_FOUND): missing.lisp (NOT_FOUND).]\n"
    );
    let r = s.run(&["--json", "b.lisp", "missing.lisp"]);
    assert_eq!(r.code, 1, "{r:#?}");
    let v: Value = serde_json::from_str(r.stdout.trim_end()).unwrap();
    assert_eq!(v["mode"], "project");
    assert_eq!(v["files_skipped"][0]["code"], "NOT_FOUND");
    s.run(&["b.lisp", "-"]).tool_error("INVALID_ARGUMENT");
    // Whichever place `-` takes: standard input is read alone.
    s.run(&["-", "b.lisp"]).tool_error("INVALID_ARGUMENT");
}

#[test]
fn binary_file_is_binary_file() {
    let s = Scratch::new("binary");
    s.write("blob.lisp", b"(defun f ()\0 1)\n");
    let msg = s.run(&["blob.lisp"]).tool_error("BINARY_FILE").to_string();
    assert!(msg.contains("blob.lisp"), "{msg}");
    // The same check applies to standard input.
    let r = run_in(&s.dir, &["-"], Some(b"(a)\0(b)"));
    r.tool_error("BINARY_FILE");
}

#[test]
fn file_over_the_cap_is_size_limit_exceeded() {
    let s = Scratch::new("size");
    s.write("ten.lisp", "(defun f)\n"); // exactly 10 bytes
    s.write("eleven.lisp", "(defun fg)\n");
    s.run(&["--max-file-bytes", "10", "ten.lisp"]).ok();
    // The whole text of a file over the cap is refused...
    let msg = s
        .run(&[
            "--max-file-bytes",
            "10",
            "--strategy",
            "complete",
            "eleven.lisp",
        ])
        .tool_error("SIZE_LIMIT_EXCEEDED")
        .to_string();
    assert!(msg.contains("--max-file-bytes"), "says what to do: {msg}");
    assert!(
        msg.contains("--lines or --bytes"),
        "names the windows: {msg}"
    );
    // ...while its collapsed view says so and names the window to ask for.
    let note = s.run(&["--max-file-bytes", "10", "eleven.lisp"]);
    assert_eq!(
        note.ok(),
        "[eleven.lisp is 11 bytes, over the 10-byte size cap; the collapsed view and patterns read the whole file. Read it in windows: --lines 1.., or --bytes 0..10; or raise the cap with --max-file-bytes.]\n"
    );
    // and a window of it is read: at most the cap of it, the cut said.
    assert_eq!(
        s.run(&["--max-file-bytes", "10", "--lines", "1..1", "eleven.lisp"])
            .ok(),
        "(defun fg…[+1 chars; the rest is --bytes 9..10]\n"
    );
    // Standard input has the same cap.
    let r = run_in(
        &s.dir,
        &["--max-file-bytes", "10", "-"],
        Some(b"(defun fg)\n"),
    );
    r.tool_error("SIZE_LIMIT_EXCEEDED");
}

#[test]
fn special_files_are_refused_without_blocking() {
    let s = Scratch::new("fifo");
    let made = Command::new("mkfifo")
        .arg(s.path("pipe.lisp"))
        .status()
        .unwrap();
    assert!(made.success());
    let mut child = Command::new(BIN)
        .arg("pipe.lisp")
        .current_dir(&s.dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("reading a FIFO blocked");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with("NOT_FILE: "), "{stderr}");
}

#[test]
fn bad_definers_file_is_a_tool_error() {
    let s = Scratch::new("bad-definers");
    s.write("a.lisp", "(defun a () 1)\n");
    s.write("bad.lisp", "(define-route :name\n");
    s.run(&["--definers", "bad.lisp", "a.lisp"])
        .tool_error("INVALID_ARGUMENT");
    s.write("bad2.lisp", "(define-route :no-such-key 1)\n");
    s.run(&["--definers", "bad2.lisp", "a.lisp"])
        .tool_error("INVALID_ARGUMENT");
    s.run(&["--definers", "missing.lisp", "a.lisp"])
        .tool_error("NOT_FOUND");
}

// ---------------------------------------------------------------------------------------
// Usage errors: exit 2, nothing on stdout

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["--no-such-flag", DEMO][..],
        &["--limit", "0", DEMO],
        &["--limit", "-3", DEMO],
        &["--limit", "many", DEMO],
        &["--offset", "-1", DEMO],
        &["--context", "x", DEMO],
        &["--max-file-bytes", "lots", DEMO],
        &["--comments", "bogus", DEMO],
        &[],
        &["--raw"],
        &["outline"],
        &["outline", "--json"],
        &["outline", "--no-such-flag", DEMO],
    ] {
        run(args).usage_error();
    }
    let r = run(&["--comments", "bogus", DEMO]);
    assert!(r.stderr.contains("headers"), "lists the values: {r:#?}");
}

// ---------------------------------------------------------------------------------------
// --json (docs/tool.md)

const META_KEYS: [&str; 9] = [
    "applied_strategy",
    "total_forms",
    "expanded_forms",
    "truncated",
    "next_offset",
    "total_lines",
    "byte_length",
    "mtime_ms",
    "diagnostics",
];

#[test]
fn json_result_object() {
    let r = run(&["--json", DEMO]);
    r.ok();
    let v = r.json();
    assert_eq!(keys(&v), set(&["path", "mode", "content", "meta"]));
    assert_eq!(v["path"], DEMO, "without --root, the path as given");
    assert_eq!(v["mode"], "lisp-collapsed");
    assert_eq!(v["content"], DEMO_COLLAPSED);
    let meta = &v["meta"];
    assert_eq!(keys(meta), set(&META_KEYS));
    assert_eq!(meta["total_forms"], 9);
    assert_eq!(meta["expanded_forms"], 0);
    assert_eq!(meta["truncated"], false);
    assert_eq!(meta["next_offset"], Value::Null);
    assert_eq!(meta["total_lines"], 35);
    assert_eq!(
        meta["byte_length"],
        fs::metadata(Path::new(ROOT).join(DEMO)).unwrap().len()
    );
    assert!(meta["mtime_ms"].as_u64().unwrap() > 0);
    assert_eq!(meta["diagnostics"], Value::Array(vec![]));

    // A truncated view names the offset that continues it.
    let v = run(&["--json", "--raw", "--limit", "5", DEMO]).json();
    assert_eq!(v["mode"], "raw");
    assert_eq!(v["meta"]["truncated"], true);
    assert_eq!(v["meta"]["next_offset"], 5);

    // Diagnostics are listed with kind, line and message.
    let s = Scratch::new("json-diag");
    s.write(
        "broken.lisp",
        "(defun broken (x)\n  (foo\n(defun ok () 1)\n)\n",
    );
    let v = s.run(&["--json", "broken.lisp"]).json();
    let kinds: Vec<&str> = v["meta"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["unclosed", "stray"]);
    assert_eq!(v["meta"]["diagnostics"][0]["line"], 1);
}

#[test]
fn json_fallback_encoding_only_for_invalid_utf8() {
    let s = Scratch::new("json-utf8");
    s.write("latin1.lisp", b"(defun caf\xe9 () 1)\n");
    s.write("utf8.lisp", "(defun café () 1)\n");
    let v = s.run(&["--json", "latin1.lisp"]).json();
    assert_eq!(v["meta"]["fallback_encoding"], "replace");
    assert!(v["content"].as_str().unwrap().contains('\u{fffd}'));
    let mut with = set(&META_KEYS);
    with.insert("fallback_encoding");
    assert_eq!(keys(&v["meta"]), with);
    let v = s.run(&["--json", "utf8.lisp"]).json();
    assert_eq!(keys(&v["meta"]), set(&META_KEYS));
}

#[test]
fn json_error_object_on_stdout() {
    let s = Scratch::new("json-error");
    s.mkdir("root");
    let r = s.run(&["--json", "--root", "root", "nope.lisp"]);
    assert_eq!(r.code, 1, "{r:#?}");
    assert_eq!(r.stderr, "", "with --json the error goes to stdout: {r:#?}");
    let v = r.json();
    assert_eq!(keys(&v), set(&["path", "error"]));
    assert_eq!(v["path"], "nope.lisp");
    assert_eq!(keys(&v["error"]), set(&["code", "message"]));
    assert_eq!(v["error"]["code"], "NOT_FOUND");
    assert!(v["error"]["message"]
        .as_str()
        .unwrap()
        .contains("nope.lisp"));
    // Argument errors too.
    let r = run(&["--json", "-c", r"\w{5000}", DEMO]);
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["error"]["code"], "INVALID_ARGUMENT");
}

#[test]
fn json_path_is_relative_to_the_root() {
    let s = Scratch::new("json-path");
    s.write("root/sub/a.lisp", "(defun a () 1)\n");
    let abs = s.str("root/sub/a.lisp");
    for path in ["sub/a.lisp", "./sub/../sub/a.lisp", abs.as_str()] {
        let v = s.run(&["--json", "--root", "root", path]).json();
        assert_eq!(v["path"], "sub/a.lisp", "{path}");
    }
    // An absolute --root works the same.
    let root = s.str("root");
    let v = s.run(&["--json", "--root", &root, &abs]).json();
    assert_eq!(v["path"], "sub/a.lisp");
    // Errors name the path relative to the root too, never absolute.
    let missing = s.str("root/sub/missing.lisp");
    let v = s.run(&["--json", "--root", "root", &missing]).json();
    assert_eq!(v["error"]["code"], "NOT_FOUND");
    assert_eq!(v["path"], "sub/missing.lisp");
    assert!(!v["error"]["message"].as_str().unwrap().contains(&root));
}

// ---------------------------------------------------------------------------------------
// Every flag of the read command (docs/cli.md)

/// A small file with comments, two definitions, a method and a long body.
const SAMPLE: &str = ";;;; sample.lisp -- for the flag tests
;;; Section one

;; Above alpha.
(defun alpha (x)
  \"Alpha doc.\"
  (* x 2))

(defmethod beta :before ((s string))
  ;; inside beta
  (print s))

(defun gamma ()
  (list 1
        2
        3))
";

fn sample() -> Scratch {
    let s = Scratch::new("sample");
    s.write("sample.lisp", SAMPLE);
    s
}

#[test]
fn raw_flag() {
    let s = sample();
    assert_eq!(s.run(&["--raw", "sample.lisp"]).ok(), SAMPLE);
    let v = s.run(&["--raw", "--json", "sample.lisp"]).json();
    assert_eq!(v["mode"], "raw");
}

#[test]
fn name_pattern_flag() {
    let s = sample();
    for flag in ["-n", "--name-pattern"] {
        let out = s.run(&[flag, "ALPHA", "sample.lisp"]).ok().to_string();
        assert!(
            out.contains(" 5: (defun alpha (x)\n 6:   \"Alpha doc.\"\n 7:   (* x 2))\n"),
            "{out}"
        );
        assert!(out.contains("13: (defun gamma () ...)\n"), "{out}");
    }
    // Methods by NAME QUALIFIERS (SPECIALIZERS).
    let out = s
        .run(&["-n", r"^beta :before \(string\)$", "sample.lisp"])
        .ok()
        .to_string();
    assert!(out.contains("10:   ;; inside beta\n"), "{out}");
    // Nothing matched: said in the text.
    let out = s.run(&["-n", "zeta", "sample.lisp"]).no_match().to_string();
    assert!(
        out.starts_with("[No definition matched --name-pattern \"zeta\".]\n"),
        "{out}"
    );
}

#[test]
fn content_pattern_flag() {
    let s = sample();
    for flag in ["-c", "--content-pattern"] {
        let v = s.run(&[flag, "print s", "--json", "sample.lisp"]).json();
        assert_eq!(v["meta"]["expanded_forms"], 1);
        assert!(v["content"]
            .as_str()
            .unwrap()
            .contains("11:   (print s))\n"));
    }
    // On a text file it greps.
    s.write(
        "notes.txt",
        "one\ntwo\nthree match\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\ntwelve match\n",
    );
    let v = s.run(&["-c", "match", "--json", "notes.txt"]).json();
    assert_eq!(v["mode"], "text-filtered");
    // Context 5 around lines 3 and 12: blocks 1-8 and 7-12 overlap, so one block.
    assert_eq!(
        v["content"],
        "1-one\n2-two\n3:three match\n4-four\n5-five\n6-six\n7-seven\n8-eight\n9-nine\n10-ten\n11-eleven\n12:twelve match\n"
    );
    // Context 2: two blocks, separated by `--`.
    assert_eq!(
        s.run(&["-c", "match", "--context", "2", "notes.txt"]).ok(),
        "1-one\n2-two\n3:three match\n4-four\n5-five\n--\n10-ten\n11-eleven\n12:twelve match\n"
    );
}

#[test]
fn offset_and_limit_flags() {
    let s = sample();
    assert_eq!(
        s.run(&["--raw", "--offset", "4", "--limit", "3", "sample.lisp"])
            .ok(),
        "(defun alpha (x)\n  \"Alpha doc.\"\n  (* x 2))\n[Showing lines 5-7 of 16. Use --offset 7 to read more.]\n"
    );
    // Collapsed: offset skips forms that start before it; limit cuts with a footer.
    let out = s
        .run(&["--offset", "5", "--limit", "1", "sample.lisp"])
        .ok()
        .to_string();
    assert_eq!(
        out,
        " 9: (defmethod beta :before ((s string)) ...)\n[Showing forms from line 9 to line 12 of 16. Use --offset 12 to continue.]\n"
    );
    let out = s.run(&["--offset", "12", "sample.lisp"]).ok().to_string();
    assert_eq!(out, "13: (defun gamma () ...)\n");
    // Past the end in raw mode: empty content and a note.
    assert_eq!(
        s.run(&["--raw", "--offset", "99", "sample.lisp"]).ok(),
        "[Offset 99 is past end of file (16 lines).]\n"
    );
}

#[test]
fn comments_flag() {
    let s = sample();
    let view = |mode: &str| s.run(&["--comments", mode, "sample.lisp"]).ok().to_string();
    let forms = " 5: (defun alpha (x) ...) ;; Alpha doc.\n 9: (defmethod beta :before ((s string)) ...)\n13: (defun gamma () ...)\n";
    assert_eq!(view("none"), forms);
    assert_eq!(s.run(&["sample.lisp"]).ok(), forms, "none is the default");
    assert_eq!(
        view("headers"),
        format!(" 1: ;;;; sample.lisp -- for the flag tests\n{forms}")
    );
    assert_eq!(view("preceding"), format!(" 4: ;; Above alpha.\n{forms}"));
    assert_eq!(
        view("all"),
        format!(" 1: ;;;; sample.lisp -- for the flag tests\n 2: ;;; Section one\n 4: ;; Above alpha.\n{forms}")
    );
}

#[test]
fn grep_max_count_and_one_sided_context_flags() {
    let s = Scratch::new("grep-flags");
    s.write("log.txt", "a\nb\nc\nHIT 1\nd\ne\nHIT 2\nf\ng\nh\nHIT 3\n");
    // As `rg -n -m 1 -B 2`: the first match and the two lines before it, no note.
    assert_eq!(
        s.run(&["-c", "HIT", "-m", "1", "-B", "2", "log.txt"]).ok(),
        "2-b\n3-c\n4:HIT 1\n"
    );
    assert_eq!(
        s.run(&[
            "-c",
            "HIT",
            "--max-count",
            "2",
            "--after-context",
            "1",
            "log.txt"
        ])
        .ok(),
        "4:HIT 1\n5-d\n--\n7:HIT 2\n8-f\n"
    );
    // -C with -A sets the leading side (as grep -C 1 -A 0).
    assert_eq!(
        s.run(&["-c", "HIT", "-C", "1", "-A", "0", "log.txt"]).ok(),
        "3-c\n4:HIT 1\n--\n6-e\n7:HIT 2\n--\n10-h\n11:HIT 3\n"
    );
    let v = s
        .run(&["--json", "-c", "HIT", "-m", "2", "-B", "0", "log.txt"])
        .json();
    assert_eq!(v["content"], "4:HIT 1\n--\n7:HIT 2\n");
    assert_eq!(v["meta"]["stopped_at_max_count"], 2);
    // -m 0 is a usage error (exit status 2), as a limit of 0 is.
    s.run(&["-c", "HIT", "-m", "0", "log.txt"]).usage_error();
}

#[test]
fn context_flag() {
    let s = Scratch::new("context");
    s.write("log.txt", "a\nb\nc\nHIT\nd\ne\nf\n");
    assert_eq!(
        s.run(&["-c", "HIT", "--context", "0", "log.txt"]).ok(),
        "4:HIT\n"
    );
    assert_eq!(
        s.run(&["-c", "HIT", "--context", "1", "log.txt"]).ok(),
        "3-c\n4:HIT\n5-d\n"
    );
    // Default 5: the whole file here.
    assert_eq!(
        s.run(&["-c", "HIT", "log.txt"]).ok(),
        "1-a\n2-b\n3-c\n4:HIT\n5-d\n6-e\n7-f\n"
    );
}

#[test]
fn line_numbers_flag() {
    let s = sample();
    assert_eq!(
        s.run(&["--raw", "--line-numbers", "--limit", "2", "sample.lisp"])
            .ok(),
        " 1: ;;;; sample.lisp -- for the flag tests\n 2: ;;; Section one\n[Showing lines 1-2 of 16. Use --offset 2 to read more.]\n"
    );
    s.write("plain.txt", "x\ny\n");
    assert_eq!(s.run(&["--line-numbers", "plain.txt"]).ok(), "1: x\n2: y\n");
}

#[test]
fn root_flag_is_repeatable() {
    let s = Scratch::new("roots");
    s.write("one/a.lisp", "(defun in-one () 1)\n");
    s.write("two/b.lisp", "(defun in-two () 2)\n");
    s.write("three/c.lisp", "(defun in-three () 3)\n");
    let b = s.str("two/b.lisp");
    let args = |path: &str| -> Run { s.run(&["--json", "--root", "one", "--root", "two", path]) };
    // Relative paths resolve against the first root.
    assert_eq!(args("a.lisp").json()["path"], "a.lisp");
    assert_eq!(args("b.lisp").json()["error"]["code"], "NOT_FOUND");
    // An absolute path inside the second root is allowed, shown absolute (the form that
    // reads back: a relative path names the first root), and it reads back.
    let v = args(&b).json();
    let shown = v["path"].as_str().unwrap().to_string();
    assert!(
        shown.starts_with('/') && shown.ends_with("two/b.lisp"),
        "{shown}"
    );
    assert!(v["content"].as_str().unwrap().contains("in-two"));
    assert_eq!(args(&shown).json()["content"], v["content"]);
    // Inside neither root.
    let c = s.str("three/c.lisp");
    assert_eq!(args(&c).json()["error"]["code"], "ACCESS_DENIED");
    assert_eq!(
        args("../three/c.lisp").json()["error"]["code"],
        "ACCESS_DENIED"
    );
    // A root that does not exist is an argument error.
    s.run(&["--root", "no-such-dir", "a.lisp"])
        .tool_error("INVALID_ARGUMENT");
}

#[test]
fn max_file_bytes_flag() {
    let s = sample();
    let n = SAMPLE.len().to_string();
    let less = (SAMPLE.len() - 1).to_string();
    s.run(&["--max-file-bytes", &n, "sample.lisp"]).ok();
    s.run(&[
        "--max-file-bytes",
        &less,
        "--strategy",
        "complete",
        "sample.lisp",
    ])
    .tool_error("SIZE_LIMIT_EXCEEDED");
    // The default cap is 1 MiB.
    s.write("big.lisp", vec![b' '; 1024 * 1024 + 1]);
    s.run(&["--strategy", "complete", "big.lisp"])
        .tool_error("SIZE_LIMIT_EXCEEDED");
    assert!(s
        .run(&["big.lisp"])
        .ok()
        .contains("over the 1048576-byte size cap"));
    s.write("cap.lisp", vec![b' '; 1024 * 1024]);
    s.run(&["cap.lisp"]).ok();
}

const ROUTE: &str = "(route home (request)\n  \"The home page.\"\n  (render request))\n";
// `route` does not start with `def`: without an entry it is a plain form.
const ROUTE_GENERIC: &str = "1: (route home ...)\n";
const ROUTE_CUSTOM: &str = "1: (route home (request) ...) ;; The home page.\n";
const ROUTE_DEFINER: &str = "(route :name 1 :lambda-list 2 :body 3)\n";
/// What a view made with a table says of it (docs/reader.md#definer-table).
const PROJECT_TABLE_NOTE: &str = "[definers: .lisp-read-file.lisp is in force (1 entries)]\n";

#[test]
fn definers_flag() {
    let s = Scratch::new("definers");
    s.write("app/routes.lisp", ROUTE);
    s.write("my-definers.lisp", ROUTE_DEFINER);
    assert_eq!(s.run(&["app/routes.lisp"]).ok(), ROUTE_GENERIC);
    assert_eq!(
        s.run(&["--definers", "my-definers.lisp", "app/routes.lisp"])
            .ok(),
        format!("{ROUTE_CUSTOM}[definers: my-definers.lisp is in force (1 entries)]\n")
    );
    // The table applies to the outline too.
    let v: Value = serde_json::from_str(
        s.run(&[
            "outline",
            "--json",
            "--definers",
            "my-definers.lisp",
            "app/routes.lisp",
        ])
        .ok(),
    )
    .unwrap();
    assert_eq!(v["items"][0]["signature"], "(route home (request) ...)");
}

#[test]
fn project_definers_file_at_a_root_is_picked_up() {
    let s = Scratch::new("project-definers");
    s.write("project/routes.lisp", ROUTE);
    s.write("other/routes.lisp", ROUTE);
    s.write("project/.lisp-read-file.lisp", ROUTE_DEFINER);
    assert_eq!(
        s.run(&["--root", "project", "routes.lisp"]).ok(),
        format!("{ROUTE_CUSTOM}{PROJECT_TABLE_NOTE}")
    );
    assert_eq!(
        s.run(&["--root", "other", "routes.lisp"]).ok(),
        ROUTE_GENERIC
    );
    // --definers overrides the project's table; it is the operator's argument, so a
    // relative name is relative to the working directory, not to the root.
    s.write("project/override.lisp", "(route :name 1 :lambda-list 2)\n");
    assert_eq!(
        s.run(&[
            "--root",
            "project",
            "--definers",
            "project/override.lisp",
            "routes.lisp"
        ])
        .ok(),
        format!(
            "1: (route home (request) ...)\n{PROJECT_TABLE_NOTE}\
             [definers: project/override.lisp is in force (1 entries)]\n"
        )
    );
    // Without --root, the file in the current directory is read.
    let project = s.path("project");
    assert_eq!(
        run_in(&project, &["routes.lisp"], None).ok(),
        format!("{ROUTE_CUSTOM}{PROJECT_TABLE_NOTE}")
    );
}

#[test]
fn dash_reads_lisp_from_stdin() {
    let s = Scratch::new("stdin");
    let r = run_in(&s.dir, &["-"], Some(b"(defun from-stdin (x)\n  x)\n"));
    assert_eq!(r.ok(), "1: (defun from-stdin (x) ...)\n");
    let r = run_in(
        &s.dir,
        &["--json", "-n", "from", "-"],
        Some(b"(defun from-stdin (x)\n  x)\n"),
    );
    let v = r.json();
    assert_eq!(v["path"], "-");
    assert_eq!(v["mode"], "lisp-collapsed");
    assert_eq!(v["content"], "1: (defun from-stdin (x)\n2:   x)\n");
    assert_eq!(v["meta"]["mtime_ms"], 0);
    // Empty input is an empty view, not an error.
    let r = run_in(&s.dir, &["-"], Some(b""));
    assert_eq!(r.ok(), "");
    // --raw works on stdin too.
    let r = run_in(&s.dir, &["--raw", "-"], Some(b"(a\n b)\n"));
    assert_eq!(r.ok(), "(a\n b)\n");
}

#[test]
fn text_files_and_lisp_extensions() {
    let s = Scratch::new("extensions");
    let src = "(defun f (x)\n  x)\n";
    for name in ["a.lisp", "a.lsp", "a.cl", "a.ros", "A.LISP"] {
        s.write(name, src);
        let v = s.run(&["--json", name]).json();
        assert_eq!(v["mode"], "lisp-collapsed", "{name}");
    }
    // An .asd file gives the map of its systems, itself first (docs/project.md).
    s.write("a.asd", src);
    let v = s.run(&["--json", "a.asd"]).json();
    assert_eq!(v["mode"], "project");
    assert_eq!(v["content"], "==> a.asd <==\n1: (defun f (x) ...)\n");
    for name in ["a.txt", "a.md", "a.el", "Makefile"] {
        s.write(name, src);
        let v = s.run(&["--json", name]).json();
        assert_eq!(v["mode"], "raw", "{name}");
        assert_eq!(v["content"], src, "{name}");
    }
    // A .ros script's shebang line is shown.
    s.write("script.ros", "#!/bin/sh\n(defun main () 1)\n");
    assert_eq!(
        s.run(&["script.ros"]).ok(),
        "1: #!/bin/sh\n2: (defun main () 1)\n"
    );
}

// ---------------------------------------------------------------------------------------
// The outline subcommand (docs/tool.md#outline-json)

#[test]
fn outline_json_one_line_per_file_in_argument_order() {
    let s = Scratch::new("outline");
    s.write("b.lisp", "(defun b () 1)\n");
    s.write("a.lisp", ";; c\n(defvar *a* 1)\n");
    s.mkdir("dir");
    let r = s.run(&[
        "outline",
        "--json",
        "b.lisp",
        "missing.lisp",
        "a.lisp",
        "dir",
    ]);
    assert_eq!(r.code, 1, "a failed file makes the exit status 1: {r:#?}");
    assert_eq!(r.stderr, "", "{r:#?}");
    let lines: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let paths: Vec<&str> = lines.iter().map(|v| v["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["b.lisp", "missing.lisp", "a.lisp", "dir"]);
    assert_eq!(
        keys(&lines[0]),
        set(&["path", "byte_length", "line_count", "items", "diagnostics"])
    );
    assert_eq!(lines[0]["items"][0]["name"], "b");
    assert_eq!(keys(&lines[1]), set(&["path", "error"]));
    assert_eq!(lines[1]["error"]["code"], "NOT_FOUND");
    assert_eq!(lines[3]["error"]["code"], "IS_DIRECTORY");
    // The items of a.lisp: a comment and a form, with byte offsets into the file.
    let items = lines[2]["items"].as_array().unwrap();
    let kinds: Vec<&str> = items.iter().map(|i| i["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["comment", "form"]);
    let span = |i: &Value| {
        (
            i["start"].clone(),
            i["end"].clone(),
            i["start_line"].clone(),
        )
    };
    assert_eq!(span(&items[0]), (0.into(), 4.into(), 1.into()));
    assert_eq!(span(&items[1]), (5.into(), 19.into(), 2.into()));
    assert_eq!(items[1]["signature"], "(defvar *a* 1)");
    // All files fine: exit 0.
    let r = s.run(&["outline", "--json", "a.lisp", "b.lisp"]);
    assert_eq!(r.ok().lines().count(), 2);
    // Text form: readable, errors on stderr, exit 1.
    let r = s.run(&["outline", "a.lisp", "missing.lisp"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.starts_with("a.lisp: "), "{r:#?}");
    assert!(r.stderr.starts_with("NOT_FOUND: "), "{r:#?}");
}

#[test]
fn outline_of_thousands_of_files_in_one_call() {
    const N: usize = 3000;
    let s = Scratch::new("outline-many");
    let names: Vec<String> = (0..N).map(|i| format!("f{i:04}.lisp")).collect();
    for (i, name) in names.iter().enumerate() {
        s.write(name, format!("(defun f{i} () {i})\n"));
    }
    let mut args: Vec<&str> = vec!["outline", "--json"];
    args.extend(names.iter().map(String::as_str));
    let r = s.run(&args);
    let out = r.ok();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), N);
    for (i, line) in lines.iter().enumerate() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["path"], names[i].as_str());
        assert_eq!(v["items"][0]["name"], format!("f{i}"));
    }
    // Confined, the same paths given absolute come back relative to the root.
    let abs: Vec<String> = names.iter().take(50).map(|n| s.str(n)).collect();
    let root = s.dir.to_string_lossy().into_owned();
    let mut args: Vec<&str> = vec!["outline", "--json", "--root", &root];
    args.extend(abs.iter().map(String::as_str));
    let out = s.run(&args).ok().to_string();
    for (line, name) in out.lines().zip(&names) {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["path"], name.as_str());
    }
}

#[test]
fn a_reader_that_stops_early_is_not_an_error() {
    let s = Scratch::new("broken-pipe");
    let names: Vec<String> = (0..2000).map(|i| format!("g{i:04}.lisp")).collect();
    for name in &names {
        s.write(name, "(defun g () 1)\n");
    }
    let mut child = Command::new(BIN)
        .arg("outline")
        .arg("--json")
        .args(&names)
        .current_dir(&s.dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take()); // like `| head -c 16`
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(stderr, "");
}

// ---------------------------------------------------------------------------------------
// --help and --version

#[test]
fn help_mentions_every_flag() {
    for flag in ["--help", "-h"] {
        let out = run(&[flag]).ok().to_string();
        for needle in [
            "--raw",
            "-n, --name-pattern",
            "-c, --content-pattern",
            "--offset",
            "--limit",
            "--comments",
            "none",
            "headers",
            "preceding",
            "all",
            "--context",
            "--line-numbers",
            "--strategy",
            "complete",
            "--bytes",
            "--lines",
            "--metadata",
            "--json",
            "--root",
            "--max-file-bytes",
            "--definers",
            ".lisp-read-file.lisp",
            "outline",
            "PATH",
            "stdin",
            "Exit status",
        ] {
            // `-h` is the short help; the values of --comments are in the long one only.
            if flag == "-h" && ["none", "headers", "preceding", "all"].contains(&needle) {
                continue;
            }
            assert!(
                out.contains(needle) || (needle == "stdin" && out.contains("standard input")),
                "{flag} does not mention {needle}:\n{out}"
            );
        }
    }
    let out = run(&["outline", "--help"]).ok().to_string();
    for needle in ["--json", "--root", "--max-file-bytes", "--definers", "PATH"] {
        assert!(
            out.contains(needle),
            "outline --help lacks {needle}:\n{out}"
        );
    }
    let out = run(&["help", "outline"]).ok().to_string();
    assert!(out.contains("--json"), "{out}");
}

#[test]
fn version() {
    for flag in ["--version", "-V"] {
        assert_eq!(
            run(&[flag]).ok(),
            format!("lisp-read-file {}\n", env!("CARGO_PKG_VERSION"))
        );
    }
}

/// `find`: definitions and references over the real binary, the text and JSON forms,
/// several paths, exit codes.
#[test]
fn find_definitions_and_references() {
    let s = Scratch::new("find");
    s.write(
        "src/a.lisp",
        "(defun make-point (x y)\n  (list x y))\n(defun norm (p) (make-point p \"make-point\"))\n",
    );
    s.write(
        "src/b.lisp",
        "; (make-point)\n(defvar *p* (make-point 0 0))\n",
    );
    s.write(
        "t/c.lisp",
        "(deftest make-point-test () (make-point 1 2))\n",
    );
    s.write("notes.txt", "(make-point)\n");
    let out = s
        .run(&["find", "--symbol", "make-point", "--root", "."])
        .ok()
        .to_string();
    assert_eq!(
        out,
        "==> src/a.lisp <==\n1: (defun make-point (x y)  [definition]\n3: (defun norm (p) (make-point p \"make-point\"))\nsrc/b.lisp:2:(defvar *p* (make-point 0 0))\nt/c.lisp:1:(deftest make-point-test () (make-point 1 2))\n"
    );
    let out = s
        .run(&[
            "find",
            "--name-pattern",
            "^make-",
            "--json",
            "src",
            "t/c.lisp",
        ])
        .ok()
        .to_string();
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["path"], "src t/c.lisp");
    assert_eq!(v["mode"], "definitions");
    assert_eq!(v["total"], 2);
    assert_eq!(v["definitions"][1]["file"], "t/c.lisp");
    assert_eq!(v["definitions"][1]["kind"], "deftest");
    assert_eq!(v["files_searched"], 3);
    // One file named twice (two spellings, and inside a directory also given) is
    // searched once.
    let out = s
        .run(&[
            "find",
            "--name-pattern",
            "^make-",
            "--json",
            "src/a.lisp",
            "./src/a.lisp",
            "src",
        ])
        .ok()
        .to_string();
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["total"].as_u64(), v["files_searched"].as_u64()),
        (Some(1), Some(2))
    );
    let out = s
        .run(&["find", "--name", "make-point", "--body", "src/a.lisp"])
        .ok()
        .to_string();
    assert!(
        out.starts_with("==> src/a.lisp <==\n1: (defun make-point (x y)\n  (list x y))\n"),
        "{out}"
    );
    // Usage errors: no mode, two modes.
    assert_eq!(s.run(&["find", "src"]).code, 2);
    assert_eq!(s.run(&["find", "--name", "a", "--symbol", "a"]).code, 2);
    // Tool errors: exit 1, the error object with --json.
    s.run(&["find", "--symbol", "x", "missing"])
        .tool_error("NOT_FOUND");
    let run = s.run(&["find", "--symbol", "pkg:", "--json"]);
    assert_eq!(run.code, 1);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["error"]["code"], "INVALID_ARGUMENT");
}
