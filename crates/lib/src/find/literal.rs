//! The searches of a file's bytes for names, case-insensitively: where a symbol's name or
//! one of a few literals may be written.
//!
//! A few ASCII names are each searched in the file's bytes as they are, two bytes of the
//! name compared in any case over many positions at once ([`crate::caseless`]). More are
//! searched case-sensitively, folded to lower case, in the file's bytes folded to ASCII
//! lower case (one pass per file, shared by the searches of that file, [`Haystack`]): the
//! same matches as an ASCII case-insensitive search, at the positions of the bytes
//! (folding keeps every byte where it is), found with the fast literal searches (Teddy)
//! that case-insensitive patterns turn off, many literals in one pass ([`Alternation`]);
//! the search anchored on `def` ([`anchored`]) has folded bytes, and searches its few other
//! names in them with `memmem`. A name with non-ASCII characters keeps a Unicode
//! case-insensitive regex over the bytes as they are.

mod anchored;

use crate::alternation::Alternation;
use crate::caseless::Caseless;
use regex::bytes::{Regex, RegexBuilder};
use std::cell::OnceCell;
use std::sync::OnceLock;

/// A file's bytes, and (once asked for) the same bytes folded to ASCII lower case.
pub(crate) struct Haystack<'a> {
    bytes: &'a [u8],
    folded: OnceCell<Vec<u8>>,
}

impl<'a> Haystack<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Haystack<'a> {
        Haystack {
            bytes,
            folded: OnceCell::new(),
        }
    }

    fn folded(&self) -> &[u8] {
        // Mapped into a new vector (one pass, vectorized), not copied then folded.
        self.folded
            .get_or_init(|| self.bytes.iter().map(u8::to_ascii_lowercase).collect())
    }
}

/// Where any of some literals is written, case-insensitively (or, for a text search,
/// exactly).
pub(crate) enum Finder {
    /// ASCII literals: their searches ([`Folded`]), and the ASCII case-insensitive search
    /// for a slice (made when first asked).
    Folded {
        folded: Folded,
        literals: Vec<String>,
        insensitive: OnceLock<Alternation>,
    },
    /// Over the bytes as they are: a Unicode case-insensitive search, or a text's exact one.
    Plain(Regex),
}

impl Finder {
    /// Any of `literals`, case-insensitively: ASCII folding for ASCII literals (a name
    /// spelled with the Kelvin sign or the long s for `k` or `s` is not found), Unicode
    /// simple case folding when one is not ASCII.
    pub(crate) fn any(literals: &[String]) -> Finder {
        if literals.iter().all(|l| l.is_ascii()) {
            let folded: Vec<String> = literals.iter().map(|l| l.to_ascii_lowercase()).collect();
            return Finder::Folded {
                folded: Folded::of(&folded),
                literals: literals.to_vec(),
                insensitive: OnceLock::new(),
            };
        }
        Finder::Plain(unicode_alternation(literals))
    }

    /// A search over the bytes as they are.
    /// Where any of `literals` is written, for a search that asks only which forms hold
    /// one: every occurrence, overlapping ones too, when that gives the same forms
    /// ([`anchored`]); else as [`Finder::any`].
    pub(crate) fn any_in_forms(literals: &[String]) -> Finder {
        if literals.iter().all(|l| l.is_ascii()) {
            let folded: Vec<String> = literals.iter().map(|l| l.to_ascii_lowercase()).collect();
            if let Some(search) = anchored::Anchored::new(&folded, Folded::of) {
                return Finder::Folded {
                    folded: Folded::Anchored(Box::new(search)),
                    literals: literals.to_vec(),
                    insensitive: OnceLock::new(),
                };
            }
        }
        Finder::any(literals)
    }

    /// Where the forms of `hay` start to hold a literal, asked form by form in order
    /// ([`FormHits::first_from`]): found as asked for the anchored search, else listed.
    pub(crate) fn in_forms<'a>(&'a self, hay: &'a Haystack) -> FormHits<'a> {
        match self {
            Finder::Folded {
                folded: Folded::Anchored(search),
                ..
            } => FormHits::Found(search.next(hay.folded())),
            _ => FormHits::Listed {
                starts: self.starts(hay),
                next: 0,
            },
        }
    }

    pub(crate) fn plain(regex: Regex) -> Finder {
        Finder::Plain(regex)
    }

    /// Where matches start in the haystack, in order ([`Folded::starts`]; a single
    /// literal's: leftmost-first, not overlapping).
    pub(crate) fn starts(&self, hay: &Haystack) -> Vec<usize> {
        match self {
            Finder::Folded { folded, .. } => folded.starts(hay),
            Finder::Plain(regex) => regex.find_iter(hay.bytes).map(|m| m.start()).collect(),
        }
    }

    /// Whether the haystack holds a match.
    pub(crate) fn is_in(&self, hay: &Haystack) -> bool {
        match self {
            Finder::Folded {
                folded: Folded::Each(finders),
                ..
            } => finders.iter().any(|f| f.find(hay.bytes).is_some()),
            Finder::Folded {
                folded: Folded::All(search),
                ..
            } => search.is_match(hay.folded()),
            Finder::Folded {
                folded: Folded::Anchored(search),
                ..
            } => !search.starts(hay.folded()).is_empty(),
            Finder::Plain(regex) => regex.is_match(hay.bytes),
        }
    }

    /// Whether `bytes` (a slice: a form, a macro's text) hold a match, without folding a
    /// copy of them.
    pub(crate) fn is_match(&self, bytes: &[u8]) -> bool {
        match self {
            Finder::Folded {
                literals,
                insensitive,
                ..
            } => insensitive
                .get_or_init(|| Alternation::new(literals, true))
                .is_match(bytes),
            Finder::Plain(regex) => regex.is_match(bytes),
        }
    }
}

/// Literals searched for one by one at most: each search probes a literal's rarest bytes,
/// where one search for all (Teddy) goes by their first bytes, as common as `def`.
const SEPARATE_SEARCHES: usize = 8;

/// The searches of ASCII literals folded to lower case: a few one by one (over the bytes
/// as they are, or over folded bytes when the search has them), more at once over folded
/// bytes.
pub(crate) enum Folded {
    /// One per literal (a few), over the bytes as they are.
    Each(Vec<Caseless>),
    /// One for all.
    All(Alternation),
    /// Most from the occurrences of `def` ([`anchored`]).
    Anchored(Box<anchored::Anchored>),
}

impl Folded {
    /// The search of the folded `literals`: one per literal for a few, else one for all.
    fn of(folded: &[String]) -> Folded {
        if folded.len() <= SEPARATE_SEARCHES {
            Folded::Each(folded.iter().map(|l| Caseless::new(l.as_bytes())).collect())
        } else {
            Folded::All(Alternation::new(folded, false))
        }
    }

    /// Where matches start, in order. One search: leftmost-first, not overlapping. One per
    /// literal: every literal's own matches, merged (a match of one inside another's is
    /// kept): the callers only ask which forms hold one.
    fn starts(&self, hay: &Haystack) -> Vec<usize> {
        match self {
            // Over the bytes as they are: no folded copy is made.
            Folded::Each(finders) => merged(finders.iter().map(|f| f.find_iter(hay.bytes))),
            _ => self.starts_in(hay.folded()),
        }
    }

    /// [`Folded::starts`] in bytes already folded to ASCII lower case.
    fn starts_in(&self, folded: &[u8]) -> Vec<usize> {
        match self {
            Folded::All(search) => search.starts(folded),
            Folded::Anchored(search) => search.starts(folded),
            Folded::Each(finders) => merged(finders.iter().map(|f| f.find_iter_folded(folded))),
        }
    }
}

/// Each literal's matches, merged in order (one inside another's kept).
fn merged<I: Iterator<Item = usize>>(each: impl ExactSizeIterator<Item = I>) -> Vec<usize> {
    let several = each.len() > 1;
    let mut starts: Vec<usize> = each.flatten().collect();
    if several {
        starts.sort_unstable();
        starts.dedup();
    }
    starts
}

/// The starts of literals in a file, for the forms holding one ([`Finder::in_forms`]).
pub(crate) enum FormHits<'a> {
    /// Every start, in order, and the first not yet passed.
    Listed {
        starts: Vec<usize>,
        next: usize,
    },
    Found(anchored::Next<'a>),
}

impl FormHits<'_> {
    /// The first start at `from` or after; asked at increasing positions.
    pub(crate) fn first_from(&mut self, from: usize) -> Option<usize> {
        match self {
            FormHits::Listed { starts, next } => {
                while *next < starts.len() && starts[*next] < from {
                    *next += 1;
                }
                starts.get(*next).copied()
            }
            FormHits::Found(search) => search.first_from(from),
        }
    }
}

/// The Unicode case-insensitive alternation of `literals` (one not ASCII), escaped; past
/// the regex's size limit, a regex matching everywhere (every form is then read: slower,
/// still right; such sets of non-ASCII names are not met in practice).
fn unicode_alternation(literals: &[String]) -> Regex {
    let alternatives: Vec<String> = literals.iter().map(|l| regex::escape(l)).collect();
    RegexBuilder::new(&alternatives.join("|"))
        .case_insensitive(true)
        .unicode(true)
        .build()
        .unwrap_or_else(|_| Regex::new("").expect("a valid regex"))
}

#[cfg(test)]
mod tests {
    use super::{Finder, Haystack};

    fn starts(literals: &[&str], text: &str) -> Vec<usize> {
        let literals: Vec<String> = literals.iter().map(|l| l.to_string()).collect();
        Finder::any(&literals).starts(&Haystack::new(text.as_bytes()))
    }

    #[test]
    fn ascii_names_are_found_in_any_case_where_they_are() {
        let text = "(defun Make-LVAR ()) ; MAKE-lvar é make-lvar";
        assert_eq!(starts(&["make-lvar"], text), vec![7, 23, 36]);
        assert_eq!(starts(&["MAKE-Lvar"], text), vec![7, 23, 36]);
        // Leftmost-first, not overlapping, as the case-insensitive regex.
        assert_eq!(starts(&["aa"], "AaAa a"), vec![0, 2]);
        assert_eq!(starts(&["defun", "make"], text), vec![1, 7, 23, 36]);
        // Past eight literals, one search for all.
        let many = ["a1", "a2", "a3", "a4", "a5", "a6", "a7", "lvar", "defun"];
        assert_eq!(starts(&many, text), vec![1, 12, 28, 41]);
        let finder = Finder::any(&["lvar".to_string()]);
        assert!(finder.is_match(b"(MAKE-LVAR)"));
        assert!(!finder.is_match(b"(make-lva r)"));
        assert!(finder.is_in(&Haystack::new(b"x LVar")));
    }

    #[test]
    fn a_non_ascii_name_is_folded_as_unicode() {
        assert_eq!(
            starts(&["straße"], "(STRASSE) (Straße) (STRAẞE)"),
            vec![11, 21]
        );
        // The non-ASCII byte is not folded to ASCII: `é` is not `e`.
        assert_eq!(starts(&["e"], "é E"), vec![3]);
    }
}
