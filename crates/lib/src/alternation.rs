//! Many literals searched at once, in one pass over the bytes: the regex crate's
//! alternation of them for a few (its lazy DFA with a Teddy prefilter searches fastest),
//! one Aho-Corasick automaton built directly for more. Compiling the regex costs about
//! 4,000 instructions a byte of the literals, more than linearly, and past its size limit
//! it cannot be built at all (a regex matching everywhere stood in: every form read); the
//! automaton's construction is linear in the literals. Both find the leftmost-first
//! matches an alternation finds, so the answers do not depend on which one is used.

use aho_corasick::{AhoCorasick, AhoCorasickKind, Input, MatchKind};
use regex::bytes::{Regex, RegexBuilder};

/// One search for any of some literals (ASCII case-insensitive when built so).
pub(crate) enum Alternation {
    Regex(Regex),
    Automaton(AhoCorasick),
}

impl Alternation {
    /// The search of `literals` (bytes, matched as written; Unicode off), ASCII
    /// case-insensitively when asked.
    pub(crate) fn new<S: AsRef<str>>(literals: &[S], ascii_case_insensitive: bool) -> Self {
        let bytes: usize = literals.iter().map(|l| l.as_ref().len()).sum();
        if bytes > MAX_REGEX_BYTES {
            return Alternation::Automaton(automaton(literals, ascii_case_insensitive));
        }
        let escaped: Vec<String> = literals.iter().map(|l| regex::escape(l.as_ref())).collect();
        let regex = RegexBuilder::new(&escaped.join("|"))
            .case_insensitive(ascii_case_insensitive)
            .unicode(false)
            .build();
        match regex {
            Ok(regex) => Alternation::Regex(regex),
            Err(_) => Alternation::Automaton(automaton(literals, ascii_case_insensitive)),
        }
    }

    /// Where matches start in `hay`, in order: leftmost-first, not overlapping.
    pub(crate) fn starts(&self, hay: &[u8]) -> Vec<usize> {
        match self {
            Alternation::Regex(r) => r.find_iter(hay).map(|m| m.start()).collect(),
            Alternation::Automaton(a) => a.find_iter(hay).map(|m| m.start()).collect(),
        }
    }

    /// Whether `hay` holds a match.
    pub(crate) fn is_match(&self, hay: &[u8]) -> bool {
        match self {
            Alternation::Regex(r) => r.is_match(hay),
            Alternation::Automaton(a) => a.is_match(hay),
        }
    }

    /// Where the first match at `from` or after starts (`from` at most `hay`'s length).
    pub(crate) fn first_from(&self, hay: &[u8], from: usize) -> Option<usize> {
        match self {
            Alternation::Regex(r) => r.find_at(hay, from).map(|m| m.start()),
            Alternation::Automaton(a) => a.find(Input::new(hay).range(from..)).map(|m| m.start()),
        }
    }

    /// Whether this search is the automaton (for tests: the regex's size limit was passed).
    #[cfg(test)]
    pub(crate) fn is_automaton(&self) -> bool {
        matches!(self, Alternation::Automaton(_))
    }
}

/// Literals of more bytes than this are searched by the automaton: the regex of 4 KiB of
/// literals costs about 17 M instructions to compile; the sets of the searches over SBCL's
/// sources are a few hundred bytes.
const MAX_REGEX_BYTES: usize = 4096;

/// The automaton of `literals`, leftmost-first, a contiguous NFA (a DFA's table is the
/// states times the byte classes: too large for long literals). Were it refused (more states than its
/// index type holds: gigabytes of literals, past any input's cap), the empty literal stands
/// in: it matches everywhere, so nothing is missed.
fn automaton<S: AsRef<str>>(literals: &[S], ascii_case_insensitive: bool) -> AhoCorasick {
    AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostFirst)
        .ascii_case_insensitive(ascii_case_insensitive)
        .kind(Some(AhoCorasickKind::ContiguousNFA))
        .build(literals.iter().map(|l| l.as_ref()))
        .unwrap_or_else(|_| AhoCorasick::new([""]).expect("the empty literal"))
}

#[cfg(test)]
mod tests {
    use super::Alternation;

    /// Literals long and many enough for the automaton (and past the regex's size limit).
    fn too_many_for_a_regex() -> Vec<String> {
        (0..2_000)
            .map(|i| format!("define-a-rather-long-macro-name-number-{i:06}-of-the-project"))
            .collect()
    }

    #[test]
    fn many_long_literals_are_searched_by_the_automaton() {
        let literals = too_many_for_a_regex();
        let search = Alternation::new(&literals, true);
        assert!(
            search.is_automaton(),
            "the regex was built: make the literals longer"
        );
        let hay = "(DEFINE-A-RATHER-LONG-MACRO-NAME-NUMBER-000007-OF-THE-PROJECT x)\n\
                   (defun f () (define-a-rather-long-macro-name-number-001999-of-the-project))\n\
                   (define-a-rather-long-macro-name-number-002000-of-the-project)";
        let first = 1;
        let second = hay.find("(define-a").unwrap() + 1;
        let unknown = hay.rfind("(define-a").unwrap();
        let hay = hay.as_bytes();
        assert_eq!(search.starts(hay), vec![first, second]);
        assert!(search.is_match(&hay[first + 1..]));
        assert!(!search.is_match(&hay[unknown..]));
        assert_eq!(search.first_from(hay, first + 1), Some(second));
        assert_eq!(search.first_from(hay, second + 1), None);
        assert_eq!(search.first_from(hay, hay.len()), None);
    }

    #[test]
    fn the_regex_and_the_automaton_find_the_same_leftmost_first_matches() {
        let literals = [
            "def",
            "defun",
            "defmacro",
            "un",
            "macro-",
            "-m",
            "a",
            "DEFMACRO-X",
        ];
        let text = b"(defun f) (defmacro-x m) (DEFUN G) undefmacro a-macro-b defmacr";
        for insensitive in [false, true] {
            let regex = Alternation::new(&literals, insensitive);
            assert!(!regex.is_automaton());
            let automaton = Alternation::Automaton(super::automaton(&literals, insensitive));
            assert_eq!(regex.starts(text), automaton.starts(text), "{insensitive}");
            for from in 0..=text.len() {
                assert_eq!(
                    regex.first_from(text, from),
                    automaton.first_from(text, from)
                );
                assert_eq!(
                    regex.is_match(&text[from..]),
                    automaton.is_match(&text[from..])
                );
            }
        }
    }

    #[test]
    fn a_few_literals_keep_the_regex_and_its_leftmost_first_matches() {
        let search = Alternation::new(&["ab", "abc", "b"], false);
        assert!(!search.is_automaton());
        assert_eq!(search.starts(b"abc xbc ABC"), vec![0, 5]);
        let insensitive = Alternation::new(&["ab", "abc", "b"], true);
        assert_eq!(insensitive.starts(b"abc xbc ABC"), vec![0, 5, 8]);
        assert_eq!(insensitive.first_from(b"abc xbc ABC", 6), Some(8));
    }
}
