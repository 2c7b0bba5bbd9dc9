//! The tolerant S-expression scanner (docs/reader.md): bytes → top-level items.
//!
//! The items cover the input losslessly (their spans tile it, in order), every problem is
//! a [`Diagnostic`] rather than an error, nothing recurses on nesting depth, and time is
//! linear in the input. Balanced input takes one pass that only counts parentheses; the
//! first unclosed form switches the rest of the file to the match table of `recovery.rs`.
//! The lexical grammar is written down in `grammar/reader.ebnf`.

mod conditional;
mod datum;
mod events;
mod lexer;
mod recovery;
mod tokens;
mod uncommented;
mod window;

pub use events::{each_event_read, Event, Prefix};
pub use tokens::{each_token, each_token_read};
pub use uncommented::each_uncommented;

pub(crate) use datum::skip_blank;
pub use datum::MAX_CONDITIONALS;
pub use datum::{Datum, Elements};
pub(crate) use lexer::{
    class as byte_class, class_table, hash_start, hash_starts_token,
    skip_block_comment as block_comment_end, skip_character as character_end,
    skip_multiple_escape as multiple_escape_end, skip_string as string_end, utf8_len,
    Class as ByteClass, HashStart,
};

use crate::source::BOM;
use datum::{read_datum, DatumProblem, DepthCounter};
use lexer::{
    class, count_newlines, skip_block_comment, skip_line_comment, skip_whitespace, Class,
    Unterminated,
};
use recovery::MatchTable;
use serde::{Deserialize, Serialize};
use std::ops::ControlFlow;

/// A byte range `[start, end)` of the original input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }
    pub fn len(self) -> usize {
        self.end - self.start
    }
    pub fn is_empty(self) -> bool {
        self.end == self.start
    }
}

/// What a top-level item is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ItemKind {
    /// One datum with every reader prefix in front of it.
    Form,
    /// A `;` line comment (one line) or a `#| ... |#` block comment.
    Comment,
    /// Blank space between items.
    Whitespace,
    /// A first line beginning `#!`.
    Shebang,
    /// Text that cannot start a datum: an unmatched `)`.
    Stray,
}

/// One top-level item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub kind: ItemKind,
    pub span: Span,
    /// 1-based line of the first byte.
    pub start_line: usize,
    /// 1-based line of the last byte.
    pub end_line: usize,
    /// Forms: where the datum after all prefixes starts (the `(` of `#+sbcl (defun ...)`).
    pub core: usize,
    /// Forms: whether that datum is a list.
    pub core_is_list: bool,
    /// Forms: whether a prefix other than a reader conditional applies (`'(...)`, `#.x`).
    pub quoted: bool,
    /// Forms: each `#+feature` / `#-feature` in front, with its feature expression (the
    /// first [`MAX_CONDITIONALS`]).
    pub conditionals: Vec<Span>,
}

/// What kind of problem a diagnostic reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiagnosticKind {
    /// A list still open at the end of input; the form was cut at a column-0 `(`.
    Unclosed,
    UnterminatedString,
    UnterminatedComment,
    /// A `|` multiple escape that never closes.
    UnterminatedEscape,
    /// An unmatched `)` at top level.
    Stray,
    /// A reader prefix (`'`, `#+feature`, ...) with no datum after it.
    MissingDatum,
    /// A `#` followed by whitespace, `)` or the end.
    BareHash,
    /// `#<...>`, which no reader can read.
    Unreadable,
}

/// A problem found while scanning, attached to the item it belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub kind: DiagnosticKind,
    /// Index of the item in [`Scan::items`].
    #[serde(skip, default)]
    pub item: usize,
    /// Byte offset where the problem starts.
    pub offset: usize,
    /// 1-based line and column (in characters) of `offset`.
    pub line: usize,
    pub column: usize,
    /// For `unclosed`: the 1-based line where scanning resumed, if it did before the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovered_line: Option<usize>,
    pub message: String,
}

/// The scanner's output.
#[derive(Clone, Debug, Default)]
pub struct Scan {
    /// All items, whitespace included, tiling the input.
    pub items: Vec<Item>,
    /// The first [`MAX_DIAGNOSTICS`] problems, in file order.
    pub diagnostics: Vec<Diagnostic>,
    /// Problems past the first [`MAX_DIAGNOSTICS`]: counted, not kept.
    pub omitted_diagnostics: usize,
    /// Number of lines (a final line without a newline counts; an empty input has 0).
    pub line_count: usize,
}

/// Problems kept with their position and message. A file of a million stray `)` would
/// otherwise keep a million diagnostics (and show a million notes): past this many they
/// are only counted, so memory and output stay bounded (a thousand are about 100 KB; ten
/// thousand put a 1 MiB file of unclosed lines over the memory promise), and the first
/// ones are what the reader fixes first anyway.
pub const MAX_DIAGNOSTICS: usize = 1_000;

/// How many times one file may start a fresh reading at a line that begins with `(`
/// inside a string, comment or escape (docs/reader.md#recovery). Each costs one pass over
/// the rest of the file, so the bound keeps recovery linear on any input; a half-edited
/// file needs one per damaged place.
pub const MAX_RESYNCS: usize = 16;

/// Scans `bytes` into top-level items. Never fails, never panics, never recurses.
pub fn scan(bytes: &[u8]) -> Scan {
    let mut items = Vec::new();
    let mut scan = scan_each(bytes, &mut |item| {
        items.push(item);
        ControlFlow::Continue(())
    });
    scan.items = items;
    scan
}

/// Scans `bytes`, handing each item to `sink` in file order instead of keeping it, so
/// that memory does not grow with the number of items. The result has no items. A sink
/// that breaks stops the scan: no more items are read, and the diagnostics are those of
/// the items read.
pub fn scan_each(bytes: &[u8], sink: &mut dyn FnMut(Item) -> ControlFlow<()>) -> Scan {
    let mut scanner = Scanner {
        b: bytes,
        items: Vec::new(),
        handed_out: 0,
        sink,
        stopped: false,
        diagnostics: Vec::new(),
        omitted_diagnostics: 0,
        lines: LineCounter::default(),
        table: None,
        resyncs_left: MAX_RESYNCS,
        column_zero: ColumnZero::default(),
        in_step: None,
        columns: ColumnCursor::default(),
    };
    scanner.run();
    scanner.hand_out();
    let n = bytes.len();
    let newlines_before_end = scanner.lines.line_of(bytes, n) - 1;
    let line_count = if n == 0 || bytes == BOM || bytes[n - 1] == b'\n' {
        newlines_before_end
    } else {
        newlines_before_end + 1
    };
    Scan {
        items: Vec::new(),
        diagnostics: scanner.diagnostics,
        omitted_diagnostics: scanner.omitted_diagnostics,
        line_count,
    }
}

struct Scanner<'a> {
    b: &'a [u8],
    /// Items pushed since the last [`Scanner::hand_out`].
    items: Vec<Item>,
    /// Items already given to `sink`.
    handed_out: usize,
    sink: &'a mut dyn FnMut(Item) -> ControlFlow<()>,
    /// Set when the sink broke: nothing more is read.
    stopped: bool,
    diagnostics: Vec<Diagnostic>,
    omitted_diagnostics: usize,
    lines: LineCounter,
    /// Set once the first unclosed form is met: lists close by lookup from then on.
    table: Option<MatchTable>,
    /// Fresh readings still allowed (see [`MAX_RESYNCS`]).
    resyncs_left: usize,
    column_zero: ColumnZero,
    /// The last look ahead (see [`Scanner::in_step_after`]): from, to, answer.
    in_step: Option<(usize, usize, bool)>,
    columns: ColumnCursor,
}

impl Scanner<'_> {
    fn run(&mut self) {
        let b = self.b;
        let n = b.len();
        let mut i = 0;
        // A byte-order mark is not text: it goes with the whitespace that follows.
        if b.starts_with(BOM) {
            let end = skip_whitespace(b, BOM.len());
            self.push(ItemKind::Whitespace, 0, end);
            i = end;
        }
        if b[i..].starts_with(b"#!") && (i == 0 || i == BOM.len()) {
            let end = skip_line_comment(b, i);
            self.push(ItemKind::Shebang, i, end);
            i = end;
        }
        while i < n && !self.stopped {
            i = match class(b[i]) {
                // Most items are blank space and comment lines: their newlines are counted
                // here (a comment line has none), not from the line counter's position.
                Class::Whitespace => {
                    let end = skip_whitespace(b, i);
                    let inside = count_newlines(&b[i..end - 1]);
                    self.push_counted(ItemKind::Whitespace, i, end, inside)
                }
                Class::Semicolon => {
                    // A comment line stops before its newline.
                    let end = skip_line_comment(b, i);
                    self.push_counted(ItemKind::Comment, i, end, 0)
                }
                Class::Hash if lexer::is_block_comment_start(b, i) => {
                    let (mut end, closed) = skip_block_comment(b, i);
                    let resumed = if closed { None } else { self.resync(i, None) };
                    if let Some(at) = resumed {
                        end = at;
                    }
                    let next = self.push(ItemKind::Comment, i, end);
                    if !closed {
                        self.diagnose(DiagnosticKind::UnterminatedComment, i, resumed);
                    }
                    next
                }
                Class::Close => {
                    let next = self.push(ItemKind::Stray, i, i + 1);
                    self.diagnose(DiagnosticKind::Stray, i, None);
                    next
                }
                _ => self.form(i),
            };
            self.hand_out();
        }
    }

    /// Gives the items pushed so far to the sink (their diagnostics are attached already).
    fn hand_out(&mut self) {
        self.handed_out += self.items.len();
        for item in self.items.drain(..) {
            if !self.stopped {
                self.stopped = (self.sink)(item).is_break();
            }
        }
    }

    /// Reads the form at `i`, pushes it with its diagnostics; returns where it ends.
    fn form(&mut self, i: usize) -> usize {
        let b = self.b;
        let mut datum = match &self.table {
            None => read_datum(b, i, &mut DepthCounter::<true>),
            Some(table) => read_datum(b, i, &mut &*table),
        };
        if matches!(datum.problem, Some(DatumProblem::Unclosed { .. })) && self.table.is_none() {
            // The first unclosed form: match the rest of the file once, then read again.
            let table = self.table.insert(MatchTable::build(b, i));
            datum = read_datum(b, i, &mut &*table);
        }
        // Where a runaway form was cut for a fresh reading, and what was open there.
        let resynced = self.resync_form(i, &mut datum);
        if let Some(DatumProblem::Unclosed { cut: Some(cut), .. }) = datum.problem {
            datum.end = match resynced {
                // A string or comment ran across the cut: all of it is the form's.
                Some((_, Some(_))) => cut,
                // The form ends after its last character; blanks and comments before the
                // cut become top-level items of their own.
                _ => lexer::content_end(b, i, cut),
            };
        }
        let end = datum.end.max(i + 1).min(b.len());
        // A list whose newlines the closer counted: its last line without a second look.
        let known = match (&datum.problem, datum.core_newlines) {
            (None, Some(newlines)) if end == datum.end => Some((datum.core, newlines)),
            _ => None,
        };
        let next = self.push_lines(ItemKind::Form, i, end, known);
        let item = self.items.last_mut().expect("just pushed");
        item.core = datum.core;
        item.core_is_list = datum.core_is_list;
        item.quoted = datum.quoted;
        item.conditionals = std::mem::take(&mut datum.conditionals);
        self.diagnose_datum(i, datum.problem, resynced);
        next
    }

    /// Cuts a runaway form at the first line inside it that starts with `(`, whatever the
    /// reading there, and starts a fresh reading at that line (docs/reader.md#runaway-strings-and-comments).
    /// A form is runaway when it runs to the end of the input, when recovery cut it at a
    /// later line starting with a syntactic `(`, or when it closed but read across a line
    /// starting with `(` inside a string, comment or escape and the reading after it is
    /// out of step (see [`Scanner::in_step_after`]). Returns that line's position and
    /// what was open there, if the form was cut.
    fn resync_form(&mut self, i: usize, datum: &mut Datum) -> Option<Resynced> {
        if self.resyncs_left == 0 {
            return None;
        }
        let b = self.b;
        // The cut comes after what ran away (`#+sbcl` may stand on the line before an
        // unclosed `(defun`), and before where the form ends now.
        let (runaway, runs_to) = match datum.problem {
            Some(DatumProblem::Unclosed { open, cut, .. }) => (open, cut.unwrap_or(b.len())),
            Some(DatumProblem::Unterminated(u)) => (unterminated_at(u), b.len()),
            None => (datum.core, datum.end),
            Some(_) => return None,
        };
        let at = self.column_zero.after(b, runaway.max(i), runs_to)?;
        let open = lexer::open_at(&b[..at], i);
        if datum.problem.is_none() {
            // A form that closed: only when it read across that line inside something,
            // and the reading after it does not get back in step.
            let inside = open?;
            if self.in_step_after(datum.end) {
                return None;
            }
            datum.problem = Some(if datum.core_is_list {
                DatumProblem::Unclosed {
                    open: datum.core,
                    cut: None,
                    unterminated: None,
                }
            } else {
                DatumProblem::Unterminated(inside)
            });
        }
        match &mut datum.problem {
            Some(DatumProblem::Unclosed { cut, .. }) => *cut = Some(at),
            _ => datum.end = at,
        }
        self.resyncs_left -= 1;
        // The readings after `at` are fresh: a later unclosed form matches from itself.
        self.table = None;
        self.in_step = None;
        Some((at, open))
    }

    /// Whether the top-level reading from `from` (just after a form) gets back in step:
    /// it reaches a line starting with a `(` at top level, or the end of input with
    /// nothing open, before any unmatched `)`. A file the reader reads whole is in step
    /// everywhere; after a lost quote, later strings read inside out and the reading ends
    /// in an unmatched `)` or runs to the end.
    ///
    /// The answer holds for every top-level point the look passed, which are where the
    /// next forms end: it is kept, so that each byte is looked at once however many forms
    /// ask.
    fn in_step_after(&mut self, from: usize) -> bool {
        if let Some((start, end, answer)) = self.in_step {
            if start <= from && from < end {
                return answer;
            }
        }
        let (end, answer) = look_ahead(self.b, from);
        self.in_step = Some((from, end, answer));
        answer
    }

    /// Where an item starting at `start` that runs to `runs_to` is cut for a fresh
    /// reading, if the budget allows: the first line after `start` and before `runs_to`
    /// that starts with `(`.
    fn resync(&mut self, start: usize, runs_to: Option<usize>) -> Option<usize> {
        if self.resyncs_left == 0 {
            return None;
        }
        let at = self
            .column_zero
            .after(self.b, start, runs_to.unwrap_or(self.b.len()))?;
        self.resyncs_left -= 1;
        self.table = None;
        self.in_step = None;
        Some(at)
    }

    /// Attaches the diagnostics of the form at `i` just pushed.
    fn diagnose_datum(
        &mut self,
        i: usize,
        problem: Option<DatumProblem>,
        resynced: Option<Resynced>,
    ) {
        match problem {
            None => {}
            Some(DatumProblem::Unclosed {
                open,
                cut,
                unterminated,
            }) => {
                self.diagnose(DiagnosticKind::Unclosed, open, cut);
                if let Some((_, Some(u))) = resynced {
                    // The string or comment that ran across the line where reading resumed.
                    self.diagnose_unterminated(u, cut);
                } else if let (None, Some(u)) = (cut, unterminated) {
                    // Only what starts inside this form belongs to it.
                    if unterminated_at(u) >= i {
                        self.diagnose_unterminated(u, None);
                    }
                }
            }
            Some(DatumProblem::Unterminated(u)) => {
                self.diagnose_unterminated(u, resynced.map(|(at, _)| at))
            }
            Some(DatumProblem::MissingDatum(at)) => {
                self.diagnose(DiagnosticKind::MissingDatum, at, None)
            }
            Some(DatumProblem::BareHash(at)) => self.diagnose(DiagnosticKind::BareHash, at, None),
            Some(DatumProblem::Unreadable(at)) => {
                self.diagnose(DiagnosticKind::Unreadable, at, None)
            }
        }
    }

    fn diagnose_unterminated(&mut self, u: Unterminated, resumed: Option<usize>) {
        let (kind, at) = match u {
            Unterminated::String(at) => (DiagnosticKind::UnterminatedString, at),
            Unterminated::BlockComment(at) => (DiagnosticKind::UnterminatedComment, at),
            Unterminated::MultipleEscape(at) => (DiagnosticKind::UnterminatedEscape, at),
        };
        self.diagnose(kind, at, resumed);
    }

    /// Pushes an item `[start, end)`; returns `end`.
    fn push(&mut self, kind: ItemKind, start: usize, end: usize) -> usize {
        self.push_lines(kind, start, end, None)
    }

    /// [`Scanner::push`] for an item `[start, end)` holding `inside` newlines before its
    /// last byte, as counted by the caller.
    fn push_counted(&mut self, kind: ItemKind, start: usize, end: usize, inside: usize) -> usize {
        self.push_lines(kind, start, end, Some((start, inside)))
    }

    /// Pushes an item `[start, end)`; `known`: a position in it and the number of newlines
    /// from there to its last byte, when the caller counted them.
    fn push_lines(
        &mut self,
        kind: ItemKind,
        start: usize,
        end: usize,
        known: Option<(usize, usize)>,
    ) -> usize {
        let start_line = self.lines.line_of(self.b, start);
        let end_line = match known {
            Some((from, newlines)) => {
                self.lines.line_of(self.b, from);
                self.lines.advance(end - 1, newlines)
            }
            None => self.lines.line_of(self.b, end.saturating_sub(1).max(start)),
        };
        self.items.push(Item {
            kind,
            span: Span::new(start, end),
            start_line,
            end_line,
            core: start,
            core_is_list: false,
            quoted: false,
            conditionals: Vec::new(),
        });
        end
    }

    /// Attaches a diagnostic at byte `at` to the last item pushed.
    fn diagnose(&mut self, kind: DiagnosticKind, at: usize, recovered_at: Option<usize>) {
        if self.diagnostics.len() >= MAX_DIAGNOSTICS {
            self.omitted_diagnostics += 1;
            return;
        }
        let item = self.items.last().expect("an item was just pushed");
        let item_index = self.handed_out + self.items.len() - 1;
        let line = line_of(self.b, item.span.start, item.start_line, at);
        let column = self.columns.column_of(self.b, at);
        let recovered_line =
            recovered_at.map(|r| line_of(self.b, item.span.start, item.start_line, r));
        let what = match kind {
            DiagnosticKind::Unclosed => "Unclosed form",
            DiagnosticKind::UnterminatedString => "Unterminated string",
            DiagnosticKind::UnterminatedComment => "Unterminated #| comment",
            DiagnosticKind::UnterminatedEscape => "Unterminated |escape|",
            _ => "",
        };
        let message = match (kind, recovered_line) {
            (
                DiagnosticKind::Unclosed
                | DiagnosticKind::UnterminatedString
                | DiagnosticKind::UnterminatedComment
                | DiagnosticKind::UnterminatedEscape,
                recovered,
            ) => match recovered {
                Some(r) => format!("{what} at line {line}; recovered at line {r}."),
                None => format!("{what} at line {line}; it runs to the end of the file."),
            },
            (DiagnosticKind::Stray, _) => format!("Unmatched ) at line {line}."),
            (DiagnosticKind::MissingDatum, _) => {
                format!("Reader prefix at line {line} has no datum after it.")
            }
            (DiagnosticKind::BareHash, _) => {
                format!("# without a dispatch character at line {line}.")
            }
            (DiagnosticKind::Unreadable, _) => format!("Unreadable #< object at line {line}."),
        };
        self.diagnostics.push(Diagnostic {
            kind,
            item: item_index,
            offset: at,
            line,
            column,
            recovered_line,
            message,
        });
    }
}

/// Finds the lines that start with `(`. Forms come in file order, so each search goes on
/// from the last answer: one pass over the file in all, however many forms ask.
pub(crate) struct ColumnZero {
    finder: memchr::memmem::Finder<'static>,
    /// The last search started at `from` and found `at` (the end of input: none).
    from: usize,
    at: usize,
}

impl Default for ColumnZero {
    fn default() -> Self {
        ColumnZero {
            finder: memchr::memmem::Finder::new(b"\n("),
            from: usize::MAX,
            at: 0,
        }
    }
}

impl ColumnZero {
    /// The first `(` after `start` and before `end` that begins a line.
    fn after(&mut self, b: &[u8], start: usize, end: usize) -> Option<usize> {
        let from = (start + 1).min(b.len());
        // Still valid when the newline before the `(` found is at or after `from`.
        let valid = self.from <= from && (from < self.at || self.at == b.len());
        if !valid {
            self.from = from;
            self.at = self
                .finder
                .find(&b[from..])
                .map_or(b.len(), |k| from + k + 1);
        }
        (self.at < end).then_some(self.at)
    }
}

/// [`Scanner::in_step_after`] without its memory: where the look ended, and the answer.
fn look_ahead(b: &[u8], from: usize) -> (usize, bool) {
    let (mut depth, mut i) = (0usize, from);
    loop {
        let (paren, next) = lexer::next_paren(b, i);
        match paren {
            lexer::Paren::Open(at) if depth == 0 && at > 0 && b[at - 1] == b'\n' => {
                return (at, true)
            }
            lexer::Paren::Open(_) => depth += 1,
            lexer::Paren::Close(_) if depth > 0 => depth -= 1,
            lexer::Paren::Close(at) => return (at, false),
            lexer::Paren::End(open) => return (b.len(), open.is_none() && depth == 0),
        }
        i = next;
    }
}

/// Where a fresh reading started after a runaway form, and the string, comment or escape
/// that was open there (none when the `(` was escaped by a `\`).
type Resynced = (usize, Option<Unterminated>);

fn unterminated_at(u: Unterminated) -> usize {
    match u {
        Unterminated::String(at)
        | Unterminated::BlockComment(at)
        | Unterminated::MultipleEscape(at) => at,
    }
}

/// Line and character column of `at`, counting from a known line start position.
/// The line of byte `at`, counting newlines from `from` (on line `from_line`).
fn line_of(b: &[u8], from: usize, from_line: usize, at: usize) -> usize {
    let at = at.min(b.len());
    let from = from.min(at);
    from_line + memchr::memchr_iter(b'\n', &b[from..at]).count()
}

/// 1-based columns (in characters) of diagnostics, which come in file order: each is
/// counted on from the one before when they share a line, so that many diagnostics on one
/// long line (a line of stray `)`) cost the line's length once, not once each.
#[derive(Default)]
pub(crate) struct ColumnCursor {
    /// The last offset asked, and the start and column of its line.
    pos: usize,
    line_start: usize,
    column: usize,
}

impl ColumnCursor {
    pub(crate) fn column_of(&mut self, b: &[u8], at: usize) -> usize {
        let at = at.min(b.len());
        let chars = |bytes: &[u8]| bytes.iter().filter(|&&c| (c & 0xC0) != 0x80).count();
        if at < self.pos || self.column == 0 {
            // Out of order (or the first): from the line's start.
            self.line_start = memchr::memrchr(b'\n', &b[..at]).map_or(0, |k| k + 1);
            self.column = 1 + chars(&b[self.line_start..at]);
        } else if let Some(k) = memchr::memrchr(b'\n', &b[self.pos..at]) {
            self.line_start = self.pos + k + 1;
            self.column = 1 + chars(&b[self.line_start..at]);
        } else {
            self.column += chars(&b[self.pos..at]);
        }
        self.pos = at;
        self.column
    }
}

/// Maps byte offsets to 1-based line numbers, counting only the newlines between the
/// last offset asked and the next (offsets mostly come in order).
pub(crate) struct LineCounter {
    pos: usize,
    /// The line of `pos`.
    line: usize,
}

impl Default for LineCounter {
    fn default() -> Self {
        LineCounter::starting_at(0, 1)
    }
}

impl LineCounter {
    /// A counter that knows byte `pos` is on line `line`.
    pub(crate) fn starting_at(pos: usize, line: usize) -> Self {
        LineCounter { pos, line }
    }

    /// Moves on to `offset`, known to lie `newlines` newlines after the current position
    /// (at or before it); returns its line.
    #[inline]
    pub(crate) fn advance(&mut self, offset: usize, newlines: usize) -> usize {
        debug_assert!(offset >= self.pos);
        self.pos = offset;
        self.line += newlines;
        self.line
    }

    pub(crate) fn line_of(&mut self, b: &[u8], offset: usize) -> usize {
        let offset = offset.min(b.len());
        if offset >= self.pos {
            self.line += count_newlines(&b[self.pos..offset]);
            self.pos = offset;
            self.line
        } else {
            self.line - count_newlines(&b[offset..self.pos])
        }
    }
}

#[cfg(test)]
mod tests;
