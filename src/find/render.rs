//! Paging and the text view (docs/find.md#paging).
//!
//! The entries (definitions, or forms with their uses) are in scope order: file by file
//! in walk order (sorted paths), each file's entries by line. `offset` is the index of
//! the first entry shown; a page then takes entries while their lines fit in `limit`
//! lines of `content` (a file header, an entry's line, its body's lines, its use lines);
//! the first entry of a page is always shown whole. The footer lines are not counted.

use super::{
    Definition, FindMode, FindRequest, FindResult, Reference, Search, SkippedFile, MAX_COLLECTED,
};
use std::collections::HashSet;
use std::fmt::Write;

/// Files named in the note on skipped files; the others are counted.
const SKIPPED_SHOWN: usize = 5;

/// Everything the files gave, in scope order.
#[derive(Default)]
pub(crate) struct Gathered {
    pub definitions: Vec<Definition>,
    pub references: Vec<Reference>,
    pub searched: usize,
    pub skipped: Vec<SkippedFile>,
    pub notes: Vec<String>,
    pub over_budget: bool,
}

pub(crate) fn page(
    path: String,
    search: &Search,
    request: &FindRequest,
    gathered: Gathered,
) -> FindResult {
    let mode = search.mode();
    let (total, files) = match mode {
        FindMode::Definitions => (
            gathered.definitions.len(),
            distinct(gathered.definitions.iter().map(|d| d.file.as_str())),
        ),
        FindMode::References => (
            gathered.references.len(),
            distinct(gathered.references.iter().map(|r| r.file.as_str())),
        ),
    };
    let total_uses: usize = gathered.references.iter().map(|r| r.uses.len()).sum();
    let offset = request.offset.min(total);
    let mut content = String::new();
    let mut lines = 0usize;
    let mut current_file: Option<String> = None;
    let mut shown = 0usize;
    let definitions: Option<Vec<Definition>>;
    let references: Option<Vec<Reference>>;
    match mode {
        FindMode::Definitions => {
            let mut page = Vec::new();
            for d in gathered.definitions.into_iter().skip(offset) {
                let text = definition_text(&d);
                if !fits(
                    &mut lines,
                    &mut current_file,
                    &d.file,
                    &text,
                    shown,
                    request.limit,
                ) {
                    break;
                }
                push(&mut content, &mut current_file, &d.file, &text);
                shown += 1;
                page.push(d);
            }
            definitions = Some(page);
            references = None;
        }
        FindMode::References => {
            let mut page = Vec::new();
            for r in gathered.references.into_iter().skip(offset) {
                let text = reference_text(&r);
                if !fits(
                    &mut lines,
                    &mut current_file,
                    &r.file,
                    &text,
                    shown,
                    request.limit,
                ) {
                    break;
                }
                push(&mut content, &mut current_file, &r.file, &text);
                shown += 1;
                page.push(r);
            }
            definitions = None;
            references = Some(page);
        }
    }
    let next = offset + shown;
    let truncated = next < total;
    let what = match (mode, total) {
        (FindMode::Definitions, 1) => "definition",
        (FindMode::Definitions, _) => "definitions",
        (FindMode::References, 1) => "form using",
        (FindMode::References, _) => "forms using",
    };
    let mut target = target_text(request);
    if mode == FindMode::References {
        let _ = write!(target, " ({total_uses} use{})", plural(total_uses));
    }
    let _ = writeln!(
        content,
        "[{total} {what} {target} in {files} file{}; {} file{} searched]",
        plural(files),
        gathered.searched,
        plural(gathered.searched)
    );
    if truncated {
        let _ = writeln!(
            content,
            "[entries {}-{} of {total} shown; continue with offset {next}]",
            offset + 1,
            next
        );
    } else if request.offset > 0 && shown == 0 && total > 0 {
        let _ = writeln!(
            content,
            "[offset {} is past the last entry ({total}); use an offset below {total}]",
            request.offset
        );
    }
    for note in &gathered.notes {
        content.push_str(note);
        content.push('\n');
    }
    if gathered.over_budget {
        let _ = writeln!(
            content,
            "[the search stopped after collecting {MAX_COLLECTED} entries and uses: files after that were not searched; search a smaller path or use kinds]"
        );
    }
    if !gathered.skipped.is_empty() {
        let names: Vec<String> = gathered
            .skipped
            .iter()
            .take(SKIPPED_SHOWN)
            .map(|s| format!("{} ({})", s.file, s.code))
            .collect();
        let more = gathered.skipped.len().saturating_sub(SKIPPED_SHOWN);
        let _ = writeln!(
            content,
            "[{} file{} not searched: {}{}; see files_skipped for why]",
            gathered.skipped.len(),
            plural(gathered.skipped.len()),
            names.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
    }
    FindResult {
        path,
        mode,
        content,
        definitions,
        references,
        files_searched: gathered.searched,
        files_skipped: gathered.skipped,
        total,
        truncated,
        next_offset: truncated.then_some(next),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn distinct<'a>(files: impl Iterator<Item = &'a str>) -> usize {
    files.collect::<HashSet<_>>().len()
}

/// How the footer names what was searched: `named foo`, `matching "^make-"`, `foo`.
fn target_text(request: &FindRequest) -> String {
    if let Some(name) = &request.name {
        format!(
            "named {}",
            crate::pattern::quote_prefix(name, 80).trim_matches('"')
        )
    } else if let Some(pattern) = &request.name_pattern {
        format!("matching {}", crate::pattern::quote_prefix(pattern, 80))
    } else {
        crate::pattern::quote_prefix(request.symbol.as_deref().unwrap_or_default(), 80)
            .trim_matches('"')
            .to_string()
    }
}

/// Whether `text` (an entry's lines) fits on the page; counts its lines (and the file
/// header it needs) when it does.
fn fits(
    lines: &mut usize,
    current_file: &mut Option<String>,
    file: &str,
    text: &str,
    shown: usize,
    limit: usize,
) -> bool {
    let header = usize::from(current_file.as_deref() != Some(file));
    let cost = header + text.lines().count();
    if shown > 0 && *lines + cost > limit {
        return false;
    }
    *lines += cost;
    true
}

fn push(content: &mut String, current_file: &mut Option<String>, file: &str, text: &str) {
    if current_file.as_deref() != Some(file) {
        let _ = writeln!(content, "==> {file} <==");
        *current_file = Some(file.to_string());
    }
    content.push_str(text);
}

/// ` 12: (defun foo (x) ...)`, or with the body, each of its lines numbered.
fn definition_text(d: &Definition) -> String {
    match &d.body {
        Some(body) => {
            let mut text = String::new();
            for (k, line) in body.lines().enumerate() {
                let _ = writeln!(text, " {}: {}", d.line + k, line.trim_end_matches('\r'));
            }
            text
        }
        None => format!(" {}: {}\n", d.line, d.signature),
    }
}

/// The form's line, then each line with uses once: `    33:   (foo x))`.
fn reference_text(r: &Reference) -> String {
    let mut text = format!(
        " {}: {}{}\n",
        r.line,
        r.signature,
        if r.definition { "  [definition]" } else { "" }
    );
    let mut last = 0;
    for u in &r.uses {
        if u.line != last {
            let _ = writeln!(text, "    {}: {}", u.line, u.text);
            last = u.line;
        }
    }
    text
}
