//! Smaller answers an agent acts on (docs/decisions.md): `--comments headers` shows one line of a
//! file's preamble (title, copyright, licence); the `strategy` schema speaks of nothing a
//! model does not see. Through the library and the real binary.

use lisp_read_file::grammar::Grammar;
use lisp_read_file::guard::{Guard, DEFAULT_MAX_FILE_BYTES};
use lisp_read_file::tool::{self, ReadRequest};
use lisp_read_file::view::Comments;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");

fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lrf-smaller-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    for (file, text) in files {
        fs::write(dir.join(file), text).unwrap();
    }
    fs::canonicalize(dir).unwrap()
}

const PREAMBLE: &str = ";;; -*- Mode: LISP; Package: DRAKMA -*-
;;; $Header: util.lisp $

;;; Copyright (c) 2006-2012, Dr. Edmund Weitz.  All rights reserved.

;;; Redistribution and use in source and binary forms, with or without
;;; modification, are permitted.

;;; THIS SOFTWARE IS PROVIDED BY THE AUTHOR 'AS IS'.

(in-package :drakma)

;;; Section one

(defun f () 1)

;;; Section two
(defun g () 2)
";

#[test]
fn headers_show_one_line_of_the_preamble_and_every_section() {
    let dir = scratch("headers", &[("util.lisp", PREAMBLE)]);
    let guard = Guard::confined(std::slice::from_ref(&dir), DEFAULT_MAX_FILE_BYTES).unwrap();
    let mut request = ReadRequest::new("util.lisp");
    request.comments = Comments::Headers;
    let view = tool::read(&guard, &Grammar::builtin(), &request).unwrap();
    assert_eq!(
        view.content,
        " 1: ;;; -*- Mode: LISP; Package: DRAKMA -*-\n\
         11: (in-package :drakma)\n\
         13: ;;; Section one\n\
         15: (defun f () 1)\n\
         17: ;;; Section two\n\
         18: (defun g () 2)\n"
    );
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_strategy_description_names_the_views_it_means() {
    let mut child = Command::new(BIN)
        .args(["mcp", "--root", "."])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#).unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list"}}"#).unwrap();
    line.clear();
    stdout.read_line(&mut line).unwrap();
    let list: serde_json::Value = serde_json::from_str(&line).unwrap();
    let tool = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "lisp-read-file")
        .unwrap()
        .clone();
    let strategy = tool["inputSchema"]["properties"]["strategy"]["description"]
        .as_str()
        .unwrap();
    assert!(!strategy.contains("above"), "{strategy}");
    assert!(strategy.contains("collapsed outline"), "{strategy}");
    drop(stdin);
    let _ = child.wait();
}

#[test]
fn outline_json_signatures_are_what_the_view_shows() {
    let text = "(declaim (fixnum *start-pos*))\n#+sbcl (defun one (x) \"Doc.\" x)\n(defun long (x)\n  x)\n";
    let dir = scratch("json", &[("a.lisp", text)]);
    let out = Command::new(BIN)
        .args(["outline", "--json"])
        .arg(dir.join("a.lisp"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let signatures: Vec<&str> = json["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["signature"].as_str().unwrap())
        .collect();
    assert_eq!(
        signatures,
        [
            "(declaim (fixnum *start-pos*))",
            "(defun one (x) \"Doc.\" x)",
            "(defun long (x) ...)"
        ]
    );
    let view = Command::new(BIN).arg(dir.join("a.lisp")).output().unwrap();
    assert_eq!(
        String::from_utf8(view.stdout).unwrap(),
        "1: (declaim (fixnum *start-pos*))\n2: #+sbcl (defun one (x) \"Doc.\" x)\n3: (defun long (x) ...)\n"
    );
    fs::remove_dir_all(dir).unwrap();
}
