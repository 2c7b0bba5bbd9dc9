//! Exit statuses and text rules a script can trust (docs/cli.md#exit-status): a pattern
//! that matches nothing exits 1, as `grep` and `rg` do, with the view on stdout; a match
//! exits 0; UTF-16 and EBCDIC text are refused as what they are (`BINARY_FILE`, exit 1),
//! not shown as garbage with exit 0. Through the real binary.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lrf-exit-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn no_match_exits_1_and_a_match_0() {
    let dir = scratch("grep");
    fs::write(dir.join("notes.txt"), "alpha\nbeta TODO\n").unwrap();
    fs::write(dir.join("a.lisp"), "(defun f () (handler-case 1))\n").unwrap();
    for (args, code) in [
        (vec!["-c", "TODO", "notes.txt"], 0),
        (vec!["-c", "LAMDA", "notes.txt"], 1),
        (vec!["-c", "(handler-case", "a.lisp"], 0),
        (vec!["-c", "(handler-bind", "a.lisp"], 1),
        (vec!["-n", "^f$", "a.lisp"], 0),
        (vec!["-n", "^g$", "a.lisp"], 1),
        (vec!["-c", "(handler-bind", "--json", "a.lisp"], 1),
        (vec!["-c", "(handler-bind", "."], 1),
        (vec!["-c", "(handler-case", "."], 0),
        // Without a pattern there is nothing to match: 0.
        (vec!["a.lisp"], 0),
    ] {
        let out = run(&dir, &args);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {out:?}");
        assert!(out.stderr.is_empty(), "{args:?}: {out:?}");
        assert!(!out.stdout.is_empty(), "{args:?}");
    }
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn utf16_and_ebcdic_text_are_refused_as_such() {
    let dir = scratch("encodings");
    let utf16: Vec<u8> = [0xff, 0xfe]
        .into_iter()
        .chain("(defun f () 1)\n".bytes().flat_map(|b| [b, 0]))
        .collect();
    fs::write(dir.join("u16.lisp"), utf16).unwrap();
    // "HELLO WORLD, (DEFUN F () 1)" and a line end in EBCDIC (code page 037), as babel's
    // tests/ebcdic-us.txt is written.
    let line: &[u8] = b"\xc8\xc5\xd3\xd3\xd6\x40\xe6\xd6\xd9\xd3\xc4\x6b\x40\x4d\xc4\xc5\xc6\xe4\xd5\x40\xc6\x40\x4d\x5d\x40\xf1\x5d\x25";
    fs::write(dir.join("ebcdic.txt"), line.repeat(30)).unwrap();
    for (file, what) in [("u16.lisp", "UTF-16 text"), ("ebcdic.txt", "EBCDIC text")] {
        for args in [
            vec![file],
            vec!["-c", "x", file],
            vec!["--lines", "1..", file],
        ] {
            let out = run(&dir, &args);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
            assert!(out.stdout.is_empty(), "{args:?}: {out:?}");
            let stderr = String::from_utf8(out.stderr).unwrap();
            assert!(
                stderr.starts_with(&format!("BINARY_FILE: {what}, not UTF-8: {file}; ")),
                "{stderr}"
            );
            assert!(stderr.contains("iconv"), "{stderr}");
        }
    }
    // Babel's own EBCDIC test file, when Debian's cl-babel is installed.
    let babel = "/usr/share/common-lisp/source/babel/tests/ebcdic-us.txt";
    if std::path::Path::new(babel).exists() {
        let out = run(&dir, &[babel]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("EBCDIC text"));
    }
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_line_longer_than_the_size_cap_is_said_to_be_searched_in_part() {
    // The needle is past the first 1,000 bytes of the one line: not seen, and the answer
    // must say so rather than only "no line matched".
    let dir = scratch("long-line");
    fs::write(
        dir.join("one-line.txt"),
        format!("{}NEEDLE\nshort\n", "a".repeat(5_000)),
    )
    .unwrap();
    let out = run(
        &dir,
        &["--max-file-bytes", "1000", "-c", "NEEDLE", "one-line.txt"],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "[No line matched --content-pattern \"NEEDLE\".]\n[1 line(s) longer than the size cap searched in their first 1000 bytes only, the first at line 1; to search them whole, raise the cap with --max-file-bytes.]\n"
    );
    let json = run(
        &dir,
        &[
            "--max-file-bytes",
            "1000",
            "-c",
            "NEEDLE",
            "--json",
            "one-line.txt",
        ],
    );
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["meta"]["truncated"], true, "{v}");
    fs::remove_dir_all(dir).unwrap();
}
