//! A map or a search that shows a path escaped says so once, and how to undo it: a name
//! with a real tab is shown `t\tx.lisp`, and that text read as given is another file,
//! which a repository can plant as a decoy (docs/guard.md "How paths are shown").

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");
const NOTE_START: &str = "[A path above is shown escaped (docs/guard.md";

#[test]
fn maps_and_searches_that_show_an_escaped_path_say_it_once() {
    let dir = std::env::temp_dir().join(format!("lrf-cli-escaped-note-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("amb")).unwrap();
    std::fs::create_dir_all(dir.join("plain")).unwrap();
    std::fs::write(dir.join("amb/t\tx.lisp"), "(defun real-tab ())\n").unwrap();
    std::fs::write(
        dir.join("amb/t\\tx.lisp"),
        "(defun literal-backslash-t ())\n",
    )
    .unwrap();
    std::fs::write(dir.join("plain/a.lisp"), "(defun real-tab ())\n").unwrap();
    let run = |args: &[&str]| {
        let out = Command::new(BIN)
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let map = run(&["amb"]);
    assert!(map.contains("==> amb/t\\tx.lisp <=="), "{map}");
    assert_eq!(map.matches(NOTE_START).count(), 1, "{map}");
    let found = run(&["find", "--name", "real-tab", "amb"]);
    assert_eq!(found.matches(NOTE_START).count(), 1, "{found}");
    for plain in [
        run(&["plain"]),
        run(&["find", "--name", "real-tab", "plain"]),
    ] {
        assert!(!plain.contains(NOTE_START), "{plain}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
