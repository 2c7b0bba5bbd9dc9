//! Feature expressions (docs/reader.md#feature-expressions) decided as SBCL's own
//! `sb-int:featurep` decides them, with `*features*` set to the same list and the
//! expression read in the keyword package (as `#+`/`#-` read it): a table of written
//! cases and 400 generated ones. SBCL signalling an error is our "undecided" (`None`).

use crate::common;
use common::mutation::Rng;
use lisp_read_file::features::{decide, Features};
use std::process::Command;

const FEATURES: [&str; 5] = ["sbcl", "x86-64", "unix", "linux", "cl-user::extra"];

const WRITTEN: &[&str] = &[
    "sbcl",
    ":sbcl",
    "SBCL",
    "|sbcl|",
    "|SBCL|",
    "s\\bcl",
    "ccl",
    "(or ccl sbcl)",
    "(and sbcl (not unix))",
    "(:and x86-64 (:or ecl unix))",
    "(cl:not ccl)",
    "(common-lisp:or ccl linux)",
    "(and)",
    "(or)",
    "()",
    "(not)",
    "(not a b)",
    "(xor a b)",
    "((and) a)",
    "cl-user::extra",
    "cl-user::other",
    "keyword:sbcl",
    "(or ; a comment\n ccl #| block |# sbcl)",
    "1",
    "-1.5e3",
    "1/2",
    "nan",
    "1+",
    "\"sbcl\"",
];

/// A random feature expression from a small grammar, up to `depth` deep.
fn generate(rng: &mut Rng, depth: usize) -> String {
    let atoms = [
        "sbcl",
        "ccl",
        ":unix",
        "X86-64",
        "linux",
        "ecl",
        "cl-user::extra",
        "|unix|",
    ];
    if depth == 0 || rng.below(3) == 0 {
        return atoms[rng.below(atoms.len())].to_string();
    }
    let ops = ["and", "or", "not", ":and", ":or", ":not", "cl:or"];
    let op = ops[rng.below(ops.len())];
    // `not` takes one argument; now and then none or two, which SBCL refuses.
    let n = if op.ends_with("not") {
        [1, 1, 1, 1, 1, 1, 0, 2][rng.below(8)]
    } else {
        rng.below(4)
    };
    let args: Vec<String> = (0..n).map(|_| generate(rng, depth - 1)).collect();
    format!("({op} {})", args.join(" "))
}

/// SBCL's verdict per expression: `Some(true)`, `Some(false)` or `None` (an error).
fn sbcl_verdicts(exprs: &[String]) -> Vec<Option<bool>> {
    let dir = std::env::temp_dir().join(format!("lrf-features-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("exprs.txt");
    // One expression per line: newlines inside are written as a form feed and put back.
    let lines: Vec<String> = exprs.iter().map(|e| e.replace('\n', "\x0c")).collect();
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let script = format!(
        r#"(let ((*features* (list :sbcl :x86-64 :unix :linux 'cl-user::extra)))
  (with-open-file (in "{}")
    (loop for line = (read-line in nil) while line
          do (write-line
              (handler-case
                  (let* ((*package* (find-package :keyword))
                         (text (substitute #\Newline (code-char 12) line))
                         (x (read-from-string text)))
                    (if (sb-int:featurep x) "T" "NIL"))
                (error () "ERR"))))))"#,
        input.display()
    );
    let out = Command::new("sbcl")
        .args([
            "--noinform",
            "--non-interactive",
            "--no-userinit",
            "--eval",
            &script,
        ])
        .output()
        .expect("run sbcl");
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout);
    let verdicts: Vec<Option<bool>> = text
        .lines()
        .filter(|l| matches!(*l, "T" | "NIL" | "ERR"))
        .map(|l| match l {
            "T" => Some(true),
            "NIL" => Some(false),
            _ => None,
        })
        .collect();
    assert_eq!(
        verdicts.len(),
        exprs.len(),
        "sbcl said:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    verdicts
}

#[test]
fn feature_expressions_are_decided_as_sbcl_decides_them() {
    let present = Command::new("sbcl").arg("--version").output().is_ok();
    if !common::tool_available(present, "SBCL", "apt-get install sbcl") {
        return;
    }
    let mut exprs: Vec<String> = WRITTEN.iter().map(|s| s.to_string()).collect();
    let mut rng = Rng::new(7);
    exprs.extend((0..400).map(|_| generate(&mut rng, 4)));
    let features = Features::new(FEATURES);
    let theirs = sbcl_verdicts(&exprs);
    let mismatches: Vec<String> = exprs
        .iter()
        .zip(&theirs)
        .filter_map(|(e, sbcl)| {
            let ours = decide(e.as_bytes(), &features);
            (ours != *sbcl).then(|| format!("{e:?}: ours {ours:?}, SBCL {sbcl:?}"))
        })
        .collect();
    assert!(
        mismatches.is_empty(),
        "{} of {}:\n{}",
        mismatches.len(),
        exprs.len(),
        mismatches.join("\n")
    );
}
