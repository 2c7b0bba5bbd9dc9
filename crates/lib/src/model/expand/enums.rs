//! CFFI's foreign enums as read-time values: osicat defines a condition per `errno`
//! value with `(define-posix-errors #.(foreign-enum-keyword-list 'errno-values))`, over
//! the keywords of an enum its grovel file declares (`(constantenum errno-values
//! ((:eperm "EPERM")) ...)`). The keywords of an enum that a `defcenum`, or a grovel
//! file's `cenum` or `constantenum`, declares once in the scope are known like a global
//! variable's constant value (`read_eval.rs`), under the key [`key`] of the enum's name,
//! which no symbol's name has; `foreign-enum-keyword-list` of a quoted name is that list.
//! Only the declaring forms' text is read (after the features' branches), and only once
//! a read-time form of the scope asks for an enum (`find/macros.rs`): no pass over the
//! files looks for enums before.

use super::datum::{read_keeping_read_time, Val, READ_TIME};
use std::collections::HashSet;

/// What precedes an enum's folded name in its key.
const KEY_PREFIX: &str = "(foreign-enum) ";

/// The operators that declare an enum.
const DECLARERS: [&str; 3] = ["defcenum", "cenum", "constantenum"];

/// The function whose value is an enum's keywords.
pub(crate) const KEYWORD_LIST: &str = "foreign-enum-keyword-list";

/// The key an enum's keywords are known under.
pub(crate) fn key(name: &str) -> String {
    format!("{KEY_PREFIX}{name}")
}

/// Whether a wanted global's name is an enum's key.
pub(crate) fn is_key(name: &str) -> bool {
    name.starts_with(KEY_PREFIX)
}

/// The keys of the enums whose keywords the read-time form `text` asks for: each
/// `foreign-enum-keyword-list` followed by a quoted name (folded).
pub(crate) fn asked(text: &[u8]) -> Vec<String> {
    // Asked of each read-time form: the searcher is built once.
    static FINDER: std::sync::OnceLock<memchr::memmem::Finder<'static>> =
        std::sync::OnceLock::new();
    let finder = FINDER.get_or_init(|| memchr::memmem::Finder::new(KEYWORD_LIST.as_bytes()));
    if text.len() < KEYWORD_LIST.len() {
        return Vec::new();
    }
    let lower = text.to_ascii_lowercase();
    finder
        .find_iter(&lower)
        .filter_map(|at| {
            let rest = &lower[at + KEYWORD_LIST.len()..];
            let quote = rest.iter().position(|c| !c.is_ascii_whitespace())?;
            (rest[quote] == b'\'').then_some(())?;
            name_at(&rest[quote + 1..]).map(|n| key(&n))
        })
        .collect()
}

/// The keys of the enums `b` declares (textually: a declaring operator after `(`,
/// followed by a name or a list opening with one).
#[cfg(test)]
fn declared(b: &[u8]) -> Vec<String> {
    declaring_hits(b)
        .into_iter()
        .map(|(_, name)| key(&name))
        .collect()
}

/// Where `b` declares an enum (the `(` of the form), with the enum's folded name.
fn declaring_hits(b: &[u8]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut opens = Opens::default();
    for at in memchr::memmem::find_iter(b, b"enum") {
        for d in DECLARERS {
            let start = (at + 4).checked_sub(d.len()).filter(|&s| s > 0);
            let Some(start) = start else { continue };
            if !b[start..at + 4].eq_ignore_ascii_case(d.as_bytes()) {
                continue;
            }
            let Some(open) = opens.before(b, start) else {
                continue;
            };
            let rest = &b[at + 4..];
            let blank = rest.iter().position(|c| !c.is_ascii_whitespace());
            let Some(blank) = blank.filter(|&k| k > 0) else {
                continue;
            };
            let name = match rest[blank] {
                b'(' => &rest[blank + 1..],
                _ => &rest[blank..],
            };
            if let Some(name) = name_at(name) {
                out.push((open, name));
            }
        }
    }
    out
}

/// Where the `(` is that opens a list whose operator starts at `start` (after a package
/// prefix, `(cffi:defcenum`), for ascending `start`s: a prefix's start is looked for back
/// to the last position asked, each byte once (a token of many `:defcenum`s was read back
/// to its start at each).
#[derive(Default)]
struct Opens {
    /// The last position asked, and the last byte before it that is no prefix character.
    last: Option<(usize, Option<usize>)>,
}

impl Opens {
    fn before(&mut self, b: &[u8], start: usize) -> Option<usize> {
        let mut at = start.checked_sub(1)?;
        if b[at] == b':' {
            let prefix = |c: &u8| c.is_ascii_alphanumeric() || b"-:.".contains(c);
            let (floor, known) = match self.last {
                Some((last, known)) if last <= at => (last, known),
                _ => (0, None),
            };
            let found = match b[floor..at].iter().rposition(|c| !prefix(c)) {
                Some(k) => Some(floor + k),
                None => known,
            };
            self.last = Some((at, found));
            at = found?;
        }
        (b[at] == b'(').then_some(at)
    }
}

/// The folded symbol name at the start of `text` (after a package prefix).
fn name_at(text: &[u8]) -> Option<String> {
    let end = text
        .iter()
        .position(|c| c.is_ascii_whitespace() || b"()'`,\";".contains(c))
        .unwrap_or(text.len());
    let word = &text[..end];
    let word = word.rsplit(|&c| c == b':').next().unwrap_or(word);
    (!word.is_empty()).then(|| String::from_utf8_lossy(word).to_ascii_lowercase())
}

/// The enums of `wanted` (keys) that `b` declares: key and keyword list, one per
/// declaring form read.
pub(crate) fn values(
    b: &[u8],
    wanted: &HashSet<String>,
    reads: &mut dyn FnMut(bool, &[u8]) -> bool,
) -> Vec<(String, Val)> {
    let hits: Vec<usize> = declaring_hits(b)
        .into_iter()
        .filter(|(_, name)| wanted.contains(&key(name)))
        .map(|(at, _)| at)
        .collect();
    let mut out = Vec::new();
    super::each_form_holding(b, &hits, &mut |start, end| {
        for form in read_keeping_read_time(b, start, end, reads) {
            let mut stack = vec![&form];
            while let Some(v) = stack.pop() {
                let head = match v {
                    Val::Dotted(items, _) => items.first().and_then(Val::symbol_name),
                    _ => v.head(),
                };
                if head.is_some_and(|h| DECLARERS.contains(&h)) {
                    out.extend(keywords(v));
                    continue;
                }
                if let Val::List(items) = v {
                    stack.extend(items.iter());
                }
            }
        }
    });
    out
}

/// The elements of a declaring form, a dotted tail that is a quoted list read at read
/// time (osicat's `... . #-windows #.'(((:estale "ESTALE")) ...)`) spliced in.
fn entries(form: &Val) -> Option<Vec<Val>> {
    match form {
        Val::Dotted(items, tail) if tail.is_nil() => Some(items.to_vec()),
        Val::Dotted(items, tail) => {
            let [head, Val::Quote(quoted)] = tail.items()? else {
                return None;
            };
            let more = quoted.items().filter(|_| head.is_symbol(READ_TIME))?;
            Some(items.iter().chain(more).cloned().collect())
        }
        _ => form.items().map(<[Val]>::to_vec),
    }
}

/// `(defcenum NAME-AND-OPTIONS {KEYWORD | (KEYWORD VALUE)}*)` (a docstring first is
/// skipped), or grovel's `(cenum NAME-AND-OPTIONS ((KEYWORD C-NAME...) &key ...)*)`:
/// the key of the name and the keywords, in order. `None` when an entry is not one of
/// these shapes.
fn keywords(form: &Val) -> Option<(String, Val)> {
    let items = entries(form)?;
    let items = &items[..];
    let spec = items.get(1)?;
    let name = match spec.items() {
        Some([name, ..]) => name,
        _ => spec,
    };
    let name = name.symbol_name().filter(|_| !name.is_nil())?;
    let mut out = Vec::new();
    for entry in &items[2..] {
        let keyword = match entry {
            Val::Str(_) => continue,
            k if k.is_keyword() => k,
            Val::List(parts) => match parts.first()? {
                k if k.is_keyword() => k,
                Val::List(inner) => inner.first().filter(|k| k.is_keyword())?,
                _ => return None,
            },
            _ => return None,
        };
        out.push(keyword.clone());
    }
    Some((key(name), Val::List(out)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(_: bool, _: &[u8]) -> bool {
        true
    }

    #[test]
    fn a_grovel_enum_and_a_defcenum_give_their_keywords() {
        let b = b"(constantenum (errno-values :define-constants t)\n  ((:eperm \"EPERM\"))\n  ((:enoent \"ENOENT\") :optional t))\n(cffi:defcenum color \"doc\" :red (:green 2))";
        assert_eq!(declared(b), vec![key("errno-values"), key("color")]);
        let wanted: HashSet<String> = declared(b).into_iter().collect();
        let got = values(b, &wanted, &mut all);
        let printed: Vec<(String, String)> = got
            .iter()
            .map(|(k, v)| {
                let mut s = String::new();
                super::super::datum::print(v, &mut s);
                (k.clone(), s)
            })
            .collect();
        assert_eq!(
            printed,
            vec![
                (key("errno-values"), "(:eperm :enoent)".to_string()),
                (key("color"), "(:red :green)".to_string()),
            ]
        );
    }

    #[test]
    fn a_read_time_quoted_tail_is_spliced_in() {
        let b = b"(constantenum errno-values\n  ((:eperm \"EPERM\"))\n  .\n  #+windows nil\n  #-windows\n  #.'(((:estale \"ESTALE\"))\n      ((:enotblk \"ENOTBLK\"))))";
        let wanted: HashSet<String> = declared(b).into_iter().collect();
        let mut windows = |plus: bool, e: &[u8]| plus == (e == b"windows");
        let printed = |got: Vec<(String, Val)>| {
            let mut s = String::new();
            super::super::datum::print(&got[0].1, &mut s);
            s
        };
        assert_eq!(
            printed(values(b, &wanted, &mut all)),
            "(:eperm :estale :enotblk)"
        );
        assert_eq!(printed(values(b, &wanted, &mut windows)), "(:eperm)");
    }

    #[test]
    fn only_a_quoted_name_is_asked_for() {
        let t = b"(foreign-enum-keyword-list 'errno-values) (FOREIGN-ENUM-KEYWORD-LIST x)";
        assert_eq!(asked(t), vec![key("errno-values")]);
        // `enum` inside a longer operator declares nothing.
        assert!(declared(b"(my-cenum foo :a) (cenumber bar)").is_empty());
    }
}
