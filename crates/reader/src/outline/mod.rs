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
//!
//! Here: the outline's types, building it, streaming it to the views. `classify.rs`: what
//! a form is (operator, name, definer, children). `text.rs`: the text shown for it
//! (signature, docstring, method parts). `folding.rs`: source text cut to one line.

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
    /// Whether `signature` is known to be balanced (made by [`signature`], which closes
    /// it): then it is not read again to close it.
    closed: bool,
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

    /// Where the datum itself starts, after its prefixes (the `(` of a list).
    pub fn core(&self) -> usize {
        self.datum.core
    }

    /// Whether `#+`/`#-` prefixes stand in front of the form (without making its text).
    pub fn has_conditionals(&self) -> bool {
        !self.datum.conditionals.is_empty()
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

    /// The definer table entry that classified the form.
    pub fn entry(&self) -> Option<&'a Definer> {
        self.entry
    }

    /// The file's bytes the form was read from.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The form's datum: where it and its core start and end.
    pub fn datum(&self) -> &Datum {
        &self.datum
    }

    /// Whether the form is a method definition (its definer takes qualifiers): only
    /// those have a [`Form::method_key`]. Asked without making the form's text.
    pub fn is_method(&self) -> bool {
        self.entry.is_some_and(|d| d.qualifiers)
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

/// Forms whose source is one line of at most this many characters are shown whole
/// (docs/decisions.md#short-forms-are-shown-whole): by the collapsed view, and as the
/// `signature` of `outline --json`.
pub const SHORT_FORM_CHARS: usize = 100;

impl Form<'_> {
    /// The form's text after its reader conditionals when the form is short (one line of
    /// at most [`SHORT_FORM_CHARS`] characters, without children, closed and balanced):
    /// what the collapsed view shows of it, so that `outline --json` says the same.
    fn short_text(&self) -> Option<String> {
        let datum = &self.datum;
        let start = datum.conditionals.last().map_or(datum.start, |c| c.end);
        let start = start
            + self.bytes[start..datum.end]
                .iter()
                .take_while(|c| c.is_ascii_whitespace())
                .count();
        let bytes = &self.bytes[start..datum.end];
        if !self.children.is_empty()
            || datum.problem.is_some()
            || bytes.len() > 4 * SHORT_FORM_CHARS
            || bytes.contains(&b'\n')
        {
            return None;
        }
        let text = std::str::from_utf8(bytes).ok()?;
        let short = text.chars().count() <= SHORT_FORM_CHARS && Balance::of(text).is_closed();
        short.then(|| text.trim_end_matches('\r').to_string())
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
        let short = self.short_text();
        Json {
            operator: self.operator.as_deref(),
            name: self.name.as_deref(),
            conditionals: &text.conditionals,
            signature: short.as_deref().unwrap_or(&text.signature),
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
/// counts and the diagnostics of one scan, and that scan's items when they take at most
/// the file's size. Each walk replays those items (or scans again) and classifies only
/// the items it is given, one at a time.
pub struct StreamedOutline<'a> {
    bytes: &'a [u8],
    grammar: &'a Grammar,
    /// The non-whitespace items of the first scan, when they take at most the file's size:
    /// a walk then does not scan again (the scan was a tenth of a collapsed view's cost).
    kept: Option<Vec<scan::Item>>,
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
        let mut kept = Some(Vec::new());
        let mut kept_size = 0;
        let kept_cap = bytes.len().max(KEPT_FLOOR);
        let scan = scan::scan_each(bytes, &mut |item| {
            item_count += usize::from(item.kind != ItemKind::Whitespace);
            form_count += usize::from(item.kind == ItemKind::Form);
            if cancel.is_cancelled() {
                kept = None;
                return ControlFlow::Break(());
            }
            if item.kind != ItemKind::Whitespace {
                // Memory stays bounded by the file's size: past it, walks scan again.
                kept_size += Self::kept_bytes(&item);
                match &mut kept {
                    Some(items) if kept_size <= kept_cap => items.push(item),
                    _ => kept = None,
                }
            }
            ControlFlow::Continue(())
        });
        StreamedOutline {
            bytes,
            grammar,
            kept,
            line_count: scan.line_count,
            item_count,
            form_count,
            diagnostics: scan.diagnostics,
            omitted_diagnostics: scan.omitted_diagnostics,
            cancel,
        }
    }
}

/// The kept items of a small file may take this much (the file's size for a larger one).
const KEPT_FLOOR: usize = 64 * 1024;

impl StreamedOutline<'_> {
    /// The memory a kept item takes: itself and its conditionals.
    fn kept_bytes(item: &scan::Item) -> usize {
        std::mem::size_of::<scan::Item>() + std::mem::size_of_val(item.conditionals.as_slice())
    }
}

impl<'a> Items<'a> for StreamedOutline<'a> {
    fn each_item(&self, f: &mut dyn FnMut(&OutlineItem<'a>) -> ControlFlow<()>) {
        let mut scratch = Scratch::default();
        if let Some(items) = &self.kept {
            for item in items {
                if self.cancel.is_cancelled() {
                    return;
                }
                let mut out = unclassified_item(item);
                classify_item(&mut out, item, self.bytes, self.grammar, &mut scratch);
                if f(&out).is_break() {
                    return;
                }
            }
            return;
        }
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

/// One scan of `bytes`: each top-level form that `wanted` accepts (given the scanner's
/// item) is classified and handed to `f`, in file order; the others cost only the scan.
/// A search that must look at few forms of a file (the references of a symbol) pays for
/// those only. Stops when `wanted` or `f` breaks.
pub fn each_form<'a>(
    bytes: &'a [u8],
    grammar: &'a Grammar,
    wanted: &mut dyn FnMut(&scan::Item) -> ControlFlow<(), bool>,
    f: &mut dyn FnMut(&scan::Item, &OutlineItem<'a>) -> ControlFlow<()>,
) {
    let mut scratch = Scratch::default();
    scan::scan_each(bytes, &mut |item| {
        if item.kind != ItemKind::Form || !wanted(&item)? {
            return ControlFlow::Continue(());
        }
        let mut out = unclassified_item(&item);
        classify_item(&mut out, &item, bytes, grammar, &mut scratch);
        f(&item, &out)
    });
}

mod classify;
mod folding;
mod text;

use classify::*;
use folding::*;
pub use folding::{abbreviate, abbreviate_balanced, fold, Balance};
pub use text::is_number;
use text::*;

#[cfg(test)]
mod tests;
