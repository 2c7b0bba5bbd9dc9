//! `find --callers` and the calls a project's own macros write
//! (docs/find.md#calls-through-the-projects-macros): through the real binary on a fixture
//! of two files, and linear on adversarial macros calling macros.

use crate::find_linearity::{assert_find_linear, Family};
use std::path::PathBuf;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");

const MACROS: &str = "(in-package :json)

(defmacro with-aggregate/object ((stream open close) &body body)
  (alexandria:with-gensyms (printed)
    `(progn
       (write-delimiter ,open ,stream)
       (let (,printed) ,@body)
       (write-delimiter ,close ,stream))))

(defmacro with-object ((&optional (stream '*json-output*)) &body body)
  `(with-aggregate/object (,stream #\\{ #\\}) ,@body))
";

const USES: &str = "(in-package :json)

(defmethod encode ((object hash-table) &optional (stream *standard-output*))
  (with-aggregate/object (stream #\\{ #\\})
    (maphash (lambda (k v) (encode k stream) (encode v stream)) object)))

(defun encode-plist (plist)
  (with-object ()
    (loop for (k v) on plist by #'cddr do (encode k) (encode v))))

(defun spelled (stream)
  (write-delimiter #\\[ stream))
";

fn fixture() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lrf-through-fixture-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("macros.lisp"), MACROS).unwrap();
    std::fs::write(dir.join("uses.lisp"), USES).unwrap();
    dir
}

fn find(dir: &PathBuf, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .arg("find")
        .args(args)
        .arg("--root")
        .arg(dir)
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The macro a caller calls through is said once per caller: on its heading when every
/// call is through it (three calls, one tag), after each such line when calls differ; a
/// caller whose calls are all on its heading's line is that line alone.
#[test]
fn the_macro_a_caller_calls_through_is_said_once() {
    let dir = std::env::temp_dir().join(format!("lrf-through-once-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("macros.lisp"), MACROS).unwrap();
    std::fs::write(
        dir.join("uses.lisp"),
        "(in-package :json)

(defun thrice ()
  (with-object () 1)
  (with-object () 2)
  (with-object () 3))

(defun mixed (stream)
  (with-object () 1)
  (write-delimiter #\\[ stream))

(with-object () (top))
",
    )
    .unwrap();
    let text = find(&dir, &["--callers", "write-delimiter"]);
    let uses = &text[text.find("==> uses.lisp").expect(&text)..];
    assert_eq!(
        uses,
        "==> uses.lisp <==
3: (defun thrice ...)  [through with-object]
 4: (with-object () 1)
 5: (with-object () 2)
 6: (with-object () 3))
8: (defun mixed ...)
 9: (with-object () 1)  [through with-object]
 10: (write-delimiter #\\[ stream))
12: (with-object () (top))  [through with-object]
"
    );
}

#[test]
fn the_binary_lists_the_callers_a_macro_writes_the_call_into() {
    let dir = fixture();
    let text = find(&dir, &["--callers", "write-delimiter"]);
    // The method calls it through the macro, encode-plist through a macro calling it;
    // `spelled` calls it itself; the macro's own template is its code as before.
    // Each caller's calls are all through one macro: it is said on the heading.
    assert!(
        text.contains("...)  [through with-aggregate/object]\n 4: (with-aggregate/object (stream #\\{ #\\})\n"),
        "{text}"
    );
    assert!(
        text.contains("(defun encode-plist ...)  [through with-object]\n 8: (with-object ()\n"),
        "{text}"
    );
    assert!(text.contains("(write-delimiter #\\[ stream))\n"), "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&find(&dir, &["--callers", "write-delimiter", "--json"])).unwrap();
    let callers = json["callers"].as_array().unwrap();
    let through = |name: &str| {
        callers
            .iter()
            .find(|c| c["name"].as_str().is_some_and(|n| n.starts_with(name)))
            .map(|c| c["calls"][0]["through"].clone())
    };
    assert_eq!(
        through("encode"),
        Some(serde_json::json!("with-aggregate/object"))
    );
    assert_eq!(
        through("encode-plist"),
        Some(serde_json::json!("with-object"))
    );
    assert_eq!(through("spelled"), Some(serde_json::Value::Null));
    // What the call spells is no call through the macro.
    let text = find(&dir, &["--callers", "maphash"]);
    assert!(!text.contains("through"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A chain of macros, each writing a call of the next, the last of `foo`; then calls of
/// the first.
fn chain(n: usize) -> Vec<u8> {
    let mut v = String::new();
    // Six deep: within the depth macros are followed to.
    for i in 0..5 {
        v.push_str(&format!(
            "(defmacro m{i} (x) `(progn (m{} ,x) ,x))\n",
            i + 1
        ));
    }
    v.push_str("(defmacro m5 (x) `(foo ,x))\n");
    while v.len() < n {
        v.push_str("(defun f () (m0 (m0 1)))\n");
    }
    v.into_bytes()
}

/// One writer called nested, each call holding the next.
fn nested(n: usize) -> Vec<u8> {
    let k = n / 4;
    format!(
        "(defmacro w (&rest x) `(foo ,@x))\n(defun f () {}1{})",
        "(w ".repeat(k),
        ")".repeat(k)
    )
    .into_bytes()
}

/// A template that copies its argument four times, called nested: the expansion doubles
/// with each level but for the budget.
fn multiplying(n: usize) -> Vec<u8> {
    let mut v = "(defmacro w (x) `(list (foo) ,x ,x ,x ,x))\n".to_string();
    while v.len() < n {
        v.push_str("(defun f () (w (w (w (w (w (w (w (w 1))))))))))\n");
    }
    v.into_bytes()
}

/// Many macros, each writing `foo`, each called once.
fn many_writers(n: usize) -> Vec<u8> {
    let mut v = String::new();
    let mut i = 0;
    while v.len() < n {
        v.push_str(&format!(
            "(defmacro w{i} (x) `(foo ,x))\n(defun f{i} () (w{i} 1))\n"
        ));
        i += 1;
    }
    v.into_bytes()
}

/// Writers of `foo` with long names (40 characters), and as many macros of filler: the
/// writers' names are searched at once, and compiling their regex alternation cost about
/// 4,000 instructions a byte of the names, more than linearly, up to its size limit (past
/// it, a regex matching everywhere); now an automaton built in linear time.
fn long_named_writers(n: usize) -> Vec<u8> {
    let mut v = String::new();
    let mut i = 0;
    while v.len() < n {
        v.push_str(&format!(
            "(defmacro write-foo-through-a-long-name-{i:013} (x) `(foo ,x))\n\
             (defmacro z{i} (x) `(bar ,x q0 q1 q2 q3 q4 q5 q6 q7 q8 q9 q10 q11 q12))\n"
        ));
        i += 1;
    }
    v.push_str("(defun b () (z1 1))\n");
    v.into_bytes()
}

/// One form of writer calls, each holding a call of `foo` it spells itself (no call
/// through the macro): each is told apart from the calls before it, not compared with them.
fn writers_holding_the_call(n: usize) -> Vec<u8> {
    let mut v = "(defmacro w (x) `(foo ,x))\n(defun f ()".to_string();
    while v.len() < n {
        v.push_str("\n  (w (foo 1))");
    }
    v.push(')');
    v.into_bytes()
}

#[test]
fn callers_through_macros_are_linear_on_adversarial_macros() {
    let families: Vec<(&'static str, Family)> = vec![
        ("macros calling macros", chain),
        ("nested writer calls", nested),
        ("multiplying templates", multiplying),
        ("many writers", many_writers),
        ("writers of long names", long_named_writers),
        ("writers holding the call", writers_holding_the_call),
    ];
    assert_find_linear(
        "callers-through",
        families,
        vec![
            ("callers", |r| r.callers = Some("foo".into())),
            ("callers of (setf foo)", |r| {
                r.callers = Some("(setf foo)".into())
            }),
        ],
    );
}

/// A macro reading many global constants, whose template computes its operator (clx's
/// `(,(putify type) ...)`).
fn globals_read_by_a_computing_macro(n: usize) -> Vec<u8> {
    let count = n / 40;
    let mut v = String::new();
    for i in 0..count {
        v.push_str(&format!("(defparameter *g{i}* 'v{i})\n"));
    }
    v.push_str("(defmacro m (x) (let ((l (list");
    for i in 0..count {
        v.push_str(&format!(" *g{i}*"));
    }
    v.push_str("))) `(,(symbolicate x '-put) ,l)))\n(defun bar () (m card16))\n");
    v.into_bytes()
}

/// A macro computing many operators, each with a function of the file that calls another.
fn operators_computed_by_functions(n: usize) -> Vec<u8> {
    let count = n / 80;
    let mut v = String::new();
    for i in 0..count {
        v.push_str(&format!(
            "(defun g{i} (x) x)\n(defun f{i} (x) (g{i} (symbolicate x '-put)))\n"
        ));
    }
    v.push_str("(defmacro m (x) `(progn");
    for i in 0..count {
        v.push_str(&format!(" (,(f{i} x) 1)"));
    }
    v.push_str("))\n(defun bar () (m card16))\n");
    v.into_bytes()
}

/// Operators a macro computes from many global constants or many functions of its file:
/// an outside audit measured both quadratic (instructions 3.2 to 3.7 times at twice the
/// size: every variable read was compared with those read before, every function wanted
/// with those learned).
#[test]
fn operators_computed_from_many_globals_and_functions_cost_linear_time() {
    let families: Vec<(&'static str, Family)> = vec![
        (
            "globals read by a computing macro",
            globals_read_by_a_computing_macro,
        ),
        (
            "operators computed by functions",
            operators_computed_by_functions,
        ),
    ];
    assert_find_linear(
        "callers-computed",
        families,
        vec![("callers of card16-put", |r| {
            r.callers = Some("card16-put".into())
        })],
    );
}
