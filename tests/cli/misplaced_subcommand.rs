//! A subcommand typed after the read command's options: the usage error says to put the
//! options after the subcommand and prints the command line that works, instead of
//! clap's tip for a read option.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");

#[test]
fn options_before_find_are_told_to_go_after_it() {
    let out = Command::new(BIN)
        .args(["--root", ".", "find", "--name", "ok"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("put the options after `find`"), "{stderr}");
    assert!(
        stderr.contains("lisp-read-file find --root . --name ok"),
        "{stderr}"
    );
    assert!(!stderr.contains("--name-pattern"), "{stderr}");
    // The command it prints works.
    let dir = std::env::temp_dir().join(format!("lrf-cli-misplaced-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.lisp"), "(defun ok () 1)\n").unwrap();
    let out = Command::new(BIN)
        .args(["find", "--root", ".", "--name", "ok"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("a.lisp:1:(defun ok ()\n"));
}
