//! The widened prefilter of a search by name or pattern (the name, and the names of the
//! scope's definer macros that may make it: hundreds, most holding `def`), found from the
//! occurrences of `def` in the folded bytes, each checked against a trie of the literals
//! holding it, instead of one alternation whose prefilter stops at every `(def` of the
//! scope and confirms each with its automaton.
//!
//! It gives every occurrence of a literal, where the alternation gives the leftmost-first
//! ones that do not overlap: more starts, never in another form. A literal of this search
//! holds none of the bytes found where one form ends and another starts (whitespace,
//! `(`, `)`, quotes, `,`, `;`, `#`, `|`, `\`), so an occurrence overlapping another lies in
//! the same forms; the forms holding a start are the same.

use super::Folded;

/// The bytes that every literal of the trie holds.
const ANCHOR: &[u8] = b"def";

/// Literals holding [`ANCHOR`], by where it is in them; the others searched as [`Folded`].
pub(crate) struct Anchored {
    /// Per offset of the anchor's first occurrence in a literal, the literals so placed.
    tries: Vec<(usize, Trie)>,
    rest: Option<Box<Folded>>,
    anchor: memchr::memmem::Finder<'static>,
}

/// Literals fewer than this holding the anchor are searched as [`Folded`] is.
const MIN_ANCHORED: usize = 16;

/// A literal longer than this (bytes) holding the anchor keeps the alternation: each
/// occurrence of the anchor is checked as deep as the longest literal.
const MAX_ANCHORED_LENGTH: usize = 64;

impl Anchored {
    /// The search of the folded ASCII `literals`, or `None` when one holds a byte that
    /// may end a form (then overlapping occurrences could lie in other forms) or few hold
    /// the anchor. `"#.("` (a read-time form) may be among the others, unless a literal is
    /// `.` (the only one of the others that could start inside it).
    pub(crate) fn new(literals: &[String], rest: impl FnOnce(&[String]) -> Folded) -> Option<Self> {
        let (anchored, others): (Vec<&String>, Vec<&String>) = literals
            .iter()
            .partition(|l| memchr::memmem::find(l.as_bytes(), ANCHOR).is_some());
        let safe = |l: &&String| !l.bytes().any(ends_forms);
        if anchored.len() < MIN_ANCHORED
            || anchored.iter().any(|l| l.len() > MAX_ANCHORED_LENGTH)
            || !anchored.iter().all(safe)
            || !others.iter().all(|l| safe(l) || l.as_str() == "#.(")
            || (others.iter().any(|l| *l == "#.(") && others.iter().any(|l| *l == "."))
        {
            return None;
        }
        let mut tries: Vec<(usize, Trie)> = Vec::new();
        for l in anchored {
            let at = memchr::memmem::find(l.as_bytes(), ANCHOR)?;
            match tries.iter_mut().find(|(k, _)| *k == at) {
                Some((_, trie)) => trie.insert(l.as_bytes()),
                None => {
                    let mut trie = Trie::default();
                    trie.insert(l.as_bytes());
                    tries.push((at, trie));
                }
            }
        }
        let others: Vec<String> = others.into_iter().cloned().collect();
        Some(Anchored {
            tries,
            rest: (!others.is_empty()).then(|| Box::new(rest(&others))),
            anchor: memchr::memmem::Finder::new(ANCHOR).into_owned(),
        })
    }

    /// Where a literal starts in `folded`, in order: every occurrence.
    pub(crate) fn starts(&self, folded: &[u8]) -> Vec<usize> {
        let mut starts = Vec::new();
        for at in memchr::memmem::find_iter(folded, ANCHOR) {
            for (k, trie) in &self.tries {
                if at >= *k && trie.holds_prefix_of(&folded[at - k..]) {
                    starts.push(at - k);
                }
            }
        }
        if let Some(rest) = &self.rest {
            starts.extend(rest.starts_in(folded));
        }
        starts.sort_unstable();
        starts.dedup();
        starts
    }

    /// Where a form of `folded` from `from` on starts to hold a literal, found as the
    /// forms are met ([`Next`]): a form holding one is searched up to it only, and the
    /// others once, where one alternation would find every match of the file (the
    /// frequent names of a scope's own macros, as SBCL's `inst`, match thousands of times).
    pub(crate) fn next<'a>(&'a self, folded: &'a [u8]) -> Next<'a> {
        let parts = match self.rest.as_deref() {
            Some(Folded::Each(finders)) => finders.iter().map(Part::Literal).collect(),
            Some(Folded::All(search)) => vec![Part::All(search)],
            _ => Vec::new(),
        };
        Next {
            anchored: self,
            folded,
            parts: std::iter::once(Part::Tries)
                .chain(parts)
                .map(|p| (p, None))
                .collect(),
        }
    }

    /// The first start of a literal holding the anchor at `from` or after.
    fn first_anchored(&self, folded: &[u8], from: usize) -> Option<usize> {
        let longest = self.tries.iter().map(|(k, _)| *k).max().unwrap_or(0);
        let mut best: Option<usize> = None;
        // An anchor at `at` gives a start at `at - k`: anchors past the best start plus
        // the largest offset give none earlier.
        for at in self
            .anchor
            .find_iter(folded.get(from..)?)
            .map(|at| at + from)
        {
            if best.is_some_and(|b| at > b + longest) {
                break;
            }
            for (k, trie) in &self.tries {
                let start = at.wrapping_sub(*k);
                if at >= *k && start >= from && trie.holds_prefix_of(&folded[start..]) {
                    best = Some(best.map_or(start, |b| b.min(start)));
                }
            }
        }
        best
    }
}

/// Where a part was last asked from, and what it found there.
type Answer = (usize, Option<usize>);

/// One search of [`Anchored::next`].
enum Part<'a> {
    Tries,
    Literal(&'a crate::caseless::Caseless),
    All(&'a crate::alternation::Alternation),
}

/// The first start of a literal at or after a position, each part's last answer kept:
/// asked at increasing positions, each part reads each byte about once.
pub(crate) struct Next<'a> {
    anchored: &'a Anchored,
    folded: &'a [u8],
    /// Each part, with its last answer.
    parts: Vec<(Part<'a>, Option<Answer>)>,
}

impl Next<'_> {
    /// The first start of a literal at `from` or after.
    pub(crate) fn first_from(&mut self, from: usize) -> Option<usize> {
        let (anchored, folded) = (self.anchored, self.folded);
        if from > folded.len() {
            return None;
        }
        let mut first: Option<usize> = None;
        for (part, last) in &mut self.parts {
            // An answer from before `from` holds while it is not before `from`.
            let found = match *last {
                Some((asked, found)) if asked <= from && found.is_none_or(|f| f >= from) => found,
                _ => {
                    let found = match part {
                        Part::Tries => anchored.first_anchored(folded, from),
                        Part::Literal(f) => folded
                            .get(from..)
                            .and_then(|h| f.find_folded(h))
                            .map(|at| at + from),
                        Part::All(search) => search.first_from(folded, from),
                    };
                    *last = Some((from, found));
                    found
                }
            };
            if let Some(f) = found {
                first = Some(first.map_or(f, |b| b.min(f)));
            }
        }
        first
    }
}

/// A byte that may end a form or start one after another ([`Anchored`]).
fn ends_forms(c: u8) -> bool {
    c.is_ascii_whitespace()
        || matches!(
            c,
            b'(' | b')' | b'\'' | b'"' | b'`' | b',' | b';' | b'#' | b'|' | b'\\'
        )
}

/// Byte strings, to test whether one is a prefix of a text.
#[derive(Default)]
struct Trie {
    /// Node 0 is the root; each node's children by byte, and whether a string ends there.
    nodes: Vec<Node>,
}

#[derive(Default)]
struct Node {
    children: Vec<(u8, usize)>,
    end: bool,
}

impl Trie {
    fn insert(&mut self, s: &[u8]) {
        if self.nodes.is_empty() {
            self.nodes.push(Node::default());
        }
        let mut at = 0;
        for &c in s {
            at = match self.nodes[at].children.iter().find(|(b, _)| *b == c) {
                Some(&(_, next)) => next,
                None => {
                    let next = self.nodes.len();
                    self.nodes.push(Node::default());
                    self.nodes[at].children.push((c, next));
                    next
                }
            };
        }
        self.nodes[at].end = true;
    }

    /// Whether one of the strings is a prefix of `text`: one step per byte, as deep as
    /// the longest string at most.
    fn holds_prefix_of(&self, text: &[u8]) -> bool {
        let mut at = 0;
        for &c in text {
            match self.nodes[at].children.iter().find(|(b, _)| *b == c) {
                Some(&(_, next)) if self.nodes[next].end => return true,
                Some(&(_, next)) => at = next,
                None => return false,
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Finder, Haystack};

    /// Every occurrence of every literal, by brute force.
    fn occurrences(literals: &[String], text: &[u8]) -> Vec<usize> {
        let folded = text.to_ascii_lowercase();
        let mut out: Vec<usize> = (0..folded.len())
            .filter(|&i| {
                literals
                    .iter()
                    .any(|l| folded[i..].starts_with(l.as_bytes()))
            })
            .collect();
        out.dedup();
        out
    }

    /// The anchored search gives every occurrence of every literal, those holding `def`
    /// anywhere in them and the others, in any case; a literal that may end a form, or
    /// few literals holding `def`, keep the alternation.
    #[test]
    fn every_occurrence_of_every_literal_is_found() {
        let mut literals: Vec<String> = (0..20).map(|k| format!("def-{k}")).collect();
        literals
            .extend(["!def-x", "defdef", "xdefx", "def", "make-x", "m-x", "#.("].map(String::from));
        let text = b"(DEF-1 def-19 !Def-X defdefdef xdefx-def make-x m-x #.(def-3)) def-20 defi";
        let finder = Finder::any_in_forms(&literals);
        assert!(matches!(
            &finder,
            Finder::Folded {
                folded: super::Folded::Anchored(_),
                ..
            }
        ));
        let found = finder.starts(&Haystack::new(text));
        assert_eq!(found, occurrences(&literals, text));
        assert!(found.len() > 12, "{found:?}");
        // A literal holding a space, or few holding `def`: the alternation, leftmost-first.
        for literals in [
            vec!["def-1".to_string(); MIN],
            vec!["a b".to_string(), "def-2".to_string()],
            [
                &literals[..],
                &[format!("def{}", "x".repeat(MAX_ANCHORED_LENGTH))],
            ]
            .concat(),
            [&literals[..], &[".".to_string()]].concat(),
        ] {
            let finder = Finder::any_in_forms(&literals);
            assert!(!matches!(
                &finder,
                Finder::Folded {
                    folded: super::Folded::Anchored(_),
                    ..
                }
            ));
        }
    }

    /// Asked at every position in order, the search form by form gives the first
    /// occurrence at or after it, with the others searched one by one or as one.
    #[test]
    fn the_first_occurrence_from_each_position_is_found() {
        let text = b"(DEF-1 def-19 !Def-X defdefdef xdefx-def make-x m-x #.(def-3)) o-1 o-9 defi";
        let anchored: Vec<String> = (0..20).map(|k| format!("def-{k}")).collect();
        for others in [
            vec!["make-x", "m-x", "#.("],
            (0..12).map(|_| "o-").collect(),
        ] {
            let mut literals = anchored.clone();
            literals.extend(["!def-x", "defdef", "xdefx"].map(String::from));
            literals.extend(others.iter().map(|o| o.to_string()));
            let all = occurrences(&literals, text);
            let finder = Finder::any_in_forms(&literals);
            let hay = Haystack::new(text);
            let mut hits = finder.in_forms(&hay);
            assert!(matches!(hits, super::super::FormHits::Found(_)));
            for from in 0..=text.len() + 1 {
                let first = all.iter().copied().find(|&a| a >= from);
                assert_eq!(hits.first_from(from), first, "{from}");
            }
        }
    }

    const MIN: usize = super::MIN_ANCHORED - 1;
    use super::MAX_ANCHORED_LENGTH;
}
