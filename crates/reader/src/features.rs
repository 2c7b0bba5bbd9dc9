//! Feature expressions (`#+sbcl`, `#-(or ccl (and sbcl (not unix)))`) decided against a
//! list of features, without evaluating anything (docs/reader.md#feature-expressions).
//!
//! The expression is read as the Lisp reader reads it for `#+`/`#-`: in the keyword
//! package, so `sbcl`, `:sbcl` and `SBCL` are the same feature, `|sbcl|` is another
//! (escapes keep case), and `pkg::name` names a feature of that package (matched by the
//! package name as written). `and`, `or` and `not` (also as `:and`, `cl:and`, ...) combine
//! them as `featurep` does: `(and)` is true, `(or)` false, `not` takes exactly one.
//! What cannot be decided without evaluating (`#.(...)`) or is not a feature expression
//! (a string, a number, an unknown operator, unbalanced text) is `None`: undecided.
//!
//! Nothing here recurses: lists are read onto an explicit stack.

use std::collections::HashSet;

/// A feature as the reader names it: package (none for a keyword) and symbol name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Symbol {
    package: Option<String>,
    name: String,
}

/// The features that are present, as given by the caller (`"sbcl"`, `":x86-64"`,
/// `"sb-impl::foo"`).
#[derive(Clone, Debug, Default)]
pub struct Features(HashSet<Symbol>);

impl Features {
    /// Features from names as a user writes them: case does not matter, a leading `:` is
    /// optional, `pkg::name` (or `pkg:name`) names a symbol of package `pkg`.
    pub fn new<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> Features {
        Features(
            names
                .into_iter()
                // `--features "ccl, sbcl"`: blanks around a name are no part of it (the
                // reader ends a token at whitespace).
                .filter_map(|n| symbol(n.as_ref().trim().as_bytes()))
                .collect(),
        )
    }

    fn has(&self, s: &Symbol) -> bool {
        self.0.contains(s)
    }

    /// The features, sorted: each one's package (`None`: a keyword) and name, as
    /// `*features*` holds them.
    pub fn symbols(&self) -> Vec<(Option<&str>, &str)> {
        let mut out: Vec<(Option<&str>, &str)> = self
            .0
            .iter()
            .map(|s| (s.package.as_deref(), s.name.as_str()))
            .collect();
        out.sort_unstable();
        out
    }
}

/// Whether a form behind `#+expr` is read (`plus`) or behind `#-expr`: `Some(true)` when
/// the reader reads it with these features, `Some(false)` when it skips it, `None` when
/// `expr` cannot be decided. `expr` is the expression's text, without `#+`/`#-`.
pub fn reads(plus: bool, expr: &[u8], features: &Features) -> Option<bool> {
    decide(expr, features).map(|value| value == plus)
}

/// The value of the feature expression `expr` (its text), or `None` when undecidable.
/// `and` and `or` stop at the first argument that decides them, as `featurep` does: what
/// follows is read but not checked (`(or sbcl (xor))` is true with `sbcl`).
pub fn decide(expr: &[u8], features: &Features) -> Option<bool> {
    match evaluate(expr, &|s| Tri::known(features.has(s)))? {
        Tri::True => Some(true),
        Tri::False => Some(false),
        Tri::Unknown => None,
    }
}

/// The value of `expr` whatever the features are, when it has one: `#-(and)` and
/// `#+(or)` (the idioms that comment a form out) are false with any features, as are
/// `#+(and x (or))` and `#+#:never`; `None` when the value depends on the features or is
/// undecidable. Three-valued logic: each feature is unknown.
pub fn decide_without_features(expr: &[u8]) -> Option<bool> {
    // A feature alone (`#+sbcl`, most expressions) is unknown: no list, no `#:`.
    memchr::memchr2(b'(', b'#', expr)?;
    match evaluate(expr, &|_| Tri::Unknown)? {
        Tri::True => Some(true),
        Tri::False => Some(false),
        Tri::Unknown => None,
    }
}

/// Whether the reader reads the form behind `#+expr` (`plus`) or `#-expr` with any
/// features: `Some(false)` when it never does ([`decide_without_features`]).
pub fn reads_without_features(plus: bool, expr: &[u8]) -> Option<bool> {
    decide_without_features(expr).map(|value| value == plus)
}

/// [`reads`] under `features` when given, else [`reads_without_features`].
pub fn reads_under(plus: bool, expr: &[u8], features: Option<&Features>) -> Option<bool> {
    match features {
        Some(features) => reads(plus, expr, features),
        None => reads_without_features(plus, expr),
    }
}

/// Which of a run of sibling data the reader reads (top-level forms, or the forms of one
/// list), given what each `#+`/`#-` in front of them gives ([`reads_under`]). A failed
/// conditional skips one datum, and one more for each failed conditional met while
/// skipping (SBCL's `sharp-plus-minus` returns no value, so the skipping read goes on):
/// `#+(or) #+(or) (defun a ()) (defun b ())` skips both forms. An undecided conditional
/// may skip or not, so the data it may skip are neither kept nor left out for sure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Run {
    /// Data still to skip whatever the undecided conditionals are.
    certain: usize,
    /// Data still to skip if every undecided conditional fails.
    possible: usize,
}

impl Run {
    /// The next datum, after the conditionals in front of it (what each gives, in order):
    /// `Some(false)` when the reader skips it, `Some(true)` when it reads it, `None` when
    /// that depends on the undecided ones.
    pub fn datum(&mut self, conditionals: impl IntoIterator<Item = Option<bool>>) -> Option<bool> {
        for reads in conditionals {
            match reads {
                Some(true) => {}
                Some(false) => {
                    self.certain = self.certain.saturating_add(1);
                    self.possible = self.possible.saturating_add(1);
                }
                None => self.possible = self.possible.saturating_add(1),
            }
        }
        let read = if self.certain > 0 {
            Some(false)
        } else if self.possible == 0 {
            Some(true)
        } else {
            None
        };
        self.certain = self.certain.saturating_sub(1);
        self.possible = self.possible.saturating_sub(1);
        read
    }

    /// Whether nothing before can skip what follows (the common case: no conditional).
    pub fn is_clear(&self) -> bool {
        self.possible == 0
    }
}

/// A value of a feature expression when some features are unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tri {
    True,
    False,
    Unknown,
}

impl Tri {
    fn known(value: bool) -> Tri {
        if value {
            Tri::True
        } else {
            Tri::False
        }
    }
}

/// `expr`'s value, each feature's given by `feature`; `None` when undecidable.
fn evaluate(expr: &[u8], feature: &dyn Fn(&Symbol) -> Tri) -> Option<Tri> {
    let mut tokens = Tokens { b: expr, i: 0 };
    let mut stack: Vec<Frame> = Vec::new();
    loop {
        let skipped = stack.last().is_some_and(Frame::decided);
        let value = match tokens.next()? {
            Token::Open => {
                stack.push(Frame::new(skipped));
                continue;
            }
            Token::Close => stack.pop()?.value(),
            Token::Atom(atom) => {
                if let Some(frame) = stack.last_mut().filter(|f| f.wants_operator()) {
                    frame.op = operator(atom.as_ref());
                    frame.read_operator = true;
                    continue;
                }
                atom.map(|s| feature(&s))
            }
            // `#+#:never`: a fresh symbol, in no feature list (the idiom that comments a
            // form out, `#+#:not-in-use (defmacro ...)`).
            Token::Uninterned => {
                if let Some(frame) = stack.last_mut().filter(|f| f.wants_operator()) {
                    frame.op = None;
                    frame.read_operator = true;
                    continue;
                }
                Some(Tri::False)
            }
        };
        match stack.last_mut() {
            Some(frame) => frame.push(value)?,
            None => return tokens.only_blank_left().then_some(value?),
        }
    }
}

/// An open list of a feature expression.
struct Frame {
    op: Option<Op>,
    read_operator: bool,
    /// Inside an argument that `and`/`or` never look at: read, not checked.
    skipped: bool,
    args: usize,
    any_true: bool,
    any_false: bool,
    any_unknown: bool,
}

impl Frame {
    fn new(skipped: bool) -> Frame {
        Frame {
            op: None,
            read_operator: false,
            skipped,
            args: 0,
            any_true: false,
            any_false: false,
            any_unknown: false,
        }
    }

    fn wants_operator(&self) -> bool {
        !self.read_operator
    }

    /// Whether the value is known whatever the arguments still to come.
    fn decided(&self) -> bool {
        self.skipped
            || (self.op == Some(Op::And) && self.any_false)
            || (self.op == Some(Op::Or) && self.any_true)
    }

    /// Takes an argument's value (`None`: undecidable); fails on an undecidable argument
    /// that counts, or on a list in operator position.
    fn push(&mut self, value: Option<Tri>) -> Option<()> {
        if !self.read_operator {
            // A list as the operator: an error, unless nobody looks.
            self.read_operator = true;
            return self.skipped.then_some(());
        }
        if !self.decided() {
            match value? {
                Tri::True => self.any_true = true,
                Tri::False => self.any_false = true,
                Tri::Unknown => self.any_unknown = true,
            }
        }
        self.args += 1;
        Some(())
    }

    /// The list's value at its `)`; false for a skipped one (never used).
    fn value(self) -> Option<Tri> {
        if self.skipped {
            return Some(Tri::False);
        }
        let unknown_or = |known: bool| match self.any_unknown {
            true => Tri::Unknown,
            false => Tri::known(known),
        };
        match (self.read_operator, self.op) {
            // `()` is NIL, a symbol no feature list holds.
            (false, _) => Some(Tri::False),
            (true, Some(Op::And)) if self.any_false => Some(Tri::False),
            (true, Some(Op::And)) => Some(unknown_or(true)),
            (true, Some(Op::Or)) if self.any_true => Some(Tri::True),
            (true, Some(Op::Or)) => Some(unknown_or(false)),
            (true, Some(Op::Not)) if self.args == 1 => Some(unknown_or(self.any_false)),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    And,
    Or,
    Not,
}

/// `and`, `or`, `not` as keywords or symbols of the `common-lisp` package.
fn operator(s: Option<&Symbol>) -> Option<Op> {
    let s = s?;
    let cl = matches!(
        s.package.as_deref(),
        None | Some("CL" | "COMMON-LISP" | "KEYWORD")
    );
    match s.name.as_str() {
        "AND" if cl => Some(Op::And),
        "OR" if cl => Some(Op::Or),
        "NOT" if cl => Some(Op::Not),
        _ => None,
    }
}

enum Token {
    Open,
    Close,
    /// A symbol, or `None` for another atom (a number, a string).
    Atom(Option<Symbol>),
    /// `#:name`.
    Uninterned,
}

struct Tokens<'a> {
    b: &'a [u8],
    i: usize,
}

impl Tokens<'_> {
    /// The next token; `None` at the end or at what is not part of a feature expression.
    fn next(&mut self) -> Option<Token> {
        self.skip_blank()?;
        let b = self.b;
        match b.get(self.i)? {
            b'(' => {
                self.i += 1;
                Some(Token::Open)
            }
            b')' => {
                self.i += 1;
                Some(Token::Close)
            }
            b'"' => {
                let (end, closed) = crate::scan::string_end(b, self.i);
                self.i = end;
                closed.then_some(Token::Atom(None))
            }
            b'#' if b.get(self.i + 1) == Some(&b':') => {
                let start = self.i + 2;
                self.i = token_end(b, start)?;
                // The name must be a symbol's (`#:1` is an error in the reader).
                symbol(&b[start..self.i])
                    .filter(|s| s.package.is_none() && !b[start..self.i].contains(&b':'))?;
                Some(Token::Uninterned)
            }
            b'\'' | b'`' | b',' | b'#' => None,
            _ => {
                let start = self.i;
                self.i = token_end(b, start)?;
                Some(Token::Atom(symbol(&b[start..self.i])))
            }
        }
    }

    /// Skips blanks and comments; `None` in an unterminated `#|`.
    fn skip_blank(&mut self) -> Option<()> {
        let b = self.b;
        while let Some(&c) = b.get(self.i) {
            if c.is_ascii_whitespace() {
                self.i += 1;
            } else if c == b';' {
                self.i = memchr::memchr(b'\n', &b[self.i..]).map_or(b.len(), |k| self.i + k);
            } else if b[self.i..].starts_with(b"#|") {
                let (end, closed) = crate::scan::block_comment_end(b, self.i);
                if !closed {
                    return None;
                }
                self.i = end;
            } else {
                break;
            }
        }
        Some(())
    }

    fn only_blank_left(&mut self) -> bool {
        self.skip_blank().is_some() && self.i == self.b.len()
    }
}

/// The end of the token starting at `start`: up to whitespace or a terminating macro
/// character, through `\x` and `|...|` escapes; `None` when an escape does not end.
fn token_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    while let Some(&c) = b.get(i) {
        match c {
            b'\\' => i += 2,
            b'|' => i = i + 1 + memchr::memchr(b'|', &b[i + 1..])? + 1,
            b'(' | b')' | b'"' | b';' | b'\'' | b'`' | b',' => break,
            c if c.is_ascii_whitespace() => break,
            _ => i += 1,
        }
    }
    (i <= b.len()).then_some(i)
}

/// The symbol a token names when read in the keyword package; `None` for a number or
/// an empty name.
fn symbol(token: &[u8]) -> Option<Symbol> {
    let mut parts: Vec<String> = vec![String::new()];
    let mut colons = 0;
    let mut escaped_any = false;
    let mut i = 0;
    while i < token.len() {
        match token[i] {
            b'\\' => {
                parts.last_mut()?.push(char::from(*token.get(i + 1)?));
                escaped_any = true;
                i += 2;
            }
            b'|' => {
                let end = i + 1 + memchr::memchr(b'|', &token[i + 1..])?;
                parts
                    .last_mut()?
                    .push_str(&String::from_utf8_lossy(&token[i + 1..end]));
                escaped_any = true;
                i = end + 1;
            }
            b':' => {
                colons += 1;
                if colons > 2 {
                    return None;
                }
                if token.get(i + 1) != Some(&b':') {
                    parts.push(String::new());
                }
                i += 1;
            }
            c => {
                let len = crate::scan::utf8_len(c).min(token.len() - i);
                let text = String::from_utf8_lossy(&token[i..i + len]);
                parts.last_mut()?.push_str(&text.to_uppercase());
                i += len;
            }
        }
    }
    let (package, name) = match parts.as_slice() {
        [name] => (None, name.clone()),
        [package, name] if package.is_empty() || package == "KEYWORD" => (None, name.clone()),
        [package, name] => (Some(package.clone()), name.clone()),
        _ => return None,
    };
    let is_number = !escaped_any && package.is_none() && is_lisp_number(&name);
    (!name.is_empty() && !is_number).then_some(Symbol { package, name })
}

/// Whether an upcased token reads as a number (integer, ratio or float, decimal radix).
fn is_lisp_number(t: &str) -> bool {
    let t = t.strip_prefix(['+', '-']).unwrap_or(t);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    if let Some((n, d)) = t.split_once('/') {
        return digits(n) && digits(d);
    }
    let t = t.strip_suffix('.').filter(|i| digits(i)).unwrap_or(t);
    let (mantissa, exponent) = match t.find(['E', 'D', 'F', 'S', 'L']) {
        Some(k) => (&t[..k], Some(&t[k + 1..])),
        None => (t, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some((i, f)) => {
            (i.is_empty() || digits(i))
                && (f.is_empty() || digits(f))
                && !(i.is_empty() && f.is_empty())
                && (exponent.is_some() || !f.is_empty() || i.is_empty())
        }
        None => digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['+', '-']).unwrap_or(e)));
    mantissa_ok && exponent_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(expr: &str) -> Option<bool> {
        decide(
            expr.as_bytes(),
            &Features::new(["sbcl", ":x86-64", "UNIX", "sb-impl::foo"]),
        )
    }

    #[test]
    fn features_and_operators() {
        assert_eq!(d("sbcl"), Some(true));
        assert_eq!(d(":SBCL"), Some(true));
        assert_eq!(d("ccl"), Some(false));
        assert_eq!(d("|sbcl|"), Some(false), "escapes keep case");
        assert_eq!(d("(or ccl sbcl)"), Some(true));
        assert_eq!(d("(and sbcl (not unix))"), Some(false));
        assert_eq!(d("(:and x86-64 (:or ecl unix))"), Some(true));
        assert_eq!(d("(cl:not ccl)"), Some(true));
        assert_eq!(d("(and)"), Some(true));
        assert_eq!(d("(or)"), Some(false));
        assert_eq!(d("()"), Some(false));
        assert_eq!(d("sb-impl::foo"), Some(true));
        assert_eq!(d("sb-impl::bar"), Some(false));
        assert_eq!(d("(or ; why\n ccl #| c |# sbcl)"), Some(true));
        assert_eq!(d("nan"), Some(false), "a symbol, not a float");
        assert_eq!(d("1+"), Some(false), "a symbol");
        assert_eq!(d("#:sbcl"), Some(false), "a fresh symbol is no feature");
        assert_eq!(d("(or #:x sbcl)"), Some(true));
        assert_eq!(d("(not #:never)"), Some(true));
    }

    #[test]
    fn without_features_only_constant_expressions_are_decided() {
        let w = |expr: &str| decide_without_features(expr.as_bytes());
        assert_eq!(w("(and)"), Some(true));
        assert_eq!(w("(or)"), Some(false));
        assert_eq!(w("()"), Some(false));
        assert_eq!(w("#:never"), Some(false));
        assert_eq!(w("(and sbcl (or))"), Some(false), "false whatever sbcl is");
        assert_eq!(w("(or sbcl (and))"), Some(true));
        assert_eq!(w("(not (or))"), Some(true));
        assert_eq!(w("(not (and ccl (or)))"), Some(true));
        assert_eq!(w("sbcl"), None);
        assert_eq!(w("(not sbcl)"), None);
        assert_eq!(w("(or sbcl (or))"), None);
        assert_eq!(w("(and sbcl (and))"), None);
        assert_eq!(w("nil"), None, "NIL may be pushed onto *features*");
        assert_eq!(w("(or sbcl 1)"), None, "undecidable: a number");
        assert_eq!(reads_without_features(false, b"(and)"), Some(false));
        assert_eq!(reads_without_features(true, b"(or)"), Some(false));
        assert_eq!(reads_without_features(true, b"sbcl"), None);
    }

    #[test]
    fn what_cannot_be_decided() {
        for expr in [
            "#.(cl:if t '(and) '(or))",
            "(not)",
            "(not a b)",
            "(xor a b)",
            "((and) a)",
            "\"sbcl\"",
            "1",
            "(or sbcl",
            "sbcl)",
            "a:b:c",
            "-1.5e3",
            "1/2",
            "#:",
            "#:1",
            "#:a:b",
            "(#:and sbcl)",
            "",
        ] {
            assert_eq!(d(expr), None, "{expr}");
        }
        assert_eq!(reads(true, b"sbcl", &Features::new(["sbcl"])), Some(true));
        assert_eq!(reads(false, b"sbcl", &Features::new(["sbcl"])), Some(false));
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        let expr = format!("{}sbcl{}", "(or ".repeat(200_000), ")".repeat(200_000));
        assert_eq!(d(&expr), Some(true));
    }

    #[test]
    fn a_run_skips_one_datum_more_for_each_failed_conditional() {
        // `#-linux #-linux a b c` with linux: SBCL reads c first.
        let mut run = Run::default();
        assert_eq!(run.datum([Some(false), Some(false)]), Some(false));
        assert_eq!(run.datum([]), Some(false));
        assert_eq!(run.datum([]), Some(true));
        assert!(run.is_clear());
        // `#+linux #-linux a b`: the true one reads as nothing.
        let mut run = Run::default();
        assert_eq!(run.datum([Some(true), Some(false)]), Some(false));
        assert_eq!(run.datum([]), Some(true));
        // `#+(or) #+sbcl a b` without features: a is skipped, b depends on sbcl.
        let mut run = Run::default();
        assert_eq!(run.datum([Some(false), None]), Some(false));
        assert_eq!(run.datum([]), None);
        assert_eq!(run.datum([]), Some(true));
    }

    #[test]
    fn blanks_around_a_feature_name_are_left_out() {
        let features = Features::new(["ccl", " sbcl ", "\tunix"]);
        assert_eq!(decide(b"(and ccl sbcl unix)", &features), Some(true));
    }
}
