//! `find`'s answers at the least token cost (docs/find.md): `--text` lists the forms
//! that mention a literal text with only the lines holding it; a use is listed under the
//! child forms of a container (`progn`, `eval-when`) that hold all its uses; an entry of uses
//! is headed by the form's name, not its lambda list; a whole answer carries no count
//! line. Through the real binary.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lrf-find-answers-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// stdout and the exit status of the binary run in `dir`.
fn run(dir: &Path, args: &[&str]) -> (String, Option<i32>) {
    let out = Command::new(BIN)
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    (String::from_utf8(out.stdout).unwrap(), out.status.code())
}

const API: &str = "\
(in-package :demo)

;;; Content-Length in a top-level comment is no form.
(defun send (stream body &key (length (length body)) (headers nil))
  \"Writes BODY; the Content-Length header says how long it is.\"
  (format stream \"Content-Length: ~D~%\" length)
  (write-string body stream))

#-abcl
(progn
  (defun helper-a (x) (list x))
  (defun helper-b (y)
    (send y \"(handler-case\")))

(defoptimizer (send derive-type) ((stream body))
  (send stream body))
";

#[test]
fn text_lists_the_forms_and_lines_that_hold_it() {
    let dir = scratch("text");
    fs::write(dir.join("api.lisp"), API).unwrap();
    fs::write(dir.join("other.lisp"), "(defun unrelated () 1)\n").unwrap();
    let (out, status) = run(&dir, &["find", "--text", "Content-Length"]);
    assert_eq!(
        out,
        "==> api.lisp <==\n4: (defun send ...)\n 5: \"Writes BODY; the Content-Length header says how long it is.\"\n 6: (format stream \"Content-Length: ~D~%\" length)\n"
    );
    assert_eq!(status, Some(0));
    // Literal, with parentheses: the most natural search in Lisp; under a container,
    // the definition inside it.
    let (out, _) = run(&dir, &["find", "--text", "(handler-case"]);
    assert_eq!(
        out,
        "==> api.lisp <==\n12: (defun helper-b ...)\n 13: (send y \"(handler-case\")))\n"
    );
    // A first line holding the text and saying the form's heading is the heading,
    // shown once.
    let (out, _) = run(&dir, &["find", "--text", "body"]);
    assert_eq!(
        out,
        "==> api.lisp <==\n4: (defun send (stream body &key (length (length body)) (headers nil))\n 7: (write-string body stream))\n15: (defoptimizer (send derive-type) ((stream body))\n 16: (send stream body))\n"
    );
    // Case-sensitive.
    let (out, status) = run(&dir, &["find", "--text", "content-length"]);
    assert_eq!(
        out,
        "[0 forms containing \"content-length\" (0 occurrences) in 0 files; 2 files searched]\n"
    );
    assert_eq!(status, Some(0));
}

#[test]
fn uses_are_headed_by_the_name_and_listed_under_the_child_forms_of_a_container() {
    let dir = scratch("symbol");
    fs::write(dir.join("api.lisp"), API).unwrap();
    let (out, _) = run(&dir, &["find", "--symbol", "send"]);
    assert_eq!(
        out,
        "==> api.lisp <==\n4: (defun send (stream body &key (length (length body)) (headers nil))  [definition]\n12: (defun helper-b ...)\n 13: (send y \"(handler-case\")))\n15: (defoptimizer (send derive-type) ...)  [definition]\n 16: (send stream body))\n"
    );
    // A use in the container itself, outside its child forms: the container is the one
    // entry (entries never overlap); a child form holding a use is one.
    fs::write(
        dir.join("api.lisp"),
        "(progn send\n  (defun a () (send 2)))\n",
    )
    .unwrap();
    let (out, _) = run(&dir, &["find", "--symbol", "send"]);
    assert_eq!(
        out,
        "==> api.lisp <==\n1: (progn send\n 2: (defun a () (send 2)))\n"
    );
    fs::write(
        dir.join("api.lisp"),
        "(progn (send 1)\n  (defun a () (send 2)))\n",
    )
    .unwrap();
    let (out, _) = run(&dir, &["find", "--symbol", "send"]);
    assert_eq!(
        out,
        "==> api.lisp <==\n1: (progn (send 1)\n2: (defun a () (send 2)))\n"
    );
}

#[test]
fn text_in_json_and_one_mode_at_a_time() {
    let dir = scratch("json");
    fs::write(dir.join("api.lisp"), API).unwrap();
    let (out, _) = run(&dir, &["find", "--text", "helper-a", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["mode"], "references");
    let refs = v["references"].as_array().unwrap();
    assert_eq!(refs.len(), 1);
    assert_eq!(refs[0]["name"], "helper-a");
    assert_eq!(refs[0]["line"], 11);
    assert_eq!(refs[0]["definition"], false);
    assert_eq!(refs[0]["uses"][0]["column"], 9);
    // One mode at a time.
    let (_, status) = run(&dir, &["find", "--text", "a", "--symbol", "send"]);
    assert_eq!(status, Some(2));
}

/// SBCL's srctran.lisp writes its `floor` and `ceiling` optimizers with a `macrolet`
/// whose template holds the uses: they belong to `(defoptimizer (,name derive-type) ...)`,
/// the definition the template writes, not to the `macrolet`; a use in its body stays
/// with the `macrolet`.
#[test]
fn a_use_in_a_macrolet_template_is_under_the_definition_it_writes() {
    let dir = scratch("macrolet");
    fs::write(
        dir.join("srctran.lisp"),
        "(macrolet ((def (name q-aux)\n             `(progn\n                (defun ,q-aux (x) x)\n                (defoptimizer (,name derive-type) ((number divisor))\n                  (make-values-type :required (list number divisor))))))\n  (def floor floor-quotient-bound)\n  (make-values-type))\n",
    )
    .unwrap();
    let (out, _) = run(&dir, &["find", "--symbol", "make-values-type"]);
    assert_eq!(
        out,
        "==> srctran.lisp <==\n1: (macrolet (...) ...)\n 7: (make-values-type))\n4: (defoptimizer (,name derive-type) ...)\n 5: (make-values-type :required (list number divisor))))))\n"
    );
    let (out, _) = run(&dir, &["find", "--symbol", "make-values-type", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let refs = v["references"].as_array().unwrap();
    assert_eq!(refs.len(), 2, "{out}");
    assert_eq!(refs[0]["kind"], "macrolet");
    assert_eq!(refs[1]["kind"], "defoptimizer");
    assert_eq!(refs[1]["name"], "(,name derive-type)");
    assert_eq!(
        (refs[1]["line"].as_u64(), refs[1]["end_line"].as_u64()),
        (Some(4), Some(5))
    );
}

/// `--detail names`: the list of the definitions that use (or call, or are named) a
/// symbol, each as `LINE: KIND NAME` under its file, without signatures, use or call
/// lines; the JSON is the default's; callees refuse it.
#[test]
fn the_names_level_lists_each_entry_by_its_kind_and_name() {
    let dir = scratch("names");
    fs::write(dir.join("api.lisp"), API).unwrap();
    let (out, status) = run(&dir, &["find", "--symbol", "send", "--detail", "names"]);
    assert_eq!(
        out,
        "==> api.lisp <==\n4: defun send  [definition]\n12: defun helper-b\n15: defoptimizer (send derive-type)  [definition]\n"
    );
    assert_eq!(status, Some(0));
    let (out, _) = run(&dir, &["find", "--callers", "send", "--detail", "names"]);
    assert_eq!(
        out,
        "==> api.lisp <==\n12: defun helper-b\n15: defoptimizer (send derive-type)\n"
    );
    // A definition inside a container: the container's `#-abcl` is on the container's
    // line, as at the default level.
    let (out, _) = run(
        &dir,
        &["find", "--name-pattern", "helper", "--detail", "names"],
    );
    assert_eq!(
        out,
        "==> api.lisp <==\n11: defun helper-a\n12: defun helper-b\n"
    );
    // A form that names nothing keeps its heading (here the `let`'s child form that
    // holds all its uses, as at the default level).
    fs::write(dir.join("api.lisp"), "(let ((x 1))\n  (send x))\n").unwrap();
    let (out, _) = run(&dir, &["find", "--symbol", "send", "--detail", "names"]);
    assert_eq!(out, "api.lisp:2:(send x)\n");
    // The structured answer is the same at both levels.
    fs::write(dir.join("api.lisp"), API).unwrap();
    let json = |extra: &[&str]| {
        let mut args = vec!["find", "--symbol", "send", "--json"];
        args.extend_from_slice(extra);
        let v: serde_json::Value = serde_json::from_str(&run(&dir, &args).0).unwrap();
        v["references"].clone()
    };
    assert_eq!(json(&["--detail", "names"]), json(&[]));
    let (out, status) = run(&dir, &["find", "--callees", "send", "--detail", "names"]);
    assert_eq!((out.as_str(), status), ("", Some(1)));
}

#[test]
fn of_several_paths_one_that_cannot_be_read_is_skipped_and_the_others_answer() {
    let dir = scratch("several");
    fs::write(dir.join("a.lisp"), "(defun foo () 1)\n").unwrap();
    // Over 32 times a 16-byte cap; a missing file; a file outside the root.
    fs::write(
        dir.join("big.lisp"),
        format!("(defun foo () 2)\n{}", " ".repeat(600)),
    )
    .unwrap();
    let outside = std::env::temp_dir().join(format!("lrf-outside-{}.lisp", std::process::id()));
    fs::write(&outside, "(defun foo () 3)\n").unwrap();
    let outside = outside.to_str().unwrap();
    let args = |extra: &[&str]| {
        let mut args = vec![
            "find",
            "--name",
            "foo",
            "--max-file-bytes",
            "16",
            "--root",
            ".",
        ];
        args.extend_from_slice(extra);
        args.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let run_args = |a: Vec<String>| run(&dir, &a.iter().map(String::as_str).collect::<Vec<_>>());
    let (text, code) = run_args(args(&["a.lisp", "big.lisp", "missing.lisp", outside]));
    assert_eq!(code, Some(1), "{text}");
    assert!(text.starts_with("a.lisp:1:(defun foo ()\n"), "{text}");
    assert!(
        text.contains(
            "[3 files not searched: big.lisp (SIZE_LIMIT_EXCEEDED), missing.lisp (NOT_FOUND), "
        ),
        "{text}"
    );
    let (json, code) = run_args(args(&["--json", "missing.lisp", "a.lisp", "missing.lisp"]));
    assert_eq!(code, Some(1));
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["total"], 1);
    // Given twice, listed once.
    assert_eq!(json["files_skipped"].as_array().unwrap().len(), 1);
    assert_eq!(json["files_skipped"][0]["file"], "missing.lisp");
    assert_eq!(json["files_skipped"][0]["code"], "NOT_FOUND");
    // Alone, a path that cannot be read is the answer's refusal, as before.
    let (text, code) = run_args(args(&["missing.lisp"]));
    assert_eq!((text.as_str(), code), ("", Some(1)));
}

#[test]
fn code_no_features_could_read_is_not_searched_even_without_features() {
    // `#-(and)` and `#+(or)` comment a form out in every implementation; `#+sbcl`
    // depends on the features, so without them it is searched.
    let dir = scratch("dead-code");
    fs::write(
        dir.join("a.lisp"),
        "(defun foo () 1)\n#-(and)\n(defun bar () (foo))\n(defun baz () #+(or) (foo) 2)\n(defun qux () #+sbcl (foo))\n#+(and x (or)) (defun foo () 3)\n",
    )
    .unwrap();
    let (callers, _) = run(&dir, &["find", "--callers", "foo", "."]);
    assert_eq!(callers, "a.lisp:5:(defun qux () #+sbcl (foo))\n");
    let (names, _) = run(&dir, &["find", "--name", "foo", "."]);
    assert_eq!(names, "a.lisp:1:(defun foo ()\n");
    let (uses, _) = run(&dir, &["find", "--symbol", "foo", "--detail", "names", "."]);
    assert!(!uses.contains("bar") && !uses.contains("baz"), "{uses}");
}

#[test]
fn stacked_conditionals_skip_a_form_each_as_the_reader_does() {
    // A failed `#+`/`#-` met while the reader skips a datum reads as nothing, so the skip
    // goes on: `#+(or) #+(or) A B` skips A and B (SBCL), at top level, in a `progn` and
    // inside a form; with features, `#+sbcl #+sbcl A B` read without sbcl skips both.
    let dir = scratch("stacked-conditionals");
    fs::write(
        dir.join("a.lisp"),
        "#+(or) #+(or) (defun a () (foo)) (defun b () (foo))\n\
         (defun c () (foo))\n\
         (progn #-(and) #-(and) (defun d () (foo)) (defun e () (foo)) (defun g () (foo)))\n\
         (defun h () (list #+(or) #+(or) (foo) (foo)))\n\
         #+sbcl #+sbcl (defun i () (foo)) (defun j () (foo))\n\
         (progn #+(or) #+(or) (defun k () 1) nil (defun l () 2))\n\
         (eval-when () #+lispworks #+lispworks (defun m () 1) \"doc\" (defun n () 2))\n",
    )
    .unwrap();
    let names = |extra: &[&str]| {
        let mut args = vec!["find", "--name-pattern", "^[a-z]$", "--detail", "names"];
        args.extend_from_slice(extra);
        args.push(".");
        run(&dir, &args).0
    };
    let without = names(&[]);
    for kept in [
        "defun c\n",
        "defun g\n",
        "defun h\n",
        "defun i\n",
        "defun j\n",
        // An atom or a string among a container's forms is a datum the skip counts.
        "defun l\n",
        "defun n\n",
    ] {
        assert!(without.contains(kept), "{kept} missing:\n{without}");
    }
    for gone in [
        "defun a\n",
        "defun b\n",
        "defun d\n",
        "defun e\n",
        "defun k\n",
    ] {
        assert!(!without.contains(gone), "{gone} found:\n{without}");
    }
    let ccl = names(&["--features", "ccl"]);
    assert!(
        !ccl.contains("defun i\n") && !ccl.contains("defun j\n"),
        "{ccl}"
    );
    assert!(
        ccl.contains("defun c\n") && ccl.contains("defun n\n"),
        "{ccl}"
    );
    assert!(!ccl.contains("defun m\n"), "{ccl}");
    let (callers, _) = run(
        &dir,
        &["find", "--callers", "foo", "--features", "ccl", "."],
    );
    assert_eq!(
        callers,
        "==> a.lisp <==\n2: (defun c () (foo))\n3: (defun g ...)\n 3: (progn #-(and) #-(and) (defun d () (foo)) (defun e () (foo)) (defun g () (foo)))\n",
    );
    // Inside `h` the two `(foo)` are skipped: no use is left in it.
    let (uses, _) = run(&dir, &["find", "--symbol", "foo", "--json", "."]);
    let uses: serde_json::Value = serde_json::from_str(&uses).unwrap();
    let h = uses["references"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "h");
    assert!(h.is_none(), "{uses:#}");
}

#[test]
fn several_paths_keep_a_symlink_apart_from_its_target_as_one_walk_does() {
    // `find .` lists a symlink to a file beside the file; `find . dir` must list the
    // same, each file once: the same name twice is one file, a link is a file of its own.
    let dir = scratch("several-links");
    fs::create_dir_all(dir.join("dir")).unwrap();
    fs::write(dir.join("a.lisp"), "(defun foo () 1)\n").unwrap();
    std::os::unix::fs::symlink("a.lisp", dir.join("alias.lisp")).unwrap();
    std::os::unix::fs::symlink("../a.lisp", dir.join("dir/link.lisp")).unwrap();
    let files = |paths: &[&str]| {
        let mut args = vec!["find", "--name", "foo", "--json"];
        args.extend_from_slice(paths);
        let v: serde_json::Value = serde_json::from_str(&run(&dir, &args).0).unwrap();
        let mut files: Vec<String> = v["definitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["file"].as_str().unwrap().to_string())
            .collect();
        files.sort();
        files
    };
    let all = ["a.lisp", "alias.lisp", "dir/link.lisp"];
    assert_eq!(files(&["."]), all);
    assert_eq!(files(&[".", "dir"]), all);
    assert_eq!(
        files(&["alias.lisp", "a.lisp", "./alias.lisp"]),
        ["a.lisp", "alias.lisp"]
    );
    assert_eq!(files(&["a.lisp", "./a.lisp"]), ["a.lisp"]);
}
