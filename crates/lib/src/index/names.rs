//! Per-file tables that let a request skip the files that cannot hold an answer: the
//! folded names a file defines, and the words its text holds ([`crate::project::words`]).
//! Each is a sorted set of hashes (eight bytes a name, no text kept): a hash collision
//! only costs a file read for nothing, never a missed answer.

use super::analysis::Symbol;
use crate::find::SymbolQuery;
pub use crate::project::words::{words, words_answer_for, NameSet};

/// The folded names ([`SymbolQuery::name`]) the named symbols of the tree define:
/// `query.matches_name(written)` only when the set holds `query.name`.
pub fn defined(symbols: &[Symbol]) -> NameSet {
    let mut hashes = Vec::new();
    let mut stack: Vec<&Symbol> = symbols.iter().collect();
    while let Some(s) = stack.pop() {
        if s.named {
            if let Some(q) = SymbolQuery::parse(s.name()) {
                hashes.push(NameSet::hash(q.name.as_bytes()));
            }
        }
        stack.extend(&s.children);
    }
    NameSet::of(hashes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::analysis;

    /// Texts of the characters that matter (escapes, package markers, prefixes,
    /// comments, strings, case), made by a small deterministic generator.
    fn texts() -> Vec<Vec<u8>> {
        let pieces: [&[u8]; 24] = [
            b"aver", b"AVER", b"Aver", b"x", b":", b"::", b"|", b"\\", b"#", b"@", b"'", b"`",
            b",", b";", b"\n", b" ", b"(", b")", b"\"", b"#|", b"|#", b"cl", b"av\\er", b"a|ve|r",
        ];
        let mut seed = 7u64;
        (0..3000)
            .map(|_| {
                let mut text = Vec::new();
                for _ in 0..12 {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    text.extend_from_slice(pieces[(seed >> 33) as usize % pieces.len()]);
                }
                text
            })
            .collect()
    }

    #[test]
    fn every_file_with_a_use_holds_the_name_as_a_word() {
        let queries: Vec<SymbolQuery> = ["aver", "cl:aver", "x", ":aver"]
            .iter()
            .map(|q| SymbolQuery::parse(q).unwrap())
            .collect();
        let mut found = 0;
        for text in texts() {
            let set = words(&text);
            for q in &queries {
                assert!(words_answer_for(&q.name));
                if !analysis::uses(&text, q).is_empty() {
                    found += 1;
                    assert!(
                        set.may_hold(q.name.as_bytes()),
                        "{:?} in {:?}",
                        q.name,
                        String::from_utf8_lossy(&text)
                    );
                }
            }
        }
        // The generator makes uses (the check above is not vacuous).
        assert!(found > 1000, "{found}");
    }

    #[test]
    fn names_with_word_ends_are_not_answered_by_words() {
        assert!(!words_answer_for("a:b") && !words_answer_for("a b") && !words_answer_for("é"));
        assert!(words_answer_for("vector-push") && !words_answer_for(""));
    }

    #[test]
    fn defined_names_are_folded_as_queries_fold_them() {
        let grammar = crate::grammar::Grammar::builtin();
        let text = b"(defun Foo ()) (defun (setf Bar) (v)) (defmethod cl-user::baz ((x t)))";
        let set = defined(&analysis::symbols(text, &grammar));
        for (query, held) in [
            ("foo", true),
            ("setf bar", false),
            ("(setf bar)", true),
            ("baz", true),
            ("x", false),
        ] {
            let q = SymbolQuery::parse(query).unwrap();
            assert_eq!(set.may_hold(q.name.as_bytes()), held, "{query}");
        }
    }
}
