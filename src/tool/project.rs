//! The project map as a tool call (docs/project.md): a directory, an `.asd` file or
//! several paths in, one [`ReadResult`] of mode `project` out.
//!
//! The files are rendered in parallel ([`project::map_files`], [`project::par_map`]) with
//! the single-file collapsed view at a [`Detail`]; the map takes the first step whose
//! whole map fits the budget ([`map::fits`]): full, no docstrings, names, then one count
//! per file, paged if even that does not fit. With a pattern the map shows the matching
//! forms of every file ([`Step::Matches`]) and pages.

use super::{ReadRequest, ReadResult, Strategy};
use crate::cancel::CancelToken;
use crate::error::{ErrorCode, ToolError};
use crate::features::Features;
use crate::grammar::Grammar;
use crate::guard::{Directory, Guard, LoadedFile, Skipped, WalkedFile, MAX_WALKED_FILES};
use crate::outline::StreamedOutline;
use crate::project::map::{self, Section, Step};
use crate::project::{self, plan, plan::Plan};
use crate::source::Source;
use crate::view::{self, Detail, Mode, ViewOptions};
use serde::{Deserialize, Serialize};

/// A file of the map (`files` in the result).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MapFile {
    /// As the guard shows it: relative to the first root.
    pub path: String,
    /// Lines of the map this file takes at the step shown (its header included).
    pub lines: usize,
    /// Top-level forms in the file.
    pub forms: usize,
}

/// A file the map could not show (`files_skipped` in the result): the guard's refusal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedFile {
    pub path: String,
    /// The error code (`ACCESS_DENIED`, `SIZE_LIMIT_EXCEEDED`, ...).
    pub code: String,
    pub message: String,
}

/// Names shown in a note listing files.
const LISTED: usize = 10;

/// The map of the directory `directory`.
pub(super) fn read_directory(
    guard: &Guard,
    grammar: &Grammar,
    request: &ReadRequest,
    options: &ViewOptions,
    directory: &Directory,
) -> Result<ReadResult, ToolError> {
    check(request, &directory.display_path)?;
    let features = request.features.as_ref().map(Features::new);
    let plan = plan::directory(guard, directory, features.as_ref());
    let mut notes = Vec::new();
    if plan.files.is_empty() && plan.skipped.is_empty() {
        notes.push(format!(
            "[No Lisp files (.lisp .lsp .cl .asd .ros) under {}.]",
            directory.display_path
        ));
    }
    build(
        guard,
        grammar,
        options,
        plan,
        &directory.display_path,
        notes,
    )
}

/// The map of an `.asd` file: itself, then its systems' files in load order.
pub(super) fn read_asd(
    guard: &Guard,
    grammar: &Grammar,
    request: &ReadRequest,
    options: &ViewOptions,
) -> Result<ReadResult, ToolError> {
    let mut asd = guard.named_file(&request.path);
    // Refused as a single file would be; shown as the guard shows it.
    asd.display_path = guard.read_walked(&asd)?.display_path;
    let features = request.features.as_ref().map(Features::new);
    let plan = plan::asd(guard, &asd, features.as_ref());
    let display = asd.display_path.clone();
    build(guard, grammar, options, plan, &display, Vec::new())
}

/// The map of several paths (files or directories), in the order given: the command
/// line's `PATH...`. A directory adds its map's files.
///
/// # Errors
/// As [`super::read`] for a bad request; a path the guard refuses is a skipped file.
pub fn read_paths(
    guard: &Guard,
    grammar: &Grammar,
    request: &ReadRequest,
    paths: &[String],
) -> Result<ReadResult, ToolError> {
    let options = super::view_options(request)?;
    check(request, &request.path)?;
    let features = request.features.as_ref().map(Features::new);
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    for path in paths {
        match guard.directory(path) {
            Ok(Some(directory)) => {
                let plan = plan::directory(guard, &directory, features.as_ref());
                files.extend(plan.files);
                skipped.extend(plan.skipped);
            }
            Ok(None) => files.push(guard.named_file(path)),
            Err(error) => skipped.push(Skipped {
                display_path: error.path.clone(),
                error,
            }),
        }
    }
    let mut plan = plan::paths(guard, files);
    plan.skipped = skipped;
    build(guard, grammar, &options, plan, ".", Vec::new())
}

/// What a map does not take: other strategies, raw lines.
fn check(request: &ReadRequest, display: &str) -> Result<(), ToolError> {
    let invalid =
        |message: String| ToolError::new(ErrorCode::InvalidArgument, display.to_string(), message);
    if request.strategy != Strategy::Default {
        return Err(invalid(format!(
            "{display} is a directory: strategy {} reads one file; a directory gives its map with the default strategy (docs/project.md), or read a file of it",
            request.strategy.name()
        )));
    }
    if !request.collapsed {
        return Err(invalid(format!(
            "{display} is a directory: collapsed=false (raw lines) applies to one file; drop it for the map of the directory, or read a file of it"
        )));
    }
    Ok(())
}

/// A file read and rendered.
struct Rendered {
    section: Section,
    forms: usize,
    expanded: usize,
    bytes: Vec<u8>,
    mtime_ms: u64,
}

/// Renders one file's collapsed view, whole, at `detail`.
fn render(bytes: &[u8], grammar: &Grammar, options: &ViewOptions, display: &str) -> Rendered {
    let source = Source::new(bytes);
    let outline = StreamedOutline::cancellable(bytes, grammar, options.cancel.clone());
    let view = view::render_streamed(&source, &outline, options);
    let content = map::strip_file_notes(&view.content);
    Rendered {
        section: Section {
            display_path: display.to_string(),
            definitions: map::numbered_lines(&content),
            forms: view.total_forms,
            content,
        },
        forms: view.total_forms,
        expanded: view.expanded_forms,
        bytes: Vec::new(),
        mtime_ms: 0,
    }
}

/// The options of one file's whole view at `detail`.
fn file_options(options: &ViewOptions, detail: Detail) -> ViewOptions {
    ViewOptions {
        offset: 0,
        limit: usize::MAX / 4,
        detail,
        ..options.clone()
    }
}

/// Reads and renders the plan's files, chooses the step, renders the page.
fn build(
    guard: &Guard,
    grammar: &Grammar,
    options: &ViewOptions,
    plan: Plan,
    display: &str,
    mut notes: Vec<String>,
) -> Result<ReadResult, ToolError> {
    let patterns = options.name_pattern.is_some() || options.content_pattern.is_some();
    let first = if patterns {
        Detail::Matches
    } else {
        Detail::Full
    };
    let first_options = file_options(options, first);
    let answers = project::map_files(guard, &plan.files, &options.cancel, |file: &LoadedFile| {
        let mut r = render(&file.bytes, grammar, &first_options, &file.display_path);
        r.bytes.clone_from(&file.bytes);
        r.mtime_ms = file.mtime_ms;
        r
    });
    cancelled(&options.cancel, display)?;
    let mut skipped = plan.skipped;
    let mut files = Vec::new();
    for (answer, walked) in answers.into_iter().zip(&plan.files) {
        match answer {
            Ok(rendered) => files.push(rendered),
            Err(error) => skipped.push(skipped_of(walked, error)),
        }
    }
    if let Some(e) = super::too_costly(options, display) {
        return Err(e);
    }
    let (step, sections) = if patterns {
        let (matched, unmatched): (Vec<_>, Vec<_>) = files.iter().partition(|r| r.expanded > 0);
        let names: Vec<String> = unmatched
            .iter()
            .map(|r| r.section.display_path.clone())
            .collect();
        notes.extend(map::list_note("No matches in", &names, LISTED));
        let sections = matched.iter().map(|r| r.section.clone()).collect();
        (Step::Matches, sections)
    } else {
        choose_step(grammar, options, &files, &mut notes)
    };
    cancelled(&options.cancel, display)?;
    filter_notes(options, &mut notes);
    if plan.stopped_at_limit {
        notes.push(format!(
            "[The walk stopped at {MAX_WALKED_FILES} files: read a subdirectory for the rest.]"
        ));
    }
    notes.extend(skipped_note(&skipped));
    let page = map::render(&sections, step, options.offset, options.limit, &notes);
    Ok(result(display, step, &files, &sections, page, skipped))
}

/// The first step whose whole map fits, with the sections at that step; the note that
/// says how to narrow the map when it is not the first.
fn choose_step(
    grammar: &Grammar,
    options: &ViewOptions,
    files: &[Rendered],
    notes: &mut Vec<String>,
) -> (Step, Vec<Section>) {
    let limit = options.limit;
    let mut sections: Vec<Section> = files.iter().map(|r| r.section.clone()).collect();
    let (full_lines, full_chars) = map::size(&sections, Step::Full);
    let mut step = Step::Full;
    for (next, detail) in [
        (Step::NoDocstrings, Detail::NoDocstrings),
        (Step::Names, Detail::Names),
    ] {
        if map::fits(&sections, step, limit) {
            break;
        }
        let detailed = file_options(options, detail);
        let rendered = project::par_map(files, &options.cancel, |r| {
            render(&r.bytes, grammar, &detailed, &r.section.display_path).section
        });
        sections = rendered
            .into_iter()
            .zip(files)
            .map(|(s, r)| s.unwrap_or_else(|| r.section.clone()))
            .collect();
        step = next;
    }
    if !map::fits(&sections, step, limit) {
        step = Step::Counts;
    }
    if step != Step::Full {
        notes.push(format!(
            "[Map shown at step {}: the whole outline is {full_lines} lines and {full_chars} characters, over the budget of {limit} lines and {} characters (limit). Narrow it: read a subdirectory or one file, pass kinds (e.g. [\"defun\", \"defmacro\"]) or a name_pattern, or raise limit.]",
            step.as_str(),
            limit.saturating_mul(map::CHARS_PER_LIMIT_LINE)
        ));
    }
    (step, sections)
}

/// The map says once what `kinds` and `features` hide (each file's view would say it).
fn filter_notes(options: &ViewOptions, notes: &mut Vec<String>) {
    if let Some(kinds) = &options.kinds {
        notes.push(format!(
            "[kinds: only the forms with operators {} are shown.]",
            kinds.names.join(" ")
        ));
    }
    if let Some(features) = &options.features {
        notes.push(format!(
            "[features: forms #+/#- exclude under ({}) are not shown.]",
            features.names.join(" ")
        ));
    }
}

fn skipped_of(walked: &WalkedFile, error: ToolError) -> Skipped {
    Skipped {
        display_path: if error.path.is_empty() {
            walked.display_path.clone()
        } else {
            error.path.clone()
        },
        error,
    }
}

/// `[Skipped 3 files (2 ACCESS_DENIED, 1 SIZE_LIMIT_EXCEEDED): a.lisp (ACCESS_DENIED), ...]`
fn skipped_note(skipped: &[Skipped]) -> Option<String> {
    if skipped.is_empty() {
        return None;
    }
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for s in skipped {
        let code = s.error.code.as_str();
        match counts.iter_mut().find(|(c, _)| *c == code) {
            Some((_, n)) => *n += 1,
            None => counts.push((code, 1)),
        }
    }
    let by_code: Vec<String> = counts.iter().map(|(c, n)| format!("{n} {c}")).collect();
    let named: Vec<String> = skipped
        .iter()
        .map(|s| format!("{} ({})", s.display_path, s.error.code.as_str()))
        .collect();
    let files = if skipped.len() == 1 { "file" } else { "files" };
    map::list_note(
        &format!("Skipped {} {files} ({})", skipped.len(), by_code.join(", ")),
        &named,
        LISTED,
    )
}

fn cancelled(cancel: &CancelToken, display: &str) -> Result<(), ToolError> {
    if cancel.is_cancelled() {
        return Err(ToolError::new(
            ErrorCode::Cancelled,
            display,
            "the request was cancelled before its answer was ready; ask again if it is still wanted",
        ));
    }
    Ok(())
}

fn result(
    display: &str,
    step: Step,
    files: &[Rendered],
    sections: &[Section],
    page: map::Page,
    skipped: Vec<Skipped>,
) -> ReadResult {
    let map_files = sections
        .iter()
        .zip(&page.file_lines)
        .map(|(s, &lines)| MapFile {
            path: s.display_path.clone(),
            lines,
            forms: s.forms,
        })
        .collect();
    let mut meta = super::empty_meta(Strategy::Default);
    meta.total_forms = files.iter().map(|r| r.forms).sum();
    meta.expanded_forms = files.iter().map(|r| r.expanded).sum();
    meta.truncated = page.next_offset.is_some() || !matches!(step, Step::Full | Step::Matches);
    meta.next_offset = page.next_offset;
    meta.total_lines = Some(page.total_lines);
    meta.byte_length = files.iter().map(|r| r.bytes.len()).sum();
    meta.mtime_ms = files.iter().map(|r| r.mtime_ms).max().unwrap_or(0);
    ReadResult {
        path: display.to_string(),
        mode: Mode::Project,
        content: page.content,
        meta,
        metadata: None,
        files: Some(map_files),
        files_skipped: Some(
            skipped
                .into_iter()
                .map(|s| SkippedFile {
                    path: s.display_path,
                    code: s.error.code.as_str().to_string(),
                    message: s.error.message,
                })
                .collect(),
        ),
        step: Some(step),
    }
}
