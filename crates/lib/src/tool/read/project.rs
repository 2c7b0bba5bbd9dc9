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
use crate::hint::Hint;
use crate::outline::{outline_bytes, Outline, StreamedOutline};
use crate::project::map::{self, Section, Step};
use crate::project::{self, plan, plan::Plan};
use crate::source::Source;
use crate::view::{self, Detail, Mode, View, ViewOptions};
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
    let plan = plan::directory(guard, directory, features.as_ref(), &options.cancel);
    let mut notes = Vec::new();
    if plan.files.is_empty() && plan.skipped.is_empty() {
        notes.push(format!(
            "[No Lisp files (.lisp .lsp .cl .asd .ros) under {}]",
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
    let mut notes = Vec::new();
    for path in paths {
        match guard.directory(path) {
            Ok(Some(directory)) => {
                let plan = plan::directory(guard, &directory, features.as_ref(), &options.cancel);
                files.extend(plan.files);
                skipped.extend(plan.skipped);
                notes.extend(plan.notes);
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
    plan.notes = notes;
    let display = crate::guard::quoted_path(&paths.join(" "), 200);
    build(guard, grammar, &options, plan, &display, Vec::new())
        .map(|result| super::with_closing_notes(result, grammar))
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

/// Files rendered at once: what a map holds in memory beyond its page is this many
/// files' views (the text of files outside the page, or of steps that cannot fit, is
/// dropped as the chunks come).
const CHUNK: usize = 64;

/// A file counted: what the counts step shows of it, and whether the others may fit.
struct Counted {
    walked: WalkedFile,
    display_path: String,
    forms: usize,
    /// Definitions listed at the names step (and counted at the counts step).
    definitions: usize,
    /// Top-level forms `kinds` and `features` leave.
    shown: usize,
    /// The lines those forms start on (the fewest their full view takes).
    shown_lines: usize,
    /// Top-level items (forms, comments, strays): what its outline holds.
    items: usize,
}

/// What a map adds up over its files (`meta`).
#[derive(Clone, Copy, Default)]
struct Totals {
    forms: usize,
    expanded: usize,
    bytes: usize,
    mtime_ms: u64,
}

impl Totals {
    fn add(&mut self, file: &LoadedFile) {
        self.bytes += file.bytes.len();
        self.mtime_ms = self.mtime_ms.max(file.mtime_ms);
    }
}

/// A file's collapsed view at one step: its size in map lines and characters, and its
/// section only when that alone fits the budget (a larger one can never be shown, and a
/// dense file's whole view is many times its size).
struct Rendered {
    section: Option<Section>,
    lines: usize,
    chars: usize,
    /// The view ended within the budget's lines: `lines` and `chars` are its whole size
    /// (else it was rendered up to the budget only, and cannot fit).
    complete: bool,
}

/// One file's collapsed view, whole, at each detail of `details`, one after the other.
/// From one outline kept for all when the file's `items` (counted before) are not dense;
/// else from a streamed outline walked once per detail: a dense file's outline takes
/// hundreds of times its size (a line of `(` takes 440 bytes), and what a file then holds
/// at once is one view.
fn render(
    file: &LoadedFile,
    items: usize,
    grammar: &Grammar,
    options: &ViewOptions,
    details: &[Detail],
) -> Vec<Rendered> {
    let outline = if items.saturating_mul(MIN_ITEM_BYTES) <= file.bytes.len() {
        Outlined::Kept(outline_bytes(&file.bytes, grammar))
    } else {
        Outlined::streamed(file, grammar, options)
    };
    details
        .iter()
        .map(|&detail| {
            // Up to the budget's lines only: a view longer than the map's budget cannot
            // fit, and a dense file's whole view takes hundreds of times its size.
            let (section, view) = section_of(file, &outline, options, detail, options.limit);
            let complete = !view.truncated && view.next_offset.is_none();
            let (lines, chars) = map::size(std::slice::from_ref(&section), step_of(detail));
            let fits = complete
                && lines <= options.limit
                && chars <= options.limit.saturating_mul(map::CHARS_PER_LIMIT_LINE);
            Rendered {
                section: fits.then_some(section),
                lines,
                chars,
                complete,
            }
        })
        .collect()
}

/// A file whose top-level items take at least this many bytes each on average keeps its
/// outline for the renderings of a map: its outline then takes a few times the file.
const MIN_ITEM_BYTES: usize = 128;

/// A file's outline for its views: kept whole, or made anew on each walk.
enum Outlined<'a> {
    Kept(Outline<'a>),
    Streamed(StreamedOutline<'a>),
}

impl<'a> Outlined<'a> {
    fn streamed(file: &'a LoadedFile, grammar: &'a Grammar, options: &ViewOptions) -> Self {
        Outlined::Streamed(StreamedOutline::cancellable(
            &file.bytes,
            grammar,
            options.cancel.clone(),
        ))
    }

    fn view(&self, source: &Source, options: &ViewOptions) -> View {
        match self {
            Outlined::Kept(outline) => view::render(source, Some(outline), options),
            Outlined::Streamed(streamed) => view::render_streamed(source, streamed, options),
        }
    }
}

/// One file's collapsed view at `detail`, its first `limit` lines, as a section of the
/// map; and the view (what it expanded, whether it stopped before its end).
fn section_of(
    file: &LoadedFile,
    outline: &Outlined,
    options: &ViewOptions,
    detail: Detail,
    limit: usize,
) -> (Section, View) {
    let page = ViewOptions {
        offset: 0,
        limit,
        detail,
        ..options.clone()
    };
    let mut view = outline.view(&Source::new(&file.bytes), &page);
    let section = Section {
        display_path: file.display_path.clone(),
        content: map::strip_file_notes(&std::mem::take(&mut view.content)),
        definitions: 0,
        forms: view.total_forms,
        elided: 0,
    };
    (section, view)
}

/// The map step that shows files at `detail`.
fn step_of(detail: Detail) -> Step {
    match detail {
        Detail::Full => Step::Full,
        Detail::NoDocstrings => Step::NoDocstrings,
        Detail::Names => Step::Names,
        Detail::Counts => Step::Counts,
        Detail::Matches => Step::Matches,
    }
}

/// Reads the plan's files, chooses the step, renders the page.
fn build(
    guard: &Guard,
    grammar: &Grammar,
    options: &ViewOptions,
    plan: Plan,
    display: &str,
    mut notes: Vec<String>,
) -> Result<ReadResult, ToolError> {
    let patterns = options.name_pattern.is_some() || options.content_pattern.is_some();
    let mut skipped = plan.skipped;
    let mut totals = Totals::default();
    let (step, sections) = if patterns {
        let sections = matches(
            guard,
            grammar,
            options,
            &plan.files,
            &mut totals,
            &mut skipped,
            &mut notes,
        );
        (Step::Matches, sections)
    } else {
        let counted = count(
            guard,
            grammar,
            options,
            &plan.files,
            &mut totals,
            &mut skipped,
        );
        choose_step(guard, grammar, options, &counted, &mut skipped, &mut notes)
    };
    cancelled(&options.cancel, display)?;
    if let Some(e) = super::too_costly(options, display) {
        return Err(e);
    }
    filter_notes(options, &mut notes);
    if plan.stopped_at_limit {
        notes.push(format!(
            "[The walk stopped at {MAX_WALKED_FILES} files: read a subdirectory for the rest.]"
        ));
    }
    notes.extend(plan.notes);
    notes.extend(skipped_note(&skipped));
    let page = map::render(
        &sections,
        step,
        (options.offset, options.limit),
        options.hints,
        &notes,
    );
    let mut result = result(display, totals, &sections, page, skipped);
    result.step = Some(step);
    result.meta.truncated |= !matches!(step, Step::Full | Step::Matches);
    Ok(result)
}

/// Reads every file once and counts what the steps would show of it: one scan, no form
/// text, nothing kept.
fn count(
    guard: &Guard,
    grammar: &Grammar,
    options: &ViewOptions,
    files: &[WalkedFile],
    totals: &mut Totals,
    skipped: &mut Vec<Skipped>,
) -> Vec<Counted> {
    let answers = project::map_files(guard, files, &options.cancel, |file| {
        // Streamed: a dense file's whole outline takes hundreds of times its size.
        let outline = StreamedOutline::cancellable(&file.bytes, grammar, options.cancel.clone());
        let shown = view::count_shown(&outline, options);
        (
            file.display_path.clone(),
            (outline.form_count, outline.item_count),
            shown,
            file.bytes.len(),
            file.mtime_ms,
        )
    });
    let mut counted = Vec::new();
    for (answer, walked) in answers.into_iter().zip(files) {
        match answer {
            Ok((display_path, (forms, items), shown, bytes, mtime_ms)) => {
                totals.forms += forms;
                totals.bytes += bytes;
                totals.mtime_ms = totals.mtime_ms.max(mtime_ms);
                counted.push(Counted {
                    walked: walked.clone(),
                    display_path,
                    forms,
                    definitions: shown.definitions,
                    shown: shown.forms,
                    shown_lines: shown.lines,
                    items,
                });
            }
            Err(error) => skipped.push(skipped_of(walked, error)),
        }
    }
    counted
}

/// Patterns: the matching forms of every file, the text kept only for the files on the
/// page; the files without any in one note.
fn matches(
    guard: &Guard,
    grammar: &Grammar,
    options: &ViewOptions,
    files: &[WalkedFile],
    totals: &mut Totals,
    skipped: &mut Vec<Skipped>,
    notes: &mut Vec<String>,
) -> Vec<Section> {
    let page = options.offset..options.offset.saturating_add(options.limit);
    let mut sections: Vec<Section> = Vec::new();
    let mut unmatched = Vec::new();
    let mut line = 0;
    for chunk in files.chunks(CHUNK) {
        let answers = project::map_files(guard, chunk, &options.cancel, |file| {
            let mut t = Totals::default();
            t.add(file);
            let outline = Outlined::streamed(file, grammar, options);
            let (section, view) =
                section_of(file, &outline, options, Detail::Matches, usize::MAX / 4);
            ((section, view.expanded_forms), t)
        });
        for (answer, walked) in answers.into_iter().zip(chunk) {
            let (rendered, t) = match answer {
                Ok(answer) => answer,
                Err(error) => {
                    skipped.push(skipped_of(walked, error));
                    continue;
                }
            };
            let (mut section, expanded) = rendered;
            totals.bytes += t.bytes;
            totals.mtime_ms = totals.mtime_ms.max(t.mtime_ms);
            totals.forms += section.forms;
            if expanded == 0 {
                unmatched.push(section.display_path);
                continue;
            }
            totals.expanded += expanded;
            // The file's own lines: its header and its view (the blank line before it
            // goes with the file before).
            let own = line + usize::from(!sections.is_empty());
            let lines = section.content.lines().count();
            if own + 1 + lines <= page.start || own >= page.end {
                section.elided = lines;
                section.content = String::new();
            }
            line = own + 1 + lines;
            sections.push(section);
        }
    }
    notes.extend(map::list_note("No matches in", &unmatched, LISTED));
    sections
}

/// A step's sections as the chunks come: kept while the step still fits, counted always.
struct Candidate {
    step: Step,
    sections: Vec<Section>,
    lines: usize,
    chars: usize,
    fits: bool,
    /// Every file's view ended within the budget: `lines` and `chars` are the whole map's.
    complete: bool,
}

impl Candidate {
    fn new(step: Step) -> Candidate {
        Candidate {
            step,
            sections: Vec::new(),
            lines: 0,
            chars: 0,
            fits: true,
            complete: true,
        }
    }

    fn add(&mut self, rendered: Rendered, limit: usize) {
        self.complete &= rendered.complete;
        let separator = usize::from(self.lines > 0);
        self.lines += rendered.lines + separator;
        self.chars += rendered.chars + separator;
        match rendered.section {
            Some(section)
                if self.fits
                    && self.lines <= limit
                    && self.chars <= limit.saturating_mul(map::CHARS_PER_LIMIT_LINE) =>
            {
                self.sections.push(section)
            }
            _ => {
                self.fits = false;
                self.sections = Vec::new();
            }
        }
    }
}

/// The first step whose whole map fits, with the sections at that step; the note that
/// says how to narrow the map when it is not the first. When the names step cannot fit
/// (its lines are known from the counts), the files are not rendered at all.
fn choose_step(
    guard: &Guard,
    grammar: &Grammar,
    options: &ViewOptions,
    counted: &[Counted],
    skipped: &mut Vec<Skipped>,
    notes: &mut Vec<String>,
) -> (Step, Vec<Section>) {
    let limit = options.limit;
    // With kinds or features, a file with nothing left is named in one note.
    let filtered = options.kinds.is_some() || options.features.is_some();
    let (files, emptied): (Vec<&Counted>, Vec<&Counted>) =
        counted.iter().partition(|f| !filtered || f.shown > 0);
    let emptied: Vec<String> = emptied.iter().map(|f| f.display_path.clone()).collect();
    notes.extend(map::list_note("Nothing shown in", &emptied, LISTED));
    // A header per file, a blank line between files, and at least a line per definition
    // (names) or per line where a shown form starts (full, no docstrings): a step whose
    // least is over the limit cannot fit, and is not rendered.
    let least = |per_file: &dyn Fn(&Counted) -> usize| {
        files
            .iter()
            .map(|f| per_file(f) + 2)
            .sum::<usize>()
            .saturating_sub(1)
    };
    let names_lines = least(&|f| f.definitions);
    let form_lines = least(&|f| f.shown_lines);
    let least_lines = [form_lines, form_lines, names_lines];
    // The step asked for (detail) is the first one tried, and needs no note.
    let first = match options.detail {
        Detail::NoDocstrings => 1,
        Detail::Names => 2,
        Detail::Counts => 3,
        Detail::Full | Detail::Matches => 0,
    };
    let steps = [Step::Full, Step::NoDocstrings, Step::Names];
    // When the names step cannot fit, the steps before it are not tried either.
    let tried: Vec<usize> = (first..3)
        .filter(|&k| names_lines <= limit && least_lines[k] <= limit)
        .collect();
    let mut why = if first < 2 && names_lines <= limit {
        Why::Least("top-level forms", form_lines)
    } else {
        Why::Least("names of the definitions", names_lines)
    };
    if !tried.is_empty() {
        let candidates = render_steps(guard, grammar, options, &files, &tried, skipped);
        if tried[0] == first {
            why = match &candidates[0] {
                c if c.complete => Why::Whole(c.lines, c.chars),
                _ => Why::OneFile,
            };
        }
        if let Some(c) = candidates.into_iter().find(|c| c.fits) {
            if c.step != steps[first] {
                notes.push(step_note(c.step, limit, why, options));
            }
            return (c.step, c.sections);
        }
    }
    if first < 3 {
        notes.push(step_note(Step::Counts, limit, why, options));
    }
    let sections = files
        .iter()
        .map(|f| Section {
            display_path: f.display_path.clone(),
            definitions: f.definitions,
            forms: f.forms,
            ..Section::default()
        })
        .collect();
    (Step::Counts, sections)
}

/// Why a map is shown at a later step than the first: the size of the first step's whole
/// map, or the least lines its files take (what, how many), when that alone is over the
/// limit and the step was not rendered.
#[derive(Clone, Copy)]
enum Why {
    Whole(usize, usize),
    Least(&'static str, usize),
    /// A file's view alone is longer than the limit (rendered up to it only).
    OneFile,
}

/// Renders the files at the steps `tried` (0 full, 1 no docstrings, 2 names), chunk by
/// chunk: a candidate each, in that order.
fn render_steps(
    guard: &Guard,
    grammar: &Grammar,
    options: &ViewOptions,
    files: &[&Counted],
    tried: &[usize],
    skipped: &mut Vec<Skipped>,
) -> Vec<Candidate> {
    let details: Vec<Detail> = tried
        .iter()
        .map(|&k| [Detail::Full, Detail::NoDocstrings, Detail::Names][k])
        .collect();
    let mut candidates: Vec<Candidate> = details
        .iter()
        .map(|&d| Candidate::new(step_of(d)))
        .collect();
    for chunk in files.chunks(CHUNK) {
        let walked: Vec<WalkedFile> = chunk.iter().map(|f| f.walked.clone()).collect();
        let answers = project::source::map_indexed_from(
            &project::source::Disk,
            guard,
            &walked,
            &options.cancel,
            |i, sourced| render(&sourced.file, chunk[i].items, grammar, options, &details),
        );
        for ((answer, file), walked) in answers.into_iter().zip(chunk).zip(&walked) {
            match answer {
                Ok(rendered) => {
                    for (candidate, mut rendered) in candidates.iter_mut().zip(rendered) {
                        if let Some(section) = &mut rendered.section {
                            section.definitions = file.definitions;
                        }
                        candidate.add(rendered, options.limit);
                    }
                }
                Err(error) => skipped.push(skipped_of(walked, error)),
            }
        }
    }
    candidates
}

/// The note of a step after `full`: why, and how to narrow the map.
fn step_note(step: Step, limit: usize, why: Why, options: &ViewOptions) -> String {
    let hints = options.hints;
    let budget = limit.saturating_mul(map::CHARS_PER_LIMIT_LINE);
    let why = match why {
        Why::Whole(lines, chars) => format!(
            "the whole outline takes {lines} lines and {chars} characters, over the budget of {limit} lines and {budget} characters"
        ),
        Why::Least(what, lines) => {
            format!("the {what} alone take {lines} lines, over the budget of {limit} lines")
        }
        Why::OneFile => {
            format!("the outline of one file alone takes more than the budget of {limit} lines")
        }
    };
    // Kinds already given are not offered again: a pattern or a smaller path narrows.
    let kinds = if options.kinds.is_some() {
        String::new()
    } else {
        format!("{} or ", hints.render(&Hint::Kinds(&["defun", "defmacro"])))
    };
    format!(
        "[Map shown at step {}: {why} ({}). Narrow it: read a subdirectory or one file, pass {kinds}a {}, or raise {}.]",
        step.as_str(),
        hints.render(&Hint::Parameter("limit")),
        hints.render(&Hint::Parameter("name_pattern")),
        hints.render(&Hint::Parameter("limit")),
    )
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
    totals: Totals,
    sections: &[Section],
    page: map::Page,
    skipped: Vec<Skipped>,
) -> ReadResult {
    // The files the page shows: a paged map's structured result is its page's too.
    let map_files = sections
        .iter()
        .zip(&page.file_lines)
        .zip(&page.on_page)
        .filter(|(_, &shown)| shown)
        .map(|((s, &lines), _)| MapFile {
            path: s.display_path.clone(),
            lines,
            forms: s.forms,
        })
        .collect();
    let mut meta = super::empty_meta(Strategy::Default);
    meta.total_forms = totals.forms;
    meta.expanded_forms = totals.expanded;
    meta.truncated = page.next_offset.is_some();
    meta.next_offset = page.next_offset;
    meta.total_lines = Some(page.total_lines);
    meta.byte_length = totals.bytes;
    meta.mtime_ms = totals.mtime_ms;
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
        step: None,
    }
}
