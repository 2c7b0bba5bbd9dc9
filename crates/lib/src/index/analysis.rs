//! What an editor asks of one file, as pure functions of its bytes: the definitions as a
//! tree, the problems, the folds, the s-expressions around a position, the token under
//! it and the uses of a symbol. Positions are byte offsets; the surface converts them.

use super::lexical::{walk, Event};
use crate::features::Features;
use crate::find::SymbolQuery;
use crate::grammar::Grammar;
use crate::outline::{Items, OutlineItem, StreamedOutline};
use crate::scan::{self, ItemKind, Span};
use std::collections::HashMap;
use std::ops::ControlFlow;

/// Definitions kept per file at most (children included): a generated file of a million
/// one-line definitions costs no more than this.
pub const MAX_SYMBOLS: usize = 100_000;

/// A definition of the file, with its children (containers such as `progn`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// Its name, shown name, kind, signature and doc ([`Symbol::name`] ...).
    texts: Texts,
    /// The whole form, its `#+`/`#-` prefixes included.
    pub span: Span,
    /// The name as written in the form (the form's start when not found).
    pub name_span: Span,
    /// 1-based line of the form.
    pub line: usize,
    /// False for a container without a name (`progn`), shown under its operator.
    pub named: bool,
    /// The form's own `#+`/`#-` prefixes as written (`#+sbcl`), outermost first: under
    /// features that exclude one, the reader skips the form and its children.
    pub conditionals: Vec<String>,
    pub children: Vec<Symbol>,
}

/// A symbol's texts in one allocation: an index holds tens of thousands of symbols, each
/// with one allocation instead of five. `ends` are where the name, the shown name (empty
/// when it is the name), the kind and the signature end; the doc is the rest.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Texts {
    all: Box<str>,
    ends: [usize; 4],
    has_doc: bool,
}

impl Texts {
    fn new(name: &str, shown: &str, kind: &str, signature: &str, doc: Option<&str>) -> Texts {
        let shown = if shown == name { "" } else { shown };
        let doc_text = doc.unwrap_or_default();
        let mut all = String::with_capacity(
            name.len() + shown.len() + kind.len() + signature.len() + doc_text.len(),
        );
        let mut ends = [0; 4];
        for (end, part) in ends.iter_mut().zip([name, shown, kind, signature]) {
            all.push_str(part);
            *end = all.len();
        }
        all.push_str(doc_text);
        Texts {
            all: all.into_boxed_str(),
            ends,
            has_doc: doc.is_some(),
        }
    }

    /// Part `n`: from the end of the one before to its end (the doc: to the end).
    fn part(&self, n: usize) -> &str {
        let start = n.checked_sub(1).map_or(0, |m| self.ends[m]);
        let end = self.ends.get(n).copied().unwrap_or(self.all.len());
        self.all.get(start..end).unwrap_or_default()
    }
}

impl Symbol {
    /// As written (`foo`, `(setf foo)`).
    pub fn name(&self) -> &str {
        self.texts.part(0)
    }

    /// `name qualifiers (specializers)` for methods, else the name.
    pub fn shown(&self) -> &str {
        match self.texts.part(1) {
            "" => self.name(),
            shown => shown,
        }
    }

    /// The operator, lowercased (`defun`).
    pub fn kind(&self) -> &str {
        self.texts.part(2)
    }

    pub fn signature(&self) -> &str {
        self.texts.part(3)
    }

    /// The docstring's first line, as the outline cuts it.
    pub fn doc(&self) -> Option<&str> {
        self.texts.has_doc.then(|| self.texts.part(4))
    }
}

/// The definitions of `bytes`, top-level forms with their contained definitions. A
/// container without a name (`progn`, `eval-when`, `#+x (progn ...)`) is kept when it has
/// named children, under its operator.
pub fn symbols(bytes: &[u8], grammar: &Grammar) -> Vec<Symbol> {
    // Streamed, one item at a time: a dense file's whole outline takes hundreds of times
    // its size (a buffer of a million `)` took 750 MB).
    let outline = StreamedOutline::new(bytes, grammar);
    let mut budget = MAX_SYMBOLS;
    let mut out = Vec::new();
    outline.each_item(&mut |item| {
        out.extend(symbol_of(bytes, item, &mut budget));
        ControlFlow::Continue(())
    });
    out
}

fn symbol_of(bytes: &[u8], item: &OutlineItem, budget: &mut usize) -> Option<Symbol> {
    let form = item.form.as_ref()?;
    if *budget == 0 {
        return None;
    }
    // The outline bounds container depth, so this recursion is bounded too.
    let children: Vec<Symbol> = form
        .children
        .iter()
        .filter_map(|c| symbol_of(bytes, c, budget))
        .collect();
    let mut children = children;
    children.extend(derived_symbols(bytes, item, form, budget));
    let operator = form.operator.as_deref()?;
    let name = match form.name.as_deref() {
        Some(name) => name.to_string(),
        None if !children.is_empty() => operator.to_lowercase(),
        None => return None,
    };
    *budget -= 1;
    let span = Span::new(item.start, item.end);
    let shown = if form.is_method() {
        form.method_key().unwrap_or_else(|| name.clone())
    } else {
        name.clone()
    };
    let mut signature = form.conditionals().join(" ");
    if !signature.is_empty() {
        signature.push(' ');
    }
    signature.push_str(form.signature());
    Some(Symbol {
        name_span: name_span(bytes, span, &name, form.name.is_some()),
        texts: Texts::new(
            &name,
            &shown,
            &operator.to_lowercase(),
            &signature,
            form.doc(),
        ),
        span,
        line: item.start_line,
        named: form.name.is_some(),
        conditionals: form.conditionals().iter().map(|c| c.to_string()).collect(),
        children,
    })
}

/// The names `form` makes without spelling them (a structure's constructor, copier,
/// predicate and accessors, a class slot's accessors, a generic function's `:method`s),
/// as `find` reports them (docs/find.md#derived-definitions), each at the slot or option
/// that makes it. Lines are counted in one pass over the form, in the order of the places.
fn derived_symbols(
    bytes: &[u8],
    item: &OutlineItem,
    form: &crate::outline::Form,
    budget: &mut usize,
) -> Vec<Symbol> {
    let mut derived = crate::model::derived::derive(form).derived;
    // The making form's signature, cut as find cuts it: n slots would otherwise repeat
    // n slots n times.
    let made_by: String = form.signature().chars().take(200).collect();
    derived.sort_by_key(|d| d.start);
    let (mut at, mut line) = (item.start, item.start_line);
    let mut out = Vec::with_capacity(derived.len().min(*budget));
    for d in derived {
        if *budget == 0 {
            break;
        }
        *budget -= 1;
        let start = d.start.clamp(at, bytes.len());
        line += memchr::memchr_iter(b'\n', &bytes[at..start]).count();
        at = start;
        let span = Span::new(d.start, d.end.max(d.start));
        out.push(Symbol {
            texts: Texts::new(
                &d.name,
                d.key.as_deref().unwrap_or(&d.name),
                d.kind,
                &format!("{} {}, made by {made_by}", d.kind, d.name),
                None,
            ),
            span,
            name_span: span,
            line,
            named: true,
            conditionals: Vec::new(),
            children: Vec::new(),
        });
    }
    out
}

/// Where `name` is written in the form: the first token after the operator that is the
/// name, compared as symbols; the form's first byte when none is.
fn name_span(bytes: &[u8], form: Span, name: &str, named: bool) -> Span {
    let fallback = Span::new(form.start, form.start);
    let symbol = name
        .trim()
        .trim_start_matches("(setf")
        .trim_end_matches(')')
        .trim();
    let Some(query) = named.then(|| SymbolQuery::parse(symbol)).flatten() else {
        return fallback;
    };
    let mut found = None;
    let mut tokens = 0;
    walk(bytes, form.start, form.end, &mut |e| {
        if let Event::Token(t) = e {
            tokens += 1;
            if tokens > 1 && query.matches_token(&bytes[t.start..t.end]) {
                found = Some(t);
                return false;
            }
            // The name is near the head: give up after a few tokens.
            return tokens < 16;
        }
        true
    });
    found.unwrap_or(fallback)
}

/// How bad a problem is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
    Information,
}

/// A problem of the file, with the range of the damaged form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub span: Span,
    pub severity: Severity,
    pub message: String,
    /// The scanner's kind (`unclosed`, `stray`, ...), or `read-eval` for `#.`.
    pub code: String,
}

/// The scanner's diagnostics (at most [`scan::MAX_DIAGNOSTICS`], then one more saying how
/// many were left out), and each `#.`: read-time evaluation that would run code when the
/// file is loaded, shown, never evaluated.
pub fn problems(bytes: &[u8]) -> Vec<Problem> {
    // Two streamed scans, no item kept but those a diagnostic names: the first finds the
    // diagnostics, the second the spans of their items and the forms' `#.`.
    let scan = scan::scan_each(bytes, &mut |_| ControlFlow::Continue(()));
    let named: std::collections::HashSet<usize> = scan.diagnostics.iter().map(|d| d.item).collect();
    let mut spans = HashMap::new();
    let mut forms = Vec::new();
    let mut index = 0;
    scan::scan_each(bytes, &mut |item| {
        if named.contains(&index) {
            spans.insert(index, item.span);
        }
        if item.kind == ItemKind::Form {
            forms.push(item.span);
        }
        index += 1;
        ControlFlow::Continue(())
    });
    let mut out: Vec<Problem> = scan
        .diagnostics
        .iter()
        .map(|d| {
            let item = spans
                .get(&d.item)
                .copied()
                .unwrap_or(Span::new(d.offset, d.offset));
            let start = d.offset.clamp(item.start, item.end);
            Problem {
                span: Span::new(start, item.end.max(start)),
                severity: Severity::Error,
                message: d.message.clone(),
                code: serde_json::to_value(d.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
            }
        })
        .collect();
    if scan.omitted_diagnostics > 0 {
        out.push(Problem {
            span: Span::new(bytes.len(), bytes.len()),
            severity: Severity::Warning,
            message: format!(
                "{} more problems not shown; fix the first ones",
                scan.omitted_diagnostics
            ),
            code: "omitted".into(),
        });
    }
    let mut read_evals = 0usize;
    for span in forms {
        walk(bytes, span.start, span.end, &mut |e| {
            if let Event::ReadEval(at) = e {
                read_evals += 1;
                out.push(Problem {
                    span: Span::new(at, (at + 2).min(bytes.len())),
                    severity: Severity::Information,
                    message: "#. evaluates code when the file is read; shown here, never evaluated"
                        .into(),
                    code: "read-eval".into(),
                });
            }
            read_evals < scan::MAX_DIAGNOSTICS
        });
    }
    out
}

/// What a fold is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FoldKind {
    Form,
    Comment,
}

/// A fold: 1-based first and last line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fold {
    pub start_line: usize,
    pub end_line: usize,
    pub kind: FoldKind,
}

/// Top-level forms of several lines, runs of `;` comment lines, `#|...|#` comments of
/// several lines.
pub fn folds(bytes: &[u8]) -> Vec<Fold> {
    let mut out: Vec<Fold> = Vec::new();
    let mut run: Option<(usize, usize)> = None;
    let flush = |run: &mut Option<(usize, usize)>, out: &mut Vec<Fold>| {
        if let Some((s, e)) = run.take() {
            if e > s {
                out.push(Fold {
                    start_line: s,
                    end_line: e,
                    kind: FoldKind::Comment,
                });
            }
        }
    };
    // Streamed: no item is kept.
    scan::scan_each(bytes, &mut |item| {
        let line_comment =
            item.kind == ItemKind::Comment && bytes.get(item.span.start) == Some(&b';');
        if line_comment {
            run = match run {
                Some((s, e)) if item.start_line <= e + 1 => Some((s, item.end_line)),
                other => {
                    let mut other = other;
                    flush(&mut other, &mut out);
                    Some((item.start_line, item.end_line))
                }
            };
            return ControlFlow::Continue(());
        }
        if item.kind == ItemKind::Whitespace {
            return ControlFlow::Continue(());
        }
        flush(&mut run, &mut out);
        if matches!(item.kind, ItemKind::Form | ItemKind::Comment)
            && item.end_line > item.start_line
        {
            let kind = if item.kind == ItemKind::Form {
                FoldKind::Form
            } else {
                FoldKind::Comment
            };
            out.push(Fold {
                start_line: item.start_line,
                end_line: item.end_line,
                kind,
            });
        }
        ControlFlow::Continue(())
    });
    flush(&mut run, &mut out);
    out
}

/// The token at `offset` (a symbol or number), if any: the one that contains it, or
/// ends at it.
pub fn token_at(bytes: &[u8], offset: usize) -> Option<Span> {
    tokens_at(bytes, &[offset]).pop().flatten()
}

/// The token at each of `offsets` (ascending), as [`token_at`] finds it, in one pass:
/// the file is scanned once up to the last offset and each top-level item holding some
/// is walked once (a call hierarchy cites thousands of call sites of one file).
pub fn tokens_at(bytes: &[u8], offsets: &[usize]) -> Vec<Option<Span>> {
    debug_assert!(offsets.is_sorted());
    let items = top_levels_at(bytes, offsets);
    let mut out = vec![None; offsets.len()];
    let mut first = 0;
    while first < offsets.len() {
        let item = items[first];
        let end = first + items[first..].iter().take_while(|&&i| i == item).count();
        if let Some(item) = item {
            tokens_in(bytes, item, &offsets[first..end], &mut out[first..end]);
        }
        first = end;
    }
    out
}

/// Into `out`, the token holding each of `offsets` (ascending) in the top-level `item`:
/// one walk, which passes each offset once.
fn tokens_in(bytes: &[u8], item: Span, offsets: &[usize], out: &mut [Option<Span>]) {
    let mut next = 0;
    walk(bytes, item.start, item.end, &mut |e| {
        let (start, token) = match e {
            Event::Token(t) => (t.start, Some(t)),
            Event::Open(at) | Event::Close(at) | Event::ReadEval(at) => (at, None),
        };
        // An offset before this event is in no token.
        while next < offsets.len() && offsets[next] < start {
            next += 1;
        }
        if let Some(t) = token {
            while next < offsets.len() && offsets[next] <= t.end {
                out[next] = Some(t);
                next += 1;
            }
        }
        next < offsets.len()
    });
}

/// The top-level item (form, comment) that holds each of `offsets` (ascending), as
/// [`top_level_at`] finds it: the last that holds it, from one scan.
fn top_levels_at(bytes: &[u8], offsets: &[usize]) -> Vec<Option<Span>> {
    let mut out = vec![None; offsets.len()];
    let Some(&last) = offsets.last() else {
        return out;
    };
    let mut next = 0;
    scan::scan_each(bytes, &mut |item| {
        let span = item.span;
        while next < offsets.len() && offsets[next] < span.start {
            next += 1;
        }
        if item.kind != ItemKind::Whitespace {
            // Those at its end may be held by the next item too, which then wins.
            for (at, found) in offsets[next..].iter().zip(&mut out[next..]) {
                if *at > span.end {
                    break;
                }
                *found = Some(span);
            }
        }
        if span.end > last {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    });
    out
}

/// The top-level item (form, comment) that holds `offset`.
fn top_level_at(bytes: &[u8], offset: usize) -> Option<Span> {
    let mut found = None;
    scan::scan_each(bytes, &mut |item| {
        if item.span.start <= offset && offset <= item.span.end && item.kind != ItemKind::Whitespace
        {
            found = Some(item.span);
        }
        if item.span.end > offset {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    });
    found
}

/// The s-expressions around `offset`, innermost first and each strictly larger than the
/// one before: the token, then each enclosing list, then the top-level form (with its
/// prefixes). Empty outside every form.
pub fn selection(bytes: &[u8], offset: usize) -> Vec<Span> {
    match top_level_at(bytes, offset) {
        Some(top) => selection_in(bytes, top, offset),
        None => Vec::new(),
    }
}

/// The top-level forms of `bytes` (comments included, whitespace not), in order: found
/// once, so that many positions cost [`selection_in`] their own form each, not the buffer.
pub fn top_level_forms(bytes: &[u8]) -> Vec<Span> {
    let mut forms = Vec::new();
    scan::scan_each(bytes, &mut |item| {
        if item.kind != ItemKind::Whitespace {
            forms.push(item.span);
        }
        std::ops::ControlFlow::Continue(())
    });
    forms
}

/// The top-level form of `forms` (from [`top_level_forms`]) around `offset`: the last
/// that starts at or before it and ends at or after it.
pub fn form_at(forms: &[Span], offset: usize) -> Option<Span> {
    let after = forms.partition_point(|f| f.start <= offset);
    forms[..after].last().filter(|f| f.end >= offset).copied()
}

/// [`selection`] within the top-level form `top`, which holds `offset`: costs the form.
pub fn selection_in(bytes: &[u8], top: Span, offset: usize) -> Vec<Span> {
    // Opens before `offset` not closed before it, found in one pass.
    let mut open: Vec<usize> = Vec::new();
    let mut token = None;
    walk(bytes, top.start, top.end, &mut |e| match e {
        Event::Open(at) if at < offset => {
            open.push(at);
            true
        }
        Event::Close(at) if at < offset => {
            open.pop();
            true
        }
        Event::Token(t) if t.start <= offset && offset <= t.end && token.is_none() => {
            token = Some(t);
            t.start <= offset
        }
        Event::Token(t) => t.start <= offset,
        Event::ReadEval(at) => at < offset,
        Event::Open(_) | Event::Close(_) => false,
    });
    // Their closes, in one pass forward from `offset` (innermost first).
    let mut closes: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    let from = token.map_or(offset, |t| t.end).min(top.end);
    if !open.is_empty() {
        walk(bytes, from, top.end, &mut |e| {
            match e {
                Event::Open(_) => depth += 1,
                Event::Close(at) if depth == 0 => closes.push(at + 1),
                Event::Close(_) => depth -= 1,
                _ => {}
            }
            closes.len() < open.len()
        });
    }
    let mut chain: Vec<Span> = Vec::new();
    let mut push = |s: Span| {
        if chain
            .last()
            .is_none_or(|l: &Span| s.start <= l.start && s.end >= l.end && s != *l)
        {
            chain.push(s);
        }
    };
    if let Some(t) = token {
        push(t);
    }
    for (i, &start) in open.iter().rev().enumerate() {
        // A list still open at the end of its form ends with the form.
        let end = closes.get(i).copied().unwrap_or(top.end);
        push(Span::new(start, end));
    }
    push(top);
    chain
}

/// The uses of `query` in `bytes`: every token that is the symbol, outside strings,
/// comments and feature expressions, as [`crate::find`] finds them.
pub fn uses(bytes: &[u8], query: &SymbolQuery) -> Vec<Span> {
    uses_read(bytes, query, None)
}

/// Whether a symbol's form is read under `features` (without features: unless no
/// features could make it read, as `#-(and)`; an undecided expression is read, as `find`
/// reads it).
pub fn symbol_read(symbol: &Symbol, features: Option<&Features>) -> bool {
    symbol.conditionals.iter().all(|c| {
        let expression = c.get(2..).unwrap_or_default().as_bytes();
        crate::features::reads_under(c.starts_with("#+"), expression, features) != Some(false)
    })
}

/// [`uses`] under `features`: tokens of a datum that `#+`/`#-` excludes are not uses.
pub fn uses_read(bytes: &[u8], query: &SymbolQuery, features: Option<&Features>) -> Vec<Span> {
    Uses::new(query).read(bytes, features)
}

/// The uses of one symbol, its name's finder compiled once for every file searched.
pub struct Uses<'q> {
    query: &'q SymbolQuery,
    finder: regex::bytes::Regex,
}

impl<'q> Uses<'q> {
    pub fn new(query: &'q SymbolQuery) -> Uses<'q> {
        Uses {
            query,
            finder: crate::find::name_finder(&query.name),
        }
    }

    /// [`uses_read`] of `bytes`.
    pub fn read(&self, bytes: &[u8], features: Option<&Features>) -> Vec<Span> {
        uses_found(bytes, self.query, &self.finder, features)
    }

    /// [`Uses::read`] of `bytes` whose top-level forms are `forms` ([`form_spans`]):
    /// only the forms holding the name are read (the same uses, in the same order).
    pub fn read_forms(
        &self,
        bytes: &[u8],
        forms: &[Span],
        features: Option<&Features>,
    ) -> Vec<Span> {
        let mut out = Vec::new();
        let mut last = None;
        for hit in self.finder.find_iter(bytes) {
            let h = hit.start();
            let Some(k) = forms.partition_point(|f| f.start <= h).checked_sub(1) else {
                continue;
            };
            if h >= forms[k].end || last == Some(k) {
                continue;
            }
            last = Some(k);
            form_uses(bytes, forms[k], self.query, features, &mut out);
        }
        out
    }
}

fn uses_found(
    bytes: &[u8],
    query: &SymbolQuery,
    finder: &regex::bytes::Regex,
    features: Option<&Features>,
) -> Vec<Span> {
    let hits: Vec<usize> = finder.find_iter(bytes).map(|m| m.start()).collect();
    if hits.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut next = 0usize;
    scan::scan_each(bytes, &mut |item| {
        while next < hits.len() && hits[next] < item.span.start {
            next += 1;
        }
        match hits.get(next) {
            None => return std::ops::ControlFlow::Break(()),
            Some(&h) if h >= item.span.end || item.kind != ItemKind::Form => {
                return std::ops::ControlFlow::Continue(())
            }
            Some(_) => {}
        }
        form_uses(bytes, item.span, query, features, &mut out);
        std::ops::ControlFlow::Continue(())
    });
    out
}

/// The spans of the top-level forms of `bytes` (its scan's form items, in order): what
/// [`Uses::read_forms`] takes, kept with a file so that its uses are found without
/// scanning it again.
pub fn form_spans(bytes: &[u8]) -> Vec<Span> {
    let mut forms = Vec::new();
    scan::scan_each(bytes, &mut |item| {
        if item.kind == ItemKind::Form {
            forms.push(item.span);
        }
        std::ops::ControlFlow::Continue(())
    });
    forms
}

/// The uses of `query` in the form at `span`, pushed to `out` (at most [`MAX_SYMBOLS`]).
fn form_uses(
    bytes: &[u8],
    span: Span,
    query: &SymbolQuery,
    features: Option<&Features>,
    out: &mut Vec<Span>,
) {
    let mut reads = |plus, expression: &[u8]| {
        crate::features::reads_under(plus, expression, features) != Some(false)
    };
    scan::each_token_read(bytes, span.start, span.end, &mut reads, &mut |s, e| {
        if query.matches_token(&bytes[s..e]) && out.len() < MAX_SYMBOLS {
            out.push(Span::new(s, e));
        }
        std::ops::ControlFlow::Continue(())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The token at one offset, found alone: its top-level item, then a walk of it.
    fn token_alone(bytes: &[u8], offset: usize) -> Option<Span> {
        let item = top_level_at(bytes, offset)?;
        let mut found = None;
        walk(bytes, item.start, item.end, &mut |e| match e {
            Event::Token(t) if t.start <= offset && offset <= t.end => {
                found = Some(t);
                false
            }
            Event::Token(t) => t.start <= offset,
            Event::Open(at) | Event::Close(at) | Event::ReadEval(at) => at <= offset,
        });
        found
    }

    #[test]
    fn tokens_at_many_offsets_are_those_found_one_at_a_time() {
        let text: &[u8] = b"(defun f (x) (g x)) ; c\n(h)(i j)'k #.(l) \"s t\" |a b|c\n\
            #| m |# (n ,@o ,p) #\\) q\n(r";
        let every: Vec<usize> = (0..=text.len() + 1).collect();
        let alone: Vec<_> = every.iter().map(|&at| token_alone(text, at)).collect();
        assert_eq!(tokens_at(text, &every), alone);
        // Repeated offsets, and a few far apart.
        let some = [0, 0, 7, 7, 7, 20, 26, 26, 40, text.len()];
        let alone: Vec<_> = some.iter().map(|&at| token_alone(text, at)).collect();
        assert_eq!(tokens_at(text, &some), alone);
        assert!(
            alone.iter().filter(|t| t.is_some()).count() >= 5,
            "{alone:?}"
        );
    }

    #[test]
    fn selection_grows_from_token_to_form() {
        let text = b"(defun f (x)\n  (g (h x)))\n";
        let at = 21; // the `x` of `(h x)`
        assert_eq!(&text[at..at + 1], b"x");
        let chain = selection(text, at);
        let shown: Vec<&str> = chain
            .iter()
            .map(|s| std::str::from_utf8(&text[s.start..s.end]).unwrap())
            .collect();
        assert_eq!(
            shown,
            ["x", "(h x)", "(g (h x))", "(defun f (x)\n  (g (h x)))"]
        );
    }

    #[test]
    fn methods_and_containers_are_symbols() {
        let g = Grammar::builtin();
        let text = b"(progn (defun a () 1) (defmethod b :around ((s shape)) 2))\n";
        let s = symbols(text, &g);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].name(), "progn");
        let shown: Vec<&str> = s[0].children.iter().map(|c| c.shown()).collect();
        assert_eq!(shown, ["a", "b :around (shape)"]);
        assert_eq!(
            &text[s[0].children[0].name_span.start..s[0].children[0].name_span.end],
            b"a"
        );
    }

    #[test]
    fn uses_read_by_form_spans_equal_uses_read_by_a_scan() {
        let text = b"(aver x) ; aver\n#| (aver) |#\n\"aver\" (foo #+sbcl aver #-sbcl (aver)) aver (bar\n(aver";
        let features = crate::features::Features::new(&["sbcl".to_string()]);
        for name in ["aver", "foo", "bar", "x"] {
            let query = SymbolQuery::parse(name).unwrap();
            let uses = Uses::new(&query);
            let forms = form_spans(text);
            for f in [None, Some(&features)] {
                let scanned = uses.read(text, f);
                assert_eq!(uses.read_forms(text, &forms, f), scanned, "{name}");
                assert!(!scanned.is_empty(), "{name}");
            }
        }
    }

    #[test]
    fn uses_skip_strings_and_comments() {
        let q = SymbolQuery::parse("foo").unwrap();
        let text = b"(foo \"foo\" ; foo\n foo-bar pkg:foo)\n";
        assert_eq!(uses(text, &q).len(), 2);
    }

    #[test]
    fn problems_name_the_damaged_form_and_read_eval() {
        let p = problems(b"(defun f ()\n  \"open\n(defun g () #.(h))\n");
        assert!(p.iter().any(|p| p.severity == Severity::Error));
        assert!(problems(b"(a #.(b))").iter().any(|p| p.code == "read-eval"));
        assert!(problems(b"(defun f (x) \"doc\" #\\( x)\n").is_empty());
    }
}
