//! Outline: each top-level form classified with the definer grammar (docs/reader.md#definer-table, docs/views.md#collapsed-view):
//! operator, name, signature, docstring, reader conditionals, children of containers.
//!
//! Everything shown is source text: parts are cut from the file, whitespace runs folded to
//! one space, comments dropped. Nothing is re-printed by a Lisp printer. Only the parts a
//! signature needs are read, so a long body is never scanned twice.
//!
//! Two stages, for speed: building the outline classifies every form (operator, name,
//! definer, children) borrowing the text from the file (`Cow::Borrowed` unless a part must
//! be folded); the signature, docstring, conditionals and method parts are made only when
//! first asked for ([`Form::signature`] ...), once per form. A view that shows a few forms,
//! or a caller that needs only names, never pays for the text of the others.

use crate::cancel::CancelToken;
use crate::grammar::{is_key, symbol_key, Definer, Grammar, Lookup};
use crate::scan::{
    self, block_comment_end, byte_class, character_end, hash_start, hash_starts_token,
    multiple_escape_end, skip_blank, string_end, ByteClass, Datum, Diagnostic, Elements, HashStart,
    ItemKind, LineCounter, Scan,
};
use serde::ser::{Serialize, Serializer};
use std::borrow::Cow;
use std::cell::OnceCell;
use std::ops::ControlFlow;

/// Values longer than this are not shown (`defvar`); shown parts are abbreviated past it.
pub const SHORT_PART_CHARS: usize = 60;
/// A docstring's first line is cut after this many characters.
pub const DOC_CHARS: usize = 80;
/// A container lists at most this many children; the line of the first one not listed is
/// kept ([`Form::children_cut_at`]). Each child costs a few hundred bytes: a 1 MiB
/// `(progn () () ...)` has 350,000 of them, which would break the memory promise
/// (docs/views.md#memory); no real container comes near this.
pub const MAX_CHILDREN: usize = 5_000;

/// Containers nested deeper than this show no children (bounds the only recursion).
pub const MAX_CONTAINER_DEPTH: usize = 16;
/// The list a generic `def...` form shows after its name is abbreviated past this many
/// characters (docs/decisions.md#the-generic-def-rule-shows-the-list-after-the-name).
pub const INFERRED_LIST_CHARS: usize = 120;
/// Keywords read after a generic definer's name before its list (`:around (x)`).
const MAX_INFERRED_QUALIFIERS: usize = 3;

/// The outline of one file (the JSON of docs/tool.md#outline-json without `path`), borrowing from the
/// file's bytes and the grammar.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Outline<'a> {
    pub byte_length: usize,
    pub line_count: usize,
    /// Every non-whitespace item, in file order.
    pub items: Vec<OutlineItem<'a>>,
    pub diagnostics: Vec<Diagnostic>,
    /// Problems past the first [`scan::MAX_DIAGNOSTICS`], counted only.
    #[serde(skip_serializing_if = "is_zero")]
    pub omitted_diagnostics: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One item: a top-level item, or a child form of a container.
#[derive(Clone, Debug, serde::Serialize)]
pub struct OutlineItem<'a> {
    pub kind: ItemKind,
    pub start: usize,
    pub end: usize,
    pub start_line: usize,
    pub end_line: usize,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub form: Option<Form<'a>>,
}

/// What a form is. The fields are made with the outline; the text shown for the form
/// (methods below) is made on first use.
#[derive(Clone)]
pub struct Form<'a> {
    /// The operator as written (`cl:defun`), when the form is a list headed by a symbol.
    pub operator: Option<Cow<'a, str>>,
    /// The defined name as written (`foo`, `pkg::foo`, `(setf foo)`), for definitions.
    pub name: Option<Cow<'a, str>>,
    /// The grammar entry that classified the form (`defun`, or `def` for generic `def...`).
    pub definer: Option<&'a str>,
    /// Container forms (`progn`, `eval-when`, ...): their child forms.
    pub children: Vec<OutlineItem<'a>>,
    /// Past [`MAX_CHILDREN`] children: the 1-based line of the first child not listed.
    pub children_cut_at: Option<usize>,
    /// What the text is made from: the file, the grammar entry found for the operator,
    /// the form's datum.
    bytes: &'a [u8],
    entry: Option<&'a Definer>,
    datum: Datum,
    /// Boxed: most forms of an outline never make their text, and a small `Form` keeps
    /// the outline's vectors small.
    text: OnceCell<Box<FormText>>,
}

/// The text of a form, made on first use.
#[derive(Clone, Debug, Default)]
struct FormText {
    conditionals: Vec<String>,
    signature: String,
    doc: Option<String>,
    qualifiers: Vec<String>,
    specializers: Option<Vec<String>>,
}

impl<'a> Form<'a> {
    /// A form not classified yet: no operator, name, definer or children.
    fn unclassified(bytes: &'a [u8], datum: Datum) -> Self {
        Form {
            operator: None,
            name: None,
            definer: None,
            children: Vec::new(),
            children_cut_at: None,
            bytes,
            entry: None,
            datum,
            text: OnceCell::new(),
        }
    }

    fn text(&self) -> &FormText {
        self.text.get_or_init(|| {
            let head = self.operator.as_deref().map(|op| (op, self.entry));
            Box::new(form_text(
                self.bytes,
                &self.datum,
                head,
                self.name.as_deref(),
            ))
        })
    }

    /// `#+feature` / `#-feature` in front of the form, as written.
    pub fn conditionals(&self) -> &[String] {
        &self.text().conditionals
    }

    /// The collapsed one-line signature, e.g. `(defun foo (x) ...)` (without conditionals).
    pub fn signature(&self) -> &str {
        &self.text().signature
    }

    /// First line of the docstring, at most 80 characters (`...` when cut).
    pub fn doc(&self) -> Option<&str> {
        self.text().doc.as_deref()
    }

    /// `defmethod`: qualifiers as written (`:before`).
    pub fn qualifiers(&self) -> &[String] {
        &self.text().qualifiers
    }

    /// `defmethod`: the specializer of each required parameter (`t` when unspecialized).
    pub fn specializers(&self) -> Option<&[String]> {
        self.text().specializers.as_deref()
    }

    /// `NAME QUALIFIERS... (SPECIALIZERS...)` for methods, e.g. `resize :before (shape t)`.
    pub fn method_key(&self) -> Option<String> {
        let specializers = self.specializers()?;
        let mut key = self.name.as_deref().unwrap_or_default().to_string();
        for q in self.qualifiers() {
            key.push(' ');
            key.push_str(q);
        }
        key.push_str(&format!(" ({})", specializers.join(" ")));
        Some(key)
    }
}

/// The fields and the text (not the file's bytes nor the grammar it borrows).
impl std::fmt::Debug for Form<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Form")
            .field("operator", &self.operator)
            .field("name", &self.name)
            .field("definer", &self.definer)
            .field("children", &self.children)
            .field("text", &self.text())
            .finish()
    }
}

/// The JSON of a form (flattened into its item), in the field order of docs/tool.md#outline-json
impl Serialize for Form<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(serde::Serialize)]
        struct Json<'f, 'a> {
            operator: Option<&'f str>,
            name: Option<&'f str>,
            conditionals: &'f [String],
            signature: &'f str,
            children: &'f [OutlineItem<'a>],
            #[serde(skip_serializing_if = "Option::is_none")]
            children_cut_at: Option<usize>,
            #[serde(skip_serializing_if = "Option::is_none")]
            doc: Option<&'f str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            definer: Option<&'f str>,
            #[serde(skip_serializing_if = "<[String]>::is_empty")]
            qualifiers: &'f [String],
            #[serde(skip_serializing_if = "Option::is_none")]
            specializers: Option<&'f [String]>,
        }
        let text = self.text();
        Json {
            operator: self.operator.as_deref(),
            name: self.name.as_deref(),
            conditionals: &text.conditionals,
            signature: &text.signature,
            children: &self.children,
            children_cut_at: self.children_cut_at,
            doc: text.doc.as_deref(),
            definer: self.definer,
            qualifiers: &text.qualifiers,
            specializers: text.specializers.as_deref(),
        }
        .serialize(serializer)
    }
}

/// Builds the outline of `bytes` from its scan.
pub fn outline<'a>(bytes: &'a [u8], scan: &Scan, grammar: &'a Grammar) -> Outline<'a> {
    let mut scratch = Scratch::default();
    let mut items = Vec::with_capacity(scan.items.len() / 2 + 1);
    for item in &scan.items {
        if item.kind == ItemKind::Whitespace {
            continue;
        }
        // The item goes into the vector first and its form is classified in place: a
        // form is a few hundred bytes, and moving it around cost more than classifying.
        items.push(unclassified_item(item));
        let slot = items.last_mut().expect("just pushed");
        classify_item(slot, item, bytes, grammar, &mut scratch);
    }
    Outline {
        byte_length: bytes.len(),
        line_count: scan.line_count,
        items,
        diagnostics: scan.diagnostics.clone(),
        omitted_diagnostics: scan.omitted_diagnostics,
    }
}

/// Scans and outlines in one call.
pub fn outline_bytes<'a>(bytes: &'a [u8], grammar: &'a Grammar) -> Outline<'a> {
    outline(bytes, &scan::scan(bytes), grammar)
}

fn unclassified_item<'a>(item: &scan::Item) -> OutlineItem<'a> {
    OutlineItem {
        kind: item.kind,
        start: item.span.start,
        end: item.span.end,
        start_line: item.start_line,
        end_line: item.end_line,
        form: None,
    }
}

/// Makes the form of `slot` (made from `item`) when the item is a form.
fn classify_item<'a>(
    slot: &mut OutlineItem<'a>,
    item: &scan::Item,
    bytes: &'a [u8],
    grammar: &'a Grammar,
    scratch: &mut Scratch,
) {
    if item.kind != ItemKind::Form {
        return;
    }
    let datum = Datum {
        start: item.span.start,
        end: item.span.end,
        core: item.core,
        core_is_list: item.core_is_list,
        conditionals: item.conditionals.clone(),
        quoted: item.quoted,
        core_newlines: None,
        problem: None,
    };
    let form = slot.form.insert(Form::unclassified(bytes, datum));
    classify(form, grammar, item.start_line, 0, scratch);
}

/// Top-level items of a file handed to a consumer one at a time, in file order, as many
/// times as it asks. A view walks them without the whole outline in memory: the memory
/// of the walk does not grow with the number of items.
pub trait Items<'a> {
    /// Calls `f` on each non-whitespace item until it breaks.
    fn each_item(&self, f: &mut dyn FnMut(&OutlineItem<'a>) -> ControlFlow<()>);
    /// The diagnostics of the file kept, in file order.
    fn diagnostics(&self) -> &[Diagnostic];
    /// How many more problems the file has than were kept.
    fn omitted_diagnostics(&self) -> usize;
}

impl<'a> Items<'a> for Outline<'a> {
    fn each_item(&self, f: &mut dyn FnMut(&OutlineItem<'a>) -> ControlFlow<()>) {
        for item in &self.items {
            if f(item).is_break() {
                return;
            }
        }
    }
    fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }
    fn omitted_diagnostics(&self) -> usize {
        self.omitted_diagnostics
    }
}

/// The outline of a file made anew on each walk instead of kept: what is kept is the
/// counts and the diagnostics of one scan. Each walk scans again and classifies only the
/// items it is given, one at a time.
pub struct StreamedOutline<'a> {
    bytes: &'a [u8],
    grammar: &'a Grammar,
    pub line_count: usize,
    /// Non-whitespace top-level items.
    pub item_count: usize,
    /// Top-level forms.
    pub form_count: usize,
    pub diagnostics: Vec<Diagnostic>,
    pub omitted_diagnostics: usize,
    /// Once set, walks stop classifying items: the caller no longer wants the answer.
    cancel: CancelToken,
}

impl<'a> StreamedOutline<'a> {
    pub fn byte_length(&self) -> usize {
        self.bytes.len()
    }

    pub fn new(bytes: &'a [u8], grammar: &'a Grammar) -> Self {
        Self::cancellable(bytes, grammar, CancelToken::default())
    }

    /// [`StreamedOutline::new`] for a caller that may give up: once `cancel` is set, the
    /// scan and every walk stop at the next item (the counts are then partial).
    pub fn cancellable(bytes: &'a [u8], grammar: &'a Grammar, cancel: CancelToken) -> Self {
        let (mut item_count, mut form_count) = (0, 0);
        let scan = scan::scan_each(bytes, &mut |item| {
            item_count += usize::from(item.kind != ItemKind::Whitespace);
            form_count += usize::from(item.kind == ItemKind::Form);
            if cancel.is_cancelled() {
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        });
        StreamedOutline {
            bytes,
            grammar,
            line_count: scan.line_count,
            item_count,
            form_count,
            diagnostics: scan.diagnostics,
            omitted_diagnostics: scan.omitted_diagnostics,
            cancel,
        }
    }
}

impl<'a> Items<'a> for StreamedOutline<'a> {
    fn each_item(&self, f: &mut dyn FnMut(&OutlineItem<'a>) -> ControlFlow<()>) {
        let mut scratch = Scratch::default();
        // The scan stops once `f` breaks or the caller gives up (checked once per item).
        scan::scan_each(self.bytes, &mut |item| {
            if item.kind == ItemKind::Whitespace {
                return ControlFlow::Continue(());
            }
            if self.cancel.is_cancelled() {
                return ControlFlow::Break(());
            }
            let mut out = unclassified_item(&item);
            classify_item(&mut out, &item, self.bytes, self.grammar, &mut scratch);
            f(&out)
        });
    }
    fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }
    fn omitted_diagnostics(&self) -> usize {
        self.omitted_diagnostics
    }
}

/// Buffers reused from form to form, so that classifying a form allocates only the
/// strings it keeps. A stack of each: a container's children are classified while the
/// container's own buffers are in use.
#[derive(Default)]
struct Scratch {
    read: Vec<Vec<Datum>>,
    shown: Vec<Vec<(usize, Shown)>>,
}

/// The text of one shown part of a signature, made when the signature is written.
enum Shown {
    /// The form's name, as in [`Form::name`].
    Name,
    /// The folded source text of `[start, end)`.
    Fold(usize, usize),
    Text(String),
}

/// The elements of a list, read on demand and kept for random access.
struct Parts<'a> {
    b: &'a [u8],
    /// The list itself: its `(` and its end.
    list: (usize, usize),
    iter: Elements<'a>,
    read: Vec<Datum>,
}

impl<'a> Parts<'a> {
    fn new(b: &'a [u8], list: &Datum, scratch: &mut Scratch) -> Self {
        Parts {
            b,
            list: (list.core, list.end),
            iter: Elements::new(b, list.core, list.end),
            read: scratch.read.pop().unwrap_or_default(),
        }
    }

    /// Gives the buffer back.
    fn finish(mut self, scratch: &mut Scratch) {
        self.read.clear();
        scratch.read.push(self.read);
    }

    fn get(&mut self, index: usize) -> Option<&Datum> {
        while self.read.len() <= index {
            let next = self.iter.next()?;
            self.read.push(next);
        }
        self.read.get(index)
    }

    /// Whether element `index` exists, reading only the elements before it.
    fn exists(&mut self, index: usize) -> bool {
        if index < self.read.len() {
            return true;
        }
        if index > 0 && self.get(index - 1).is_none() {
            return false;
        }
        self.iter.has_next()
    }

    /// Where element `index` starts, reading only the elements before it.
    fn start(&mut self, index: usize) -> Option<usize> {
        if let Some(d) = self.read.get(index) {
            return Some(d.start);
        }
        if index > 0 {
            self.get(index - 1)?;
        }
        self.iter.peek_start()
    }

    /// The first byte of element `index`, reading only the elements before it.
    fn first_byte(&mut self, index: usize) -> Option<u8> {
        self.start(index).and_then(|at| self.b.get(at).copied())
    }

    /// The whole list, folded (for `in-package`).
    fn read_whole(&self) -> String {
        fold(self.b, self.list.0, self.list.1)
    }
}

/// Classifies a form with the grammar: its operator, name, definer and children. Its text
/// is made on first use ([`form_text`]).
fn classify<'a>(
    form: &mut Form<'a>,
    grammar: &'a Grammar,
    start_line: usize,
    depth: usize,
    scratch: &mut Scratch,
) {
    let b = form.bytes;
    if !form.datum.core_is_list || form.datum.quoted {
        return;
    }
    let mut parts = Parts::new(b, &form.datum, scratch);
    if let Some(operator) = operator(&mut parts) {
        let definer = match grammar.lookup(&operator) {
            Lookup::Definer(d) => Some((d, d.operator.as_str())),
            Lookup::GenericDefiner => Some((grammar.generic(), "def")),
            Lookup::Plain => None,
        };
        if let Some((d, definer)) = definer {
            form.definer = Some(definer);
            form.entry = Some(d);
            form.name = defined_name(&mut parts, d);
            if let (Some(n), false) = (d.container, d.whole) {
                let at = (form.datum.start, start_line);
                (form.children, form.children_cut_at) =
                    children(&mut parts, n, grammar, at, depth, scratch);
            }
        }
        form.operator = Some(operator);
    }
    parts.finish(scratch);
}

/// The operator of a list: its first element, when that is a symbol.
fn operator<'a>(parts: &mut Parts<'a>) -> Option<Cow<'a, str>> {
    let b = parts.b;
    let op = parts.get(0)?;
    let token = &b[op.start..op.end];
    if !is_symbol_start(b, op.start) || op.quoted || is_number(token) {
        return None;
    }
    if is_key(token) {
        // SAFETY: key bytes are ASCII.
        return Some(Cow::Borrowed(unsafe {
            std::str::from_utf8_unchecked(token)
        }));
    }
    Some(fold_cow(b, op.start, op.end))
}

/// The name a definition defines, as written; `(point (:conc-name p-))` names `point`.
fn defined_name<'a>(parts: &mut Parts<'a>, d: &Definer) -> Option<Cow<'a, str>> {
    let b = parts.b;
    let e = parts.get(d.name?)?;
    if d.inferred && e.core_is_list && !e.quoted {
        let e = e.clone();
        return Some(match inferred_name(b, &e) {
            Some(name) => Cow::Owned(name),
            None => fold_cow(b, e.start, e.end),
        });
    }
    if d.name_in_list && e.core_is_list && !d.whole {
        let e = e.clone();
        Some(first_element_text(b, &e).map_or_else(|| fold_cow(b, e.start, e.end), Cow::Owned))
    } else {
        Some(fold_cow(b, e.start, e.end))
    }
}

/// The name inside a list in the name's place of a generic definer: its first element
/// when that is a symbol other than `setf` and not a keyword
/// (`(define-easy-handler (hello :uri "/") ...)` names `hello`); `None` when the list
/// itself is the name (`(setf foo)`, `(:get "/")`).
fn inferred_name(b: &[u8], list: &Datum) -> Option<String> {
    let first = Elements::new(b, list.core, list.end).next()?;
    let token = &b[first.start..first.end];
    let symbol = is_symbol_start(b, first.start) && !is_number(token) && token[0] != b':';
    (symbol && !symbol_key_is(token, "setf")).then(|| fold(b, first.start, first.end))
}

/// The child forms of a container, from element `n` on: lists, not declarations; at
/// most [`MAX_CHILDREN`], with the line of the first one not listed.
fn children<'a>(
    parts: &mut Parts<'a>,
    n: usize,
    grammar: &'a Grammar,
    (form_start, form_line): (usize, usize),
    depth: usize,
    scratch: &mut Scratch,
) -> (Vec<OutlineItem<'a>>, Option<usize>) {
    let b = parts.b;
    let mut children = Vec::new();
    if depth >= MAX_CONTAINER_DEPTH {
        return (children, None);
    }
    let mut i = n;
    let mut lines = LineCounter::starting_at(form_start, form_line);
    while let Some(child) = parts.get(i).cloned() {
        i += 1;
        // Children are the forms inside: not atoms, not declarations.
        if !child.core_is_list || first_element_is(b, &child, "declare") {
            continue;
        }
        let start_line = lines.line_of(b, child.start);
        if children.len() == MAX_CHILDREN {
            return (children, Some(start_line));
        }
        let end_line = lines.line_of(b, child.end - 1);
        children.push(OutlineItem {
            kind: ItemKind::Form,
            start: child.start,
            end: child.end,
            start_line,
            end_line,
            form: None,
        });
        let slot = &mut children.last_mut().expect("just pushed").form;
        let form = slot.insert(Form::unclassified(b, child));
        classify(form, grammar, start_line, depth + 1, scratch);
    }
    (children, None)
}

/// The text of a form: conditionals, signature, docstring, method parts.
/// `head`: the operator and its grammar entry, as [`classify`] found them (none when the
/// form is not a list headed by a symbol).
fn form_text(
    b: &[u8],
    datum: &Datum,
    head: Option<(&str, Option<&Definer>)>,
    name: Option<&str>,
) -> FormText {
    let conditionals: Vec<String> = datum
        .conditionals
        .iter()
        .map(|c| fold(b, c.start, c.end))
        .collect();
    // The text after the conditionals: what the signature shows of an unclassified form.
    let shown_start = datum
        .conditionals
        .last()
        .map_or(datum.start, |c| skip_blank(b, c.end));
    let as_written = || {
        let text = fold_short(b, shown_start, datum.end, SHORT_PART_CHARS);
        let mut text = abbreviate_balanced(text.trim_end(), SHORT_PART_CHARS);
        if text.is_empty() {
            text = fold(b, datum.start, datum.end);
        }
        close_open(&mut text);
        text
    };
    let Some((operator, entry)) = head else {
        return FormText {
            conditionals,
            signature: as_written(),
            ..FormText::default()
        };
    };
    thread_local! {
        // The buffers of the last form whose text was made, reused by the next one.
        static SCRATCH: std::cell::RefCell<Scratch> = Default::default();
    }
    let mut text = SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut scratch) => list_text(b, datum, (operator, entry), name, &mut scratch),
        // Not reentrant (no form's text needs another's), but never panic if it were.
        Err(_) => list_text(b, datum, (operator, entry), name, &mut Scratch::default()),
    });
    // SBCL's `sb-impl::(defun ...)`: the package prefix stays in front of the signature.
    if datum.core > shown_start {
        text.signature = format!("{}{}", fold(b, shown_start, datum.core), text.signature);
    }
    close_open(&mut text.signature);
    text.conditionals = conditionals;
    text
}

/// The text of a list form headed by an operator.
fn list_text(
    b: &[u8],
    datum: &Datum,
    (operator, entry): (&str, Option<&Definer>),
    name: Option<&str>,
    scratch: &mut Scratch,
) -> FormText {
    let mut parts = Parts::new(b, datum, scratch);
    let text = match entry {
        Some(d) => definition(&mut parts, d, operator, name, scratch),
        None => plain(&mut parts, operator),
    };
    parts.finish(scratch);
    text
}

/// `(OP ...)`, or `(OP ARG ...)` when the first argument is a symbol or a string.
fn plain(parts: &mut Parts, operator: &str) -> FormText {
    let b = parts.b;
    let mut signature = String::with_capacity(operator.len() + 32);
    signature.push('(');
    signature.push_str(operator);
    let mut last_shown = 0;
    if parts
        .first_byte(1)
        .is_some_and(|c| c == b'"' || is_symbol_byte(c))
    {
        if let Some(arg) = parts.get(1) {
            if is_symbol_start(b, arg.start) || b[arg.start] == b'"' {
                signature.push(' ');
                push_short(&mut signature, b, arg.start, arg.end);
                last_shown = 1;
            }
        }
    }
    if parts.exists(last_shown + 1) {
        signature.push_str(" ...");
    }
    signature.push(')');
    FormText {
        signature,
        ..FormText::default()
    }
}

/// The text of a definition; `name` is the name [`defined_name`] read.
fn definition(
    parts: &mut Parts,
    d: &Definer,
    operator: &str,
    name: Option<&str>,
    scratch: &mut Scratch,
) -> FormText {
    let b = parts.b;
    let mut form = FormText::default();
    if d.whole {
        form.signature = parts.read_whole();
        return form;
    }
    // (element index, text) of everything shown, sorted by index at the end.
    let mut shown = scratch.shown.pop().unwrap_or_default();
    let mut skipped = false;

    if let Some(n) = d.name {
        if let Some(e) = parts.get(n).cloned() {
            if (d.name_in_list || d.inferred) && e.core_is_list {
                let text = fold_short(b, e.start, e.end, SHORT_PART_CHARS);
                let name = name.unwrap_or_default();
                let part = if text.chars().count() <= SHORT_PART_CHARS {
                    Shown::Text(text)
                } else if name.starts_with('(') {
                    // The list is the name (`(setf foo)`): names are shown whole.
                    Shown::Name
                } else {
                    Shown::Text(format!("({name} ...)"))
                };
                shown.push((n, part));
            } else {
                shown.push((n, Shown::Name));
            }
        }
    }
    let mut body = d.body;
    if d.inferred {
        body = inferred_parts(parts, d.name.unwrap_or(1) + 1, &mut shown);
    }
    if d.qualifiers {
        let mut i = d.name.unwrap_or(1) + 1;
        while let Some(e) = parts.get(i).cloned() {
            shown.push((i, Shown::Fold(e.start, e.end)));
            if e.core_is_list && !e.quoted {
                form.specializers = Some(specializers(b, &e));
                break;
            }
            form.qualifiers.push(fold(b, e.start, e.end));
            i += 1;
        }
        body = Some(i + 1);
    }
    for n in [d.lambda_list, d.superclasses].into_iter().flatten() {
        if let Some(e) = parts.get(n) {
            shown.push((n, Shown::Fold(e.start, e.end)));
        }
    }
    if let Some(n) = d.slots {
        if let Some(e) = parts.get(n).cloned() {
            let names = if e.core_is_list {
                let slot_names: Vec<String> = Elements::new(b, e.core, e.end)
                    .map(|slot| slot_name(b, &slot))
                    .collect();
                Shown::Text(format!("({})", slot_names.join(" ")))
            } else {
                Shown::Fold(e.start, e.end)
            };
            shown.push((n, names));
        }
    }
    if let Some(n) = d.slots_from {
        let mut i = n;
        if parts.first_byte(i) == Some(b'"') {
            form.doc = parts.get(i).and_then(|e| doc_line(b, e));
            skipped = true;
            i += 1;
        }
        while let Some(slot) = parts.get(i) {
            shown.push((i, Shown::Text(slot_name(b, slot))));
            i += 1;
        }
    }
    if let Some(n) = d.value {
        if let Some(e) = parts.get(n).cloned() {
            let one_line = !b[e.start..e.end].contains(&b'\n');
            let text = if one_line {
                fold_short(b, e.start, e.end, SHORT_PART_CHARS)
            } else {
                String::new()
            };
            if one_line && text.chars().count() <= SHORT_PART_CHARS {
                shown.push((n, Shown::Text(text)));
            } else {
                skipped = true;
            }
        }
    }
    for &n in &d.shown {
        if let Some(e) = parts.get(n).cloned() {
            let text = fold_short(b, e.start, e.end, SHORT_PART_CHARS);
            let text = if text.chars().count() > SHORT_PART_CHARS && e.core_is_list {
                "(...)".to_string()
            } else {
                abbreviate_balanced(&text, SHORT_PART_CHARS)
            };
            shown.push((n, Shown::Text(text)));
        }
    }
    if !d.keywords.is_empty() || d.doc_keyword.is_some() {
        let first = d.name.unwrap_or(0) + 1;
        let mut i = first;
        while let Some(e) = parts.get(i).cloned() {
            i += 1;
            // Only a keyword can match (the table's keys all start with `:`): the other
            // elements, often the whole body, are not folded to find that out.
            if b[e.start] != b':' {
                continue;
            }
            let written = fold(b, e.start, e.end);
            let key = written.to_lowercase();
            if d.keywords.contains(&key) {
                if let Some(value) = parts.get(i).map(|v| fold_short(b, v.start, v.end, 200)) {
                    shown.push((i - 1, Shown::Text(written)));
                    shown.push((i, Shown::Text(abbreviate_balanced(&value, 200))));
                }
            }
            if d.doc_keyword.as_deref() == Some(key.as_str()) {
                form.doc = parts.get(i).and_then(|v| doc_line(b, v));
            }
        }
    }
    if let Some(n) = d.doc {
        if parts.first_byte(n) == Some(b'"') {
            form.doc = parts.get(n).and_then(|e| doc_line(b, e));
        }
    }
    if let Some(n) = body {
        form.doc = form.doc.take().or_else(|| body_docstring(parts, n));
    }
    if let Some(n) = d.options {
        let mut i = n;
        while let Some(e) = parts.get(i) {
            if e.core_is_list && first_element_is(b, e, "documentation") {
                let mut option = Elements::new(b, e.core, e.end);
                form.doc = option.nth(1).and_then(|s| doc_line(b, &s));
            }
            i += 1;
        }
    }
    shown.sort_by_key(|(i, _)| *i);
    shown.dedup_by_key(|(i, _)| *i);
    let last_shown = shown.last().map_or(0, |(i, _)| *i);
    let gaps = shown.iter().enumerate().any(|(k, (i, _))| *i != k + 1);
    let mut signature = String::with_capacity(64);
    signature.push('(');
    signature.push_str(operator);
    for (_, part) in &shown {
        signature.push(' ');
        match part {
            Shown::Name => signature.push_str(name.unwrap_or_default()),
            Shown::Fold(start, end) => fold_into(&mut signature, b, *start, *end),
            Shown::Text(text) => signature.push_str(text),
        }
    }
    let trimmed = signature.trim_end().len();
    signature.truncate(trimmed);
    let state = Balance::of(&signature);
    if state.depth > 1 || state.string || state.bar || state.escape {
        // A part the file leaves open (an unclosed form): `...` and the closers that
        // the file does not have, never a `)` that looks like the file's.
        state.close(&mut signature);
    } else {
        if skipped || gaps || parts.exists(last_shown + 1) {
            signature.push_str(" ...");
        }
        signature.push(')');
    }
    form.signature = signature;
    shown.clear();
    scratch.shown.push(shown);
    form
}

/// The parts a generic `def...` form shows after its name, from element `n`: the first
/// list, after at most [`MAX_INFERRED_QUALIFIERS`] keywords (`:around`), with those
/// keywords; nothing when no list follows the name so. Returns where the body starts
/// (after the list) for the docstring.
fn inferred_parts(parts: &mut Parts, n: usize, shown: &mut Vec<(usize, Shown)>) -> Option<usize> {
    let b = parts.b;
    let mut i = n;
    while i < n + MAX_INFERRED_QUALIFIERS && parts.first_byte(i) == Some(b':') {
        i += 1;
    }
    let list = parts.get(i)?;
    if !list.core_is_list || list.quoted {
        return None;
    }
    let text = fold_short(b, list.start, list.end, INFERRED_LIST_CHARS);
    let text = abbreviate_balanced(&text, INFERRED_LIST_CHARS);
    for k in n..i {
        let e = parts.get(k)?;
        shown.push((k, Shown::Fold(e.start, e.end)));
    }
    shown.push((i, Shown::Text(text)));
    Some(i + 1)
}

/// A docstring at body position `n`: after declarations, a string followed by more forms.
fn body_docstring(parts: &mut Parts, mut n: usize) -> Option<String> {
    let b = parts.b;
    loop {
        let at = parts.start(n)?;
        match b[at] {
            b'"' => {
                let e = parts.get(n)?.clone();
                return if parts.exists(n + 1) {
                    doc_line(b, &e)
                } else {
                    None
                };
            }
            // Only a declaration is read whole (to step over it): the first body form is
            // often most of the body.
            b'(' => {
                if !list_head_is(b, at, parts.list.1, "declare") {
                    return None;
                }
                parts.get(n)?;
                n += 1;
            }
            _ => return None,
        }
    }
}

/// The specializer of each required parameter of a specialized lambda list.
fn specializers(b: &[u8], lambda_list: &Datum) -> Vec<String> {
    let mut out = Vec::new();
    for param in Elements::new(b, lambda_list.core, lambda_list.end) {
        if param.core_is_list {
            let mut inner = Elements::new(b, param.core, param.end);
            out.push(
                inner
                    .nth(1)
                    .map_or_else(|| "t".into(), |s| fold(b, s.start, s.end)),
            );
        } else if b[param.start] == b'&' {
            break;
        } else {
            out.push("t".into());
        }
    }
    out
}

/// The first line of the docstring `e`, unescaped, at most `DOC_CHARS` characters.
fn doc_line(b: &[u8], e: &Datum) -> Option<String> {
    if b.get(e.start) != Some(&b'"') || e.end < e.start + 2 {
        return None;
    }
    let raw = String::from_utf8_lossy(&b[e.start + 1..e.end - 1]);
    let mut text = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => text.extend(chars.next()),

            _ => text.push(c),
        }
    }
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(abbreviate(line, DOC_CHARS))
}

/// A slot specifier's name with any reader conditionals: `size`, `#+sbcl lock`.
fn slot_name(b: &[u8], slot: &Datum) -> String {
    let name = first_element_text(b, slot).unwrap_or_else(|| fold(b, slot.core, slot.end));
    let mut text: Vec<String> = slot
        .conditionals
        .iter()
        .map(|c| fold(b, c.start, c.end))
        .collect();
    text.push(name);
    text.join(" ")
}

/// The first element of a list datum, folded (a slot's or structure's name).
fn first_element_text(b: &[u8], list: &Datum) -> Option<String> {
    if !list.core_is_list {
        return None;
    }
    Elements::new(b, list.core, list.end)
        .next()
        .map(|e| fold(b, e.start, e.end))
}

/// Whether the first element of a list datum is the symbol `key` (`declare`,
/// `documentation`) in any package or case.
fn first_element_is(b: &[u8], list: &Datum, key: &str) -> bool {
    list_head_is(b, list.core, list.end, key)
}

/// Whether the list opened at `open` starts with the symbol `key`; only that first
/// element is read (`limit`: where the list ends, or any end of an enclosing list).
fn list_head_is(b: &[u8], open: usize, limit: usize, key: &str) -> bool {
    let mut elements = Elements::new(b, open, limit);
    match elements.peek_start() {
        Some(at) if is_symbol_start(b, at) => elements
            .next()
            .is_some_and(|first| symbol_key_is(&b[first.start..first.end], key)),
        _ => false,
    }
}

/// Whether `symbol_key(token) == key` for a lower-case `key`, without allocating when the
/// token is plain ASCII without escapes (the common case).
fn symbol_key_is(token: &[u8], key: &str) -> bool {
    if token.is_ascii() && !token.iter().any(|&c| c == b'|' || c == b'\\') {
        let name = token
            .iter()
            .rposition(|&c| c == b':')
            .map_or(token, |k| &token[k + 1..]);
        name.eq_ignore_ascii_case(key.as_bytes())
    } else {
        symbol_key(&String::from_utf8_lossy(token)) == key
    }
}

/// Whether a token reads as a number (`42`, `-1.5`, `1/2`, `.5`), not a symbol.
fn is_number(token: &[u8]) -> bool {
    let digits = token
        .strip_prefix(b"+")
        .or_else(|| token.strip_prefix(b"-"))
        .unwrap_or(token);
    digits
        .first()
        .is_some_and(|c| c.is_ascii_digit() || *c == b'.')
        && digits.iter().any(u8::is_ascii_digit)
        && digits
            .iter()
            .all(|c| c.is_ascii_digit() || b"./eEdDfFsSlL+-".contains(c))
}

fn is_symbol_byte(c: u8) -> bool {
    matches!(
        byte_class(c),
        ByteClass::Constituent | ByteClass::Bar | ByteClass::Backslash
    )
}

/// Whether the datum at `at` is a symbol (or number) token: `foo`, `|a b|`, `#:foo`.
fn is_symbol_start(b: &[u8], at: usize) -> bool {
    match b.get(at) {
        Some(&c) if is_symbol_byte(c) => true,
        Some(b'#') => b.get(at + 1) == Some(&b':'),
        _ => false,
    }
}

/// Source text of `[start, end)` on one line: whitespace runs become one space, comments
/// are dropped, strings, characters and `|escapes|` are kept as written.
pub fn fold(b: &[u8], start: usize, end: usize) -> String {
    fold_capped(b, start, end, usize::MAX)
}

/// The start of [`fold`]'s text, enough to abbreviate it to `max_chars` or to tell it is
/// longer: a part that is shown only when short (a value, an option) is often a long
/// form, and folding all of it to throw it away was most of the cost of some signatures.
fn fold_short(b: &[u8], start: usize, end: usize, max_chars: usize) -> String {
    fold_capped(b, start, end, short_cap(max_chars))
}

/// [`fold`], stopping after more than `cap` bytes of text (see [`fold_bytes`]).
fn fold_capped(b: &[u8], start: usize, end: usize, cap: usize) -> String {
    let span = &b[start.min(end).min(b.len())..end.min(b.len())];
    if folds_to_itself(span) {
        return lossy(span).into_owned();
    }
    let mut out = String::with_capacity(end.saturating_sub(start).min(256));
    fold_into_capped(&mut out, b, start, end, cap);
    out
}

/// Bytes of fold output that hold more than `max_chars + 1` characters (4 bytes at most
/// each): then the text is longer than `max_chars` even after `trim_end` (a chunk ends in
/// at most one blank, `\ `), and its first `max_chars` characters are those of the fold.
fn short_cap(max_chars: usize) -> usize {
    4 * (max_chars + 2)
}

/// [`fold`], borrowing the text of a plain token (the common case) from the file.
fn fold_cow(b: &[u8], start: usize, end: usize) -> Cow<'_, str> {
    let span = &b[start.min(end).min(b.len())..end.min(b.len())];
    if folds_to_itself(span) {
        return lossy(span);
    }
    Cow::Owned(fold(b, start, end))
}

/// Whether [`fold`] leaves `span` as it is: it changes only whitespace (folded, or turned
/// into spaces inside strings) and comments (dropped), and a comment needs `;` or `#|`.
/// So a span without whitespace, `;` and `|` is its own text: a token (`defun`,
/// `sb-impl::x`, `#:foo`) or a string without blanks, the common names.
#[inline]
fn folds_to_itself(span: &[u8]) -> bool {
    !span.iter().any(|&c| FOLD_CHANGES[c as usize])
}

/// The bytes [`folds_to_itself`] looks for: a table, since every name goes through it.
static FOLD_CHANGES: [bool; 256] = {
    let classes = crate::scan::class_table();
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = matches!(
            classes[c],
            ByteClass::Whitespace | ByteClass::Semicolon | ByteClass::Bar
        );
        c += 1;
    }
    t
};

/// `String::from_utf8_lossy`, with the checks for ASCII and for valid UTF-8 (nearly every
/// token) first: for a short token `is_ascii` is a few instructions, `str::from_utf8` a
/// hundred, the lossy decoder more.
#[inline]
fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    if bytes.is_ascii() {
        // SAFETY: ASCII is valid UTF-8.
        return Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// [`fold`], appended to `out`.
fn fold_into(out: &mut String, b: &[u8], start: usize, end: usize) {
    fold_into_capped(out, b, start, end, usize::MAX);
}

/// [`fold_into`], stopping after more than `cap` bytes (see [`fold_bytes`]).
fn fold_into_capped(out: &mut String, b: &[u8], start: usize, end: usize, cap: usize) {
    let mut bytes = std::mem::take(out).into_bytes();
    let from = bytes.len();
    fold_bytes(&mut bytes, b, start, end, cap);
    *out = if std::str::from_utf8(&bytes[from..]).is_ok() {
        // SAFETY: `bytes[..from]` was a `String` and `bytes[from..]` was just checked; two
        // valid UTF-8 sequences concatenated are valid UTF-8. (Checking only the new part
        // keeps building a signature from parts linear.)
        unsafe { String::from_utf8_unchecked(bytes) }
    } else {
        // Invalid UTF-8 in the source: this part is decoded with U+FFFD.
        let part = String::from_utf8_lossy(&bytes[from..]).into_owned();
        bytes.truncate(from);
        // SAFETY: `bytes[..from]` was a `String`.
        let mut text = unsafe { String::from_utf8_unchecked(bytes) };
        text.push_str(&part);
        text
    };
}

/// [`fold`] abbreviated to `SHORT_PART_CHARS`, appended to `out`.
fn push_short(out: &mut String, b: &[u8], start: usize, end: usize) {
    let from = out.len();
    fold_into_capped(out, b, start, end, short_cap(SHORT_PART_CHARS));
    if out[from..].chars().count() > SHORT_PART_CHARS {
        let text = abbreviate_balanced(&out[from..], SHORT_PART_CHARS);
        out.truncate(from);
        out.push_str(&text);
    }
}

/// The bytes of [`fold`], appended to `out`; stops once more than `cap` bytes have been
/// appended (between two chunks, so what was appended is exactly the start of the fold).
fn fold_bytes(out: &mut Vec<u8>, b: &[u8], start: usize, end: usize, cap: usize) {
    let b = &b[..end.min(b.len())];
    let from = out.len();
    let mut pending_space = false;
    // Whether the last byte pushed is a real `(` (not the one of `#\(`).
    let mut last_open = false;
    // Where the datum after a dispatch prefix starts (`#+#|x|#`): a token starts there.
    let mut datum_start = start;
    // Whether the last chunk was a character object: `#\( )` keeps its space.
    let mut last_character = false;
    let mut i = start;
    while i < b.len() && out.len() - from <= cap {
        let c = b[i];
        let class_here = byte_class(c);
        let next = match class_here {
            ByteClass::Whitespace => {
                pending_space = true;
                i += 1;
                while i < b.len() && byte_class(b[i]) == ByteClass::Whitespace {
                    i += 1;
                }
                continue;
            }
            ByteClass::Semicolon => {
                pending_space = true;
                i = memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |k| i + k);
                continue;
            }
            ByteClass::Hash if i == datum_start || hash_starts_token(b, i) => {
                match hash_start(b, i) {
                    HashStart::BlockComment => {
                        pending_space = true;
                        i = block_comment_end(b, i).0;
                        // The reader starts afresh after a comment: `|##|` is two.
                        datum_start = i;
                        continue;
                    }
                    HashStart::Character => character_end(b, i).0,
                    HashStart::Other { after, prefix } => {
                        if prefix {
                            datum_start = after;
                        }
                        after
                    }
                }
            }
            ByteClass::DoubleQuote => string_end(b, i).0,
            ByteClass::Bar => multiple_escape_end(b, i).0,
            ByteClass::Backslash => (i + 2).min(b.len()),
            // A run of constituents is one chunk: none of them changes the state below
            // after the first (and none is a line break).
            ByteClass::Constituent => b[i + 1..]
                .iter()
                .position(|&c| byte_class(c) != ByteClass::Constituent)
                .map_or(b.len(), |k| i + 1 + k),
            _ => i + 1,
        };
        let next = next.min(b.len()).max(i + 1);
        if (class_here == ByteClass::Close && !last_character)
            || (last_open && out.last() == Some(&b'('))
        {
            pending_space = false;
        }
        last_open = class_here == ByteClass::Open;
        last_character = c == b'#' && hash_start(b, i) == HashStart::Character;
        if pending_space && out.len() > from {
            out.push(b' ');
        }
        pending_space = false;
        if matches!(
            class_here,
            ByteClass::Constituent | ByteClass::Open | ByteClass::Close | ByteClass::Prefix
        ) {
            // No whitespace inside: copied as is.
            out.extend_from_slice(&b[i..next]);
        } else {
            // Inside strings and escapes whitespace is kept, but a signature stays on one
            // line.
            out.extend(b[i..next].iter().map(|&c| {
                if c == b'\n' || c == b'\r' || c == b'\t' {
                    b' '
                } else {
                    c
                }
            }));
        }
        i = next;
    }
}

/// Where a text of Lisp (a signature, folded: no comments) leaves the reader: lists
/// still open, inside a string or a `|...|` escape, after a `\\` or `#\\`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Balance {
    pub depth: usize,
    pub string: bool,
    pub bar: bool,
    pub escape: bool,
}

impl Balance {
    /// The state after reading `text` from the top level (a `)` too many is ignored).
    pub fn of(text: &str) -> Balance {
        let mut s = Balance::default();
        // Whether the last byte is a `#` that starts a token: the byte after it is a
        // dispatch character (`#"` starts no string, as in the scanner).
        let mut dispatch = false;
        let (mut prev, mut prev2) = (b' ', b' ');
        // Whether `prev` is the character of a dispatch prefix (`#+`, `#.`): a datum starts
        // after it.
        let mut feature = false;
        // Inside a `;` comment (never in folded text, which drops them).
        let mut comment = false;
        for &c in text.as_bytes() {
            let after_dispatch = std::mem::take(&mut dispatch);
            if comment {
                comment = c != b'\n';
            } else if s.escape {
                s.escape = false;
            } else if after_dispatch && c.is_ascii_digit() {
                // A numeric argument: `#1;` is still a dispatch.
                dispatch = true;
            } else if after_dispatch && (c == b'"' || c == b';') {
                // Not a string, not a comment.
            } else if c == b'\\' {
                // In a string, a `|...|`, a token, or a character `#\\x`.
                s.escape = true;
            } else if s.string {
                s.string = c != b'"';
            } else if s.bar {
                s.bar = c != b'|';
            } else {
                match c {
                    b'"' => s.string = true,
                    // Folded text has no `#|` comments: a `|` is an escape, even after
                    // `#` inside a token (`foo#|x|#bar`).
                    b'|' => s.bar = true,
                    b'(' => s.depth += 1,
                    b')' => s.depth = s.depth.saturating_sub(1),
                    // A `#` that starts a datum: after a delimiter or a dispatch prefix.
                    b'#' => {
                        dispatch = !is_symbol_byte(prev)
                            || feature
                            || (prev2 == b',' && matches!(prev, b'@' | b'.'))
                    }
                    b';' => comment = true,
                    _ => {}
                }
            }
            feature = after_dispatch && c != b'\\';
            prev2 = prev;
            prev = c;
        }
        s
    }

    /// Whether the text is complete: no list, string or escape left open.
    pub fn is_closed(&self) -> bool {
        *self == Balance::default()
    }

    /// Appends `...` and what closes the text read: the string or escape, then the lists.
    fn close(&self, out: &mut String) {
        if self.escape {
            out.push('.');
        }
        if self.string {
            out.push_str("...\"");
        } else if self.bar {
            out.push_str("...|");
        } else if !out.ends_with("...") {
            out.push_str(if self.depth == 0 { "..." } else { " ..." });
        }
        out.extend(std::iter::repeat_n(')', self.depth));
    }
}

/// `text` (Lisp text) cut to about `max` characters and closed: `...` where it is cut,
/// then the string and lists it leaves open, so that the result reads as balanced Lisp
/// (`(a (b c ...))`, `"abc..."`).
pub fn abbreviate_balanced(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut = text
        .char_indices()
        .nth(max.saturating_sub(3))
        .map_or(text.len(), |(at, _)| at);
    let mut out = text[..cut].trim_end().to_string();
    let mut state = Balance::of(&out);
    if state.escape {
        // A `\\` or `#\\` without its character: drop it.
        out.pop();
        if out.ends_with('#') {
            out.pop();
        }
        state = Balance::of(&out);
    }
    state.close(&mut out);
    out
}

/// Closes a text that the file leaves open (an unclosed form): `...` then the closers.
fn close_open(text: &mut String) {
    let state = Balance::of(text);
    if !state.is_closed() {
        state.close(text);
    }
}

/// `text` cut to `max` characters, with `...` when cut.
pub fn abbreviate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max.saturating_sub(3)).collect();
    format!("{}...", cut.trim_end())
}

#[cfg(test)]
mod tests;
