//! The project map as text (docs/project.md#the-map): pure, from the views of the files
//! (already rendered, in map order) to the page shown.
//!
//! Each file is a header line `==> PATH <==` followed by the lines of its collapsed view as
//! the single-file view prints them, a blank line between files. At the last step
//! ([`Step::Counts`]) a file is one line, `N PATH` (N definitions). The map is paged by
//! map lines: `offset` is the 0-based index of a line of the whole map, `limit` the most
//! lines shown; a page that starts inside a file repeats its header, marked
//! `(continued)`, and that line is not counted. Notes in `[brackets]` follow the page.
//!
//! This module does not read, render views or choose the step (the caller does, with
//! [`fits`]).

use serde::{Deserialize, Serialize};

/// How much of each file the map shows: the first step whose whole map fits the budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    /// The collapsed view of every file, docstrings included.
    Full,
    /// Signatures without docstrings.
    NoDocstrings,
    /// `OPERATOR NAME` per definition.
    Names,
    /// One line per file: its number of definitions.
    Counts,
    /// Patterns: only the forms they match, expanded.
    Matches,
}

impl Step {
    pub fn as_str(self) -> &'static str {
        match self {
            Step::Full => "full",
            Step::NoDocstrings => "no-docstrings",
            Step::Names => "names",
            Step::Counts => "counts",
            Step::Matches => "matches",
        }
    }
}

/// A file of the map, its view rendered at the step.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Section {
    /// As the guard shows it: relative to the first root.
    pub display_path: String,
    /// The view's text (lines ending in `\n`).
    pub content: String,
    /// Definitions listed ([`Step::Counts`]).
    pub definitions: usize,
    /// Top-level forms in the file.
    pub forms: usize,
    /// Lines of the view not kept in `content` (a file outside the page): counted, never
    /// shown.
    pub elided: usize,
}

/// The characters a map may use for each line of `limit` (the token-like budget): at the
/// default limit of 2,000 lines, 80,000 characters.
pub const CHARS_PER_LIMIT_LINE: usize = 40;

/// A page of the map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page {
    pub content: String,
    /// Lines of the whole map at this step.
    pub total_lines: usize,
    /// The offset that continues the page, when the map goes on.
    pub next_offset: Option<usize>,
    /// Map lines of each file (header included), in map order.
    pub file_lines: Vec<usize>,
    /// Whether a line of each file is on the page: the files the page shows.
    pub on_page: Vec<bool>,
}

/// Lines and characters of the whole map of `sections` at `step`.
pub fn size(sections: &[Section], step: Step) -> (usize, usize) {
    let (mut lines, mut chars) = (0, 0);
    each_line(sections, step, &mut |_, line| {
        lines += 1;
        chars += 1 + match line {
            Line::Header(text) => text.chars().count(),
            Line::Text(text) => text.chars().count(),
            Line::Elided => 0,
        };
    });
    (lines, chars)
}

/// Whether the whole map fits `limit` lines and `limit` x [`CHARS_PER_LIMIT_LINE`]
/// characters.
pub fn fits(sections: &[Section], step: Step, limit: usize) -> bool {
    let (lines, chars) = size(sections, step);
    lines <= limit && chars <= limit.saturating_mul(CHARS_PER_LIMIT_LINE)
}

/// A line of the map: its file, whether it is the file's header, its text.
enum Line<'a> {
    Header(String),
    Text(&'a str),
    /// A line of a section whose text was not kept (outside the page).
    Elided,
}

/// The page `offset..offset + limit` of the map, then `notes` (one per line, each in
/// brackets). Lines outside the page are counted, not made.
pub fn render(
    sections: &[Section],
    step: Step,
    (offset, limit): (usize, usize),
    hints: crate::hint::HintStyle,
    notes: &[String],
) -> Page {
    let end = offset.saturating_add(limit);
    let mut file_lines = vec![0; sections.len()];
    let mut on_page = vec![false; sections.len()];
    let mut content = String::new();
    let mut index = 0;
    each_line(sections, step, &mut |file, line| {
        file_lines[file] += 1;
        if (offset..end).contains(&index) {
            on_page[file] |= !matches!(line, Line::Text(""));
            if index == offset {
                continued(&mut content, sections, file, &line);
            }
            match line {
                Line::Header(text) => content.push_str(&text),
                Line::Text(text) => content.push_str(text),
                Line::Elided => {}
            }
            content.push('\n');
        }
        index += 1;
    });
    let total = index;
    let next_offset = (end < total).then_some(end);
    if let Some(next) = next_offset {
        content.push_str(&format!(
            "[Showing map lines {} to {next} of {total}. Use {} to continue.]\n",
            offset + 1,
            hints.render(&crate::hint::Hint::Offset(next))
        ));
    } else if offset >= total && total > 0 {
        content.push_str(&format!(
            "[Offset {offset} is past the end of the map ({total} lines).]\n"
        ));
    }
    for note in notes {
        content.push_str(note);
        content.push('\n');
    }
    Page {
        content,
        total_lines: total,
        next_offset,
        file_lines,
        on_page,
    }
}

/// A page that starts inside a file repeats its header (not a map line).
fn continued(content: &mut String, sections: &[Section], file: usize, line: &Line) {
    if matches!(line, Line::Text(t) if !t.is_empty()) {
        if let Some(section) = sections.get(file) {
            content.push_str(&format!("==> {} <== (continued)\n", section.display_path));
        }
    }
}

/// Calls `f` with every line of the map at `step` and the index of its file.
fn each_line<'s>(sections: &'s [Section], step: Step, f: &mut dyn FnMut(usize, Line<'s>)) {
    for (file, section) in sections.iter().enumerate() {
        if step == Step::Counts {
            // One line per file, in load order: how many definitions it holds, then its
            // path, as `wc -l` prints counts (the cheapest line an agent can read).
            let header = format!("{} {}", section.definitions, section.display_path);
            f(file, Line::Header(header));
            continue;
        }
        if file > 0 {
            // The blank line between files goes with the file before.
            f(file - 1, Line::Text(""));
        }
        f(
            file,
            Line::Header(format!("==> {} <==", section.display_path)),
        );
        for text in section.content.lines() {
            f(file, Line::Text(text));
        }
        for _ in 0..section.elided {
            f(file, Line::Elided);
        }
    }
}

/// A view's lines without the per-file notes a map says once for all files (what `kinds`
/// and `features` hid, a pattern that matched nothing in this file).
pub fn strip_file_notes(content: &str) -> String {
    let per_file = [
        "[kinds: ",
        "[features: ",
        "[No definition matched ",
        "[No form matched ",
    ];
    let mut out = String::with_capacity(content.len());
    for line in content.lines() {
        if !per_file.iter().any(|p| line.starts_with(p)) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Definitions a view lists: its numbered lines.
pub fn numbered_lines(content: &str) -> usize {
    content
        .lines()
        .filter(|l| !l.starts_with('[') && !l.is_empty())
        .count()
}

/// The note listing files (at most `shown` of them by name).
pub fn list_note(what: &str, paths: &[String], shown: usize) -> Option<String> {
    if paths.is_empty() {
        return None;
    }
    let mut text = format!("[{what}: ");
    text.push_str(
        &paths
            .iter()
            .take(shown)
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", "),
    );
    if paths.len() > shown {
        text.push_str(&format!(", and {} more", paths.len() - shown));
    }
    text.push_str(".]");
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(path: &str, content: &str, definitions: usize) -> Section {
        Section {
            display_path: path.into(),
            content: content.into(),
            definitions,
            forms: 0,
            elided: 0,
        }
    }

    #[test]
    fn headers_blank_lines_and_pages_across_files() {
        let sections = [
            section("a.lisp", "1: (defun a ())\n2: (defun b ())\n", 2),
            section("b.lisp", "1: (defvar *x* 1)\n", 1),
        ];
        let page = render(&sections, Step::Full, (0, 10), Default::default(), &[]);
        assert_eq!(
            page.content,
            "==> a.lisp <==\n1: (defun a ())\n2: (defun b ())\n\n==> b.lisp <==\n1: (defvar *x* 1)\n"
        );
        assert_eq!(page.total_lines, 6);
        assert_eq!(page.file_lines, [4, 2]);
        let first = render(&sections, Step::Full, (0, 2), Default::default(), &[]);
        assert!(first
            .content
            .ends_with("[Showing map lines 1 to 2 of 6. Use offset=2 to continue.]\n"));
        assert_eq!(first.next_offset, Some(2));
        let second = render(
            &sections,
            Step::Full,
            (2, 2),
            Default::default(),
            &["[a note.]".into()],
        );
        assert_eq!(
            second.content,
            "==> a.lisp <== (continued)\n2: (defun b ())\n\n[Showing map lines 3 to 4 of 6. Use offset=4 to continue.]\n[a note.]\n"
        );
        let counts = render(&sections, Step::Counts, (0, 10), Default::default(), &[]);
        assert_eq!(counts.content, "2 a.lisp\n1 b.lisp\n");
        assert!(fits(&sections, Step::Full, 6));
        assert!(!fits(&sections, Step::Full, 5));
        let past = render(&sections, Step::Full, (9, 2), Default::default(), &[]);
        assert_eq!(
            past.content,
            "[Offset 9 is past the end of the map (6 lines).]\n"
        );
    }
}
