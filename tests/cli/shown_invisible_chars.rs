//! File names holding the Bidi_Control characters the first rule missed (U+061C ARABIC
//! LETTER MARK) and the invisible zero-width characters (U+200B, U+FEFF): the project map
//! shows them escaped, as every other control character (docs/guard.md "How paths are
//! shown").

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");

#[test]
fn the_map_escapes_bidi_controls_and_zero_width_characters_in_names() {
    let dir = std::env::temp_dir().join(format!("lrf-cli-invisible-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let names = [
        ("g\u{61c}x.lisp", "g\\u{61c}x.lisp"),
        ("z\u{200b}w.lisp", "z\\u{200b}w.lisp"),
        ("\u{feff}bom.lisp", "\\u{feff}bom.lisp"),
    ];
    for (i, (name, _)) in names.iter().enumerate() {
        std::fs::write(dir.join(name), format!("(defun hidden-{i} () {i})\n")).unwrap();
    }
    let out = Command::new(BIN).arg(&dir).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{stdout}");
    for (name, shown) in names {
        assert!(stdout.contains(shown), "{shown} missing from:\n{stdout}");
        assert!(!stdout.contains(name), "{name:?} shown raw:\n{stdout}");
    }
    for c in ['\u{61c}', '\u{200b}', '\u{feff}'] {
        assert!(!stdout.contains(c), "{c:?} reached the output:\n{stdout}");
    }
}
