//! `find` with packages (docs/find.md#packages): a project of two packages that define the
//! same name, a third that uses one and reaches the other by a local nickname, and a file
//! without `in-package`; through the real binary's command line and its MCP server.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");

const FILES: &[(&str, &str)] = &[
    (
        "packages.lisp",
        "(defpackage #:alpha (:use #:cl) (:export #:scan))
(defpackage \"BETA\" (:use :cl) (:nicknames :bet) (:export \"SCAN\"))
(cl:defpackage :gamma
  (:use :cl :alpha)
  (:local-nicknames (#:b #:beta)))
",
    ),
    ("alpha.lisp", "(in-package :alpha)\n(defun scan (x) x)\n"),
    (
        "beta.lisp",
        "(in-package #:beta)\n(defun scan (y) (list y))\n(defun helper () (scan 1))\n",
    ),
    (
        "gamma.lisp",
        "(in-package :gamma)
(defun run () (scan 1))
(defun run-b () (b:scan 2) (bet:scan 3))
(defun both () (scan 1) (b:scan 2))
(defun other () (ppcre:scan 4))
",
    ),
    (
        "user.lisp",
        "(defun main () (alpha:scan 1) (beta::scan 2) (scan 3))\n",
    ),
];

fn project() -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("lrf-find-packages-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in FILES {
        std::fs::write(dir.join(name), text).unwrap();
    }
    dir
}

fn cli(dir: &Path, args: &[&str]) -> (Value, String) {
    let run = |json: bool| {
        let mut command = Command::new(BIN);
        command
            .arg("find")
            .args(args)
            .arg("--root")
            .arg(dir)
            .arg(dir);
        if json {
            command.arg("--json");
        }
        let out = command.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    (serde_json::from_str(&run(true)).unwrap(), run(false))
}

/// `file:line package` of each entry, `?` after an unresolved package.
fn entries(result: &Value) -> Vec<String> {
    let list = result["definitions"]
        .as_array()
        .or(result["references"].as_array())
        .or(result["callers"].as_array())
        .unwrap();
    list.iter()
        .map(|e| {
            let package = e["package"].as_str().unwrap_or("-");
            let unresolved = if e["package_unresolved"] == json!(true) {
                "?"
            } else {
                ""
            };
            let uses: Vec<String> = e["uses"]
                .as_array()
                .or(e["calls"].as_array())
                .map(|u| u.iter().map(|u| u["column"].to_string()).collect())
                .unwrap_or_default();
            let uses = if uses.is_empty() {
                String::new()
            } else {
                format!(" @{}", uses.join(","))
            };
            format!(
                "{}:{} {package}{unresolved}{uses}",
                e["file"].as_str().unwrap(),
                e["line"]
            )
        })
        .collect()
}

#[test]
fn a_qualified_name_finds_that_packages_definition_only() {
    let dir = project();
    let (alpha, text) = cli(&dir, &["--name", "alpha:scan"]);
    assert_eq!(entries(&alpha), ["alpha.lisp:2 alpha"]);
    assert!(text.starts_with("alpha.lisp:2:(defun scan (x)\n"), "{text}");
    // Through a nickname, and a name written as a string in `defpackage`.
    for name in ["beta:scan", "BET::scan", "|BETA|:scan"] {
        assert_eq!(
            entries(&cli(&dir, &["--name", name]).0),
            ["beta.lisp:2 beta"],
            "{name}"
        );
    }
    let (all, text) = cli(&dir, &["--name", "scan"]);
    assert_eq!(entries(&all), ["alpha.lisp:2 alpha", "beta.lisp:2 beta"]);
    assert!(
        text.contains("==> alpha.lisp <== package alpha\n")
            && text.contains("==> beta.lisp <== package beta\n"),
        "{text}"
    );
    assert_eq!(
        entries(&cli(&dir, &["--name", "gamma:scan"]).0),
        ["alpha.lisp:2 alpha"],
        "gamma uses alpha"
    );
    assert!(entries(&cli(&dir, &["--name", "cl-user:scan"]).0).is_empty());
}

#[test]
fn a_qualified_symbol_finds_the_uses_the_reader_would_read_as_it() {
    let dir = project();
    let (alpha, _) = cli(&dir, &["--symbol", "alpha:scan"]);
    assert_eq!(
        entries(&alpha),
        [
            "alpha.lisp:2 alpha @7",
            "gamma.lisp:2 alpha @15",
            "gamma.lisp:4 alpha @16",
            "user.lisp:1 alpha @16",
            "packages.lisp:1 - @41",
        ]
    );
    let (beta, text) = cli(&dir, &["--symbol", "beta:scan"]);
    assert_eq!(
        entries(&beta),
        [
            "beta.lisp:2 beta @7",
            "beta.lisp:3 beta @18",
            "gamma.lisp:3 beta @17,28",
            "gamma.lisp:4 beta @25",
            "user.lisp:1 beta @31",
            "packages.lisp:1 - @41",
        ]
    );
    assert!(
        text.contains(
            "==> beta.lisp <== package beta\n2: (defun scan (y) (list y))  [definition]\n"
        ),
        "{text}"
    );
    assert!(text.contains("==> packages.lisp <==\n"), "{text}");
    let (ppcre, text) = cli(&dir, &["--symbol", "ppcre:scan"]);
    assert_eq!(
        entries(&ppcre),
        ["gamma.lisp:5 ppcre? @17", "packages.lisp:1 - @41"]
    );
    assert!(
        text.starts_with("==> gamma.lisp <== package ppcre\n"),
        "{text}"
    );
}

#[test]
fn an_unqualified_symbol_groups_its_uses_by_package() {
    let dir = project();
    let (all, _) = cli(&dir, &["--symbol", "scan"]);
    assert_eq!(
        entries(&all),
        [
            "alpha.lisp:2 alpha @7",
            "gamma.lisp:2 alpha @15",
            "gamma.lisp:4 alpha @16",
            "user.lisp:1 alpha @16",
            "beta.lisp:2 beta @7",
            "beta.lisp:3 beta @18",
            "gamma.lisp:3 beta @17,28",
            "gamma.lisp:4 beta @25",
            "user.lisp:1 beta @31",
            "gamma.lisp:5 ppcre? @17",
            "user.lisp:1 common-lisp-user @46",
            "packages.lisp:1 - @41",
        ]
    );
    assert_eq!(all["total"], 12);
}

/// One `tools/call` of `lisp-find` on the real MCP server over stdio; the tool's output
/// schema declares `package` (tests/python checks structured content against it).
#[test]
fn callers_are_those_of_the_symbol_the_reader_would_read() {
    let dir = project();
    // Each call of `beta:scan`, however written: in its own package, through a nickname,
    // a local nickname and `beta::`; not the calls of `alpha:scan` in the same forms.
    let (beta, text) = cli(&dir, &["--callers", "beta:scan"]);
    assert_eq!(
        entries(&beta),
        [
            "beta.lisp:3 beta @18",
            "gamma.lisp:3 beta @17,28",
            "gamma.lisp:4 beta @25",
            "user.lisp:1 beta @31"
        ]
    );
    // One package: no header names it; a caller whose calls are on its first line is it.
    assert!(
        text.starts_with("beta.lisp:3:(defun helper () (scan 1))\n"),
        "{text}"
    );
    assert_eq!(
        entries(&cli(&dir, &["--callers", "alpha:scan"]).0),
        [
            "gamma.lisp:2 alpha @15",
            "gamma.lisp:4 alpha @16",
            "user.lisp:1 alpha @16"
        ]
    );
    // Unqualified: every package's, grouped by package; one definition calling two
    // symbols named `scan` is an entry under each.
    let (all, text) = cli(&dir, &["--callers", "scan"]);
    let all = entries(&all);
    assert_eq!(all.len(), 9, "{all:?}");
    assert!(
        all.contains(&"gamma.lisp:5 ppcre? @17".to_string()),
        "{all:?}"
    );
    assert!(
        all.contains(&"user.lisp:1 common-lisp-user @46".to_string()),
        "{all:?}"
    );
    // Each package's entries together: its name on their file headers, none after the
    // next package's.
    let packages: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_once("<== package ").map(|(_, p)| p))
        .collect();
    let mut groups = packages.clone();
    groups.dedup();
    let mut sorted = groups.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(groups.len(), sorted.len(), "{text}");
    for p in ["alpha", "beta", "ppcre"] {
        assert!(groups.contains(&p), "{p}: {text}");
    }
    // A package the scope does not define has no callers here.
    assert_eq!(
        entries(&cli(&dir, &["--callers", "zzz:scan"]).0),
        Vec::<String>::new()
    );
}

fn mcp_find(dir: &Path, arguments: Value) -> Value {
    let mut server = Command::new(BIN)
        .arg("mcp")
        .arg("--root")
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let mut send = |message: Value| writeln!(stdin, "{message}").unwrap();
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "find-packages-test", "version": "0"}}}),
    );
    let _ = lines.next().unwrap().unwrap();
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let tools: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "lisp-find", "arguments": arguments}}));
    let answer: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    drop(stdin);
    let _ = server.wait();
    let tool = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "lisp-find")
        .unwrap()
        .clone();
    let result = &answer["result"];
    assert_eq!(result["isError"], json!(false), "{answer}");
    let structured = result["structuredContent"].clone();
    for entries in ["definitions", "references"] {
        let properties = &tool["outputSchema"]["properties"][entries]["items"]["properties"];
        assert!(properties["package"].is_object(), "{entries}: {properties}");
    }
    structured
}

#[test]
fn lisp_find_answers_with_packages_over_mcp() {
    let dir = project();
    let beta = mcp_find(&dir, json!({"symbol": "bet:scan"}));
    assert_eq!(
        entries(&beta),
        entries(&cli(&dir, &["--symbol", "beta:scan"]).0)
    );
    let defs = mcp_find(&dir, json!({"name": "scan"}));
    assert_eq!(entries(&defs), ["alpha.lisp:2 alpha", "beta.lisp:2 beta"]);
    let ppcre = mcp_find(&dir, json!({"symbol": "ppcre:scan"}));
    assert_eq!(ppcre["references"][0]["package_unresolved"], json!(true));
}
