//! The text rule on the real binary: Lisp sources SBCL reads are read, even with literal
//! NUL characters in strings (McCLIM's `standard-keys.lisp`, a postmodern test file);
//! binary files stay refused.

use std::fs;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");

#[test]
fn a_lisp_file_with_nul_characters_in_strings_is_read() {
    let dir = std::env::temp_dir().join(format!("lrf-text-rule-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let mut src = b";;; keys\n(defparameter *names* '(\"".to_vec();
    src.push(0);
    src.extend_from_slice(b"\" \"tab\"))\n\n(defun key-name (k)\n  \"Name of K.\"\n  k)\n");
    fs::write(dir.join("keys.lisp"), &src).unwrap();
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.extend([0u8; 64]);
    fs::write(dir.join("image.lisp"), &png).unwrap();

    let out = Command::new(BIN)
        .arg("--root")
        .arg(&dir)
        .arg("keys.lisp")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("(defun key-name (k) ...) ;; Name of K."),
        "{stdout}"
    );

    let out = Command::new(BIN)
        .arg("--root")
        .arg(&dir)
        .arg("image.lisp")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("BINARY_FILE") && stderr.contains("image.lisp"),
        "{stderr}"
    );
    let _ = fs::remove_dir_all(&dir);
}
