//! Lisp data as the expander works on them: a form read from source text into a small
//! tree ([`Val`]) and printed back as text. Bounded: lists deeper than [`MAX_DEPTH`], and
//! a datum after more than `MAX_PREFIXES` quotes and commas, are read as [`Val::Unknown`],
//! so every function over a tree recurses at most that deep (times the prefixes).

use super::super::symbols::{Prefix as Package, Written};
use crate::scan::{each_event_read, Event, Prefix};
use compact_str::CompactString;
use std::ops::ControlFlow;

/// Lists nested deeper than this are not read (they become [`Val::Unknown`]); a result
/// deeper than this is not made.
pub(crate) const MAX_DEPTH: usize = 48;

/// Bytes of an atom's text that weigh as much as a node in [`Val::size`].
pub(crate) const TEXT_BYTES_PER_NODE: usize = 64;

/// A datum.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Val {
    /// A symbol: its package prefix and folded name.
    Sym(Written),
    /// A string's contents.
    Str(CompactString),
    /// Any other atom (a number, a character, `#x1F`), as written.
    Atom(CompactString),
    /// A proper list.
    List(Vec<Val>),
    /// `(a b . c)`.
    Dotted(Vec<Val>, Box<Val>),
    Quote(Box<Val>),
    Backquote(Box<Val>),
    /// `,x`.
    Comma(Box<Val>),
    /// `,@x` (also `,.x`).
    Splice(Box<Val>),
    Function(Box<Val>),
    /// What cannot be known without evaluating (a call of an unknown function, `#.`), or
    /// was not read (too deep).
    Unknown,
}

impl Val {
    pub(crate) fn sym(name: &str) -> Val {
        Val::Sym(Written {
            prefix: Package::None,
            name: CompactString::new(name),
        })
    }

    /// The folded name of a symbol (any package).
    pub(crate) fn symbol_name(&self) -> Option<&str> {
        match self {
            Val::Sym(w) => Some(&w.name),
            _ => None,
        }
    }

    /// Whether this is the symbol `name` (any package but a keyword).
    pub(crate) fn is_symbol(&self, name: &str) -> bool {
        matches!(self, Val::Sym(w) if w.name == name && w.prefix != Package::Keyword)
    }

    pub(crate) fn is_keyword(&self) -> bool {
        matches!(self, Val::Sym(w) if w.prefix == Package::Keyword)
    }

    /// The value of this form when it is a literal: a quoted datum, a string, a number,
    /// `t`, `nil`, a keyword (a global's constant initial value, a property's value).
    pub(crate) fn literal_value(&self) -> Option<Val> {
        match self {
            Val::Quote(q) => Some((**q).clone()),
            Val::Str(_) | Val::Atom(_) => Some(self.clone()),
            Val::Sym(_) if self.is_keyword() || self.is_symbol("t") || self.is_nil() => {
                Some(self.clone())
            }
            _ => None,
        }
    }

    /// `nil` or `()`.
    pub(crate) fn is_nil(&self) -> bool {
        match self {
            Val::List(items) => items.is_empty(),
            _ => self.is_symbol("nil"),
        }
    }

    /// The elements of a proper list (`nil` is empty).
    pub(crate) fn items(&self) -> Option<&[Val]> {
        match self {
            Val::List(items) => Some(items),
            _ if self.is_nil() => Some(&[]),
            _ => None,
        }
    }

    /// The data directly inside: a list's elements (a dotted list's tail last), what a
    /// quote, backquote, comma or `#'` holds; nothing for an atom.
    pub(crate) fn children(&self) -> impl Iterator<Item = &Val> {
        let (items, last): (&[Val], Option<&Val>) = match self {
            Val::List(items) => (items, None),
            Val::Dotted(items, tail) => (items, Some(&**tail)),
            Val::Quote(x)
            | Val::Backquote(x)
            | Val::Comma(x)
            | Val::Splice(x)
            | Val::Function(x) => (&[], Some(&**x)),
            _ => (&[], None),
        };
        items.iter().chain(last)
    }

    /// The operator's folded name of a list headed by a symbol.
    pub(crate) fn head(&self) -> Option<&str> {
        match self {
            Val::List(items) => items.first()?.symbol_name(),
            _ => None,
        }
    }

    /// Nodes in the tree (each node once), an atom's text counted as one more node per
    /// [`TEXT_BYTES_PER_NODE`] bytes: copying or making a long name or string costs its
    /// length, so a budget of steps bounds the bytes made as well as the nodes.
    pub(crate) fn size(&self) -> usize {
        match self {
            Val::List(items) => 1 + items.iter().map(Val::size).sum::<usize>(),
            Val::Dotted(items, tail) => {
                1 + tail.size() + items.iter().map(Val::size).sum::<usize>()
            }
            Val::Quote(v)
            | Val::Backquote(v)
            | Val::Comma(v)
            | Val::Splice(v)
            | Val::Function(v) => 1 + v.size(),
            Val::Sym(w) => 1 + w.name.len() / TEXT_BYTES_PER_NODE,
            Val::Str(text) | Val::Atom(text) => 1 + text.len() / TEXT_BYTES_PER_NODE,
            Val::Unknown => 1,
        }
    }
}

/// A number as the reader reads one (roughly: a sign or a digit, then digits).
fn is_number(text: &str) -> bool {
    let t = text.strip_prefix(['+', '-']).unwrap_or(text);
    let t = t.strip_prefix('.').unwrap_or(t);
    // `1+` and `1-` are symbols.
    t.starts_with(|c: char| c.is_ascii_digit())
        && !t.ends_with(['+', '-'])
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '+' | '-'))
}

/// An open list being read, and the prefixes waiting for its next element.
#[derive(Default)]
struct Frame {
    items: Vec<Val>,
    tail: Option<Val>,
    dot: bool,
    prefixes: Vec<Wrap>,
}

#[derive(Clone, Copy)]
enum Wrap {
    Quote,
    Backquote,
    Comma,
    Splice,
    Function,
    /// `#.` or a data dispatch (`#(`, `#S(`): what follows is not read as code.
    Opaque,
    /// `#.` read by [`read_keeping_read_time`]: what follows is kept, marked.
    ReadTime,
}

/// Most prefixes read before one datum (`,',` is three): past it the datum is not read,
/// so that a chain of quotes nests no deeper than lists do (a value's depth is what
/// walking and freeing it take in stack).
const MAX_PREFIXES: usize = 16;

/// The operator of the list that stands for a read-time form `#.x` in what
/// [`read_keeping_read_time`] reads: `(READ_TIME x)`. No source text spells it.
pub(crate) const READ_TIME: &str = "\u{1}#.";

impl Frame {
    fn push(&mut self, mut v: Val) {
        if self.prefixes.len() > MAX_PREFIXES {
            self.prefixes.clear();
            v = Val::Unknown;
        }
        while let Some(w) = self.prefixes.pop() {
            v = match w {
                Wrap::Quote => Val::Quote(Box::new(v)),
                Wrap::Backquote => Val::Backquote(Box::new(v)),
                Wrap::Comma => Val::Comma(Box::new(v)),
                Wrap::Splice => Val::Splice(Box::new(v)),
                Wrap::Function => Val::Function(Box::new(v)),
                Wrap::Opaque => Val::Unknown,
                Wrap::ReadTime => Val::List(vec![Val::sym(READ_TIME), v]),
            };
        }
        if self.dot {
            self.tail = Some(v);
        } else {
            self.items.push(v);
        }
    }

    fn close(self) -> Val {
        match self.tail {
            Some(tail) if !self.items.is_empty() => Val::Dotted(self.items, Box::new(tail)),
            _ => Val::List(self.items),
        }
    }
}

/// The data of `b[start..end]`, as the reader reads them under `reads` (`#+`/`#-`).
pub(crate) fn read(
    b: &[u8],
    start: usize,
    end: usize,
    reads: &mut dyn FnMut(bool, &[u8]) -> bool,
) -> Vec<Val> {
    read_with(b, start, end, reads, false)
}

/// [`read`], a read-time form `#.x` read as `(READ_TIME x)` ([`READ_TIME`]) instead of
/// [`Val::Unknown`]: for its value to be computed where it can be
/// (`super::read_eval`).
pub(crate) fn read_keeping_read_time(
    b: &[u8],
    start: usize,
    end: usize,
    reads: &mut dyn FnMut(bool, &[u8]) -> bool,
) -> Vec<Val> {
    read_with(b, start, end, reads, true)
}

fn read_with(
    b: &[u8],
    start: usize,
    end: usize,
    reads: &mut dyn FnMut(bool, &[u8]) -> bool,
    keep_read_time: bool,
) -> Vec<Val> {
    let mut stack: Vec<Frame> = vec![Frame::default()];
    // Lists opened below the depth limit, not read.
    let mut skipped = 0usize;
    each_event_read(b, start, end, reads, &mut |event| {
        if skipped > 0 {
            match event {
                Event::Open(_) => skipped += 1,
                Event::Close(_) => {
                    skipped -= 1;
                    if skipped == 0 {
                        top(&mut stack).push(Val::Unknown);
                    }
                }
                _ => {}
            }
            return ControlFlow::Continue(());
        }
        match event {
            Event::Open(_) if stack.len() > MAX_DEPTH => skipped = 1,
            Event::Open(_) => stack.push(Frame::default()),
            Event::Close(_) => {
                if stack.len() > 1 {
                    let frame = stack.pop().unwrap_or_default();
                    top(&mut stack).push(frame.close());
                }
            }
            Event::Token(s, e) if plain_symbol(&b[s..e]) => {
                // ASCII (`plain_symbol`): borrowed, then copied inline when short.
                let mut name = CompactString::new(String::from_utf8_lossy(&b[s..e]));
                name.make_ascii_lowercase();
                top(&mut stack).push(Val::Sym(Written {
                    prefix: Package::None,
                    name,
                }));
            }
            Event::Token(s, e) => {
                let text = String::from_utf8_lossy(&b[s..e]);
                let inside = stack.len() > 1;
                let frame = top(&mut stack);
                if text == "." && frame.prefixes.is_empty() && inside {
                    frame.dot = true;
                } else if is_number(&text) {
                    frame.push(Val::Atom(CompactString::from(text)));
                } else {
                    frame.push(Val::Sym(Written::parse(&text)));
                }
            }
            Event::Atom(s, e) => {
                let text = String::from_utf8_lossy(&b[s..e]);
                let v = match text.strip_prefix('"') {
                    Some(inner) => {
                        Val::Str(unescape(inner.strip_suffix('"').unwrap_or(inner)).into())
                    }
                    None => Val::Atom(CompactString::from(text)),
                };
                top(&mut stack).push(v);
            }
            Event::Prefix(p, at) => {
                let wrap = match p {
                    Prefix::Quote => Wrap::Quote,
                    Prefix::Backquote => Wrap::Backquote,
                    Prefix::Comma if matches!(b.get(at + 1), Some(b'@' | b'.')) => Wrap::Splice,
                    Prefix::Comma => Wrap::Comma,
                    Prefix::Function => Wrap::Function,
                    Prefix::Eval if keep_read_time => Wrap::ReadTime,
                    Prefix::Eval | Prefix::Data => Wrap::Opaque,
                    Prefix::Label | Prefix::Other => return ControlFlow::Continue(()),
                };
                top(&mut stack).prefixes.push(wrap);
            }
        }
        ControlFlow::Continue(())
    });
    // Lists left open at the end are closed there.
    while stack.len() > 1 {
        let frame = stack.pop().unwrap_or_default();
        top(&mut stack).push(frame.close());
    }
    stack.pop().unwrap_or_default().items
}

/// A token that is a symbol of the current package written plainly (printable ASCII
/// without a package marker, `|`, `\\` or `#`, not starting as a number or `.` does): its
/// name is the token folded, what [`Written::parse`] makes of it, without its checks
/// (most tokens of every form read are such).
fn plain_symbol(token: &[u8]) -> bool {
    token
        .first()
        .is_some_and(|c| !c.is_ascii_digit() && !matches!(c, b'+' | b'-' | b'.'))
        && token
            .iter()
            .all(|&c| c.is_ascii_graphic() && !matches!(c, b':' | b'|' | b'\\' | b'#'))
}

fn top(stack: &mut [Frame]) -> &mut Frame {
    stack
        .last_mut()
        .expect("the outermost frame is never popped")
}

fn unescape(inner: &str) -> String {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        out.extend(if c == '\\' { chars.next() } else { Some(c) });
    }
    out
}

/// The text of the symbol that stands for [`Val::Unknown`] in printed expansions: no
/// source text spells it, so a name holding it is known to be unknown.
pub(crate) const UNKNOWN: char = '\u{1}';

/// `v` as Lisp text, read back by the outline as the same data.
pub(crate) fn print(v: &Val, out: &mut String) {
    match v {
        Val::Sym(w) => {
            match &w.prefix {
                Package::None => {}
                Package::Keyword => out.push(':'),
                Package::Uninterned => out.push_str("#:"),
                Package::Package(p) => {
                    print_name(p, out);
                    out.push_str("::");
                }
            }
            print_name(&w.name, out);
        }
        Val::Str(s) => {
            out.push('"');
            for c in s.chars() {
                if matches!(c, '"' | '\\') {
                    out.push('\\');
                }
                out.push(c);
            }
            out.push('"');
        }
        Val::Atom(a) => out.push_str(a),
        Val::List(items) => print_list(items, None, out),
        Val::Dotted(items, tail) => print_list(items, Some(tail), out),
        Val::Quote(x) => prefixed("'", x, out),
        Val::Backquote(x) => prefixed("`", x, out),
        Val::Comma(x) => prefixed(",", x, out),
        Val::Splice(x) => prefixed(",@", x, out),
        Val::Function(x) => prefixed("#'", x, out),
        Val::Unknown => {
            out.push('|');
            out.push(UNKNOWN);
            out.push('|');
        }
    }
}

fn prefixed(prefix: &str, x: &Val, out: &mut String) {
    out.push_str(prefix);
    print(x, out);
}

fn print_list(items: &[Val], tail: Option<&Val>, out: &mut String) {
    out.push('(');
    for (k, item) in items.iter().enumerate() {
        if k > 0 {
            out.push(' ');
        }
        print(item, out);
    }
    if let Some(tail) = tail {
        out.push_str(" . ");
        print(tail, out);
    }
    out.push(')');
}

/// A folded name, escaped with `|...|` when the reader would not read it back as is.
fn print_name(name: &str, out: &mut String) {
    let plain = !name.is_empty()
        && !is_number(name)
        && name != "."
        && name.chars().all(|c| {
            !c.is_whitespace()
                && !c.is_uppercase()
                && !matches!(
                    c,
                    '(' | ')' | '"' | '\'' | '`' | ',' | ';' | '|' | '\\' | ':' | '#'
                )
        });
    if plain {
        out.push_str(name);
        return;
    }
    out.push('|');
    for c in name.chars() {
        if matches!(c, '|' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('|');
}

#[cfg(test)]
mod tests {
    use super::{plain_symbol, read, Val, Written};

    /// A token read by the fast path is the symbol [`Written::parse`] makes of it; the
    /// others (numbers, `.`, prefixes, escapes, whitespace [`str::trim`] would drop)
    /// take the general way.
    #[test]
    fn plain_symbols_read_as_parsed() {
        let plain = [
            "foo",
            "Make-Lvar",
            "*x*",
            "x1+",
            "a.b",
            "%def",
            "<=",
            "/",
            "x1",
        ];
        for token in plain {
            assert!(plain_symbol(token.as_bytes()), "{token}");
            let read = read(token.as_bytes(), 0, token.len(), &mut |_, _| true);
            assert_eq!(read, [Val::Sym(Written::parse(token))], "{token}");
        }
        let general = [
            "1+", "-", "+x", ".", ".5", "12", "p:x", ":k", "#:g", "|a b|", "a\\b", "\u{b}x", "é",
        ];
        for token in general {
            assert!(!plain_symbol(token.as_bytes()), "{token}");
        }
    }

    /// Names, strings and atoms of up to 24 bytes live in the value itself: reading,
    /// copying and binding values allocates nothing for them (the evaluator's steps were
    /// mostly allocations of names), and longer ones still read whole.
    #[test]
    fn short_texts_are_stored_inline() {
        let text = "(destructuring-bind (a-name-of-twenty-four-b) \"a string\" 12345 nil)";
        let forms = read(text.as_bytes(), 0, text.len(), &mut |_, _| true);
        let copy = forms.clone();
        let [Val::List(items)] = copy.as_slice() else {
            panic!("one list: {forms:?}")
        };
        let [Val::Sym(operator), Val::List(pattern), Val::Str(string), Val::Atom(number), Val::Sym(nil)] =
            items.as_slice()
        else {
            panic!("{items:?}")
        };
        let [Val::Sym(variable)] = pattern.as_slice() else {
            panic!("{pattern:?}")
        };
        let texts = [&operator.name, &variable.name, string, number, &nil.name];
        assert_eq!(
            texts.map(|t| t.as_str()),
            [
                "destructuring-bind",
                "a-name-of-twenty-four-b",
                "a string",
                "12345",
                "nil"
            ]
        );
        assert!(texts.iter().all(|t| !t.is_heap_allocated()));
        let long = "a-symbol-name-longer-than-twenty-four-bytes";
        assert_eq!(Val::sym(long).symbol_name(), Some(long));
    }
}
