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
                    "[No {what} matched {name} {:?}.]",
                    p.text
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
    let mut visible: Vec<Entry> = entries
        .into_iter()
        .filter(|e| e.line >= options.offset)
        .collect();
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
    let mut used = 0usize;
    for k in 0..visible.len() {
        let entry = &visible[k];
        let cost = entry
            .lines
            .iter()
            .filter(|l| !matches!(l, Line::Note(_)))
            .count();
        if used + cost > options.limit {
            view.truncated = true;
            if used == 0 {
                // One entry larger than the whole budget: show its start, continue after it.
                view.expanded_forms += entry.expanded;
                let mut budget = options.limit;
                for line in &entry.lines {
                    if !matches!(line, Line::Note(_)) {
                        if budget == 0 {
                            break;
                        }
                        budget -= 1;
                    }
                    lines.push(line.clone());
                }
                let next = visible.get(k + 1).map(|e| e.line);
                view.next_offset = next;
                lines.push(Line::Note(match next {
                    Some(n) => format!(
                        "[Form at line {} cut after {} lines. Read it whole with collapsed=false offset={} limit=..., or use offset={n} to continue.]",
                        entry.line + 1,
                        options.limit,
                        entry.line
                    ),
                    None => format!(
                        "[Form at line {} cut after {} lines. Read it whole with collapsed=false offset={} limit=....]",
                        entry.line + 1,
                        options.limit,
                        entry.line
                    ),
                }));
            } else {
                view.next_offset = Some(entry.line);
                let first = visible[0].line + 1;
                lines.push(Line::Note(format!(
                    "[Showing forms from line {first} to line {} of {}. Use offset={} to continue.]",
                    entry.line,
                    source.line_count(),
                    entry.line
                )));
            }
            break;
        }
        used += cost;
        view.expanded_forms += entry.expanded;
        lines.append(&mut visible[k].lines);
    }
    view.content = join(&lines, number_width(source.line_count()));
    view
}

struct Context<'a> {
    source: &'a Source<'a>,
    options: &'a ViewOptions,
}

impl Context<'_> {
    fn entries(&self, outline: &Outline) -> Vec<Entry> {
        let comments = self.options.comments;
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
                        diagnostics_in(outline, item)
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
                    for d in diagnostics_in(outline, item) {
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
                    let lines = diagnostics_in(outline, item)
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
        form.name.as_deref().is_some_and(|n| p.regex.is_match(n))
            || form.method_key().is_some_and(|k| p.regex.is_match(&k))
    }

    fn content_matches(&self, item: &OutlineItem) -> bool {
        let Some(p) = &self.options.content_pattern else {
            return false;
        };
        p.regex.is_match(&self.source.text(item.start, item.end))
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
        let line_start = bytes[..item.start]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |p| p + 1);
        let lead = &bytes[line_start..item.start];
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
        let bytes = self.source.bytes();
        bytes[..at]
            .iter()
            .rev()
            .take_while(|&&c| c != b'\n')
            .all(|&c| c == b' ' || c == b'\t' || c == 0xBF || c == 0xBB || c == 0xEF)
    }
}

fn diagnostics_in<'o>(
    outline: &'o Outline,
    item: &OutlineItem,
) -> impl Iterator<Item = &'o Diagnostic> {
    let (start, end) = (item.start, item.end);
    outline
        .diagnostics
        .iter()
        .filter(move |d| d.offset >= start && d.offset < end)
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
