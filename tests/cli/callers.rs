//! `find --callers` and `find --callees` on the real binary over `fixtures/callers`
//! (docs/find.md#callers): what is a call and what is not, methods one by one, callees
//! split into the scope's definitions and the names outside it, paging.

use serde_json::Value;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");
const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/callers");

fn find(args: &[&str]) -> Value {
    let out = Command::new(BIN)
        .arg("find")
        .args(args)
        .args(["--json", "--root", FIXTURE, "."])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `(name, [call lines])` of each caller.
fn callers(result: &Value) -> Vec<(String, Vec<u64>)> {
    result["callers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_string(),
                c["calls"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|u| u["line"].as_u64().unwrap())
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn callers_are_operator_function_and_quoted_funcall_uses_never_shadowed_or_data() {
    let result = find(&["--callers", "area"]);
    assert_eq!(result["mode"], "callers");
    assert_eq!(
        callers(&result),
        [
            // Operator position (the docstring and comment mentions are not calls).
            ("total-area".to_string(), vec![12]),
            // #'area
            ("areas".to_string(), vec![15]),
            // (funcall 'area ...) and (apply 'area ...), not '(area data).
            ("quoted-areas".to_string(), vec![18, 19]),
            // Methods one by one, with their qualifiers and specializers.
            ("describe-shape :around (square)".to_string(), vec![35]),
            ("describe-shape (circle)".to_string(), vec![38]),
        ]
    );
    // local-area (flet), labelled-area (labels) and variable-area (a variable) are not
    // callers of the global area.
    let around = &result["callers"][3];
    assert_eq!(around["kind"], "defmethod");
    assert_eq!(around["qualifiers"], serde_json::json!([":around"]));
    assert_eq!(around["specializers"], serde_json::json!(["square"]));
    assert_eq!(around["file"], "shapes.lisp");
    assert_eq!(around["line"], 34);
    assert_eq!(around["calls"][0]["column"], 9);
    assert_eq!(
        around["calls"][0]["text"],
        "  (list (area s) (call-next-method)))"
    );
    assert_eq!(result["total"], 5);
}

#[test]
fn a_local_function_body_calls_the_global_helper_and_variables_are_not_calls() {
    let result = find(&["--callers", "helper"]);
    let names: Vec<String> = callers(&result).into_iter().map(|(n, _)| n).collect();
    // flet's local area calls the global helper; variable-area's init form does too;
    // the method in square.lisp as well.
    assert_eq!(names, ["local-area", "variable-area", "area (square)"]);
}

#[test]
fn callees_split_the_scope_definitions_from_names_outside_it() {
    let result = find(&["--callees", "report"]);
    assert_eq!(result["mode"], "callees");
    let entry = &result["callees"][0];
    assert_eq!(entry["name"], "report");
    let callees: Vec<(&str, &str, u64)> = entry["callees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let d = &c["definitions"][0];
            (
                c["name"].as_str().unwrap(),
                d["file"].as_str().unwrap(),
                d["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        callees,
        [
            ("areas", "shapes.lisp", 14),
            ("total-area", "shapes.lisp", 9)
        ]
    );
    // Names outside the scope; Common Lisp's own operators left out.
    assert_eq!(entry["outside"], serde_json::json!(["print-shapes"]));
    // A method's callees, and a structure's accessor as a definition of the scope.
    let result = find(&["--callees", "area"]);
    let method = &result["callees"][1];
    assert_eq!(method["name"], "area (square)");
    assert_eq!(method["callees"][1]["name"], "square-side");
    assert_eq!(method["callees"][1]["definitions"][0]["kind"], "accessor");
    // The local functions of local-area are not callees.
    let result = find(&["--callees", "local-area"]);
    let names: Vec<&str> = result["callees"][0]["callees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["helper"]);
    assert_eq!(result["callees"][0]["outside"], serde_json::json!([]));
}

#[test]
fn callers_are_paged_by_lines() {
    let first = find(&["--callers", "area", "--limit", "5"]);
    assert_eq!(first["truncated"], true);
    let next = first["next_offset"].as_u64().unwrap();
    let shown = first["callers"].as_array().unwrap().len() as u64;
    assert_eq!(next, shown);
    let rest = find(&["--callers", "area", "--offset", &next.to_string()]);
    assert_eq!(shown + rest["callers"].as_array().unwrap().len() as u64, 5);
    assert!(first["content"]
        .as_str()
        .unwrap()
        .contains(&format!("continue with --offset {next}")));
}

#[test]
fn the_text_heads_each_caller_with_its_name_not_its_lambda_list() {
    let out = Command::new(BIN)
        .args(["find", "--callers", "area", "--root", FIXTURE, "."])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    // As a reference's heading: `find --name` gives the lambda list.
    assert!(
        text.contains("9: (defun total-area ...)\n 12: (loop for s in shapes sum (area s)))\n"),
        "{text}"
    );
    assert!(!text.contains("(defun total-area (shapes)"), "{text}");
}

/// A list in the arguments of an operator the scope does not define may be a binding
/// (`(let-when (objlist (mklist objs)) ...)` binds `objlist`): a name outside the scope is
/// listed as called only from code known to be code (under Common Lisp's operators or a
/// function of the scope); the scope's own definitions are callees wherever they are.
#[test]
fn callees_outside_the_scope_are_read_from_known_code_only() {
    let dir = std::env::temp_dir().join(format!("lrf-callees-known-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("m.lisp"),
        "(in-package :m)
(defun helper (x) x)
(defun wrap (x) x)
(defun user (objs)
  (let-when (objlist (mklist objs))
    (helper objlist))
  (wrap (external-fn objs))
  (list (other-external objs)))
",
    )
    .unwrap();
    let out = Command::new(BIN)
        .args(["find", "--callees", "user", "--json", "--root"])
        .arg(&dir)
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let entry = &result["callees"][0];
    let names: Vec<&str> = entry["callees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["helper", "wrap"]);
    assert_eq!(
        entry["outside"],
        serde_json::json!(["let-when", "external-fn", "other-external"])
    );
}

/// A file whose writer macro is called nested 100 deep around a long list: each nested
/// call is read whole, more than the file's budget of expansions (linear in its size).
fn nested_writer_calls() -> String {
    let big = format!("(list {})", "x ".repeat(10_000));
    format!(
        "(defmacro w (&body body)\n  `(progn (target) ,@body))\n\n(defun deep ()\n  {}{big}{})\n\n(defun later ()\n  (w 2))\n",
        "(w ".repeat(100),
        ")".repeat(100)
    )
}

/// `--callers` cut by a file's budget of expansions says so and names the file, as the
/// definitions search does: the calls its later writer macros make may be missing (the
/// answer listed 57 of `deep`'s 100 calls through `w` and said nothing). A file within
/// its budget has no such note.
#[test]
fn callers_cut_by_the_expansion_budget_say_so() {
    let dir = std::env::temp_dir().join(format!("lrf-callers-cut-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("cut.lisp"), nested_writer_calls()).unwrap();
    std::fs::write(
        dir.join("ok.lisp"),
        "(defmacro w (&body body)\n  `(progn (target) ,@body))\n\n(defun later ()\n  (w 2))\n",
    )
    .unwrap();
    let run = |file: &str| {
        let out = Command::new(BIN)
            .args(["find", "--callers", "target"])
            .arg(dir.join(file))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let note = "stopped at their budget (linear in the file's size): calls their later macro calls write may be missing";
    let ok = run("ok.lisp");
    assert!(
        ok.contains("(defun later") && !ok.contains("stopped at"),
        "{ok}"
    );
    let cut = run("cut.lisp");
    assert!(cut.contains(note) && cut.contains("cut.lisp]"), "{cut}");
    let _ = std::fs::remove_dir_all(&dir);
}
