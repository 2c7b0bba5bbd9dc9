//! `lisp-find` keeps the files it read between calls (docs/mcp.md#lisp-find-between-calls):
//! on the real server over stdio, a file edited on disk (even to the same size and
//! modification time), deleted or created between two calls is seen by the second call.
//! Every answer is the one a server started afresh gives of the tree as it is then, and
//! its fields are the command line's `find --json` (whose text view spells its hints for
//! a shell).

use crate::client::{process_ticks, RawServer, BIN};
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lrf-mcp-kept-{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("sub")).unwrap();
    dir
}

/// Waits until the files just written are older than the coarsest timestamp step a stamp
/// allows for: only then does the server keep what it read of them
/// (`guard::Stamp::settled`), and the calls after it answer from what was kept.
fn settle() {
    let window = std::time::Duration::from_nanos(
        u64::try_from(lisp_read_file::guard::RACY_WINDOW_NS).unwrap(),
    );
    std::thread::sleep(window + std::time::Duration::from_millis(200));
}

/// `find --json` of the same request on the command line, rooted at `dir`.
fn command_line(dir: &Path, request: &Value) -> Value {
    let mut args: Vec<String> = vec!["find".into(), "--json".into()];
    for (key, value) in request.as_object().unwrap() {
        args.push(format!("--{key}"));
        args.push(value.as_str().unwrap().to_string());
    }
    args.extend(["--root".into(), dir.display().to_string(), ".".into()]);
    let out = Command::new(BIN)
        .args(&args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The MCP result as `find --json` prints it (the text view is said once, in `content`).
fn as_command_line(result: &Value) -> Value {
    assert_eq!(result["isError"], false, "{result}");
    let mut answer = result["structuredContent"].clone();
    answer["content"] = result["content"][0]["text"].clone();
    answer
}

/// Each request's answer from `server` equals a fresh server's, and the command line's
/// but for the text view.
fn same_as_fresh(server: &mut RawServer, dir: &Path, requests: &[Value]) -> Vec<Value> {
    let args = ["--root", dir.to_str().unwrap()];
    let mut fresh = RawServer::start_in(&args, dir, None);
    requests
        .iter()
        .map(|request| {
            let answer = as_command_line(&server.tool("lisp-find", request.clone()));
            let want = as_command_line(&fresh.tool("lisp-find", request.clone()));
            assert_eq!(answer, want, "{request}");
            let mut cli = command_line(dir, request);
            cli["content"] = answer["content"].clone();
            assert_eq!(answer, cli, "{request}");
            answer
        })
        .collect()
}

fn files_of(answer: &Value, key: &str) -> Vec<String> {
    let mut files: Vec<String> = answer[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["file"].as_str().unwrap().to_string())
        .collect();
    files.dedup();
    files
}

#[test]
fn lisp_find_sees_what_changed_on_disk_between_calls() {
    let dir = scratch("changes");
    fs::write(dir.join("a.lisp"), "(defun alpha () (beta))\n").unwrap();
    fs::write(dir.join("b.lisp"), "(defun beta () 1)\n").unwrap();
    fs::write(dir.join("sub/c.lisp"), "(defun gamma () (beta) (alpha))\n").unwrap();
    settle();
    let mut server = RawServer::start_in(&["--root", dir.to_str().unwrap()], &dir, None);
    let requests = [
        json!({"symbol": "beta"}),
        json!({"callers": "beta"}),
        json!({"name": "beta"}),
        json!({"symbol": "alpha"}),
    ];
    let first = same_as_fresh(&mut server, &dir, &requests);
    assert_eq!(
        files_of(&first[0], "references"),
        ["a.lisp", "b.lisp", "sub/c.lisp"]
    );
    // The same answers again, from what the server kept.
    assert_eq!(same_as_fresh(&mut server, &dir, &requests), first);

    // a.lisp rewritten to the same size and given back its modification time: only its
    // status-change time tells it changed.
    let a = dir.join("a.lisp");
    let modified = fs::metadata(&a).unwrap().modified().unwrap();
    fs::write(&a, "(defun alpha () (betb))\n").unwrap();
    fs::File::options()
        .write(true)
        .open(&a)
        .unwrap()
        .set_modified(modified)
        .unwrap();
    assert_eq!(fs::metadata(&a).unwrap().modified().unwrap(), modified);
    fs::remove_file(dir.join("sub/c.lisp")).unwrap();
    fs::write(dir.join("sub/d.lisp"), "(defun delta () (beta))\n").unwrap();
    let after = same_as_fresh(&mut server, &dir, &requests);
    assert_eq!(files_of(&after[0], "references"), ["b.lisp", "sub/d.lisp"]);
    assert_eq!(files_of(&after[1], "callers"), ["sub/d.lisp"]);
    assert_eq!(after[0]["files_searched"], 3);
    // alpha's only use was in the deleted file.
    assert_eq!(files_of(&after[3], "references"), ["a.lisp"]);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn lisp_find_answers_a_file_replaced_by_a_symlink_as_the_guard_reads_it() {
    let dir = scratch("symlink");
    let outside = scratch("symlink-outside");
    fs::write(dir.join("a.lisp"), "(defun alpha () (beta))\n").unwrap();
    fs::write(outside.join("secret.lisp"), "(defun secret () (beta))\n").unwrap();
    settle();
    let mut server = RawServer::start_in(&["--root", dir.to_str().unwrap()], &dir, None);
    let request = [json!({"symbol": "beta"})];
    let first = same_as_fresh(&mut server, &dir, &request);
    assert_eq!(files_of(&first[0], "references"), ["a.lisp"]);
    // A symlink out of the root in the kept file's place is refused, not served from
    // what was kept, nor read.
    fs::remove_file(dir.join("a.lisp")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.lisp"), dir.join("a.lisp")).unwrap();
    let after = same_as_fresh(&mut server, &dir, &request);
    assert_eq!(after[0]["references"], json!([]));
    assert_eq!(after[0]["files_skipped"][0]["code"], "ACCESS_DENIED");
    let _ = fs::remove_dir_all(&dir);
    let _ = fs::remove_dir_all(&outside);
}

#[test]
fn lisp_find_learns_a_macro_edited_between_calls_anew() {
    // What each file taught (its macros) is kept between calls while the file's stamp is
    // the same: a macro rewritten to the same size, its modification time given back,
    // makes other names at the next call.
    let dir = scratch("macro");
    let macros = dir.join("macros.lisp");
    let make = "(defmacro define-kind (name)\n  `(defun ,(intern (format nil \"MAKE-~A\" (symbol-name name))) () 1))\n";
    fs::write(&macros, make).unwrap();
    fs::write(dir.join("sub/kinds.lisp"), "(define-kind circle)\n").unwrap();
    settle();
    let mut server = RawServer::start_in(&["--root", dir.to_str().unwrap()], &dir, None);
    let requests = [
        json!({"name": "make-circle"}),
        json!({"name": "made-circle"}),
    ];
    let files = |answers: &[Value]| -> Vec<Vec<String>> {
        answers.iter().map(|a| files_of(a, "definitions")).collect()
    };
    let first = same_as_fresh(&mut server, &dir, &requests);
    assert_eq!(files(&first), [vec!["sub/kinds.lisp".to_string()], vec![]]);
    assert_eq!(same_as_fresh(&mut server, &dir, &requests), first);
    let modified = fs::metadata(&macros).unwrap().modified().unwrap();
    fs::write(&macros, make.replace("MAKE-", "MADE-")).unwrap();
    fs::File::options()
        .write(true)
        .open(&macros)
        .unwrap()
        .set_modified(modified)
        .unwrap();
    let after = same_as_fresh(&mut server, &dir, &requests);
    assert_eq!(files(&after), [vec![], vec!["sub/kinds.lisp".to_string()]]);
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn lisp_find_with_kept_macros_answers_as_the_command_line() {
    // A macro that calls another learned macro makes names from what it calls: the search
    // marks it so for its own scope, also when the macro was kept from before (a kept
    // macro left unmarked made `define-variation t` a definition of `t`).
    let dir = scratch("calling");
    fs::write(
        dir.join("sub/a.lisp"),
        "(defmacro inner-search (x) `(list ,x))\n(defmacro define-variation (type)\n  `(progn\n     (defun ,(symbolicate \"LFL-FIND/\" type) () (inner-search ,type))))\n(define-variation t)\n(define-variation real)\n",
    )
    .unwrap();
    settle();
    let mut server = RawServer::start_in(&["--root", dir.to_str().unwrap()], &dir, None);
    let requests = [json!({"name": "t"}), json!({"name": "lfl-find/t"})];
    for _ in 0..2 {
        let answers = same_as_fresh(&mut server, &dir, &requests);
        assert_eq!(answers[0]["total"], 0);
        assert_eq!(files_of(&answers[1], "definitions"), ["sub/a.lisp"]);
    }
    let _ = fs::remove_dir_all(&dir);
}

/// The CPU time (ticks) of a search of callers by a server that keeps the files: `n` files
/// each defining a writer of `foo`, `n` naming none; the least of three calls after the
/// first (which reads and keeps the files).
fn kept_callers_cost(n: usize) -> u64 {
    let dir = scratch(&format!("writers-{n}"));
    for i in 0..n {
        let writer = format!("(defmacro w{i:06} () `(foo))\n");
        fs::write(dir.join(format!("w{i:06}.lisp")), writer).unwrap();
        fs::write(
            dir.join(format!("p{i:06}.lisp")),
            format!("(defun bar{i:06} () 1)\n"),
        )
        .unwrap();
    }
    settle();
    let mut server = RawServer::start_in(&["--root", dir.to_str().unwrap()], &dir, None);
    let arguments = json!({"callers": "foo", "path": "."});
    let first = server.tool("lisp-find", arguments.clone());
    assert_eq!(first["isError"], false, "{first}");
    let pid = server.child.id();
    let spent = (0..3)
        .map(|_| {
            let before = process_ticks(pid);
            let answer = server.tool("lisp-find", arguments.clone());
            assert_eq!(answer["isError"], false, "{answer}");
            process_ticks(pid) - before
        })
        .min()
        .unwrap()
        .max(1);
    let _ = fs::remove_dir_all(&dir);
    spent
}

/// Each kept file's words were compared with the name of every writer of the symbol
/// (thousands of files of writers): quadratic in the files (an audit measured ×2.7 and
/// ×3.0 per doubling of them); now the smaller side is looked up in the other.
#[test]
fn kept_files_of_many_writers_cost_linear_time() {
    let _heavy = crate::client::heavy();
    let (small, large) = (kept_callers_cost(1_000), kept_callers_cost(4_000));
    let ratio = large as f64 / small as f64;
    eprintln!("kept files of n writers: {small} -> {large} ticks, ratio {ratio:.1}");
    assert!(
        ratio <= 10.0,
        "kept files of 4× the writers cost {ratio:.1}×"
    );
}
