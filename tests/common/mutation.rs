//! Half-edited files, made from real ones: one edit left half-done in one top-level form
//! (a `)`, `(` or `"` deleted, a stray `"` or an unclosed `#|` inserted), and what the
//! reader still shows of the rest of the file. Shared by `tests/reader/mutation.rs` (a sample,
//! with the targets as assertions) and `benches/mutation.rs` (the whole corpus, figures).
//!
//! The edit's place is chosen with a small lexer of its own (strings, `;` and `#|`
//! comments, `#\` characters, `|` escapes), independent of the scanner under test, so
//! that every edit changes the file's structure: a `)` deleted is a syntactic one, a `"`
//! inserted lands in code, not inside a string or comment.

#![allow(dead_code)] // Each crate uses what it needs.

use lisp_read_file::grammar::Grammar;
use lisp_read_file::outline::{outline_bytes, OutlineItem};
use lisp_read_file::scan::ItemKind;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The half-done edits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    DeleteClose,
    DeleteOpen,
    DeleteQuote,
    InsertQuote,
    OpenBlockComment,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::DeleteClose,
        Kind::DeleteOpen,
        Kind::DeleteQuote,
        Kind::InsertQuote,
        Kind::OpenBlockComment,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Kind::DeleteClose => "delete a )",
            Kind::DeleteOpen => "delete a (",
            Kind::DeleteQuote => "delete a \"",
            Kind::InsertQuote => "insert a stray \"",
            Kind::OpenBlockComment => "open a #|",
        }
    }
}

/// A deterministic generator (xorshift64*): the same seed, the same edits.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n.max(1)
    }
}

/// Where in `text` each kind of edit may go: syntactic `(`, `)`, string quotes, and
/// places in code (between bytes, outside strings, comments, characters and escapes).
#[derive(Default)]
pub struct Places {
    pub open: Vec<usize>,
    pub close: Vec<usize>,
    pub quote: Vec<usize>,
    pub code: Vec<usize>,
}

/// Lexes one form's bytes `text` (starting in code) into [`Places`].
pub fn places(text: &[u8]) -> Places {
    let mut p = Places::default();
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'(' => p.open.push(i),
            b')' => p.close.push(i),
            b'"' => {
                p.quote.push(i);
                i = skip_until_unescaped(text, i + 1, b'"');
                if i < text.len() {
                    p.quote.push(i);
                }
            }
            b'|' => i = skip_until_unescaped(text, i + 1, b'|'),
            b';' => {
                while i < text.len() && text[i] != b'\n' {
                    i += 1;
                }
            }
            b'\\' => i += 1,
            b'#' if text.get(i + 1) == Some(&b'\\') => i += 2,
            b'#' if text.get(i + 1) == Some(&b'|') => i = skip_block_comment(text, i + 2),
            c if c.is_ascii_whitespace() => p.code.push(i),
            _ => {}
        }
        i += 1;
    }
    p
}

fn skip_until_unescaped(text: &[u8], mut i: usize, end: u8) -> usize {
    while i < text.len() && text[i] != end {
        i += if text[i] == b'\\' { 2 } else { 1 };
    }
    i
}

fn skip_block_comment(text: &[u8], mut i: usize) -> usize {
    let mut depth = 1;
    while i + 1 < text.len() {
        match (text[i], text[i + 1]) {
            (b'|', b'#') => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
                i += 2;
            }
            (b'#', b'|') => {
                depth += 1;
                i += 2;
            }
            _ => i += 1,
        }
    }
    text.len()
}

/// One edited file: its bytes and the damaged form's lines.
pub struct Edit {
    pub bytes: Vec<u8>,
    pub first_line: usize,
    pub last_line: usize,
    /// The damaged form's byte range in the original file.
    pub start: usize,
    pub end: usize,
}

/// Makes one edit of `kind` in a random top-level list form of `bytes`, or `None` when
/// no form has a place for it. No edit adds or removes a newline, so every other form
/// keeps its line numbers.
pub fn edit(bytes: &[u8], items: &[OutlineItem], kind: Kind, rng: &mut Rng) -> Option<Edit> {
    let forms: Vec<&OutlineItem> = items
        .iter()
        .filter(|it| it.kind == ItemKind::Form && bytes[it.start] == b'(')
        .collect();
    for _ in 0..8 {
        let form = forms.get(rng.below(forms.len()))?;
        let text = &bytes[form.start..form.end];
        let p = places(text);
        let choices = match kind {
            Kind::DeleteClose => &p.close,
            Kind::DeleteOpen => &p.open,
            Kind::DeleteQuote => &p.quote,
            Kind::InsertQuote | Kind::OpenBlockComment => &p.code,
        };
        if choices.is_empty() {
            continue;
        }
        let at = form.start + choices[rng.below(choices.len())];
        let mut out = bytes.to_vec();
        match kind {
            Kind::DeleteClose | Kind::DeleteOpen | Kind::DeleteQuote => {
                out.remove(at);
            }
            Kind::InsertQuote => out.insert(at, b'"'),
            Kind::OpenBlockComment => {
                out.splice(at..at, *b"#|");
            }
        }
        return Some(Edit {
            bytes: out,
            first_line: form.start_line,
            last_line: form.end_line,
            start: form.start,
            end: form.end,
        });
    }
    None
}

/// Every named form (top-level and container children) as (first line, name), except
/// those inside `[skip_start, skip_end)`.
pub fn named(items: &[OutlineItem], skip_start: usize, skip_end: usize) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut stack: Vec<&OutlineItem> = items.iter().collect();
    while let Some(item) = stack.pop() {
        let Some(form) = &item.form else { continue };
        if let Some(name) = &form.name {
            if item.end <= skip_start || item.start >= skip_end {
                out.push((item.start_line, name.to_string()));
            }
        }
        stack.extend(form.children.iter());
    }
    out
}

/// What one edit left visible.
#[derive(Default, Clone, Copy)]
pub struct Outcome {
    /// Named forms of the original outside the damaged one, and how many of them the
    /// edited file's outline still shows with the same name on the same line.
    pub others: usize,
    pub others_kept: usize,
    /// Diagnostics of the edited file, and those that name a line of the damaged form.
    pub diagnostics: usize,
    pub diagnostics_inside: usize,
}

/// Applies `edit` and measures it against the original's named forms.
pub fn outcome(grammar: &Grammar, original: &[OutlineItem], edit: &Edit) -> Outcome {
    let others = named(original, edit.start, edit.end);
    let edited = outline_bytes(&edit.bytes, grammar);
    let shown: HashSet<(usize, String)> = named(&edited.items, 0, 0).into_iter().collect();
    let inside = edited
        .diagnostics
        .iter()
        .filter(|d| (edit.first_line..=edit.last_line).contains(&d.line))
        .count();
    Outcome {
        others: others.len(),
        others_kept: others.iter().filter(|n| shown.contains(*n)).count(),
        diagnostics: edited.diagnostics.len() + edited.omitted_diagnostics,
        diagnostics_inside: inside,
    }
}

/// Totals per kind of edit.
#[derive(Default, Clone, Copy)]
pub struct Totals {
    pub edits: usize,
    pub sum: Outcome,
    /// Edits after which every other named form is still shown.
    pub all_kept: usize,
}

impl Totals {
    pub fn add(&mut self, o: Outcome) {
        self.edits += 1;
        self.sum.others += o.others;
        self.sum.others_kept += o.others_kept;
        self.sum.diagnostics += o.diagnostics;
        self.sum.diagnostics_inside += o.diagnostics_inside;
        self.all_kept += usize::from(o.others_kept == o.others);
    }
    /// The share of other named forms still shown, in percent.
    pub fn kept_percent(&self) -> f64 {
        percent(self.sum.others_kept, self.sum.others)
    }
    /// The share of diagnostics naming a line inside the damaged form, in percent.
    pub fn inside_percent(&self) -> f64 {
        percent(self.sum.diagnostics_inside, self.sum.diagnostics)
    }
}

pub fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        100.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// Runs `per_file` edits of every kind on each file (skipping files that already have
/// diagnostics: their damage would be counted as the edit's). Returns totals per kind.
pub fn run(files: &[(PathBuf, Vec<u8>)], per_file: usize, seed: u64) -> Vec<(Kind, Totals)> {
    let grammar = Grammar::builtin();
    let mut totals: Vec<(Kind, Totals)> =
        Kind::ALL.iter().map(|&k| (k, Totals::default())).collect();
    for (index, (_, bytes)) in files.iter().enumerate() {
        let original = outline_bytes(bytes, &grammar);
        if !original.diagnostics.is_empty() {
            continue;
        }
        for (k, (kind, t)) in totals.iter_mut().enumerate() {
            let mut rng = Rng::new(seed ^ ((index as u64) << 8) ^ k as u64);
            for _ in 0..per_file {
                if let Some(e) = edit(bytes, &original.items, *kind, &mut rng) {
                    t.add(outcome(&grammar, &original.items, &e));
                }
            }
        }
    }
    totals
}

/// Every `.lisp` file under `roots`, sorted, with its bytes (files over 1 MiB left out,
/// as the tool's default size cap would).
pub fn corpus(roots: &[&Path]) -> Vec<(PathBuf, Vec<u8>)> {
    let mut paths = Vec::new();
    let mut stack: Vec<PathBuf> = roots.iter().map(|r| r.to_path_buf()).collect();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                Ok(t) if t.is_file() && path.extension().is_some_and(|e| e == "lisp") => {
                    paths.push(path)
                }
                _ => {}
            }
        }
    }
    paths.sort();
    paths
        .into_iter()
        .filter_map(|p| std::fs::read(&p).ok().map(|b| (p, b)))
        .filter(|(_, b)| b.len() <= 1 << 20)
        .collect()
}

/// The Debian corpus: the `cl-*` libraries and SBCL's sources.
pub const DEBIAN_ROOTS: [&str; 2] = ["/usr/share/common-lisp/source", "/usr/share/sbcl-source"];

/// Prints up to `max` edits that lost other definitions or reported outside the damaged
/// form, for looking into (`cargo bench --bench mutation -- --show N`).
pub fn show_losses(files: &[(PathBuf, Vec<u8>)], per_file: usize, seed: u64, max: usize) {
    let grammar = Grammar::builtin();
    let mut shown = 0;
    for (index, (path, bytes)) in files.iter().enumerate() {
        let original = outline_bytes(bytes, &grammar);
        if !original.diagnostics.is_empty() {
            continue;
        }
        for (k, kind) in Kind::ALL.iter().enumerate() {
            let mut rng = Rng::new(seed ^ ((index as u64) << 8) ^ k as u64);
            for _ in 0..per_file {
                let Some(e) = edit(bytes, &original.items, *kind, &mut rng) else {
                    continue;
                };
                let o = outcome(&grammar, &original.items, &e);
                if o.others_kept == o.others && o.diagnostics_inside == o.diagnostics {
                    continue;
                }
                let edited = outline_bytes(&e.bytes, &grammar);
                println!(
                    "== {} {} lines {}-{}: kept {}/{}, inside {}/{}",
                    path.display(),
                    kind.label(),
                    e.first_line,
                    e.last_line,
                    o.others_kept,
                    o.others,
                    o.diagnostics_inside,
                    o.diagnostics
                );
                for d in edited.diagnostics.iter().take(6) {
                    println!("   {}", d.message);
                }
                shown += 1;
                if shown >= max {
                    return;
                }
            }
        }
    }
}
