//! Half-edited real files (docs/reader.md#runaway-strings-and-comments): a sample of the
//! mutation benchmark (`cargo bench --bench mutation`, figures in BENCHMARKS.md) with its
//! targets as assertions. Over a quarter of the Debian corpus's `.lisp` files, one edit
//! of each kind per file (a `)`, `(` or `"` deleted, a stray `"` or an unclosed `#|`
//! inserted in a random top-level form):
//!
//! * at least 95% of the file's other named definitions are still shown, on their lines;
//! * at least 90% of the diagnostics name a line inside the damaged form.
//!
//! Before runaway strings and comments got a fresh reading, a deleted `"` kept 56% of
//! the other definitions and an unclosed `#|` 48%.

use crate::common;
use common::mutation::{self, Kind};
use std::path::Path;

#[test]
fn half_edited_files_keep_their_other_definitions() {
    let roots: Vec<&Path> = mutation::DEBIAN_ROOTS.iter().map(Path::new).collect();
    let present = roots.iter().all(|r| r.is_dir());
    let how =
        "apt-get install sbcl-source cl-alexandria (and the cl-* list in .ci/debian-packages.txt)";
    if !common::tool_available(present, "Debian's Common Lisp sources", how) {
        return;
    }
    let files: Vec<_> = mutation::corpus(&roots).into_iter().step_by(4).collect();
    assert!(files.len() > 300, "only {} corpus files", files.len());
    let mut failures = Vec::new();
    for (kind, t) in mutation::run(&files, 1, 42) {
        let line = format!(
            "{}: {} edits, other definitions kept {:.2}%, diagnostics inside {:.2}%",
            kind.label(),
            t.edits,
            t.kept_percent(),
            t.inside_percent()
        );
        eprintln!("{line}");
        let enough_edits = t.edits > if kind == Kind::DeleteQuote { 150 } else { 300 };
        if !enough_edits || t.kept_percent() < 95.0 || t.inside_percent() < 90.0 {
            failures.push(line);
        }
    }
    assert!(
        failures.is_empty(),
        "below target:\n{}",
        failures.join("\n")
    );
}
