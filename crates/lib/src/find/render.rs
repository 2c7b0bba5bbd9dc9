//! Paging and the text view (docs/find.md#paging).
//!
//! The entries (definitions, or forms with their uses) are in scope order: file by file
//! in walk order (sorted paths), each file's entries by line. `offset` is the index of
//! the first entry shown; a page then takes entries while their lines fit in `limit`
//! lines of `content` (a file header, an entry's line, its body's lines, its use lines);
//! the first entry of a page is always shown whole. The footer lines are not counted.

use super::{
    calls_render, names, CalleesEntry, Caller, Definition, FindDetail, FindMode, FindRequest,
    FindResult, Reference, Search, SkippedFile, MAX_COLLECTED,
};
use crate::hint::{Hint, HintStyle};
use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt::Write;

/// Files named in the note on skipped files; the others are counted.
const SKIPPED_SHOWN: usize = 5;

/// Everything the files gave, in scope order.
#[derive(Default)]
pub(crate) struct Gathered {
    pub definitions: Vec<Definition>,
    pub references: Vec<Reference>,
    pub callers: Vec<Caller>,
    pub callees: Vec<CalleesEntry>,
    pub searched: usize,
    pub skipped: Vec<SkippedFile>,
    pub notes: Vec<String>,
    /// Where the collection budget stopped the search, if it did.
    pub budget_stop: Option<BudgetStop>,
    /// One of the paths given could not be read.
    pub named_refused: bool,
    /// The file at which learning the scope's macros stopped (`super::learn_cap`).
    pub learning_stop: Option<String>,
}

/// The file at which the collection budget was spent (`super::budget`).
pub(crate) struct BudgetStop {
    pub file: String,
    /// The file's own later forms were not searched.
    pub within: bool,
    /// Files of the scope after it, not searched.
    pub files_after: usize,
}

pub(crate) fn page(
    path: String,
    search: &Search,
    request: &FindRequest,
    mut gathered: Gathered,
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
        FindMode::Callers => (
            gathered.callers.len(),
            distinct(gathered.callers.iter().map(|c| c.file.as_str())),
        ),
        FindMode::Callees => (
            gathered.callees.len(),
            distinct(gathered.callees.iter().map(|c| c.file.as_str())),
        ),
    };
    let total_uses: usize = match mode {
        FindMode::Callers => gathered.callers.iter().map(|c| c.calls.len()).sum(),
        FindMode::Callees => gathered.callees.iter().map(|c| c.callees.len()).sum(),
        _ => gathered.references.iter().map(|r| r.uses.len()).sum(),
    };
    let offset = request.offset.min(total);
    // A header names its entries' package only where that tells them apart: in an
    // answer whose entries are in more than one package (docs/find.md#text-format). A
    // text's occurrences are not symbols: no package lines.
    let has_packages = request.text.is_none()
        && match mode {
            FindMode::Definitions => several(gathered.definitions.iter().map(|d| &d.package)),
            FindMode::References => several(gathered.references.iter().map(|r| &r.package)),
            FindMode::Callers => several(gathered.callers.iter().map(|c| &c.package)),
            FindMode::Callees => false,
        };
    let by_name = request.detail == Some(FindDetail::Names);
    let mut page = Page::new(request.limit);
    // A grep line says no package: only where no header says one, so that it never reads
    // as "the package above".
    page.grep_lines = !has_packages;
    let (mut callers, mut callees) = (None, None);
    let (definitions, references) = match mode {
        FindMode::Callers => {
            callers = Some(page.take(
                std::mem::take(&mut gathered.callers),
                offset,
                |c| (&c.file, has_packages.then(|| package_line(&c.package))),
                if by_name {
                    names::caller_line
                } else {
                    calls_render::caller_text
                },
            ));
            (None, None)
        }
        FindMode::Callees => {
            callees = Some(page.take(
                std::mem::take(&mut gathered.callees),
                offset,
                |c| (&c.file, None),
                calls_render::callees_text,
            ));
            (None, None)
        }
        FindMode::Definitions => {
            // The file, generic function and `#+`/`#-` prefixes of the last entry, when
            // a method or a generic function's `defgeneric`.
            let last_method: RefCell<Option<(String, String, String)>> = RefCell::new(None);
            // The file, line and macro of the form that made the last entry.
            let last_form: RefCell<Option<Made>> = RefCell::new(None);
            let entries = page.take(
                std::mem::take(&mut gathered.definitions),
                offset,
                |d| (&d.file, has_packages.then(|| package_line(&d.package))),
                |d| {
                    if by_name {
                        return names::definition_line(d);
                    }
                    let above = last_method.borrow_mut().take();
                    if let Some(text) = made_again(d, &mut last_form.borrow_mut()) {
                        return text;
                    }
                    let group = method_group(d).map(|g| (d.file.clone(), g));
                    let text = match (&group, &above) {
                        (Some((file, g)), Some((f, ag, prefixes))) if file == f && g == ag => {
                            continued_method_text(d, prefixes)
                        }
                        _ => None,
                    };
                    *last_method.borrow_mut() = group
                        .or_else(|| generic_group(d).map(|g| (d.file.clone(), g)))
                        .map(|(file, g)| (file, g, method_prefixes(d)));
                    text.unwrap_or_else(|| definition_text(d))
                },
            );
            (Some(entries), None)
        }
        FindMode::References => {
            let entries = page.take(
                std::mem::take(&mut gathered.references),
                offset,
                |r| (&r.file, has_packages.then(|| package_line(&r.package))),
                if by_name {
                    names::reference_line
                } else {
                    reference_text
                },
            );
            (None, Some(entries))
        }
    };
    let next = offset + page.shown;
    let truncated = next < total;
    let mut content = page.content;
    let counts = Counts {
        total,
        files,
        total_uses,
        offset,
        shown: next - offset,
    };
    footer(&mut content, mode, request, &counts, &gathered);
    FindResult {
        path,
        mode,
        content,
        definitions,
        references,
        callers,
        callees,
        files_searched: gathered.searched,
        files_skipped: gathered.skipped,
        total,
        stopped_at_budget: gathered.budget_stop.is_some(),
        learning_stopped_at: gathered.learning_stop.take(),
        truncated,
        next_offset: truncated.then_some(next),
        path_refused: gathered.named_refused,
    }
}

/// A page being filled: its text, its lines so far and the file of the last entry.
struct Page {
    content: String,
    lines: usize,
    limit: usize,
    current_file: Option<String>,
    /// The package line of the last entry (docs/find.md#text-format).
    current_package: Option<String>,
    shown: usize,
    /// A file's only one-line entry may be a grep line (no header names a package).
    grep_lines: bool,
}

impl Page {
    fn new(limit: usize) -> Page {
        Page {
            content: String::new(),
            lines: 0,
            limit,
            current_file: None,
            current_package: None,
            shown: 0,
            grep_lines: false,
        }
    }

    /// The entries from `offset` that fit, their text written under file headers; in an
    /// answer whose headers name no package, a header over one entry of one line is that
    /// line as grep prints it, `PATH:LINE:TEXT` (docs/find.md#text-format).
    fn take<T>(
        &mut self,
        entries: Vec<T>,
        offset: usize,
        file_of: impl Fn(&T) -> (&String, Option<String>),
        text_of: impl Fn(&T) -> String,
    ) -> Vec<T> {
        let mut page = Vec::new();
        // Each header and the text of the entries under it.
        let mut groups: Vec<(String, String, String)> = Vec::new();
        for entry in entries.into_iter().skip(offset) {
            let text = text_of(&entry);
            let (file, package) = file_of(&entry);
            if !self.fits(file, package.as_deref(), &text) {
                break;
            }
            // A file's header names its entries' package; a new package repeats it.
            let new_package = package.filter(|p| self.current_package.as_ref() != Some(p));
            if new_package.is_some() || self.current_file.as_deref() != Some(file.as_str()) {
                if let Some(package) = new_package {
                    self.current_package = Some(package);
                }
                let package = self.current_package.clone().unwrap_or_default();
                groups.push((file.clone(), package, String::new()));
                self.current_file = Some(file.clone());
            }
            if let Some((_, _, group)) = groups.last_mut() {
                group.push_str(&text);
            }
            self.shown += 1;
            page.push(entry);
        }
        for (file, package, text) in groups {
            match grep_line(&text).filter(|_| self.grep_lines && package.is_empty()) {
                Some((line, rest)) => {
                    let _ = writeln!(self.content, "{file}:{line}:{rest}");
                }
                None => {
                    let _ = writeln!(self.content, "==> {file} <=={package}");
                    self.content.push_str(&text);
                }
            }
        }
        page
    }

    /// Whether `text` (an entry's lines) fits on the page; counts its lines (and the
    /// file header it needs) when it does. The first entry always fits.
    fn fits(&mut self, file: &str, package: Option<&str>, text: &str) -> bool {
        let new_package = package.is_some_and(|p| self.current_package.as_deref() != Some(p));
        let header = usize::from(new_package || self.current_file.as_deref() != Some(file));
        let cost = header + text.lines().count();
        if self.shown > 0 && self.lines + cost > self.limit {
            return false;
        }
        self.lines += cost;
        true
    }
}

/// What the footer counts.
struct Counts {
    total: usize,
    files: usize,
    total_uses: usize,
    offset: usize,
    shown: usize,
}

/// The summary line, how to continue, the notes, the skipped files.
fn footer(
    content: &mut String,
    mode: FindMode,
    request: &FindRequest,
    counts: &Counts,
    gathered: &Gathered,
) {
    let Counts {
        total,
        files,
        total_uses,
        offset,
        shown,
    } = *counts;
    let next = offset + shown;
    // A whole answer's entries say what they are: the counts are for an empty or cut one
    // (docs/find.md#output).
    if total == 0 || next < total || offset > 0 {
        let what = match (mode, request.text.is_some(), total) {
            (FindMode::Definitions, _, 1) => "definition",
            (FindMode::Definitions, _, _) => "definitions",
            (FindMode::References, false, 1) => "form using",
            (FindMode::References, false, _) => "forms using",
            (FindMode::References, true, 1) => "form containing",
            (FindMode::References, true, _) => "forms containing",
            (FindMode::Callers, _, 1) => "definition calling",
            (FindMode::Callers, _, _) => "definitions calling",
            (FindMode::Callees, _, 1) => "definition named",
            (FindMode::Callees, _, _) => "definitions named",
        };
        let mut target = target_text(request);
        match mode {
            FindMode::References => {
                let noun = if request.text.is_some() {
                    "occurrence"
                } else {
                    "use"
                };
                let _ = write!(target, " ({total_uses} {noun}{})", plural(total_uses));
            }
            FindMode::Callers => {
                let _ = write!(target, " ({total_uses} call{})", plural(total_uses));
            }
            FindMode::Callees => {
                let _ = write!(
                    target,
                    " (calling {total_uses} definition{} of the scope)",
                    plural(total_uses)
                );
            }
            FindMode::Definitions => {}
        }
        let _ = writeln!(
            content,
            "[{total} {what} {target} in {files} file{}; {} file{} searched]",
            plural(files),
            gathered.searched,
            plural(gathered.searched)
        );
    }
    if next < total {
        let _ = writeln!(
            content,
            "[entries {}-{next} of {total} shown; continue with {}]",
            offset + 1,
            request.hints.render(&Hint::Offset(next))
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
    if let Some(stop) = &gathered.budget_stop {
        let (file, n) = (&stop.file, stop.files_after);
        let later = match (stop.within, n) {
            (true, 0) => format!("the rest of {file} was not searched"),
            (true, 1) => format!("the rest of {file} and the file after it were not searched"),
            (true, n) => format!("the rest of {file} and the {n} files after it were not searched"),
            (false, 1) => format!("the file after {file} was not searched"),
            (false, n) => format!("the {n} files after {file} were not searched"),
        };
        let _ = writeln!(
            content,
            "[the search stopped at its budget of {MAX_COLLECTED} entries and uses: {later}; search a smaller path or use {}]",
            request.hints.render(&Hint::Kinds(&["defun", "defmacro"]))
        );
    }
    skipped_note(content, &gathered.skipped, request.hints);
}

fn skipped_note(content: &mut String, skipped: &[SkippedFile], hints: HintStyle) {
    if skipped.is_empty() {
        return;
    }
    let names: Vec<String> = skipped
        .iter()
        .take(SKIPPED_SHOWN)
        .map(|s| format!("{} ({})", s.file, s.code))
        .collect();
    let more = skipped.len().saturating_sub(SKIPPED_SHOWN);
    let _ = writeln!(
        content,
        "[{} file{} not searched: {}{}; see {} for why]",
        skipped.len(),
        plural(skipped.len()),
        names.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        },
        hints.render(&Hint::SkippedFiles)
    );
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
        format!("named {}", crate::shown::quoted(name, 80).trim_matches('"'))
    } else if let Some(name) = request.callers.as_ref().or(request.callees.as_ref()) {
        crate::shown::quoted(name, 80).trim_matches('"').to_string()
    } else if let Some(pattern) = &request.name_pattern {
        format!("matching {}", crate::shown::quoted(pattern, 80))
    } else if let Some(text) = &request.text {
        crate::shown::quoted(text, 80)
    } else {
        crate::shown::quoted(request.symbol.as_deref().unwrap_or_default(), 80)
            .trim_matches('"')
            .to_string()
    }
}

/// Whether the answer's entries are in more than one package (no package counts as one).
fn several<'p>(mut packages: impl Iterator<Item = &'p Option<String>>) -> bool {
    let first = packages.next();
    packages.any(|p| Some(p) != first)
}

/// A header's only entry, when it is one line `LINE: TEXT`: its line and text.
fn grep_line(text: &str) -> Option<(&str, &str)> {
    let line = text.strip_suffix('\n')?;
    if line.contains('\n') {
        return None;
    }
    let (number, rest) = line.split_once(": ")?;
    number
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then_some((number, rest))
}

/// A definition's line in a list: its head, the operator, name and lambda list, without
/// the ` ...)` that closes the collapsed form (the list shows no body; `--body` does).
fn entry_head(signature: &str) -> &str {
    signature.strip_suffix(" ...)").unwrap_or(signature)
}

/// What a file header says of its entries' package: ` package cl-ppcre`, nothing for
/// no package (an uninterned symbol, a package's name). Whether the package is defined
/// in the scope is left to the structured result (`package_unresolved`).
fn package_line(package: &Option<String>) -> String {
    match package {
        Some(p) => format!(" package {p}"),
        None => String::new(),
    }
}

/// `12: (defun foo (x) ...)`, or with the body, its first line numbered and the others
/// as they are (their numbers follow). A method shows its qualifiers and required
/// parameters only (its generic function, or `--body`, has the rest). A derived
/// definition: `14: accessor point-x, made by 12: (defstruct point x y)`, or its kind
/// and name, then the body of the form that makes it. A definition a project's macro
/// makes: `12: defun make-point, via defthing at 12: (defthing point)`.
fn definition_text(d: &Definition) -> String {
    let (first, head) = match &d.form {
        Some(form) => (
            form.line,
            Some(match &d.via {
                Some(via) => format!("{}: {} {}, via {via} at", d.line, d.kind, d.name),
                None => format!("{}: {} {}, made by", d.line, d.kind, d.name),
            }),
        ),
        None => (d.line, None),
    };
    match (&d.body, head) {
        (Some(body), head) => {
            let mut text = head.map(|h| format!("{h}:\n")).unwrap_or_default();
            for (k, line) in body.lines().enumerate() {
                let line = line.trim_end_matches('\r');
                let _ = match k {
                    0 => writeln!(text, "{first}: {line}"),
                    _ => writeln!(text, "{line}"),
                };
            }
            text
        }
        (None, Some(head)) => format!("{head} {first}: {}\n", d.signature),
        (None, None) if d.form.is_none() && d.kind.ends_with("defmethod") => {
            format!(
                "{}: {}\n",
                d.line,
                entry_head(&super::method_line::shortened(&d.signature, &d.kind))
            )
        }
        (None, None) => {
            let mut text = format!("{}: {}\n", d.line, entry_head(&d.signature));
            if let Some(exports) = &d.exports {
                // A package's exports, as a list: its `defpackage` is `include_body`.
                let _ = writeln!(text, " exports: {}", exports.join(" "));
            }
            text
        }
    }
}

/// The form a derived definition or a macro's definition comes from: file, line, macro.
type Made = (String, usize, Option<String>);

/// A definition made by the same form as the entry above (a macro's call, a
/// `defstruct`): ` LINE: KIND NAME` under it, the form and macro said once by the first
/// (docs/find.md#definitions-made-by-the-projects-own-macros). `last`: the form of the
/// entry above, updated.
fn made_again(d: &Definition, last: &mut Option<Made>) -> Option<String> {
    let made = d
        .form
        .as_ref()
        .filter(|_| d.body.is_none())
        .map(|f| (d.file.clone(), f.line, d.via.clone()));
    let again = made.is_some() && *last == made;
    *last = made;
    again.then(|| format!(" {}: {} {}\n", d.line, d.kind, d.name))
}

/// A method listed without its body: its generic function's name, lowercased (`area`,
/// `(setf area)`), which a following method of the same file need not repeat.
fn method_group(d: &Definition) -> Option<String> {
    if d.form.is_some() || d.body.is_some() || !d.kind.ends_with("defmethod") {
        return None;
    }
    let end = if d.name.starts_with('(') {
        d.name.find(')').map(|k| k + 1)
    } else {
        d.name.find(' ')
    };
    Some(d.name[..end.unwrap_or(d.name.len())].to_ascii_lowercase())
}

/// A `defgeneric` listed without its body: its name, lowercased, which a method of it
/// after it in the same file need not repeat.
fn generic_group(d: &Definition) -> Option<String> {
    let plain = d.form.is_none() && d.body.is_none();
    (plain && d.kind.ends_with("defgeneric")).then(|| d.name.to_ascii_lowercase())
}

/// A method after another of the same generic function, or after its `defgeneric`, in
/// the same file: its line
/// without the operator and name (`74: ((alternation alternation) next-fn)`), and
/// without the `#+`/`#-` prefixes when the line above has the same (a feature expression
/// is a dozen tokens). `above`: the prefixes of the method above. A method without
/// prefixes after one with some is shown whole: a continued line without prefixes says
/// "as above".
fn continued_method_text(d: &Definition, above: &str) -> Option<String> {
    let line = super::method_line::shortened(&d.signature, &d.kind);
    let (prefixes, rest) = super::method_line::continued(&line, &d.kind, &method_group(d)?)?;
    match prefixes {
        p if p == above => Some(format!("{}: {rest}\n", d.line)),
        "" => None,
        p => Some(format!("{}: {p}{rest}\n", d.line)),
    }
}

/// The `#+`/`#-` prefixes of a method's line, with their space (empty without).
fn method_prefixes(d: &Definition) -> String {
    let lower = d.signature.to_ascii_lowercase();
    let open = lower.find(&format!("({}", d.kind)).unwrap_or(0);
    d.signature[..open].to_string()
}

/// The form's line (`(defun bar ...)`, not its lambda list), then each line with uses
/// once, without its indentation: ` 33: (foo x))` (one space: each space is a token). A
/// form whose uses are all on its first line, when that line shows its operator and name,
/// is that line alone; a first line with uses that says the heading is the heading; a
/// definition's line that only names it is not repeated.
fn reference_text(r: &Reference) -> String {
    let heading = if r.heading.is_empty() {
        &r.signature
    } else {
        &r.heading
    };
    let marker = if r.definition { "  [definition]" } else { "" };
    let said = |text: &str| calls_render::said_by(text, heading, &r.kind);
    if let Some(only) = r.uses.first() {
        if r.uses.iter().all(|u| u.line == r.line) && said(&only.text) {
            return format!("{}: {}{marker}\n", r.line, only.text.trim());
        }
    }
    // A definition's own first line, whose one use is its name, says what its heading
    // does (a `#+`/`#-` prefix puts that line after the heading's).
    let own_line = |line: usize, text: &str| {
        r.definition && said(text) && r.uses.iter().filter(|u| u.line == line).count() == 1
    };
    // A first line with uses that says the heading is the heading, shown once (a
    // definition's line whose one use is its name keeps the shorter heading).
    let first = r
        .uses
        .iter()
        .find(|u| u.line == r.line && said(&u.text) && !own_line(u.line, &u.text))
        .map(|u| u.text.trim());
    let mut text = format!("{}: {}{marker}\n", r.line, first.unwrap_or(heading));
    use_lines(
        &mut text,
        r.uses
            .iter()
            // The heading's line, when it is the heading, and a definition's own line.
            .filter(|u| {
                let heading_line = first.is_some() && u.line == r.line;
                !heading_line && !own_line(u.line, &u.text)
            })
            .map(|u| (u.line, u.text.as_str())),
    );
    text
}

/// Each line with uses once, without its indentation: ` 33: (foo x))`.
pub(crate) fn use_lines<'u>(text: &mut String, uses: impl Iterator<Item = (usize, &'u str)>) {
    let mut last = 0;
    for (line, use_text) in uses {
        if line != last {
            let _ = writeln!(text, " {line}: {}", use_text.trim());
            last = line;
        }
    }
}
