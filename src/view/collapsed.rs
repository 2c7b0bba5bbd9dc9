//! The collapsed view (SPEC §5.1) with matching forms expanded verbatim (§5.2).
//!
//! The file is rendered as a sequence of entries, each starting at a source line: a form
//! (with the comment block above it, for `comments=preceding`), a shown comment, a note.
//! Paging works on entries: `offset` skips those that start before it, `limit` stops
//! before the first entry that does not fit, and the footer names the offset to continue.

use super::lines::{join, number_width, Line};
use super::{Comments, Mode, View, ViewOptions};
use crate::outline::{Form, Outline, OutlineItem};
use crate::scan::{Diagnostic, ItemKind};
use crate::source::Source;

/// Something shown, starting at 0-based source line `line`.
struct Entry {
    line: usize,
    lines: Vec<Line>,
    /// Forms shown verbatim in this entry.
    expanded: usize,
}

pub(crate) fn render(source: &Source, outline: &Outline, options: &ViewOptions) -> View {
    let ctx = Context { source, options };
    let total_forms = outline
        .items
        .iter()
        .filter(|i| i.kind == ItemKind::Form)
        .count();
    let entries = ctx.entries(outline);

    let mut lines: Vec<Line> = Vec::new();
    for (name, pattern) in [
        ("name_pattern", &options.name_pattern),
        ("content_pattern", &options.content_pattern),
    ] {
        if let Some(p) = pattern {
            if !ctx.any_match(outline, name == "name_pattern") {
                let what = if name == "name_pattern" {
                    "definition"
                } else {
                    "form"
                };
                lines.push(Line::Note(format!(
                    "[No {what} matched {name} {}.]",
                    p.quoted()
                )));
            }
        }
    }

    let mut view = View {
        mode: Mode::LispCollapsed,
        content: String::new(),
        total_forms,
        expanded_forms: 0,
        truncated: false,
        next_offset: None,
    };
    // Moved, not cloned: every shown line is built once.
    let visible: Vec<Entry> = entries
        .into_iter()
        .filter(|e| e.line >= options.offset)
        .collect();
    let mut visible = visible;
    if visible.is_empty() && options.offset > 0 {
        let total = source.line_count();
        lines.push(Line::Note(if options.offset >= total {
            format!(
                "[Offset {} is past end of file ({total} lines).]",
                options.offset
            )
        } else {
            format!(
                "[No top-level form starts at or after line {} ({total} lines).]",
                options.offset + 1
            )
        }));
    }
    page(
        &mut visible,
        options.limit,
        source.line_count(),
        &mut lines,
        &mut view,
    );
    view.content = join(&lines, number_width(source.line_count()));
    view
}

/// Fills a page from `visible` (entries from the offset on). Entries starting on the same
/// source line are one group, never split across pages, so every page makes progress and
/// `next_offset` (a line) reaches every entry. A group that does not fit in what is left
/// of the page ends the page; one that does not fit in a whole page is shown cut: its
/// lines up to `limit`, plus the first line of each further entry of the group.
fn page(
    visible: &mut [Entry],
    limit: usize,
    total_lines: usize,
    lines: &mut Vec<Line>,
    view: &mut View,
) {
    let mut used = 0usize;
    let mut k = 0;
    while k < visible.len() {
        let line = visible[k].line;
        let end = k + visible[k..].iter().take_while(|e| e.line == line).count();
        let next = visible.get(end).map(|e| e.line);
        let first_line = visible[0].line;
        let group = &mut visible[k..end];
        let cost: usize = group.iter().map(Entry::cost).sum();
        if used.saturating_add(cost) <= limit {
            used += cost;
            for entry in group {
                view.expanded_forms += entry.expanded;
                lines.append(&mut entry.lines);
            }
            k = end;
            continue;
        }
        view.truncated = true;
        if used > 0 {
            view.next_offset = Some(line);
            lines.push(Line::Note(format!(
                "[Showing forms from line {} to line {line} of {total_lines}. Use offset={line} to continue.]",
                first_line + 1,
            )));
            return;
        }
        view.next_offset = next;
        let several = group.len() > 1;
        let mut budget = limit;
        for entry in group {
            view.expanded_forms += entry.expanded;
            cut_entry(entry, &mut budget, lines);
        }
        let what = if several { "Forms" } else { "Form" };
        let it = if several { "them" } else { "it" };
        let read = format!(
            "[{what} at line {} cut after {limit} lines. Read {it} whole with collapsed=false offset={line} limit=...",
            line + 1
        );
        lines.push(Line::Note(match next {
            Some(n) => format!("{read}, or use offset={n} to continue.]"),
            None => format!("{read}.]"),
        }));
        return;
    }
}

/// Appends an entry's lines while `budget` lasts; its first shown line always (so every
/// entry of a group cut by the page still shows where it is).
fn cut_entry(entry: &Entry, budget: &mut usize, lines: &mut Vec<Line>) {
    let mut first = true;
    for line in &entry.lines {
        if !matches!(line, Line::Note(_)) {
            if *budget == 0 && !first {
                break;
            }
            first = false;
            *budget = budget.saturating_sub(1);
        }
        lines.push(line.clone());
    }
}

impl Entry {
    /// Lines the entry takes from the page's `limit` (notes are free).
    fn cost(&self) -> usize {
        self.lines
            .iter()
            .filter(|l| !matches!(l, Line::Note(_)))
            .count()
    }
}

struct Context<'a> {
    source: &'a Source<'a>,
    options: &'a ViewOptions,
}

impl Context<'_> {
    fn entries(&self, outline: &Outline) -> Vec<Entry> {
        let comments = self.options.comments;
        let diagnostics = Diagnostics::new(outline);
        let mut entries: Vec<Entry> = Vec::new();
        // The own-line `;` comment block just seen: (first item index, last item index).
        let mut block: Option<(usize, usize)> = None;
        let items = &outline.items;
        for (k, item) in items.iter().enumerate() {
            let line = item.start_line - 1;
            match item.kind {
                ItemKind::Comment => {
                    let own_line = self.starts_line(item.start);
                    let is_line_comment = self.source.bytes()[item.start] == b';';
                    if own_line && is_line_comment {
                        block = match block {
                            Some((first, last)) if items[last].end_line + 1 == item.start_line => {
                                Some((first, k))
                            }
                            _ => {
                                if comments == Comments::Headers
                                    && self.text(item).starts_with(";;;")
                                {
                                    entries.push(Entry {
                                        line,
                                        lines: vec![Line::numbered(
                                            item.start_line,
                                            self.text(item),
                                        )],
                                        expanded: 0,
                                    });
                                }
                                Some((k, k))
                            }
                        };
                    } else {
                        block = None;
                    }
                    let mut lines = if comments == Comments::All {
                        self.verbatim(item, 0)
                    } else {
                        Vec::new()
                    };
                    // An unterminated `#|` hides the rest of the file: always say so.
                    lines.extend(
                        diagnostics
                            .within(item)
                            .map(|d| Line::Note(format!("[{}]", d.message))),
                    );
                    if !lines.is_empty() {
                        entries.push(Entry {
                            line,
                            lines,
                            expanded: 0,
                        });
                    }
                }
                ItemKind::Form => {
                    let mut lines = Vec::new();
                    if comments == Comments::Preceding {
                        if let Some((first, last)) = block {
                            if items[last].end_line + 1 == item.start_line {
                                for c in &items[first..=last] {
                                    lines.push(Line::numbered(c.start_line, self.text(c)));
                                }
                            }
                        }
                    }
                    block = None;
                    let mut expanded = 0;
                    lines.extend(self.form_lines(item, 0, &mut expanded));
                    for d in diagnostics.within(item) {
                        lines.push(Line::Note(format!("[{}]", d.message)));
                    }
                    entries.push(Entry {
                        line,
                        lines,
                        expanded,
                    });
                }
                ItemKind::Shebang => entries.push(Entry {
                    line,
                    lines: vec![Line::numbered(item.start_line, self.text(item))],
                    expanded: 0,
                }),
                ItemKind::Stray => {
                    block = None;
                    let lines = diagnostics
                        .within(item)
                        .map(|d| Line::Note(format!("[{}]", d.message)))
                        .collect();
                    entries.push(Entry {
                        line,
                        lines,
                        expanded: 0,
                    });
                }
                ItemKind::Whitespace => {}
            }
        }
        entries
    }

    /// The lines of a form: collapsed, verbatim, or a container with its children.
    fn form_lines(&self, item: &OutlineItem, depth: usize, expanded: &mut usize) -> Vec<Line> {
        let Some(form) = &item.form else {
            return self.verbatim(item, depth);
        };
        if !form.children.is_empty() {
            let before = *expanded;
            let mut children: Vec<Line> = Vec::new();
            for child in &form.children {
                children.extend(self.form_lines(child, depth + 1, expanded));
            }
            let child_matched = *expanded > before;
            if !child_matched && self.content_matches(item) {
                *expanded = before + 1;
                return self.verbatim(item, depth);
            }
            let signature = form.signature();
            let head = signature
                .strip_suffix(" ...)")
                .or_else(|| signature.strip_suffix(')'))
                .unwrap_or(signature);
            let mut text = indent(depth);
            push_with_conditionals(&mut text, form, head);
            let mut lines = vec![Line::numbered(item.start_line, text)];
            lines.extend(children);
            if let Some(Line::Numbered { text, .. }) = lines.last_mut() {
                text.push(')');
            }
            return lines;
        }
        if self.name_matches(form) || self.content_matches(item) {
            *expanded += 1;
            return self.verbatim(item, depth);
        }
        let mut text = indent(depth);
        push_with_conditionals(&mut text, form, form.signature());
        if let Some(doc) = form.doc() {
            text.push_str(" ;; ");
            text.push_str(doc);
        }
        vec![Line::numbered(item.start_line, text)]
    }

    fn name_matches(&self, form: &Form) -> bool {
        let Some(p) = &self.options.name_pattern else {
            return false;
        };
        form.name.as_deref().is_some_and(|n| p.is_match(n))
            || form.method_key().is_some_and(|k| p.is_match(&k))
    }

    fn content_matches(&self, item: &OutlineItem) -> bool {
        let Some(p) = &self.options.content_pattern else {
            return false;
        };
        p.is_match(&self.source.text(item.start, item.end))
    }

    /// Whether any form (or child) matches the name (or content) pattern.
    fn any_match(&self, outline: &Outline, by_name: bool) -> bool {
        let mut stack: Vec<&OutlineItem> = outline.items.iter().collect();
        while let Some(item) = stack.pop() {
            if let Some(form) = &item.form {
                if (by_name && self.name_matches(form)) || (!by_name && self.content_matches(item))
                {
                    return true;
                }
                stack.extend(form.children.iter());
            }
        }
        false
    }

    /// The item's source lines, each with its number. The first line keeps the text
    /// before the item when that is only indentation, else gets the view's indentation.
    fn verbatim(&self, item: &OutlineItem, depth: usize) -> Vec<Line> {
        let bytes = self.source.bytes();
        let lead = &bytes[self.line_start(item.start)..item.start];
        let prefix = if lead.iter().all(|c| *c == b' ' || *c == b'\t') {
            String::from_utf8_lossy(lead).into_owned()
        } else {
            indent(depth)
        };
        let text = self.source.text(item.start, item.end);
        // An item that runs to the end of the file may end with its last newline.
        let text = text.strip_suffix('\n').unwrap_or(&text);
        text.split('\n')
            .enumerate()
            .map(|(k, line)| {
                let line = line.strip_suffix('\r').unwrap_or(line);
                let line = if k == 0 {
                    format!("{prefix}{line}")
                } else {
                    line.to_string()
                };
                Line::numbered(item.start_line + k, line)
            })
            .collect()
    }

    fn text(&self, item: &OutlineItem) -> String {
        self.source
            .text(item.start, item.end)
            .trim_end_matches('\r')
            .to_string()
    }

    fn starts_line(&self, at: usize) -> bool {
        self.source.bytes()[self.line_start(at)..at]
            .iter()
            .all(|&c| c == b' ' || c == b'\t' || c == 0xBF || c == 0xBB || c == 0xEF)
    }

    /// The byte after the last newline before `at` (0 on the first line, BOM included).
    /// From the line table, not a scan back: many items on one long line stay linear.
    fn line_start(&self, at: usize) -> usize {
        match self.source.line_of(at) {
            0 => 0,
            line => self.source.line_start(line),
        }
    }
}

/// The outline's diagnostics by offset, so that those of an item are found by binary
/// search (a scan of all of them per item is quadratic on a file of many broken forms).
struct Diagnostics<'o> {
    by_offset: Vec<&'o Diagnostic>,
}

impl<'o> Diagnostics<'o> {
    fn new(outline: &'o Outline) -> Diagnostics<'o> {
        let mut by_offset: Vec<&Diagnostic> = outline.diagnostics.iter().collect();
        // Stable: diagnostics at one offset keep their order.
        by_offset.sort_by_key(|d| d.offset);
        Diagnostics { by_offset }
    }

    /// Those at an offset inside the item, in order.
    fn within(&self, item: &OutlineItem) -> impl Iterator<Item = &'o Diagnostic> + '_ {
        let from = self.by_offset.partition_point(|d| d.offset < item.start);
        let to = from + self.by_offset[from..].partition_point(|d| d.offset < item.end);
        self.by_offset[from..to].iter().copied()
    }
}

/// Appends `text` with the form's reader conditionals in front (`#+sbcl (defun ...)`).
fn push_with_conditionals(out: &mut String, form: &Form, text: &str) {
    for c in form.conditionals() {
        out.push_str(c);
        out.push(' ');
    }
    out.push_str(text);
}

fn indent(depth: usize) -> String {
    "  ".repeat(depth)
}
