//! The tolerant S-expression scanner (docs/reader.md): bytes → top-level items.
//!
//! The items cover the input losslessly (their spans tile it, in order), every problem is
//! a [`Diagnostic`] rather than an error, nothing recurses on nesting depth, and time is
//! linear in the input. Balanced input takes one pass that only counts parentheses; the
//! first unclosed form switches the rest of the file to the match table of `recovery.rs`.
//! The lexical grammar is written down in `grammar/reader.ebnf`.

mod datum;
mod lexer;
mod recovery;
mod window;

pub(crate) use datum::{skip_blank, Datum, Elements};
pub(crate) use lexer::{
    class as byte_class, class_table, hash_start, hash_starts_token,
    skip_block_comment as block_comment_end, skip_character as character_end,
    skip_multiple_escape as multiple_escape_end, skip_string as string_end, Class as ByteClass,
    HashStart,
};

use datum::{read_datum, DatumProblem, DepthCounter};
use lexer::{
    class, count_newlines, skip_block_comment, skip_line_comment, skip_whitespace, Class,
    Unterminated,
};
use recovery::MatchTable;
use serde::{Deserialize, Serialize};

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
    /// Forms: each `#+feature` / `#-feature` in front, with its feature expression.
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

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Problems kept with their position and message. A file of a million stray `)` would
/// otherwise keep a million diagnostics (and show a million notes): past this many they
/// are only counted, so memory and output stay bounded, and the first ones are what the
/// reader fixes first anyway.
pub const MAX_DIAGNOSTICS: usize = 10_000;

/// Scans `bytes` into top-level items. Never fails, never panics, never recurses.
pub fn scan(bytes: &[u8]) -> Scan {
    let mut items = Vec::new();
    let mut scan = scan_each(bytes, &mut |item| items.push(item));
    scan.items = items;
    scan
}

/// Scans `bytes`, handing each item to `sink` in file order instead of keeping it, so
/// that memory does not grow with the number of items. The result has no items.
pub fn scan_each(bytes: &[u8], sink: &mut dyn FnMut(Item)) -> Scan {
    let mut scanner = Scanner {
        b: bytes,
        items: Vec::new(),
        handed_out: 0,
        sink,
        diagnostics: Vec::new(),
        omitted_diagnostics: 0,
        lines: LineCounter::default(),
        table: None,
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
    sink: &'a mut dyn FnMut(Item),
    diagnostics: Vec<Diagnostic>,
    omitted_diagnostics: usize,
    lines: LineCounter,
    /// Set once the first unclosed form is met: lists close by lookup from then on.
    table: Option<MatchTable>,
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
        while i < n {
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
                    let (end, closed) = skip_block_comment(b, i);
                    let next = self.push(ItemKind::Comment, i, end);
                    if !closed {
                        self.diagnose(DiagnosticKind::UnterminatedComment, i, None);
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
            (self.sink)(item);
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
        if let Some(DatumProblem::Unclosed { cut: Some(cut), .. }) = datum.problem {
            // The form ends after its last character; blanks and comments before the cut
            // become top-level items of their own.
            datum.end = lexer::content_end(b, i, cut);
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
        match datum.problem {
            None => {}
            Some(DatumProblem::Unclosed {
                open,
                cut,
                unterminated,
            }) => {
                self.diagnose(DiagnosticKind::Unclosed, open, cut);
                if let (None, Some(u)) = (cut, unterminated) {
                    // Only what starts inside this form belongs to it.
                    if unterminated_at(u) >= i {
                        self.diagnose_unterminated(u);
                    }
                }
            }
            Some(DatumProblem::Unterminated(u)) => self.diagnose_unterminated(u),
            Some(DatumProblem::MissingDatum(at)) => {
                self.diagnose(DiagnosticKind::MissingDatum, at, None)
            }
            Some(DatumProblem::BareHash(at)) => self.diagnose(DiagnosticKind::BareHash, at, None),
            Some(DatumProblem::Unreadable(at)) => {
                self.diagnose(DiagnosticKind::Unreadable, at, None)
            }
        }
        next
    }

    fn diagnose_unterminated(&mut self, u: Unterminated) {
        let (kind, at) = match u {
            Unterminated::String(at) => (DiagnosticKind::UnterminatedString, at),
            Unterminated::BlockComment(at) => (DiagnosticKind::UnterminatedComment, at),
            Unterminated::MultipleEscape(at) => (DiagnosticKind::UnterminatedEscape, at),
        };
        self.diagnose(kind, at, None);
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
        let message = match (kind, recovered_line) {
            (DiagnosticKind::Unclosed, Some(r)) => {
                format!("Unclosed form at line {line}; recovered at line {r}.")
            }
            (DiagnosticKind::Unclosed, None) => {
                format!("Unclosed form at line {line}; it runs to the end of the file.")
            }
            (DiagnosticKind::UnterminatedString, _) => {
                format!("Unterminated string at line {line}; it runs to the end of the file.")
            }
            (DiagnosticKind::UnterminatedComment, _) => {
                format!("Unterminated #| comment at line {line}; it runs to the end of the file.")
            }
            (DiagnosticKind::UnterminatedEscape, _) => {
                format!("Unterminated |escape| at line {line}; it runs to the end of the file.")
            }
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
