//! Scale: inputs that would overflow a recursive reader or take quadratic time must
//! complete (asserting completion and correctness, never time).

use lisp_read_file::grammar::Grammar;
use lisp_read_file::outline::outline_bytes;
use lisp_read_file::scan::{scan, ItemKind, Scan, MAX_DIAGNOSTICS};
use lisp_read_file::source::Source;
use lisp_read_file::view::{render, ViewOptions};
use std::process::Command;

fn assert_cover(bytes: &[u8], s: &Scan) {
    let mut pos = 0;
    for item in &s.items {
        assert_eq!(item.span.start, pos);
        assert!(item.span.end > pos);
        pos = item.span.end;
    }
    assert_eq!(pos, bytes.len());
}

/// Scan, outline and collapsed view of `bytes`; returns the number of forms.
fn full_pipeline(bytes: &[u8]) -> usize {
    let s = scan(bytes);
    assert_cover(bytes, &s);
    let grammar = Grammar::builtin();
    let outline = outline_bytes(bytes, &grammar);
    let view = render(&Source::new(bytes), Some(&outline), &ViewOptions::default());
    assert!(!view.content.is_empty() || bytes.is_empty());
    s.items.iter().filter(|i| i.kind == ItemKind::Form).count()
}

#[test]
fn a_million_nested_open_parens() {
    let bytes = vec![b'('; 1_000_000];
    assert_eq!(full_pipeline(&bytes), 1);
    let s = scan(&bytes);
    assert_eq!(s.diagnostics.len(), 1, "one unclosed diagnostic");
}

#[test]
fn a_million_nested_balanced_parens() {
    let mut bytes = vec![b'('; 1_000_000];
    bytes.extend(std::iter::repeat_n(b')', 1_000_000));
    assert_eq!(full_pipeline(&bytes), 1);
    assert!(scan(&bytes).diagnostics.is_empty());
}

#[test]
fn a_million_nested_containers() {
    let depth = 1_000_000;
    let mut text = "(progn ".repeat(depth);
    text.push_str("(defun f ())");
    text.push_str(&")".repeat(depth));
    assert_eq!(full_pipeline(text.as_bytes()), 1);
}

#[test]
fn many_unclosed_forms_recover_in_linear_time() {
    // 200k lines, every other one an unclosed form: a quadratic recovery would not finish.
    let text: String = (0..100_000)
        .map(|i| format!("(defun f{i} (x\n(g{i})\n"))
        .collect();
    let s = scan(text.as_bytes());
    assert_cover(text.as_bytes(), &s);
    assert_eq!(
        s.items.iter().filter(|i| i.kind == ItemKind::Form).count(),
        200_000
    );
    // One problem per unclosed form: the first MAX_DIAGNOSTICS kept, the rest counted.
    assert_eq!(s.diagnostics.len(), MAX_DIAGNOSTICS);
    assert_eq!(s.diagnostics.len() + s.omitted_diagnostics, 100_000);
}

/// A 50 MB file of realistic forms, some broken, read by the real binary.
#[test]
fn a_fifty_megabyte_file_through_the_binary() {
    let unit = "(defun add (a b)\n  \"Add A and B.\"\n  (let ((s (+ a b)))\n    ;; a comment with ( and \"\n    (format nil \"~a)\" s)))\n\n#+sbcl (defvar *x* #\\( \"doc\")\n";
    let broken = "(defun broken (x\n";
    let mut text = String::with_capacity(51 << 20);
    let mut units = 0;
    while text.len() < 50 << 20 {
        text.push_str(unit);
        units += 1;
        if units % 1000 == 0 {
            text.push_str(broken);
        }
    }
    let dir = std::env::temp_dir().join(format!("lrf-scale-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.lisp");
    std::fs::write(&path, &text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_lisp-read-file"))
        .args(["outline", "--json", "--max-file-bytes", "100000000"])
        .arg(&path)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let items = json["items"].as_array().unwrap();
    let forms = items.iter().filter(|i| i["kind"] == "form").count();
    assert_eq!(forms, units * 2 + units / 1000);
    assert_eq!(json["diagnostics"].as_array().unwrap().len(), units / 1000);
    let mut pos = 0u64;
    for item in items {
        let (start, end) = (
            item["start"].as_u64().unwrap(),
            item["end"].as_u64().unwrap(),
        );
        assert!(start >= pos && end > start);
        assert!(text.as_bytes()[pos as usize..start as usize]
            .iter()
            .all(u8::is_ascii_whitespace));
        pos = end;
    }
}
