//! Definitions found by `find` against the outline itself, over the Debian libraries
//! (`/usr/share/common-lisp/source`): for several name patterns, every named form of
//! every Lisp file (top-level, and children of containers, as the outline lists them)
//! whose name (or, for methods, printed key) matches must be found, at its line, and
//! nothing else. This checks the prefilter (the literals a pattern requires, the forms
//! classified only where they occur) against the plain walk that classifies every form;
//! `.` has no literal and takes the plain path itself.
//!
//! A call of a project's definer macro that `find` instantiates is reported by the
//! definitions its expansion makes (`via` the macro), not by the outline's generic guess
//! (docs/find.md#definitions-made-by-the-projects-own-macros; checked against SBCL by
//! `model_oracle.rs`): those calls, found once with `.`, are left out of the comparison
//! under every pattern, so that the prefilter of each is still checked on its own.
//!
//! Needs the Debian `cl-*` packages (`bash .ci/run` installs them); skipped with a notice
//! when missing, a failure under `CI=true`.

use crate::common;
use lisp_read_file::cancel::CancelToken;
use lisp_read_file::features::reads_without_features;
use lisp_read_file::find::{find, FindRequest};
use lisp_read_file::grammar::Grammar;
use lisp_read_file::guard::Guard;
use lisp_read_file::outline::{outline_bytes, OutlineItem};
use lisp_read_file::view::{is_lisp_path, Pattern};
use std::collections::BTreeSet;
use std::path::PathBuf;

const CORPUS: &str = "/usr/share/common-lisp/source";
const PATTERNS: [&str; 7] = ["^make-", "-p$", "print", "^%", "with-.*-", "(setf", "."];

#[test]
fn definitions_match_the_outline_on_the_debian_libraries() {
    let corpus = PathBuf::from(CORPUS);
    let how = "apt-get install cl-ppcre cl-alexandria ... (the cl-* packages .ci/run lists)";
    if !common::tool_available(
        corpus.is_dir(),
        &format!("the Debian Lisp libraries ({CORPUS})"),
        how,
    ) {
        return;
    }
    let guard = Guard::confined(std::slice::from_ref(&corpus), 64 << 20).unwrap();
    let grammar = Grammar::builtin();
    let walk = guard.walk(&guard.directory(".").unwrap().unwrap(), &is_lisp_path);
    let files: Vec<(String, Vec<u8>)> = walk
        .files
        .iter()
        .filter_map(|f| Some((f.display_path.clone(), guard.read_walked(f).ok()?.bytes)))
        .collect();
    assert!(files.len() > 1000, "{} files", files.len());
    let mut everything = FindRequest::new(".");
    everything.name_pattern = Some(".".to_string());
    everything.limit = usize::MAX;
    let instantiated: BTreeSet<(String, usize)> =
        find(&guard, &grammar, &everything, &CancelToken::new())
            .unwrap()
            .definitions
            .unwrap()
            .into_iter()
            .filter(|d| d.via.is_some())
            .map(|d| (d.file, d.line))
            .collect();
    assert!(!instantiated.is_empty());
    for text in PATTERNS {
        let pattern = Pattern::regex_or_literal(text, true).unwrap();
        let mut expected = BTreeSet::new();
        for (file, bytes) in &files {
            let outline = outline_bytes(bytes, &grammar);
            let mut stack: Vec<&OutlineItem> = outline.items.iter().rev().collect();
            while let Some(item) = stack.pop() {
                let Some(form) = &item.form else { continue };
                // What no features could make the reader read (`#+(or)`) is not searched
                // (docs/find.md#features).
                let never_read = form.conditionals().iter().any(|c| {
                    let expression = c.get(2..).unwrap_or_default().as_bytes();
                    reads_without_features(c.starts_with("#+"), expression) == Some(false)
                });
                if never_read {
                    continue;
                }
                if let Some(name) = form.name.as_deref() {
                    let key = form.is_method().then(|| form.method_key()).flatten();
                    let matches = pattern.is_match(name)
                        || key.as_deref().is_some_and(|k| pattern.is_match(k));
                    if matches && !instantiated.contains(&(file.clone(), item.start_line)) {
                        expected.insert((
                            file.clone(),
                            item.start_line,
                            key.unwrap_or_else(|| name.to_string()),
                        ));
                    }
                }
                stack.extend(form.children.iter().rev());
            }
        }
        let mut request = FindRequest::new(".");
        request.name_pattern = Some(text.to_string());
        request.limit = usize::MAX;
        let result = find(&guard, &grammar, &request, &CancelToken::new()).unwrap();
        let found: BTreeSet<(String, usize, String)> = result
            .definitions
            .unwrap()
            .into_iter()
            // Derived definitions (a structure's constructor, a slot's accessor) are names
            // no form spells as its own: tests/project/find_derived.rs and the SBCL oracle
            // check them; this test compares the forms' own names.
            .filter(|d| d.form.is_none())
            .map(|d| (d.file, d.line, d.name))
            .collect();
        let missed: Vec<_> = expected.difference(&found).take(10).collect();
        let extra: Vec<_> = found.difference(&expected).take(10).collect();
        assert!(
            missed.is_empty() && extra.is_empty(),
            "{text}: missed {missed:?}, extra {extra:?}"
        );
        assert!(
            expected.len() > 20,
            "{text}: only {} definitions",
            expected.len()
        );
        eprintln!(
            "find_corpus: {text:?}: {} definitions agree",
            expected.len()
        );
    }
}
