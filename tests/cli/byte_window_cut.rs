//! A byte window cut at the size cap says so (docs/tool.md#strategies): the bytes stay
//! verbatim on standard output, and standard error says what was shown and the
//! `--bytes` that continues; followed, the hint reads the rest.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn run(args: &[&str]) -> (String, String) {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(ROOT)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    (text(out.stdout), text(out.stderr))
}

#[test]
fn a_window_cut_at_the_cap_says_how_to_continue() {
    let demo = std::fs::read(format!("{ROOT}/fixtures/demo/demo.lisp")).unwrap();
    let (stdout, stderr) = run(&[
        "--max-file-bytes",
        "10",
        "--bytes",
        "9..64",
        "fixtures/demo/demo.lisp",
    ]);
    assert_eq!(stdout.as_bytes(), &demo[9..19]);
    assert_eq!(
        stderr,
        "[Showing bytes 9..19 of the 9..64 asked: a window holds at most the size cap, and ends on a character boundary. Use --bytes 19..64 to continue.]\n"
    );
    let (rest, stderr) = run(&[
        "--max-file-bytes",
        "10",
        "--bytes",
        "19..64",
        "fixtures/demo/demo.lisp",
    ]);
    assert_eq!(rest.as_bytes(), &demo[19..29]);
    assert!(
        stderr.contains("Use --bytes 29..64 to continue."),
        "{stderr}"
    );
    // A window read whole says nothing.
    let (whole, stderr) = run(&["--bytes", "9..64", "fixtures/demo/demo.lisp"]);
    assert_eq!(whole.as_bytes(), &demo[9..64]);
    assert_eq!(stderr, "");
}

#[test]
fn with_json_the_cut_is_said_on_stderr_too() {
    let (stdout, stderr) = run(&[
        "--json",
        "--max-file-bytes",
        "10",
        "--bytes",
        "9..64",
        "fixtures/demo/demo.lisp",
    ]);
    let result: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(result["meta"]["truncated"], true, "{stdout}");
    assert!(
        stderr.contains("Use --bytes 19..64 to continue."),
        "{stderr}"
    );
    let (_, stderr) = run(&["--json", "--bytes", "9..64", "fixtures/demo/demo.lisp"]);
    assert_eq!(stderr, "");
}

#[test]
fn a_cap_smaller_than_a_character_says_so_instead_of_the_same_window() {
    let dir = std::env::temp_dir().join(format!("lrf-byte-cap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("u.lisp");
    std::fs::write(&file, "\u{e9}(defun f () 1)\n").unwrap();
    let out = Command::new(BIN)
        .args(["--max-file-bytes", "1", "--bytes", "0..10"])
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.stdout.is_empty(), "{out:?}");
    assert!(
        stderr.contains("Showing no bytes of the 0..10 asked")
            && stderr.contains("raise the cap with --max-file-bytes"),
        "{stderr}"
    );
    assert!(!stderr.contains("--bytes 0..10"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}
