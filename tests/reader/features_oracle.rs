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

/// SBCL's output for `lines` written one per line to a scratch file: `script(PATH)` is
/// the form SBCL evaluates, reading that file.
fn sbcl_on_lines(tag: &str, lines: &[String], script: impl Fn(&str) -> String) -> (String, String) {
    let dir = std::env::temp_dir().join(format!("lrf-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("lines.txt");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let script = script(&input.display().to_string());
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
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (text, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// SBCL's verdict per expression: `Some(true)`, `Some(false)` or `None` (an error).
fn sbcl_verdicts(exprs: &[String]) -> Vec<Option<bool>> {
    // One expression per line: newlines inside are written as a form feed and put back.
    let lines: Vec<String> = exprs.iter().map(|e| e.replace('\n', "\x0c")).collect();
    let (text, stderr) = sbcl_on_lines("features", &lines, |input| {
        format!(
            r#"(let ((*features* (list :sbcl :x86-64 :unix :linux 'cl-user::extra)))
  (with-open-file (in "{input}")
    (loop for line = (read-line in nil) while line
          do (write-line
              (handler-case
                  (let* ((*package* (find-package :keyword))
                         (text (substitute #\Newline (code-char 12) line))
                         (x (read-from-string text)))
                    (if (sb-int:featurep x) "T" "NIL"))
                (error () "ERR"))))))"#
        )
    });
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
        stderr
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

/// A random run of data and reader conditionals inside one list, each atom named once
/// (`a0`, `a1`, ...), a list now and then: `(a0 #-ccl #+(or) a1 (a2 #+sbcl a3) a4)`.
fn generate_run(rng: &mut Rng, names: &mut usize, depth: usize) -> String {
    let conditionals = [
        "#+sbcl",
        "#-sbcl",
        "#+ccl",
        "#-ccl",
        "#+(or)",
        "#-(and)",
        "#+(or sbcl ccl)",
        "#-(and sbcl (not ccl))",
    ];
    let len = 1 + rng.below(8);
    let mut parts = Vec::new();
    for _ in 0..len {
        match rng.below(6) {
            0..=2 => parts.push(conditionals[rng.below(conditionals.len())].to_string()),
            3 if depth > 0 => parts.push(generate_run(rng, names, depth - 1)),
            // A string, and a symbol whose second character is a sign: data whose
            // first two bytes look like `#-` at a glance (`"-M"`, `a-1`).
            4 if rng.below(2) == 0 => parts.push(format!("\"-{}\"", rng.below(10))),
            // A prefix, read with the datum after it, conditionals and all.
            5 => parts.push(["'", "`", "#'"][rng.below(3)].to_string()),
            _ => {
                let sign = if rng.below(3) == 0 { "-" } else { "" };
                parts.push(format!("a{sign}{names}"));
                *names += 1;
            }
        }
    }
    // A conditional needs a datum before the list closes, or SBCL signals an error.
    parts.push(format!("a{names}"));
    *names += 1;
    format!("({})", parts.join(" "))
}

/// The atoms SBCL reads of each list (flattened, in order), under `features`; `None`
/// when SBCL signals an error (a conditional with no datum left in its list).
fn sbcl_atoms(lists: &[String], features: &str) -> Vec<Option<Vec<String>>> {
    let (text, stderr) = sbcl_on_lines("skips", lists, |input| {
        format!(
            r#"(labels ((flat (x) (if (consp x) (mapcan #'flat x) (and x (symbolp x) (eq (symbol-package x) *package*) (list (string-downcase (symbol-name x)))))))
  (let ((*features* (list {features})))
    (with-open-file (in "{input}")
      (loop for line = (read-line in nil) while line
            do (write-line
                (handler-case (format nil "OK~{{ ~a~}}" (flat (read-from-string line)))
                  (error () "ERR")))))))"#
        )
    });
    let atoms: Vec<Option<Vec<String>>> = text
        .lines()
        .filter(|l| l.starts_with("OK") || *l == "ERR")
        .map(|l| {
            l.strip_prefix("OK")
                .map(|rest| rest.split_whitespace().map(String::from).collect())
        })
        .collect();
    assert_eq!(atoms.len(), lists.len(), "sbcl said:\n{text}\n{}", stderr);
    atoms
}

/// The atoms our token walk hands over in `list`, with `reads` deciding each conditional.
fn our_atoms(list: &str, features: Option<&Features>) -> Vec<String> {
    let b = list.as_bytes();
    let mut out = Vec::new();
    lisp_read_file::scan::each_token_read(
        b,
        0,
        b.len(),
        &mut |plus, expr| {
            lisp_read_file::features::reads_under(plus, expr, features) != Some(false)
        },
        &mut |s, e| {
            out.push(list[s..e].to_string());
            std::ops::ControlFlow::Continue(())
        },
    );
    // The event walk (what a callers search reads) skips the same data.
    let mut events = Vec::new();
    lisp_read_file::scan::each_event_read(
        b,
        0,
        b.len(),
        &mut |plus, expr| {
            lisp_read_file::features::reads_under(plus, expr, features) != Some(false)
        },
        &mut |event| {
            if let lisp_read_file::scan::Event::Token(s, e) = event {
                events.push(list[s..e].to_string());
            }
            std::ops::ControlFlow::Continue(())
        },
    );
    assert_eq!(out, events, "token and event walks differ on {list}");
    out
}

/// SBCL skips one datum more for each conditional that fails inside a skipped datum
/// (`#+(or) #+(or) a b` skips `a` and `b`; `sharp-plus-minus` returns no value, so the
/// suppressed read goes on). The token walk skips what SBCL skips, under each of four
/// feature sets; without features it skips only what SBCL skips under all four.
#[test]
fn conditionals_skip_the_data_sbcl_skips() {
    let present = Command::new("sbcl").arg("--version").output().is_ok();
    if !common::tool_available(present, "SBCL", "apt-get install sbcl") {
        return;
    }
    let mut rng = Rng::new(11);
    let lists: Vec<String> = (0..500)
        .map(|_| {
            let mut names = 0;
            generate_run(&mut rng, &mut names, 2)
        })
        .collect();
    let sets: [(&str, &[&str]); 4] = [
        (":sbcl", &["sbcl"]),
        (":ccl", &["ccl"]),
        (":sbcl :ccl", &["sbcl", "ccl"]),
        ("", &[]),
    ];
    let mut mismatches = Vec::new();
    let mut compared = 0;
    let mut read_by_any: Vec<Option<std::collections::HashSet<String>>> =
        vec![Some(Default::default()); lists.len()];
    for (lisp, names) in sets {
        let features = Features::new(names.iter().copied());
        for (i, theirs) in sbcl_atoms(&lists, lisp).into_iter().enumerate() {
            let Some(theirs) = theirs else {
                read_by_any[i] = None;
                continue;
            };
            compared += 1;
            let ours = our_atoms(&lists[i], Some(&features));
            if ours != theirs {
                mismatches.push(format!(
                    "{} with ({lisp}): ours {ours:?}, SBCL {theirs:?}",
                    lists[i]
                ));
            }
            if let Some(set) = &mut read_by_any[i] {
                set.extend(theirs);
            }
        }
    }
    // Without features, an atom is left out only when no feature set reads it.
    for (list, read) in lists.iter().zip(&read_by_any) {
        let Some(read) = read else { continue };
        let ours = our_atoms(list, None);
        let lost: Vec<&String> = read.iter().filter(|a| !ours.contains(a)).collect();
        if !lost.is_empty() {
            mismatches.push(format!(
                "{list} without features: left out {lost:?}, which SBCL reads"
            ));
        }
    }
    assert!(compared > 600, "only {compared} lists compared");
    assert!(
        mismatches.is_empty(),
        "{} mismatches:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
