//! User patterns (`name_pattern`, `content_pattern`) with bounded cost.
//!
//! A pattern comes from the request, so it is hostile input. Three bounds keep it cheap:
//! - its text is at most [`MAX_PATTERN_BYTES`] (parsing is then cheap);
//! - its compiled program is at most [`COMPILED_SIZE_LIMIT`] bytes (compiling is cheap,
//!   and the program has a bounded number of states);
//! - matching runs a lazy DFA (linear in the text) whose cache may be rebuilt only
//!   `MAX_CACHE_CLEARS` times per request. When it gives up (a pattern whose DFA keeps
//!   exploding, or a Unicode word boundary next to a non-ASCII byte), the search falls back
//!   to the `regex` crate's other engines (PikeVM, bounded backtracker), whose worst case
//!   is (program states) x (text bytes); that work is charged to a per-request budget of
//!   [`FALLBACK_BUDGET`] state-bytes. Once the budget is spent the pattern is marked too
//!   costly and the tool reports an error instead of a result.
//!
//! So the work of one request is at most a constant (the DFA's cache rebuilds and the
//! budget) plus a constant times the text searched; the views search each form or line a
//! bounded number of times, so that is linear in the file.

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::meta::{self, Regex};
use regex_automata::nfa::thompson::{self, WhichCaptures, NFA};
use regex_automata::util::syntax;
use regex_automata::Input;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// Longest pattern text accepted, in bytes.
pub(crate) const MAX_PATTERN_BYTES: usize = 4096;
/// Largest compiled program (the NFA's size limit, as the `regex` crate's `size_limit`).
pub(crate) const COMPILED_SIZE_LIMIT: usize = 1 << 20;
/// Memory of the lazy DFA's cache (as the `regex` crate's `dfa_size_limit`).
const DFA_CACHE_BYTES: usize = 1 << 21;
/// Times the lazy DFA may rebuild its full cache in one request before it gives up.
const MAX_CACHE_CLEARS: usize = 8;
/// State-bytes (program states x text bytes) the fallback engine may spend per request;
/// at a few nanoseconds each, about a second in the worst case.
pub(crate) const FALLBACK_BUDGET: u64 = 1 << 28;
/// Characters of user input quoted in a message.
const QUOTED_CHARS: usize = 80;

/// A compiled pattern and its source text (for notes).
pub struct Pattern {
    pub text: String,
    case_insensitive: bool,
    /// Whether the text is also matched literally ([`Pattern::regex_or_literal`]).
    literal: bool,
    regex: Regex,
    dfa: DFA,
    cache: Mutex<Cache>,
    /// Program states: what one text byte costs the fallback engine at most.
    states: u64,
    budget: Budget,
    too_costly: AtomicBool,
}

/// Why a pattern was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatternError {
    TooLong(usize),
    Invalid(String),
}

impl Pattern {
    /// Compiles `text` as a regex within the bounds above.
    pub fn new(text: &str, case_insensitive: bool) -> Result<Pattern, PatternError> {
        if text.len() > MAX_PATTERN_BYTES {
            return Err(PatternError::TooLong(text.len()));
        }
        Pattern::compile(text, &[text], case_insensitive).map_err(|(e, _)| e)
    }

    /// A pattern that matches as a regex **or** as literal text (`area :around (shape)`,
    /// `*count*`): a text matches when the regex matches it or when it contains `text`
    /// (case folded as asked). A `text` that is not valid regex syntax is literal text
    /// only. One search either way: the regex and the literal are two patterns of one
    /// automaton (docs/views.md#expanded-forms).
    pub fn regex_or_literal(text: &str, case_insensitive: bool) -> Result<Pattern, PatternError> {
        if text.len() > MAX_PATTERN_BYTES {
            return Err(PatternError::TooLong(text.len()));
        }
        let literal = regex::escape(text);
        if literal == text {
            return Pattern::new(text, case_insensitive);
        }
        match Pattern::compile(text, &[text, &literal], case_insensitive) {
            Ok(p) => Ok(p),
            Err((_, true)) => Pattern::compile(text, &[&literal], case_insensitive),
            // Too large together (the user's regex is near the size limit): the regex
            // alone, or its own error.
            Err((_, false)) => Pattern::compile(text, &[text], case_insensitive),
        }
        .map_err(|(e, _)| e)
    }

    /// Compiles `patterns` (a text matches when one of them matches it); `text` is what
    /// the user wrote. The error says whether it was a syntax error.
    fn compile(
        text: &str,
        patterns: &[&str],
        case_insensitive: bool,
    ) -> Result<Pattern, (PatternError, bool)> {
        let syntax = syntax::Config::new().case_insensitive(case_insensitive);
        // The fallback: the regex crate's engines without its lazy DFA (ours gave up
        // already), so that its cost is at most (states) x (bytes), as charged.
        let regex = Regex::builder()
            .syntax(syntax)
            .configure(
                meta::Config::new()
                    .nfa_size_limit(Some(COMPILED_SIZE_LIMIT))
                    .hybrid(false)
                    .dfa(false),
            )
            .build_many(patterns)
            .map_err(|e| match e.syntax_error() {
                Some(syntax) => (invalid(syntax), true),
                None => (invalid(&e), false),
            })?;
        let nfa = thompson::Compiler::new()
            .syntax(syntax)
            .configure(
                thompson::Config::new()
                    .nfa_size_limit(Some(COMPILED_SIZE_LIMIT))
                    .which_captures(WhichCaptures::None),
            )
            .build_many(patterns)
            .map_err(|e| (invalid(&e), false))?;
        let dfa = lazy_dfa(&nfa).map_err(|e| (e, false))?;
        let cache = Mutex::new(dfa.create_cache());
        Ok(Pattern {
            text: text.to_string(),
            case_insensitive,
            literal: patterns.len() > 1 || patterns[0] != text,
            regex,
            dfa,
            cache,
            states: nfa.states().len() as u64,
            budget: Budget::new(FALLBACK_BUDGET),
            too_costly: AtomicBool::new(false),
        })
    }

    /// Whether the pattern matches somewhere in `haystack`. False once the pattern is
    /// [`too costly`](Pattern::too_costly).
    pub fn is_match(&self, haystack: &str) -> bool {
        if self.too_costly() {
            return false;
        }
        let input = Input::new(haystack).earliest(true);
        let answer = {
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            self.dfa.try_search_fwd(&mut cache, &input)
        };
        match answer {
            Ok(found) => found.is_some(),
            Err(_) => {
                if self.budget.charge(self.states, haystack.len()) {
                    self.regex.is_match(haystack)
                } else {
                    self.too_costly.store(true, Ordering::Relaxed);
                    false
                }
            }
        }
    }

    /// True when matching spent the request's budget: answers are no longer reliable.
    pub fn too_costly(&self) -> bool {
        self.too_costly.load(Ordering::Relaxed)
    }

    /// The pattern's text for a message: a short prefix, quoted.
    pub fn quoted(&self) -> String {
        crate::shown::quoted(&self.text, QUOTED_CHARS)
    }
}

/// A compiler's message on one line, cut. A syntax error's message quotes the whole
/// pattern before the reason: only the reason is kept.
fn invalid(e: &dyn std::fmt::Display) -> PatternError {
    let message = e.to_string();
    let reason = message
        .rfind("error: ")
        .map_or(message.as_str(), |at| &message[at + "error: ".len()..]);
    let reason = reason.split_whitespace().collect::<Vec<_>>().join(" ");
    PatternError::Invalid(match reason.char_indices().nth(4 * QUOTED_CHARS) {
        None => reason,
        Some((cut, _)) => format!("{}…", &reason[..cut]),
    })
}

fn lazy_dfa(nfa: &NFA) -> Result<DFA, PatternError> {
    DFA::builder()
        .configure(
            DFA::config()
                .cache_capacity(DFA_CACHE_BYTES)
                .skip_cache_capacity_check(true)
                .minimum_cache_clear_count(Some(MAX_CACHE_CLEARS))
                .unicode_word_boundary(true),
        )
        .build_from_nfa(nfa.clone())
        .map_err(|e| invalid(&e))
}

impl Clone for Pattern {
    /// A fresh compile: a clone gets its own cache and a full budget.
    fn clone(&self) -> Pattern {
        let compiled = if self.literal {
            Pattern::regex_or_literal(&self.text, self.case_insensitive)
        } else {
            Pattern::new(&self.text, self.case_insensitive)
        };
        compiled.expect("compiled once already")
    }
}

impl std::fmt::Debug for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pattern").field("text", &self.text).finish()
    }
}

/// A budget of work, spent by [`Budget::charge`] and never refilled.
#[derive(Debug)]
pub(crate) struct Budget {
    left: AtomicU64,
}

impl Budget {
    pub(crate) fn new(total: u64) -> Budget {
        Budget {
            left: AtomicU64::new(total),
        }
    }

    /// Spends `states x bytes` when that much is left; false (and nothing spent) when not.
    pub(crate) fn charge(&self, states: u64, bytes: usize) -> bool {
        let cost = states.saturating_mul(bytes as u64);
        self.left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(cost)
            })
            .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_spent_once_and_refuses_what_does_not_fit() {
        let budget = Budget::new(100);
        assert!(budget.charge(10, 5));
        assert!(budget.charge(10, 5));
        assert!(!budget.charge(1, 1));
        let budget = Budget::new(100);
        assert!(!budget.charge(u64::MAX, usize::MAX));
        assert!(budget.charge(1, 100));
    }

    #[test]
    fn normal_patterns_match_as_the_regex_crate_does() {
        for (pattern, ci, haystack, expected) in [
            ("defun", false, "(defun foo ())", true),
            ("DEFUN", true, "(defun foo ())", true),
            ("DEFUN", false, "(defun foo ())", false),
            (r"^\(def", false, "  (defun", false),
            (r"\bfoo\b", false, "é foo é", true),
            (r"\bfoo\b", false, "éfooé", false),
            (r"\w+-\d", false, "λ-1", true),
        ] {
            let p = Pattern::new(pattern, ci).unwrap();
            assert_eq!(p.is_match(haystack), expected, "{pattern} on {haystack}");
            assert!(!p.too_costly());
        }
    }

    #[test]
    fn a_hostile_pattern_is_refused_within_the_budget() {
        let p = Pattern::new("(?:[ab]*a[ab]{300}){40}x", false).unwrap();
        let haystack = "ab".repeat(512 * 1024);
        assert!(!p.is_match(&haystack));
        assert!(p.too_costly());
        // Once too costly, every search answers at once.
        assert!(!p.is_match("x"));
    }

    #[test]
    fn long_patterns_and_huge_programs_are_refused_with_short_messages() {
        let long = "a".repeat(MAX_PATTERN_BYTES + 1);
        assert_eq!(
            Pattern::new(&long, false).unwrap_err(),
            PatternError::TooLong(MAX_PATTERN_BYTES + 1)
        );
        let huge = r"\w".repeat(2000);
        match Pattern::new(&huge, false).unwrap_err() {
            PatternError::Invalid(m) => assert!(m.len() < 400, "{m}"),
            e => panic!("{e:?}"),
        }
        let unclosed = format!("({}", "a".repeat(4000));
        match Pattern::new(&unclosed, false).unwrap_err() {
            PatternError::Invalid(m) => assert_eq!(m, "unclosed group"),
            e => panic!("{e:?}"),
        }
    }
}

#[cfg(test)]
mod literal_tests {
    use super::*;

    #[test]
    fn a_name_pattern_is_a_regex_or_literal_text() {
        let method = Pattern::regex_or_literal("area :around (shape)", true).unwrap();
        assert!(method.is_match("area :around (shape)"));
        assert!(method.is_match("AREA :AROUND (SHAPE)"));
        // As a regex alone, `(shape)` is a group: the printed method did not match.
        let regex = Pattern::new("area :around (shape)", true).unwrap();
        assert!(!regex.is_match("area :around (shape)"));
        // The regex still works, anchors included.
        let anchored = Pattern::regex_or_literal("^area$", true).unwrap();
        assert!(anchored.is_match("area") && !anchored.is_match("areas"));
        // Not a valid regex: literal text only, not an error.
        let star = Pattern::regex_or_literal("*count*", true).unwrap();
        assert!(star.is_match("*COUNT*") && !star.is_match("count"));
        let open = Pattern::regex_or_literal("(setf foo", true).unwrap();
        assert!(open.is_match("(setf foo)") && !open.is_match("setf foo"));
        assert!(open.clone().is_match("(SETF FOO)"));
        // A valid regex too large is still refused, as are long texts.
        assert!(Pattern::regex_or_literal(r"\w{5000}", true).is_err());
        let long = "a".repeat(MAX_PATTERN_BYTES + 1);
        assert!(Pattern::regex_or_literal(&long, true).is_err());
    }
}
