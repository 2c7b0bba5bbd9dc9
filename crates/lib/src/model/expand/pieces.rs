//! Whether a call of a learned macro can make a wanted name, decided from text before
//! anything is read or instantiated.
//!
//! The expander makes a name only by concatenating whole pieces: a symbol's name, a
//! string's contents (or the text between a format control's directives), an atom as
//! written; each comes from the call or from the bodies of the macros involved, and the
//! derived names of a structure add `make-`, `copy-`, `-p` and `-` (and a parameter left
//! out, or `()`, is `nil`). So a name none of
//! whose splits into such pieces exists cannot be made, and the call is not expanded.
//! Pieces are gathered generously (every word of the call's text outside its comments,
//! strings split into words too): a piece too many only costs an expansion, a piece
//! missed would lose a definition. Comments are left out because the reader drops them,
//! and because they hold the stray words (`LATIN SMALL LETTER L`) that let any name pass.

use super::datum::Val;
use super::{Function, Lookup, Macro};
use std::sync::{Arc, Mutex, OnceLock};

/// The texts the derived names of a structure add to its name (`model::derived`), and
/// `nil`: the value of a parameter left out, and how `()` prints.
const DERIVED_AFFIXES: [&str; 5] = ["make-", "copy-", "-p", "-", "nil"];

/// A literal longer than this (bytes) is not used to rule calls out (the covering test
/// of a literal inside a name is quadratic in its length).
const MAX_CONTAINED_LITERAL: usize = 64;

/// The names a search wants, as the pieces must cover them (folded).
#[derive(Clone, Debug)]
pub(crate) enum Wanted {
    /// The name itself (a search by name).
    Exact(String),
    /// Names holding one of these (a pattern's literals).
    Containing(Vec<String>),
}

impl Wanted {
    /// The wanted names of a search by name; `None` when no piece can rule it out.
    pub(crate) fn exact(name: &str) -> Option<Wanted> {
        let name = name.to_lowercase();
        usable(&name).then_some(Wanted::Exact(name))
    }

    /// The names holding one of `literals`; `None` when one cannot be used.
    pub(crate) fn containing(literals: &[String]) -> Option<Wanted> {
        let literals: Vec<String> = literals.iter().map(|l| l.to_lowercase()).collect();
        // A literal across a package prefix spans pieces the test does not gather.
        let fits = |l: &String| usable(l) && !l.contains(':') && l.len() <= MAX_CONTAINED_LITERAL;
        (!literals.is_empty() && literals.iter().all(fits)).then_some(Wanted::Containing(literals))
    }

    /// Whether `piece` (folded, or plain ASCII) can be part of a wanted name (or of a
    /// literal in it). Called for every word of every call the gate looks at: each text
    /// is compared only at the offsets where a first byte matches ([`overlaps`]).
    fn relevant(&self, piece: &[u8]) -> bool {
        let Some(&first) = piece.first() else {
            return false;
        };
        match self {
            Wanted::Exact(name) => {
                let (name, m) = (name.as_bytes(), piece.len());
                m <= name.len()
                    && (0..=name.len() - m).any(|i| {
                        name[i].eq_ignore_ascii_case(&first)
                            && name[i..i + m].eq_ignore_ascii_case(piece)
                    })
            }
            Wanted::Containing(literals) => literals.iter().any(|l| overlaps(piece, l.as_bytes())),
        }
    }

    /// [`Wanted::relevant`] as first written, one comparison per offset: what the fast
    /// one is checked against.
    #[cfg(test)]
    fn relevant_by_offsets(&self, piece: &[u8]) -> bool {
        if piece.is_empty() {
            return false;
        }
        match self {
            Wanted::Exact(name) => piece.len() <= name.len() && contains(name.as_bytes(), piece),
            Wanted::Containing(literals) => literals.iter().any(|l| {
                let l = l.as_bytes();
                contains(piece, l)
                    || contains(l, piece)
                    || (1..l.len()).any(|k| {
                        // The piece reaches into the literal, or runs on after it.
                        ends_with(piece, &l[..k]) || starts_with(piece, &l[k..])
                    })
            }),
        }
    }

    /// The texts the pieces must make (one of them), and whether each is a whole name.
    /// The runs of decimal digits in the wanted texts: what a number the evaluator
    /// computed prints as, where a wanted name holds one.
    /// A run after a `-` comes with it too (a negative number).
    fn digit_runs(&self) -> Vec<String> {
        let (texts, _) = self.texts();
        let mut runs = Vec::new();
        for t in texts {
            let b = t.as_bytes();
            let mut i = 0;
            while i < b.len() {
                if !b[i].is_ascii_digit() {
                    i += 1;
                    continue;
                }
                let start = i;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                runs.push(t[start..i].to_string());
                if start > 0 && b[start - 1] == b'-' {
                    runs.push(t[start - 1..i].to_string());
                }
            }
        }
        runs
    }

    fn texts(&self) -> (&[String], bool) {
        match self {
            Wanted::Exact(name) => (std::slice::from_ref(name), true),
            Wanted::Containing(literals) => (literals, false),
        }
    }

    /// The contributions of `pieces` to each wanted text.
    fn covers<'a>(&self, pieces: impl Iterator<Item = &'a str> + Clone) -> Vec<Cover> {
        let (texts, exact) = self.texts();
        texts
            .iter()
            .map(|t| Cover::of(t, exact, pieces.clone()))
            .collect()
    }

    /// Whether the pieces of `covers` (each one [`Wanted::covers`]) make a wanted text.
    fn made_by(&self, covers: &[&[Cover]]) -> bool {
        let (texts, exact) = self.texts();
        texts.iter().enumerate().any(|(k, t)| {
            let of_text: Vec<&Cover> = covers.iter().map(|c| &c[k]).collect();
            Cover::made(&of_text, t.len(), exact)
        })
    }

    /// Whether names made of `pieces` (any number of each, in any order) can be wanted.
    #[cfg(test)]
    pub(crate) fn covered_by(&self, pieces: &[&str]) -> bool {
        let with_affixes = || pieces.iter().copied().chain(DERIVED_AFFIXES);
        match self {
            Wanted::Exact(name) => splits_into(name, with_affixes()),
            Wanted::Containing(literals) => literals
                .iter()
                .any(|l| inside_concatenation(l, with_affixes())),
        }
    }
}

/// A name with whitespace is printed folded: no piece test for it.
fn usable(name: &str) -> bool {
    !name.is_empty() && !name.contains(char::is_whitespace)
}

/// Whether `name` is a concatenation of occurrences of `pieces` (the one-pass test the
/// [`Cover`]s are checked against).
#[cfg(test)]
fn splits_into<'a>(name: &str, pieces: impl Iterator<Item = &'a str>) -> bool {
    let n = name.len();
    // ends[i]: where a piece starting at byte i of the name ends.
    let mut ends: Vec<Vec<usize>> = vec![Vec::new(); n];
    for p in pieces.filter(|p| !p.is_empty() && p.len() <= n) {
        for at in memchr::memmem::find_iter(name.as_bytes(), p.as_bytes()) {
            ends[at].push(at + p.len());
        }
    }
    reaches(&ends, &[0], &[])
}

/// Whether a concatenation of `pieces` can hold `literal`: pieces inside it, the first one
/// possibly reaching in from before it, the last one possibly running on after it (the one-pass test the [`Cover`]s are checked against).
#[cfg(test)]
fn inside_concatenation<'a>(literal: &str, pieces: impl Iterator<Item = &'a str>) -> bool {
    let l = literal.as_bytes();
    let n = l.len();
    let mut ends: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut starts = vec![0usize];
    let mut finishing = vec![false; n + 1];
    for p in pieces.map(str::as_bytes).filter(|p| !p.is_empty()) {
        if memchr::memmem::find(p, l).is_some() {
            return true;
        }
        for at in memchr::memmem::find_iter(l, p) {
            ends[at].push(at + p.len());
        }
        for k in 1..n {
            // The piece ends with the literal's first k bytes, or starts with its last
            // n - k bytes.
            if p.ends_with(&l[..k]) {
                starts.push(k);
            }
            if p.starts_with(&l[k..]) {
                finishing[k] = true;
            }
        }
    }
    reaches(&ends, &starts, &finishing)
}

/// Whether the end of `ends` (or a position marked in `finishing`) is reached from
/// `starts`.
fn reaches(ends: &[Vec<usize>], starts: &[usize], finishing: &[bool]) -> bool {
    let n = ends.len();
    let mut reached = vec![false; n + 1];
    for &s in starts {
        reached[s] = true;
    }
    for i in 0..n {
        if !reached[i] {
            continue;
        }
        if finishing.get(i).copied().unwrap_or(false) {
            return true;
        }
        for &e in &ends[i] {
            reached[e] = true;
        }
    }
    reached[n]
}

/// What some pieces contribute to making one wanted text (a name, or a literal of a
/// pattern), piece by piece, so that the contributions of pieces gathered once (a macro's,
/// the structure affixes) are joined with a call's without looking at them again: the
/// tests of [`splits_into`] and [`inside_concatenation`] are unions over the pieces.
#[derive(Clone, Debug, Default)]
struct Cover {
    /// A piece holds the whole text (a literal of a pattern).
    whole: bool,
    /// Occurrences of pieces in the text: (start, end).
    spans: Vec<(usize, usize)>,
    /// A piece ends with the text's first k bytes: the rest may start at k.
    starts: Vec<usize>,
    /// A piece starts with the text's bytes from k on: reaching k is enough.
    finishing: Vec<usize>,
}

impl Cover {
    /// The contributions of `pieces` to `text`; `exact`: the text is a whole name (pieces
    /// only inside it), else a literal that a concatenation may hold.
    fn of<'a>(text: &str, exact: bool, pieces: impl Iterator<Item = &'a str>) -> Cover {
        let t = text.as_bytes();
        let n = t.len();
        let mut cover = Cover::default();
        for p in pieces.map(str::as_bytes).filter(|p| !p.is_empty()) {
            if exact && p.len() > n {
                continue;
            }
            if !exact && memchr::memmem::find(p, t).is_some() {
                // Made whatever the other pieces: nothing else to keep.
                return Cover {
                    whole: true,
                    ..Cover::default()
                };
            }
            cover
                .spans
                .extend(memchr::memmem::find_iter(t, p).map(|at| (at, at + p.len())));
            if exact {
                continue;
            }
            for k in 1..n {
                if p.ends_with(&t[..k]) {
                    cover.starts.push(k);
                }
                if p.starts_with(&t[k..]) {
                    cover.finishing.push(k);
                }
            }
        }
        cover.spans.sort_unstable();
        cover.spans.dedup();
        cover
    }

    /// Whether the pieces of `covers` together make the text (of `n` bytes).
    fn made(covers: &[&Cover], n: usize, exact: bool) -> bool {
        if covers.iter().any(|c| c.whole) {
            return true;
        }
        let mut ends: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut starts = vec![0usize];
        let mut finishing = vec![false; if exact { 0 } else { n + 1 }];
        for c in covers {
            for &(s, e) in &c.spans {
                ends[s].push(e);
            }
            starts.extend(&c.starts);
            for &k in &c.finishing {
                finishing[k] = true;
            }
        }
        reaches(&ends, &starts, &finishing)
    }
}

/// The words of source text: the runs between delimiters (comments and strings are
/// split into words too: a word too many is harmless). [`Gate::words`] is the same
/// split, with each word classified; this one is what it is checked against.
#[cfg(test)]
fn words(b: &[u8]) -> impl Iterator<Item = &[u8]> {
    b.split(|&c| DELIMITERS[usize::from(c)])
        .filter(|w| !w.is_empty())
}

/// The bytes that end a word.
const DELIMITERS: [bool; 256] = {
    let mut table = [false; 256];
    let delimiters = b" \t\n\r\x0c\x0b()'`,\";";
    let mut k = 0;
    while k < delimiters.len() {
        table[delimiters[k] as usize] = true;
        k += 1;
    }
    table
};

/// A word of nothing but ASCII letters, digits and the constituents a name is folded from
/// as written (no package marker, `#`, `~`, `|` or `\`): its only piece is itself.
fn plain(word: &[u8]) -> bool {
    word.iter()
        .all(|&c| c.is_ascii() && !matches!(c, b':' | b'#' | b'~' | b'|' | b'\\'))
}

/// Whether a concatenation of pieces holding `p` can hold the literal `l` there (ASCII
/// case-insensitively; `l` folded): `p` holds `l`, is inside it, ends with its first
/// bytes or starts with its last ones. Each is tried only where a first byte matches.
fn overlaps(p: &[u8], l: &[u8]) -> bool {
    let (m, n) = (p.len(), l.len());
    let (Some(&p0), Some(&l0)) = (p.first(), l.first()) else {
        return false;
    };
    // `l` from `p[j]` on: all of it inside `p`, or `p`'s end as `l`'s start.
    let from_p = (0..m).any(|j| {
        p[j].eq_ignore_ascii_case(&l0)
            && if j + n <= m {
                p[j..j + n].eq_ignore_ascii_case(l)
            } else {
                p[j..].eq_ignore_ascii_case(&l[..m - j])
            }
    });
    // `p` from `l[i]` on (0 < i): all of it inside `l`, or `p`'s start as `l`'s end.
    from_p
        || (1..n).any(|i| {
            l[i].eq_ignore_ascii_case(&p0)
                && if i + m <= n {
                    l[i..i + m].eq_ignore_ascii_case(p)
                } else {
                    p[..n - i].eq_ignore_ascii_case(&l[i..])
                }
        })
}

/// ASCII case-insensitively, whether `needle` occurs in `hay`.
#[cfg(test)]
fn contains(hay: &[u8], needle: &[u8]) -> bool {
    needle.len() <= hay.len()
        && hay
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle))
}

/// ASCII case-insensitively, whether `text` starts with `prefix`.
#[cfg(test)]
fn starts_with(text: &[u8], prefix: &[u8]) -> bool {
    text.len() >= prefix.len() && text[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// ASCII case-insensitively, whether `text` ends with `suffix`.
#[cfg(test)]
fn ends_with(text: &[u8], suffix: &[u8]) -> bool {
    text.len() >= suffix.len() && text[text.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
}

/// Adds `text` and what a name may take of it.
fn push_text(text: String, out: &mut Vec<String>) {
    let mut texts = Vec::new();
    if text.contains('~') {
        texts = between_directives(&text);
    }
    texts.push(text);
    // A format control is often a symbol (`'#:make-~a`): its texts lose the prefix too.
    for text in texts {
        if let Some((_, name)) = text.rsplit_once(':') {
            out.push(name.to_string());
        }
        let bare = text.trim_start_matches('#');
        if bare.len() != text.len() {
            out.push(bare.to_string());
        }
        out.push(text);
    }
}

/// The texts between a format control's directives (`make-~a-~(~a~)` gives `make-`,
/// `-`): after `~`, its parameters and modifiers, then the directive.
fn between_directives(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '~' {
            current.push(c);
            continue;
        }
        out.push(std::mem::take(&mut current));
        while let Some(&d) = chars.peek() {
            if d == '\'' {
                chars.next();
                chars.next();
            } else if d.is_ascii_digit() || matches!(d, ',' | '#' | 'v' | ':' | '@') {
                chars.next();
            } else {
                break;
            }
        }
        // `~~` prints a tilde.
        if chars.next() == Some('~') {
            current.push('~');
        }
    }
    out.push(current);
    out.retain(|p| !p.is_empty());
    out
}

/// Global macros followed from a call at most: past them the call is expanded.
const MAX_FOLLOWED_MACROS: usize = 256;

/// What a learned macro brings to a call, for one search: its relevant pieces and the
/// global macros its body names (their expansions may be part of its own).
struct Brought {
    pieces: Vec<String>,
    names: Vec<Arc<Macro>>,
    /// The relevant pieces of the macro and of every macro it names, transitively;
    /// `None` past [`MAX_FOLLOWED_MACROS`] of them (then any name).
    closure: OnceLock<Option<Vec<String>>>,
    /// What the closure's pieces contribute to the wanted texts ([`Wanted::covers`]).
    cover: OnceLock<Option<Vec<Cover>>>,
}

/// What each macro brings, by its address.
type Cache = super::FoldMap<usize, (Arc<Macro>, Arc<Brought>)>;

/// The test of a search, with what each macro brings, found once.
pub(crate) struct Gate {
    wanted: Wanted,
    /// What the structure affixes (and `nil`) contribute to the wanted texts.
    affixes: Vec<Cover>,
    /// The wanted texts' digit runs ([`Wanted::digit_runs`]).
    digits: Vec<String>,
    /// The bytes of the wanted texts, in both cases: most words hold one they lack.
    bytes: [bool; 256],
    /// The shortest wanted text.
    shortest: usize,
    /// What each byte is to a word ([`DELIMITER`], [`COLON`], ...): 0 for most bytes,
    /// so that the word loop takes one branch a byte.
    classes: [u8; 256],
    /// The (length, first byte) and (length, last byte) of the global macros' names, to
    /// pass over most words without looking them up; set at the first call.
    heads: OnceLock<Box<Heads>>,
    brought: Mutex<Cache>,
}

/// A byte that ends a word.
const DELIMITER: u8 = 1;
/// A package marker.
const COLON: u8 = 4;
const HASH: u8 = 8;
/// A byte whose word's pieces are not all slices of it (`~`, `|`, `\`, non-ASCII).
const SPECIAL: u8 = 16;

/// A word of source text, classified in one pass over its bytes.
struct Word<'t> {
    bytes: &'t [u8],
    /// ASCII, without `~`, `|`, `\`: its pieces are slices of it.
    simple: bool,
    /// Where its part after its last `:` starts.
    after: usize,
    /// Where its part after its leading `#`s starts.
    bare: usize,
    /// One past its last `#` (0: none).
    hash_end: usize,
}

/// Names as long as this or longer share one row of [`Heads`].
const HEAD_LENGTHS: usize = 64;

/// Per name length (up to [`HEAD_LENGTHS`]), the first bytes and the last bytes of the
/// global macros' names, in both cases.
struct Heads {
    first: [[bool; 256]; HEAD_LENGTHS],
    last: [[bool; 256]; HEAD_LENGTHS],
}

impl Heads {
    /// Whether a global macro's name may be `name` (not empty).
    fn may_name(&self, name: &[u8]) -> bool {
        let row = name.len().min(HEAD_LENGTHS - 1);
        let (Some(&first), Some(&last)) = (name.first(), name.last()) else {
            return false;
        };
        self.first[row][usize::from(first)] && self.last[row][usize::from(last)]
    }
}

impl Gate {
    pub(crate) fn new(wanted: Wanted) -> Gate {
        let texts: Vec<&str> = match &wanted {
            Wanted::Exact(name) => vec![name.as_str()],
            Wanted::Containing(literals) => literals.iter().map(String::as_str).collect(),
        };
        let mut bytes = [false; 256];
        for c in texts.iter().flat_map(|t| t.bytes()) {
            bytes[usize::from(c.to_ascii_lowercase())] = true;
            bytes[usize::from(c.to_ascii_uppercase())] = true;
        }
        let shortest = texts.iter().map(|t| t.len()).min().unwrap_or(0);
        let mut classes = [0u8; 256];
        for (c, class) in classes.iter_mut().enumerate() {
            let byte = c as u8;
            *class = match byte {
                _ if DELIMITERS[c] => DELIMITER,
                b':' => COLON,
                b'#' => HASH,
                b'~' | b'|' | b'\\' => SPECIAL,
                _ if !byte.is_ascii() => SPECIAL,
                _ => 0,
            };
        }
        Gate {
            classes,
            affixes: wanted.covers(DERIVED_AFFIXES.into_iter()),
            digits: wanted.digit_runs(),
            wanted,
            bytes,
            shortest,
            heads: OnceLock::new(),
            brought: Mutex::new(Cache::default()),
        }
    }

    /// [`Wanted::relevant`], most words ruled out by their bytes first.
    fn relevant(&self, piece: &[u8]) -> bool {
        let (Some(&first), Some(&last)) = (piece.first(), piece.last()) else {
            return false;
        };
        let has = |c: u8| self.bytes[usize::from(c)];
        let possible = match &self.wanted {
            // A piece inside the name has only its bytes.
            Wanted::Exact(name) => piece.len() <= name.len() && piece.iter().all(|&c| has(c)),
            // A piece holding a literal is as long; one overlapping it shares its first or
            // last byte with it.
            Wanted::Containing(_) => piece.len() >= self.shortest || has(first) || has(last),
        };
        possible && self.wanted.relevant(piece)
    }

    /// The global macro a word of source text names (folded as macros are).
    fn named_global<'a>(&self, word: &[u8], lookup: &Lookup<'a>) -> Option<&'a Arc<Macro>> {
        let name = word.rsplit(|&c| c == b':').next()?;
        if !self.heads(lookup).may_name(name) || !plain(name) {
            return None;
        }
        if name.iter().any(u8::is_ascii_uppercase) {
            let folded = String::from_utf8_lossy(name).to_ascii_lowercase();
            return lookup.global.get(&folded);
        }
        lookup.global.get(std::str::from_utf8(name).ok()?)
    }

    /// The [`Heads`] of the global macros' names, found at the first call.
    fn heads(&self, lookup: &Lookup) -> &Heads {
        self.heads.get_or_init(|| {
            let mut heads = Box::new(Heads {
                first: [[false; 256]; HEAD_LENGTHS],
                last: [[false; 256]; HEAD_LENGTHS],
            });
            for n in lookup.global.names() {
                let n = n.as_bytes();
                if let (Some(&first), Some(&last)) = (n.first(), n.last()) {
                    let row = n.len().min(HEAD_LENGTHS - 1);
                    for (table, c) in [(&mut heads.first, first), (&mut heads.last, last)] {
                        table[row][usize::from(c.to_ascii_lowercase())] = true;
                        table[row][usize::from(c.to_ascii_uppercase())] = true;
                    }
                }
            }
            heads
        })
    }

    /// Whether the call `text` of the macro `m` can make a wanted name: from the words
    /// of the call, the pieces of `m`, of the local macros around it and of every global
    /// macro named by the call or by one of those, followed transitively.
    pub(crate) fn call_may_make(
        &self,
        text: &[u8],
        m: Option<&Arc<Macro>>,
        lookup: &Lookup,
    ) -> bool {
        let mut pieces: Vec<String> = Vec::new();
        let mut sources: Vec<&Arc<Macro>> = Vec::new();
        // Comments are dropped by the reader: no piece of a call comes from them.
        let mut stretch = |from: usize, to: usize| {
            for w in self.words(&text[from..to]) {
                if !w.simple {
                    self.push_word(w.bytes, &mut pieces);
                    if let Some(g) = self.named_global(w.bytes, lookup) {
                        sources.push(g);
                    }
                    continue;
                }
                self.push_simple_word(&w, &mut pieces);
                // A learned macro the call names: its expansion may be part of this one.
                if let Some(g) = self.named_global_simple(&w, lookup) {
                    sources.push(g);
                }
            }
        };
        // A comment starts at a `;` or a `#|`: without either, the text is one stretch
        // (a `|` of an escaped name alone does not make the text worth lexing).
        if memchr::memchr(b';', text).is_some() || memchr::memmem::find(text, b"#|").is_some() {
            crate::scan::each_uncommented(text, 0, text.len(), &mut stretch);
        } else {
            stretch(0, text.len());
        }
        sources.extend(lookup.locals.iter().map(|(_, l)| l));
        sources.extend(m);
        sources.sort_unstable_by_key(|g| Arc::as_ptr(g) as usize);
        sources.dedup_by(|a, b| Arc::ptr_eq(a, b));
        let brought: Vec<Arc<Brought>> =
            sources.iter().map(|g| self.brought_by(g, lookup)).collect();
        // The macros' contributions are found once per macro and search, the call's here.
        let own = self.wanted.covers(pieces.iter().map(String::as_str));
        let mut covers: Vec<&[Cover]> = vec![&self.affixes, &own];
        for b in &brought {
            match self.cover(b, lookup) {
                Some(cover) => covers.push(cover),
                None => return true,
            }
        }
        self.wanted.made_by(&covers)
    }

    /// What the closure of `b` contributes to the wanted texts, found once; `None` as
    /// for [`Gate::closure`].
    fn cover<'b>(&self, b: &'b Brought, lookup: &Lookup) -> Option<&'b [Cover]> {
        b.cover
            .get_or_init(|| {
                let closure = self.closure(b, lookup)?;
                Some(self.wanted.covers(closure.iter().map(String::as_str)))
            })
            .as_deref()
    }

    /// The closure of `b`, found once.
    fn closure<'b>(&self, b: &'b Brought, lookup: &Lookup) -> Option<&'b Vec<String>> {
        b.closure
            .get_or_init(|| {
                let mut pieces = b.pieces.clone();
                let mut stack: Vec<Arc<Macro>> = b.names.clone();
                let mut seen = foldhash::HashSet::default();
                while let Some(g) = stack.pop() {
                    if !seen.insert(Arc::as_ptr(&g) as usize) {
                        continue;
                    }
                    if seen.len() > MAX_FOLLOWED_MACROS {
                        return None;
                    }
                    let own = self.brought_by(&g, lookup);
                    pieces.extend(own.pieces.iter().cloned());
                    stack.extend(own.names.iter().cloned());
                }
                pieces.sort_unstable();
                pieces.dedup();
                Some(pieces)
            })
            .as_ref()
    }

    /// The words of `text` ([`words`]), each classified in the same pass over its bytes.
    fn words<'t>(&self, text: &'t [u8]) -> impl Iterator<Item = Word<'t>> + 't {
        let classes = self.classes;
        let n = text.len();
        let mut i = 0;
        std::iter::from_fn(move || {
            while i < n && classes[usize::from(text[i])] & DELIMITER != 0 {
                i += 1;
            }
            if i == n {
                return None;
            }
            let start = i;
            let (mut flags, mut after, mut hash_end) = (0u8, 0, 0);
            while i < n {
                let class = classes[usize::from(text[i])];
                i += 1;
                // Most bytes are of no class: one branch.
                if class != 0 {
                    if class & DELIMITER != 0 {
                        i -= 1;
                        break;
                    }
                    flags |= class;
                    if class & COLON != 0 {
                        after = i - start;
                    }
                    if class & HASH != 0 {
                        hash_end = i - start;
                    }
                }
            }
            let bytes = &text[start..i];
            let bare = bytes.iter().take_while(|&&c| c == b'#').count();
            Some(Word {
                bytes,
                simple: flags & SPECIAL == 0,
                after,
                bare,
                hash_end,
            })
        })
    }

    /// [`Gate::push_word`] of a simple word: its pieces are slices of it (the word, after
    /// its last `:`, after its leading `#`s), each looked at once.
    fn push_simple_word(&self, w: &Word, out: &mut Vec<String>) {
        let whole = w.bytes.len();
        // Every piece ends where the word does: for a name, only the run of its bytes
        // at the word's end (at most one byte longer than the name) can hold one.
        let mut wanted_from = whole;
        if let Wanted::Exact(name) = &self.wanted {
            let longest = whole.saturating_sub(name.len() + 1);
            while wanted_from > longest && self.bytes[usize::from(w.bytes[wanted_from - 1])] {
                wanted_from -= 1;
            }
            if wanted_from == whole {
                return;
            }
        }
        for (k, from) in [0, w.after, w.bare].into_iter().enumerate() {
            let repeated = k > 0 && from == 0 || k == 2 && from == w.after;
            let piece = &w.bytes[from..];
            let relevant = match &self.wanted {
                // Only the wanted bytes after `from` (known from the one pass).
                Wanted::Exact(name) => {
                    !piece.is_empty()
                        && piece.len() <= name.len()
                        && wanted_from <= from
                        && self.wanted.relevant(piece)
                }
                Wanted::Containing(_) => self.relevant(piece),
            };
            if !repeated && relevant && from <= whole {
                out.push(String::from_utf8_lossy(piece).to_ascii_lowercase());
            }
        }
    }

    /// [`Gate::named_global`] of a simple word.
    fn named_global_simple<'a>(&self, w: &Word, lookup: &Lookup<'a>) -> Option<&'a Arc<Macro>> {
        let name = &w.bytes[w.after..];
        // Plain: no `#` after the package marker (the word has no `~`, `|`, `\`).
        if name.is_empty() || !self.heads(lookup).may_name(name) || w.hash_end > w.after {
            return None;
        }
        if name.iter().any(u8::is_ascii_uppercase) {
            let folded = String::from_utf8_lossy(name).to_ascii_lowercase();
            return lookup.global.get(&folded);
        }
        lookup.global.get(std::str::from_utf8(name).ok()?)
    }

    /// Adds the pieces of the word `word` that [`Gate::relevant`] keeps: the word folded,
    /// without `|` and `\`, and also after its last `:` and without leading `#`s
    /// (`pkg::foo`, `#:foo`, `#\a`), and the texts between its `~` directives.
    fn push_word(&self, word: &[u8], out: &mut Vec<String>) {
        if word.is_ascii() && !word.iter().any(|c| matches!(c, b'~' | b'|' | b'\\')) {
            // Its pieces are slices of it: only the relevant ones are copied.
            let after = word.rsplit(|&c| c == b':').next().unwrap_or(word);
            let bare = &word[word.iter().take_while(|&&c| c == b'#').count()..];
            for (k, piece) in [word, after, bare].into_iter().enumerate() {
                let repeated =
                    k > 0 && piece.len() == word.len() || k == 2 && piece.len() == after.len();
                if !repeated && self.relevant(piece) {
                    out.push(String::from_utf8_lossy(piece).to_ascii_lowercase());
                }
            }
            return;
        }
        let text: String = String::from_utf8_lossy(word)
            .chars()
            .filter(|c| !matches!(c, '|' | '\\'))
            .flat_map(char::to_lowercase)
            .collect();
        let mut all = Vec::new();
        push_text(text, &mut all);
        all.retain(|p| self.relevant(p.as_bytes()));
        out.append(&mut all);
    }

    /// What `g` brings, found once per macro (the entry holds `g`: its address is not
    /// reused while the search lasts).
    fn brought_by(&self, g: &Arc<Macro>, lookup: &Lookup) -> Arc<Brought> {
        let key = Arc::as_ptr(g) as usize;
        if let Some((_, b)) = self.lock().get(&key) {
            return b.clone();
        }
        let b = Arc::new(self.bring(g, lookup));
        self.lock().insert(key, (g.clone(), b.clone()));
        b
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.brought
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The relevant pieces of `m`'s lambda list (its defaults) and body, and the global
    /// macros it names.
    fn bring(&self, m: &Macro, lookup: &Lookup) -> Brought {
        let mut all = Vec::new();
        let mut names = Vec::new();
        // The project functions the body calls build names too (`functions.rs`): their
        // pieces are the macro's, followed transitively, each once.
        let functions = &lookup.global.functions;
        let mut called: Vec<&Arc<Function>> = Vec::new();
        let mut seen_functions = foldhash::HashSet::default();
        // The values of the global variables it reads are pieces too (`globals.rs`).
        let mut pending: Vec<&Val> = std::iter::once(&m.lambda_list)
            .chain(m.body.iter())
            .chain(m.globals.iter().map(|(_, v)| v))
            .collect();
        let (mut counts, mut gensyms, mut gets) = (false, false, false);
        while let Some(v) = pending.pop() {
            of_val(v, self, &mut all, &mut |name| {
                counts |= computes_number(name);
                gensyms |= name == "gensym";
                gets |= name == "get";
                if let Some(g) = lookup.global.get(name) {
                    names.push(g.clone());
                }
                if let Some(f) = functions.get(name) {
                    if seen_functions.len() < MAX_FOLLOWED_MACROS
                        && seen_functions.insert(name.to_string())
                    {
                        called.push(f);
                    }
                }
            });
            if pending.is_empty() {
                for f in called.drain(..) {
                    pending.extend(std::iter::once(&f.lambda_list).chain(&f.body));
                }
            }
            // The symbol properties it reads are pieces too (`properties.rs`), once.
            if pending.is_empty() && std::mem::take(&mut gets) {
                pending.extend(lookup.global.properties.iter().flat_map(|p| p.values()));
            }
        }
        // What the evaluator prints of its own: the digits (and sign) of a number it
        // computed, the `g` of a `gensym`.
        if counts {
            all.extend(self.digits.iter().cloned());
        }
        if gensyms {
            all.push("g".to_string());
        }
        all.retain(|p| self.relevant(p.as_bytes()));
        all.sort_unstable();
        all.dedup();
        names.sort_unstable_by_key(|g| Arc::as_ptr(g) as usize);
        names.dedup_by(|a, b| Arc::ptr_eq(a, b));
        Brought {
            pieces: all,
            names,
            closure: OnceLock::new(),
            cover: OnceLock::new(),
        }
    }
}

/// Whether a body naming `operator` may compute a number that a name prints: the
/// evaluator's arithmetic, `length`, and the counters of its loops.
fn computes_number(operator: &str) -> bool {
    super::eval::numbers::is_function(operator)
        || matches!(
            operator,
            "length" | "loop" | "dotimes" | "do" | "do*" | "incf" | "decf" | "ldb" | "ash"
        )
}

/// Adds the pieces of the datum `v` that `gate` finds relevant (and perhaps others: the
/// caller keeps the relevant ones).
fn of_val(v: &Val, gate: &Gate, out: &mut Vec<String>, symbol: &mut dyn FnMut(&str)) {
    // A text of ASCII without `~`, `|` or `\` gives the pieces a word of the same bytes
    // gives: slices of it, tested before they are copied (most are not relevant).
    let simple = |t: &str| t.is_ascii() && !t.contains(['~', '|', '\\']);
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Val::Sym(w) => {
                symbol(&w.name);
                // A symbol may be a format control (`'#:~a-p`).
                match simple(&w.name) {
                    true => gate.push_word(w.name.as_bytes(), out),
                    false => push_text(w.name.as_str().to_lowercase(), out),
                }
            }
            Val::Str(s) | Val::Atom(s) if simple(s) => gate.push_word(s.as_bytes(), out),
            Val::Str(s) | Val::Atom(s) => push_text(s.to_lowercase().replace('\\', ""), out),
            _ => stack.extend(v.children()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{expand, learn, made, read_form, Budget, Lookup, Macros};
    use super::{Gate, Wanted};
    use crate::grammar::Grammar;

    fn learned(source: &str) -> Macros {
        let mut m = Macros::default();
        m.extend(learn(source.as_bytes(), &|_, _| true));
        m.finish();
        m
    }

    /// The gate's answer for the call `call` of a macro of `source` and `wanted`.
    fn passes(source: &str, call: &str, wanted: Wanted) -> bool {
        let global = learned(source);
        let form = read_form(call.as_bytes(), 0, call.len(), &|_, _| true).unwrap();
        let m = global.get(form.head().unwrap()).unwrap().clone();
        let lookup = Lookup {
            global: &global,
            locals: &[],
        };
        Gate::new(wanted).call_may_make(call.as_bytes(), Some(&m), &lookup)
    }

    /// The names the call makes (without package or `setf`).
    fn made_names(source: &str, call: &str) -> Vec<String> {
        let global = learned(source);
        let form = read_form(call.as_bytes(), 0, call.len(), &|_, _| true).unwrap();
        let m = global.get(form.head().unwrap()).unwrap().clone();
        let lookup = Lookup {
            global: &global,
            locals: &[],
        };
        let v = expand(&m, &form, &lookup, &mut Budget::new(100_000)).unwrap();
        made(&v, &Grammar::builtin(), &mut Budget::new(100_000))
            .into_iter()
            .map(|d| {
                let name = d.name.trim_start_matches("(setf ").trim_end_matches(')');
                name.rsplit(':').next().unwrap_or(name).to_string()
            })
            .collect()
    }

    const SOURCES: [(&str, &str); 6] = [
        (
            "(defmacro defthing (name)
               (let* ((maker (symbolicate 'make- name))
                      (pred (intern (format nil \"~A-P\" name)))
                      (fs (format-symbol t \"~:@(~A~)-count\" name)))
                 `(progn (defun ,maker ()) (defun ,pred (x) x) (defun ,fs ()))))",
            "(defthing point)",
        ),
        (
            "(defmacro defrecord (name &rest slots)
               `(defstruct (,name (:constructor ,(symbolicate '%make- name))) ,@slots))",
            "(defrecord cell a)",
        ),
        (
            "(defmacro def-one (n) `(defun ,(symbolicate n '-one) ()))
             (defmacro def-two (a b) `(progn (def-one ,a) (def-one ,b)))",
            "(def-two x y)",
        ),
        (
            "(defmacro defk (n &key (prefix \"MAKE-\")) `(defun ,(symbolicate prefix n) ()))",
            "(defk pt)",
        ),
        // A format control written as a symbol (alexandria's types.lisp).
        (
            "(defmacro defneg (type)
               (let ((name (format-symbol :alexandria '#:non-positive-~a type)))
                 `(defun ,(format-symbol :alexandria '#:~a-p name) ())))",
            "(defneg float)",
        ),
        // A key parameter left out is `nil`, and so is the name (fiveam's
        // `def-special-environment`).
        (
            "(defmacro defenv (name &key accessor) `(defmacro ,accessor () ',name))",
            "(defenv run-state)",
        ),
    ];

    #[test]
    fn every_name_an_expansion_makes_passes() {
        for (source, call) in SOURCES {
            let names = made_names(source, call);
            assert!(!names.is_empty(), "{call}");
            for name in names {
                assert!(
                    passes(source, call, Wanted::exact(&name).unwrap()),
                    "{call} makes {name}"
                );
                // A literal of a pattern anywhere in the name, across pieces.
                let inner = &name[1..name.len() - 1];
                let literal = Wanted::containing(&[inner.to_string()]).unwrap();
                assert!(passes(source, call, literal), "{call} makes {name}");
            }
        }
    }

    /// The covers joined from groups of pieces (affixes, a call's, macros') answer as the
    /// one-pass test over all the pieces, on generated names, literals and pieces.
    #[test]
    fn joined_covers_answer_as_the_pieces_together() {
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let text = |next: &mut dyn FnMut(u64) -> u64, max: u64| -> String {
            let len = 1 + next(max);
            (0..len)
                .map(|_| ['a', 'b', '-', 'p'][next(4) as usize])
                .collect()
        };
        let (mut agreed, mut made) = (0, 0);
        for _ in 0..3000 {
            let target = text(&mut next, 8);
            let pieces: Vec<String> = (0..next(6)).map(|_| text(&mut next, 4)).collect();
            let split = next(pieces.len() as u64 + 1) as usize;
            let all: Vec<&str> = pieces.iter().map(String::as_str).collect();
            for wanted in [
                Wanted::exact(&target).unwrap(),
                Wanted::containing(std::slice::from_ref(&target)).unwrap(),
            ] {
                let first = wanted.covers(all[..split].iter().copied());
                let rest = wanted.covers(all[split..].iter().copied());
                let affixes = wanted.covers(super::DERIVED_AFFIXES.into_iter());
                let joined = wanted.made_by(&[&affixes, &first, &rest]);
                assert_eq!(joined, wanted.covered_by(&all), "{wanted:?} of {all:?}");
                agreed += 1;
                made += usize::from(joined);
            }
        }
        // Both answers occur.
        assert!(made > 100 && made < agreed - 100, "{made} of {agreed}");
    }

    /// The one-pass classification of words gives the words, pieces and macro names of
    /// the word-by-word functions.
    #[test]
    fn classified_words_give_the_same_pieces_and_macros() {
        let global = learned(&SOURCES.map(|(source, _)| source).join("\n"));
        let lookup = Lookup {
            global: &global,
            locals: &[],
        };
        let text = "(DefThing pkg::Make-Point #:make-x ##point |a b| x\\y ~a-p é:def-one \
                    cl-user:def-two #'defk :point-x point: #\\a (def-one) 'defneg foo#:defenv";
        for wanted in [
            Wanted::exact("make-point").unwrap(),
            Wanted::exact("def-one").unwrap(),
            Wanted::containing(&["point".to_string(), "x".to_string()]).unwrap(),
        ] {
            let gate = Gate::new(wanted);
            let classified: Vec<_> = gate.words(text.as_bytes()).collect();
            let plain: Vec<&[u8]> = super::words(text.as_bytes()).collect();
            assert_eq!(
                classified.iter().map(|w| w.bytes).collect::<Vec<_>>(),
                plain
            );
            let mut simple = 0;
            for w in classified.iter().filter(|w| w.simple) {
                simple += 1;
                let (mut one, mut other) = (Vec::new(), Vec::new());
                gate.push_simple_word(w, &mut one);
                gate.push_word(w.bytes, &mut other);
                assert_eq!(one, other, "{:?}", String::from_utf8_lossy(w.bytes));
                let named =
                    |m: Option<&std::sync::Arc<super::Macro>>| m.map(|m| m.as_ref() as *const _);
                assert_eq!(
                    named(gate.named_global_simple(w, &lookup)),
                    named(gate.named_global(w.bytes, &lookup)),
                    "{:?}",
                    String::from_utf8_lossy(w.bytes)
                );
            }
            assert!(simple > 10 && simple < classified.len());
        }
    }

    /// A macro's pieces, tested before they are copied (`of_val`), are the relevant ones
    /// of every symbol and string lowercased and split by `push_text`, as before.
    #[test]
    fn a_macros_pieces_are_the_relevant_ones_of_its_texts() {
        use super::super::datum::Val;
        let texts = [
            "make-~a",
            "Make-LVAR",
            "pkg:make-foo",
            "#:make",
            "##lvar",
            "a|b",
            "x\\y",
            "lvar",
            "é-lvar",
            "make-~(~a~)-p",
            "l",
            "var",
            "-lvar",
            ":",
            "#",
            "",
            "defk",
            "lv:ar",
            "MAKE-",
            "~~lvar",
        ];
        let values: Vec<Val> = texts
            .iter()
            .flat_map(|t| {
                let string = Val::Str((*t).into());
                let atom = Val::Atom((*t).into());
                [Val::sym(t), string, atom]
            })
            .collect();
        let body = Val::List(values.clone());
        for wanted in [
            Wanted::exact("make-lvar").unwrap(),
            Wanted::containing(&["lvar".to_string(), "make-".to_string()]).unwrap(),
        ] {
            let gate = Gate::new(wanted);
            let mut fast = Vec::new();
            super::of_val(&body, &gate, &mut fast, &mut |_| {});
            let mut copied = Vec::new();
            for v in &values {
                match v {
                    Val::Sym(w) => super::push_text(w.name.as_str().to_lowercase(), &mut copied),
                    Val::Str(s) | Val::Atom(s) => {
                        super::push_text(s.to_lowercase().replace('\\', ""), &mut copied)
                    }
                    _ => unreachable!(),
                }
            }
            for pieces in [&mut fast, &mut copied] {
                pieces.retain(|p| gate.relevant(p.as_bytes()));
                pieces.sort_unstable();
                pieces.dedup();
            }
            assert_eq!(fast, copied);
            assert!(copied.len() > 5, "{copied:?}");
        }
    }

    /// A comment's words are no pieces: the reader drops them (a table of character codes
    /// commented `; LATIN SMALL LETTER L` made every name pass). A `;` inside a string or
    /// a character is no comment.
    #[test]
    fn the_words_of_comments_are_no_pieces() {
        let (source, _) = SOURCES[0];
        let wanted = || Wanted::exact("make-lvar").unwrap();
        assert!(!passes(source, "(defthing l ; v a r\n)", wanted()));
        assert!(!passes(source, "(defthing l #| v a r |#)", wanted()));
        assert!(passes(source, "(defthing l \"; v a r\")", wanted()));
        assert!(passes(source, "(defthing l #\\; v a r)", wanted()));
        assert!(passes(source, "(defthing l |;| v a r)", wanted()));
        // Escaped names without a comment are read as one stretch, with one as before.
        assert!(passes(source, "(defthing l |v| a r)", wanted()));
        assert!(!passes(source, "(defthing l |v| ; a r\n)", wanted()));
        assert!(!passes(source, "(defthing l |v| #| a r |#)", wanted()));
    }

    /// The fast relevance test answers as the one comparing at every offset, on
    /// generated pieces (any case) and names or literals.
    #[test]
    fn relevance_answers_as_the_comparison_at_every_offset() {
        let mut seed = 11u64;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let (mut relevant, mut total) = (0, 0);
        for _ in 0..20_000 {
            let mut text = |max: u64, bytes: &[u8]| -> String {
                let len = 1 + next(max);
                (0..len)
                    .map(|_| char::from(bytes[next(bytes.len() as u64) as usize]))
                    .collect()
            };
            let target = text(9, b"ab-p");
            let piece = text(12, b"abAB-pP");
            for wanted in [
                Wanted::exact(&target).unwrap(),
                Wanted::containing(std::slice::from_ref(&target)).unwrap(),
            ] {
                let fast = wanted.relevant(piece.as_bytes());
                assert_eq!(
                    fast,
                    wanted.relevant_by_offsets(piece.as_bytes()),
                    "{wanted:?} {piece}"
                );
                relevant += usize::from(fast);
                total += 1;
            }
        }
        assert!(
            relevant > 2000 && relevant < total - 2000,
            "{relevant} of {total}"
        );
    }

    #[test]
    fn a_name_no_piece_makes_is_ruled_out() {
        let (source, call) = SOURCES[0];
        assert!(!passes(source, call, Wanted::exact("make-lvar").unwrap()));
        // `x` is a symbol of the macro's body: `point-x` could be made, `point-y` not.
        assert!(passes(source, call, Wanted::exact("point-x").unwrap()));
        assert!(!passes(source, call, Wanted::exact("point-y").unwrap()));
        let literal = Wanted::containing(&["lvar".to_string()]).unwrap();
        assert!(!passes(source, call, literal));
        // The pieces of a macro another one calls: `-one` is def-one's.
        let (source, call) = SOURCES[2];
        assert!(passes(source, call, Wanted::exact("y-one").unwrap()));
        assert!(!passes(source, call, Wanted::exact("z-one").unwrap()));
        assert!(!passes(source, call, Wanted::exact("x-two").unwrap()));
    }
}
