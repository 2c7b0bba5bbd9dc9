//! The mutation benchmark (docs/reader.md#runaway-strings-and-comments): half-done edits
//! of real files, and how much of the rest of each file the reader still shows.
//!
//! For every `.lisp` file of the Debian corpus (the `cl-*` libraries under
//! `/usr/share/common-lisp/source` and SBCL's sources) that reads without a diagnostic,
//! and for each kind of edit (delete a `)`, `(` or `"`, insert a stray `"`, open a `#|`),
//! `--per-file N` edits (default 2) in a random top-level form, seeded: the same run
//! gives the same figures. Printed per kind:
//!
//! * kept: the share of the file's other named definitions (top-level and container
//!   children) that the edited file's outline, which is what the collapsed view lists,
//!   still shows with the same name on the same line (target: 95% for every kind);
//! * inside: the share of the edited file's diagnostics that name a line inside the
//!   damaged form (target: 90%).
//!
//! ```sh
//! cargo bench --bench mutation
//! cargo bench --bench mutation -- --per-file 5 --seed 7
//! ```

#![allow(unreachable_pub)] // Helpers are `pub` for this program's own modules.

#[path = "../tests/common/mutation.rs"]
mod mutation;

use std::path::Path;
use std::time::Instant;

fn main() {
    let mut per_file = 2;
    let mut seed = 1;
    let mut show = 0;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--per-file" => {
                per_file = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--per-file N")
            }
            "--show" => show = args.next().and_then(|n| n.parse().ok()).expect("--show N"),
            "--seed" => seed = args.next().and_then(|n| n.parse().ok()).expect("--seed N"),
            _ => {}
        }
    }
    let roots: Vec<&Path> = mutation::DEBIAN_ROOTS.iter().map(Path::new).collect();
    let files = mutation::corpus(&roots);
    if files.is_empty() {
        eprintln!(
            "no .lisp files under {:?}: run `bash .ci/run` (it installs Debian's corpus)",
            mutation::DEBIAN_ROOTS
        );
        return;
    }
    if show > 0 {
        mutation::show_losses(&files, per_file, seed, show);
        return;
    }
    let t = Instant::now();
    let totals = mutation::run(&files, per_file, seed);
    println!(
        "mutation benchmark: {} files, {per_file} edits per kind per file, seed {seed}, {:.1?}",
        files.len(),
        t.elapsed()
    );
    println!("| edit | edits | other definitions kept | edits keeping all | diagnostics inside the damaged form |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    for (kind, t) in &totals {
        println!(
            "| {} | {} | {:.2}% ({}/{}) | {:.1}% | {:.2}% ({}/{}) |",
            kind.label(),
            t.edits,
            t.kept_percent(),
            t.sum.others_kept,
            t.sum.others,
            mutation::percent(t.all_kept, t.edits),
            t.inside_percent(),
            t.sum.diagnostics_inside,
            t.sum.diagnostics,
        );
    }
}
