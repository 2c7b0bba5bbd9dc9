//! The collapsed view (docs/views.md#collapsed-view) with matching forms expanded verbatim (docs/views.md#expanded-forms).
//!
//! The file is rendered as a sequence of entries, each starting at a source line: a form
//! (with the comment block above it, for `comments=preceding`), a shown comment, a note.
//! Paging works on entries: `offset` skips those that start before it, `limit` stops
//! before the first entry that does not fit, and the footer names the offset to continue.

use super::filter::{Filter, Hidden};
use super::lines::{join, number_width, Line};
use super::{Comments, Detail, Mode, Shown, View, ViewOptions};
use crate::hint::Hint;
use crate::outline::{Balance, Form, Items, Outline, OutlineItem, MAX_CHILDREN};
use crate::scan::{Diagnostic, DiagnosticKind, ItemKind};
use crate::source::Source;
use std::ops::ControlFlow;

/// Forms whose source is one line of at most this many characters are shown whole
/// (docs/decisions.md#short-forms-are-shown-whole).
pub(crate) const SHORT_FORM_CHARS: usize = crate::outline::SHORT_FORM_CHARS;

/// Something shown, starting at 0-based source line `line`.
struct Entry {
    line: usize,
    /// The 1-based last line of the entry's item in the file.
    end_line: usize,
    lines: Vec<Line>,
    /// Forms shown verbatim in this entry.
    expanded: usize,
    /// Leading lines that cost nothing, as notes: the `in-package` form shown before a
    /// match with [`Detail::Matches`] is context, so a `limit` counts the match's lines.
    context: usize,
}

pub(crate) fn render(source: &Source, outline: &Outline, options: &ViewOptions) -> View {
    let total_forms = outline
        .items
        .iter()
        .filter(|i| i.kind == ItemKind::Form)
        .count();
    render_items(source, outline, total_forms, options)
}

/// Renders the view walking the items once, keeping only the lines shown: memory does
/// not grow with the number of forms. With a pattern, the walk goes on after the last
/// shown entry, matching each further form once, to say where the matches past the
/// window are (or that nothing matched); without one it stops there.
pub(crate) fn render_items<'a>(
    source: &Source,
    items: &dyn Items<'a>,
    total_forms: usize,
    options: &ViewOptions,
) -> View {
    let mut run = Run {
        ctx: Context {
            source,
            options,
            diagnostics: items.diagnostics(),
            intact: std::cell::Cell::new(true),
            filter: Filter::new(options.kinds.as_ref(), options.features.as_ref()),
            start: std::cell::Cell::new(options.offset),
        },
        view: View {
            total_forms,
            ..View::empty(Mode::LispCollapsed)
        },
        pager: Pager {
            start: options.offset,
            ..Pager::default()
        },
        skipped_to_match: None,
        previous_form_line: None,
        unmatched: [
            options.name_pattern.is_some(),
            options.content_pattern.is_some(),
        ],
        entries: Entries::default(),
        outside: [Outside::default(), Outside::default()],
        hidden: Hidden::default(),
    };
    items.each_item(&mut |item| run.item(item));
    let Run {
        mut view,
        mut pager,
        unmatched,
        outside,
        hidden,
        skipped_to_match,
        ..
    } = run;
    if !pager.done {
        pager.finish(&mut view, source, options);
    }
    if pager.first.is_none() && options.offset > 0 {
        pager.lines.push(offset_note(source, options.offset));
    }
    let omitted = items.omitted_diagnostics();
    let mut lines = Vec::new();
    if let Some((from, to)) = skipped_to_match {
        lines.push(Line::Note(format!(
            "[This window starts at the first match, line {}: the forms from line {} to line {to} are not shown (read them without the patterns).]",
            to + 1,
            from + 1
        )));
    }
    lines.append(&mut head_notes(
        options, unmatched, &outside, hidden, omitted,
    ));
    lines.append(&mut pager.lines);
    // Names are a list to read, not a column beside code: unpadded numbers (a padding
    // space is a token of its own).
    let width = match options.detail {
        Detail::Names => 0,
        _ => number_width(source.line_count()),
    };
    view.content = join(&lines, width);
    view
}

/// One rendering of the collapsed view, item by item.
struct Run<'c> {
    ctx: Context<'c>,
    view: View,
    pager: Pager,
    /// Whether each pattern (name, content) is still to be matched by some form.
    unmatched: [bool; 2],
    entries: Entries,
    /// Matches of each pattern outside the window: before `offset`, after the page.
    outside: [Outside; 2],
    /// Forms `kinds` and `features` hide in the window (docs/views.md#kinds-and-features).
    hidden: Hidden,
    /// The page from `offset` held no match, so the window was started again at the
    /// first match: the 0-based lines skipped, `from..to`.
    skipped_to_match: Option<(usize, usize)>,
    /// The 0-based line of the last top-level form walked.
    previous_form_line: Option<usize>,
}

impl Run<'_> {
    fn item(&mut self, item: &OutlineItem) -> ControlFlow<()> {
        let options = self.ctx.options;
        let line = item.start_line - 1;
        let patterns = options.name_pattern.is_some() || options.content_pattern.is_some();
        let (shown, hidden_here) = match item.kind {
            ItemKind::Form => self.ctx.filter.top_level(item),
            _ => (true, Hidden::default()),
        };
        let in_window = line >= self.ctx.start.get() && !self.pager.done;
        if !shown {
            if in_window {
                self.hidden.add(hidden_here);
            }
            // Its comment block goes with it.
            self.entries.block = None;
        } else {
            let matched = self.matched(item);
            if self.pager.done && matched.contains(&true) && self.page_without_match(line) {
                self.start_at_match(line);
            }
            // Twice at most: a page without a match that ends before this matching item
            // starts again at it.
            let block = self.entries.block;
            for _ in 0..2 {
                if self.pager.done {
                    break;
                }
                let (pager, view, source) = (&mut self.pager, &mut self.view, self.ctx.source);
                let flow = self.ctx.entries_of(item, &mut self.entries, &mut |entry| {
                    pager.take(entry, view, source, options)
                });
                self.pager.done = flow.is_break();
                let ended_before = self.pager.done && self.view.next_offset == Some(line);
                if !(ended_before && matched.contains(&true) && self.page_without_match(line)) {
                    break;
                }
                self.start_at_match(line);
                self.entries.block = block;
            }
            if in_window && !(self.pager.done && self.view.next_offset == Some(line)) {
                self.hidden.add(hidden_here);
            }
            self.note_outside(item, matched);
        }
        if item.kind == ItemKind::Form {
            self.previous_form_line = Some(line);
        }
        if self.pager.done && !patterns {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }

    /// Whether the page, now full, shows no match (and was not started again already),
    /// and the window can start again at `line` losing nothing: no form of the page was
    /// cut (a cut group may hide a match), and no earlier form shares the line (it was
    /// walked already and could not be shown again).
    fn page_without_match(&self, line: usize) -> bool {
        self.view.expanded_forms == 0
            && self.skipped_to_match.is_none()
            && self.ctx.options.detail != Detail::Matches
            && !self.pager.was_cut
            && self.previous_form_line != Some(line)
    }

    /// Starts the window again at `line`, the first match: the first page of a pattern
    /// view always shows the first match (docs/views.md#matches-outside-the-window).
    /// Costs at most the page thrown away: linear still.
    fn start_at_match(&mut self, line: usize) {
        self.skipped_to_match = Some((self.ctx.start.get(), line));
        self.ctx.start.set(line);
        self.pager = Pager {
            start: line,
            ..Pager::default()
        };
        self.view.truncated = false;
        self.view.next_offset = None;
        self.hidden = Hidden::default();
    }

    /// Which patterns (name, content) `item` matches.
    fn matched(&mut self, item: &OutlineItem) -> [bool; 2] {
        let options = self.ctx.options;
        let mut matched = [false, false];
        for (k, by_name) in [(0, true), (1, false)] {
            let pattern_given = [&options.name_pattern, &options.content_pattern][k].is_some();
            if pattern_given && self.ctx.item_matches(item, by_name) {
                self.unmatched[k] = false;
                matched[k] = true;
            }
        }
        matched
    }

    /// Counts a match before `offset` or after the page, for the notes.
    fn note_outside(&mut self, item: &OutlineItem, matched: [bool; 2]) {
        let line = item.start_line - 1;
        let after = self.pager.done && self.view.next_offset.is_some_and(|next| line >= next);
        for (outside, matched) in self.outside.iter_mut().zip(matched) {
            if matched && line < self.ctx.options.offset {
                outside.before.note(item.start_line);
            } else if matched && after {
                outside.after.note(item.start_line);
            }
        }
    }
}

/// What the collapsed view shows of a file, counted without making form text (unless
/// `features` needs a form's conditionals): the top-level forms `kinds` and `features`
/// leave, and the definitions among them and their children (the lines of
/// [`Detail::Names`]).
pub(crate) fn count_shown<'a>(items: &dyn Items<'a>, options: &ViewOptions) -> Shown {
    let filter = Filter::new(options.kinds.as_ref(), options.features.as_ref());
    let mut shown = Shown::default();
    let mut last_line = None;
    items.each_item(&mut |item| {
        if item.kind == ItemKind::Form && filter.top_level(item).0 {
            shown.forms += 1;
            shown.lines += usize::from(last_line != Some(item.start_line));
            last_line = Some(item.start_line);
            let mut stack = vec![item];
            while let Some(item) = stack.pop() {
                if let Some(form) = &item.form {
                    shown.definitions +=
                        usize::from(form.operator.is_some() && form.name.is_some());
                    stack.extend(form.children.iter().filter(|c| filter.child_shown(c)));
                }
            }
        }
        if options.cancel.is_cancelled() {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    });
    shown
}

/// The note when no top-level form starts at or after `offset`.
fn offset_note(source: &Source, offset: usize) -> Line {
    let total = source.line_count();
    Line::Note(if offset >= total {
        format!("[Offset {offset} is past end of file ({total} lines).]")
    } else {
        format!(
            "[No top-level form starts at or after line {} ({total} lines).]",
            offset + 1
        )
    })
}

/// The notes at the top of the view: patterns that matched nothing, matches outside the
/// window, forms `kinds` and `features` hid, diagnostics past the cap.
fn head_notes(
    options: &ViewOptions,
    unmatched: [bool; 2],
    outside: &[Outside; 2],
    hidden: Hidden,
    omitted: usize,
) -> Vec<Line> {
    let mut lines: Vec<Line> = Vec::new();
    for (k, (name, pattern)) in [
        ("name_pattern", &options.name_pattern),
        ("content_pattern", &options.content_pattern),
    ]
    .into_iter()
    .enumerate()
    {
        if let (Some(p), true) = (pattern, unmatched[k]) {
            let what = if k == 0 { "definition" } else { "form" };
            lines.push(Line::Note(format!(
                "[No {what} matched {} {}.]",
                options.hints.render(&Hint::Parameter(name)),
                p.quoted()
            )));
        }
    }
    for (k, name) in ["name_pattern", "content_pattern"].into_iter().enumerate() {
        outside[k].notes(name, options, &mut lines);
    }
    hidden_notes(options, hidden, &mut lines);
    if omitted > 0 {
        lines.push(Line::Note(format!(
            "[{omitted} more problems after the first {} are not listed; fix those and read the file again.]",
            crate::scan::MAX_DIAGNOSTICS
        )));
    }
    lines
}

/// The notes of the forms `kinds` and `features` hid in the window
/// (docs/views.md#kinds-and-features).
fn hidden_notes(options: &ViewOptions, hidden: Hidden, lines: &mut Vec<Line>) {
    let forms = |n: usize| if n == 1 { "form" } else { "forms" };
    if let Some(f) = options.features.as_ref().filter(|_| hidden.features > 0) {
        lines.push(Line::Note(format!(
            "[features: {} {} not shown, excluded by #+/#- under ({}).]",
            hidden.features,
            forms(hidden.features),
            f.names.join(" ")
        )));
    }
    if let Some(k) = options.kinds.as_ref().filter(|_| hidden.kinds > 0) {
        lines.push(Line::Note(format!(
            "[kinds: {} other {} not shown (kinds {}).]",
            hidden.kinds,
            forms(hidden.kinds),
            k.names.join(" ")
        )));
    }
}

/// Forms matching a pattern on one side of the window: how many, and the first's line.
#[derive(Default)]
struct Matches {
    count: usize,
    first_line: usize,
}

impl Matches {
    fn note(&mut self, line: usize) {
        if self.count == 0 {
            self.first_line = line;
        }
        self.count += 1;
    }
}

/// Top-level forms a pattern matches that the view does not show
/// (docs/views.md#matches-outside-the-window).
#[derive(Default)]
struct Outside {
    before: Matches,
    after: Matches,
}

impl Outside {
    fn notes(&self, pattern: &str, options: &ViewOptions, lines: &mut Vec<Line>) {
        let pattern = options.hints.render(&Hint::Parameter(pattern));
        for (m, side) in [(&self.before, "before"), (&self.after, "after")] {
            if m.count > 0 {
                let forms = if m.count == 1 { "form" } else { "forms" };
                lines.push(Line::Note(format!(
                    "[{pattern} also matches {} {forms} {side} this window, first at line {}: use {}.]",
                    m.count,
                    m.first_line,
                    options.hints.render(&Hint::Offset(m.first_line - 1))
                )));
            }
        }
    }
}

/// Paging over entries as they come. `offset` skips those that start before it. Entries
/// starting on the same source line are one group, never split across pages, so every page
/// makes progress and `next_offset` (a line) reaches every group: a group that does not fit
/// in what is left of a page starts the next one. A group larger than a whole page is shown
/// up to `limit` lines; the further entries of its line are counted, not kept, and the
/// note says how many and how to read them (the line raw), so that output and memory stay
/// bounded by `limit` however many forms share a line.
#[derive(Default)]
struct Pager {
    lines: Vec<Line>,
    /// Lines used of the limit (notes are free).
    used: usize,
    /// Line of the first entry shown.
    first: Option<usize>,
    /// The group being gathered (it fits so far): its entries and their cost.
    group: Vec<Entry>,
    group_cost: usize,
    /// A group larger than the page, being shown cut.
    oversized: Option<Oversized>,
    done: bool,
    /// The 0-based line the window starts at: `offset`, or the first match.
    start: usize,
    /// Whether a group larger than the page was shown cut.
    was_cut: bool,
}

/// A group shown cut: its line, the limit lines it may still show, the entries of its
/// line past that, and how many of its entries were cut or hidden.
struct Oversized {
    line: usize,
    /// The last line of the forms shown cut (1-based).
    end_line: usize,
    budget: usize,
    hidden: usize,
    several: bool,
}

impl Pager {
    fn take(
        &mut self,
        entry: Entry,
        view: &mut View,
        source: &Source,
        options: &ViewOptions,
    ) -> ControlFlow<()> {
        // An entry with nothing to show (a stray `)` whose diagnostic was not kept) takes
        // no room, and is not kept in a group either.
        if entry.line < self.start || entry.lines.is_empty() {
            return ControlFlow::Continue(());
        }
        if let Some(o) = &mut self.oversized {
            if entry.line == o.line {
                o.several = true;
                o.show(entry, view, &mut self.lines);
                return ControlFlow::Continue(());
            }
            self.close_oversized(Some(entry.line), view, options);
            return ControlFlow::Break(());
        }
        if self.group.first().is_some_and(|g| g.line != entry.line) {
            self.flush(view);
        }
        self.first.get_or_insert(entry.line);
        let cost = entry.cost();
        if self.used + self.group_cost + cost <= options.limit {
            self.group_cost += cost;
            self.group.push(entry);
            return ControlFlow::Continue(());
        }
        view.truncated = true;
        if self.used > 0 {
            // The group does not fit in what is left: the page ends before it.
            let line = entry.line;
            view.next_offset = Some(line);
            self.lines.push(Line::Note(format!(
                "[Showing forms from line {} to line {line} of {}. Use {} to continue.]",
                self.first.unwrap_or(line) + 1,
                source.line_count(),
                options.hints.render(&Hint::Offset(line))
            )));
            self.done = true;
            return ControlFlow::Break(());
        }
        // Larger than a whole page: show it cut.
        let mut o = Oversized {
            line: entry.line,
            end_line: entry.end_line,
            budget: options.limit,
            hidden: 0,
            several: !self.group.is_empty(),
        };
        for gathered in std::mem::take(&mut self.group).into_iter().chain([entry]) {
            o.show(gathered, view, &mut self.lines);
        }
        self.group_cost = 0;
        self.oversized = Some(o);
        self.was_cut = true;
        ControlFlow::Continue(())
    }

    /// Shows the gathered group (it fits).
    fn flush(&mut self, view: &mut View) {
        self.used += self.group_cost;
        self.group_cost = 0;
        for entry in self.group.drain(..) {
            view.expanded_forms += entry.expanded;
            self.lines.extend(entry.lines);
        }
    }

    /// After the last entry: the gathered group, or the note of a cut one.
    fn finish(&mut self, view: &mut View, _source: &Source, options: &ViewOptions) {
        if self.oversized.is_some() {
            self.close_oversized(None, view, options);
        } else {
            self.flush(view);
        }
    }

    /// The note after a group cut at the limit; `next`: the line of the entry after it.
    fn close_oversized(&mut self, next: Option<usize>, view: &mut View, options: &ViewOptions) {
        let Some(o) = self.oversized.take() else {
            return;
        };
        self.done = true;
        view.next_offset = next;
        let (line, limit, hints) = (o.line, options.limit, options.hints);
        let mut note = if o.several {
            format!("[Forms at line {} cut after {limit} lines", line + 1)
        } else {
            format!("[Form at line {} cut after {limit} lines", line + 1)
        };
        if o.hidden > 0 {
            note.push_str(&format!(
                "; {} more forms on that line are not shown. Read them with {}",
                o.hidden,
                hints.render(&Hint::Raw {
                    offset: line,
                    limit: Some(1)
                })
            ));
        } else {
            let it = if o.several { "them" } else { "it" };
            let lines = o.end_line.saturating_sub(line).max(1);
            note.push_str(&format!(
                ". Read {it} whole with {}",
                hints.render(&Hint::Raw {
                    offset: line,
                    limit: Some(lines)
                })
            ));
        }
        match next {
            Some(n) => note.push_str(&format!(
                ", or use {} to continue.]",
                hints.render(&Hint::Offset(n))
            )),
            None => note.push_str(".]"),
        }
        self.lines.push(Line::Note(note));
    }
}

impl Oversized {
    /// Shows what the budget leaves of `entry`; counts it as hidden when nothing is left.
    fn show(&mut self, entry: Entry, view: &mut View, lines: &mut Vec<Line>) {
        self.end_line = self.end_line.max(entry.end_line);
        if self.budget == 0 {
            self.hidden += 1;
        } else {
            view.expanded_forms += entry.expanded;
            cut_entry(entry, &mut self.budget, lines);
        }
    }
}

/// Appends an entry's lines while `budget` lasts (notes are free).
fn cut_entry(entry: Entry, budget: &mut usize, lines: &mut Vec<Line>) {
    let mut context = entry.context;
    for line in entry.lines {
        if !matches!(line, Line::Note(_)) {
            if context > 0 {
                context -= 1;
            } else if *budget == 0 {
                break;
            } else {
                *budget -= 1;
            }
        }
        lines.push(line);
    }
}

impl Entry {
    /// Lines the entry takes from the page's `limit` (notes are free).
    fn cost(&self) -> usize {
        self.lines
            .iter()
            .filter(|l| !matches!(l, Line::Note(_)))
            .count()
            .saturating_sub(self.context)
    }
}

/// The own-line `;` comment block just seen, one comment per line: where its first
/// comment starts, its first line, and its last line (1-based).
#[derive(Clone, Copy)]
struct Block {
    start: usize,
    first_line: usize,
    last_line: usize,
}

/// What the entries keep from one item to the next.
#[derive(Default)]
struct Entries {
    block: Option<Block>,
    /// [`Detail::Matches`]: the last `in-package` form seen and not shown yet; it is
    /// shown before the next match, so that a match is read in its package.
    package: Option<Entry>,
    /// Whether a top-level form was seen, and whether the comments before it (the file's
    /// preamble) reached its copyright and licence, whose paragraphs `headers` does not
    /// show as section titles (docs/views.md#comments).
    forms_seen: bool,
    in_licence: bool,
}

struct Context<'a> {
    source: &'a Source<'a>,
    options: &'a ViewOptions,
    diagnostics: &'a [Diagnostic],
    /// Whether the top-level form being rendered has no problem: only then are its short
    /// forms shown whole (the text of a broken form is not Lisp to be trusted).
    intact: std::cell::Cell<bool>,
    /// Which forms `kinds` and `features` show.
    filter: Filter<'a>,
    /// The 0-based line the window starts at: `offset`, or the first match.
    start: std::cell::Cell<usize>,
}

impl Context<'_> {
    /// Hands `emit` the entries that start with `item` (none, one or two); stops when
    /// `emit` breaks.
    fn entries_of(
        &self,
        item: &OutlineItem,
        state: &mut Entries,
        emit: &mut dyn FnMut(Entry) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let entry = |lines, expanded| Entry {
            line: item.start_line - 1,
            end_line: item.end_line,
            lines,
            expanded,
            context: 0,
        };
        match item.kind {
            ItemKind::Comment => self.comment_entries(item, state, emit)?,
            ItemKind::Form => {
                state.forms_seen = true;
                let block = state.block.take();
                if self.options.detail == Detail::Matches
                    && is_in_package(item)
                    && !self.item_matches(item, true)
                    && !self.item_matches(item, false)
                {
                    let mut expanded = 0;
                    let lines = self.form_lines(item, 0, &mut expanded);
                    state.package = Some(entry(lines, 0));
                    return ControlFlow::Continue(());
                }
                if let Some((mut lines, expanded)) = self.form_entry(item, block) {
                    // One entry with the match: a page never shows the package alone,
                    // and the package's lines are context, not counted by `limit`.
                    let mut context = 0;
                    if let Some(mut package) = state.package.take() {
                        context = package.cost();
                        package.lines.append(&mut lines);
                        lines = package.lines;
                    }
                    emit(Entry {
                        context,
                        ..entry(lines, expanded)
                    })?;
                }
            }
            ItemKind::Shebang => emit(entry(
                vec![Line::numbered(item.start_line, self.text(item))],
                0,
            ))?,
            ItemKind::Stray => {
                state.block = None;
                emit(entry(self.diagnostic_notes(item).collect(), 0))?;
            }
            ItemKind::Whitespace => {}
        }
        ControlFlow::Continue(())
    }

    /// A comment: a section header (`headers`), its text (`all`), or nothing but the
    /// block of comments it extends for the form after it (`preceding`); an unterminated
    /// `#|` always says so.
    fn comment_entries(
        &self,
        item: &OutlineItem,
        state: &mut Entries,
        emit: &mut dyn FnMut(Entry) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let comments = self.options.comments;
        let line = item.start_line - 1;
        let entry = |lines| Entry {
            line,
            end_line: item.end_line,
            lines,
            expanded: 0,
            context: 0,
        };
        let own_line = self.starts_line(item.start);
        let is_line_comment = self.source.bytes()[item.start] == b';';
        if own_line && is_line_comment {
            state.block = match state.block {
                Some(b) if b.last_line + 1 == item.start_line => Some(Block {
                    last_line: item.end_line,
                    ..b
                }),
                _ => {
                    // Borrowed: a trailing `\r` changes neither test below.
                    let text = self.source.text(item.start, item.end);
                    state.in_licence |= !state.forms_seen && is_licence(&text);
                    if comments == Comments::Headers
                        && text.starts_with(";;;")
                        && (state.forms_seen || !state.in_licence)
                    {
                        emit(entry(vec![Line::numbered(
                            item.start_line,
                            self.text(item),
                        )]))?;
                    }
                    Some(Block {
                        start: item.start,
                        first_line: item.start_line,
                        last_line: item.end_line,
                    })
                }
            };
        } else {
            state.block = None;
        }
        let mut lines = if comments == Comments::All && line >= self.start.get() {
            self.verbatim(item, 0)
        } else {
            Vec::new()
        };
        // An unterminated `#|` hides the rest of the file: always say so.
        lines.extend(self.diagnostic_notes(item));
        if !lines.is_empty() {
            emit(entry(lines))?;
        }
        ControlFlow::Continue(())
    }

    /// A form's lines (its comment block first with `preceding`) and how many forms it
    /// expanded; `None` when it is not shown (before `offset`, or no match where only
    /// matches are shown): then its text is never made.
    fn form_entry(&self, item: &OutlineItem, block: Option<Block>) -> Option<(Vec<Line>, usize)> {
        if item.start_line - 1 < self.start.get() {
            return None;
        }
        if self.options.detail == Detail::Matches
            && !self.item_matches(item, true)
            && !self.item_matches(item, false)
        {
            return None;
        }
        let mut lines = Vec::new();
        if self.options.comments == Comments::Preceding {
            if let Some(b) = block.filter(|b| b.last_line + 1 == item.start_line) {
                self.block_lines(b, &mut lines);
            }
        }
        let mut expanded = 0;
        self.intact.set(self.diagnostics_in(item).next().is_none());
        let form_lines = self.form_lines(item, 0, &mut expanded);
        if lines.is_empty() {
            lines = form_lines; // the usual entry: no second vector
        } else {
            lines.extend(form_lines);
        }
        lines.extend(self.diagnostic_notes(item));
        Some((lines, expanded))
    }

    /// The diagnostics inside `item`, as notes.
    fn diagnostic_notes<'s>(&'s self, item: &OutlineItem) -> impl Iterator<Item = Line> + 's {
        self.diagnostics_in(item)
            .map(|d| Line::Note(format!("[{}]", d.message)))
    }

    /// The most lines one part of an entry needs: an entry over `limit` lines shows only
    /// its first `limit`, so the lines after the one that makes it too long are never
    /// made (a form of a million lines costs no more than the limit).
    fn max_lines(&self) -> usize {
        self.options.limit.saturating_add(1)
    }

    /// The lines of a comment block, read again from the source: each of its lines holds
    /// one `;` comment after blanks.
    fn block_lines(&self, block: Block, lines: &mut Vec<Line>) {
        let bytes = self.source.bytes();
        let mut at = block.start;
        let last = block
            .last_line
            .min(block.first_line.saturating_add(self.max_lines() - 1));
        for number in block.first_line..=last {
            let eol = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |k| at + k);
            let text = self.source.text(at, eol);
            lines.push(Line::numbered(
                number,
                text.trim_end_matches('\r').to_string(),
            ));
            let next = (eol + 1).min(bytes.len());
            at = memchr::memchr(b';', &bytes[next..]).map_or(bytes.len(), |k| next + k);
        }
    }

    /// The lines of a form: collapsed, verbatim, or a container with its children.
    fn form_lines(&self, item: &OutlineItem, depth: usize, expanded: &mut usize) -> Vec<Line> {
        self.form_lines_with_tail(item, depth, expanded).0
    }

    /// [`Context::form_lines`], and the length of the comment that ends the last line
    /// (` ;; docstring`): a container's closing `)` goes before it, not into the comment.
    fn form_lines_with_tail(
        &self,
        item: &OutlineItem,
        depth: usize,
        expanded: &mut usize,
    ) -> (Vec<Line>, usize) {
        let names = self.options.detail == Detail::Names;
        let Some(form) = &item.form else {
            return if names {
                (Vec::new(), 0)
            } else {
                (self.verbatim(item, depth), 0)
            };
        };
        if names && !(self.name_matches(form) || self.content_matches(item)) {
            return (self.name_lines(item, form, depth, expanded), 0);
        }
        if !form.children.is_empty() {
            return self.container_lines(item, form, depth, expanded);
        }
        if self.name_matches(form) || self.content_matches(item) {
            *expanded += 1;
            return (self.verbatim(item, depth), 0);
        }
        if let Some(line) = self.short_form(item, depth) {
            return (vec![line], 0);
        }
        let doc = form
            .doc()
            .filter(|_| matches!(self.options.detail, Detail::Full | Detail::Matches));
        // The line's room, in one allocation: indentation, conditionals, signature, ` ...`
        // (an unclosed form), ` ;; ` and the docstring.
        let conditionals: usize = form.conditionals().iter().map(|c| c.len() + 1).sum();
        let room = 2 * depth + conditionals + form.signature().len() + 8;
        let mut text = String::with_capacity(room + doc.map_or(0, str::len));
        text.push_str(&indent(depth));
        push_with_conditionals(&mut text, form, form.signature());
        self.mark_unclosed(item, &mut text);
        let mut tail = 0;
        if let Some(doc) = doc {
            let before = text.len();
            text.push_str(" ;; ");
            text.push_str(doc);
            tail = text.len() - before;
        }
        (vec![Line::numbered(item.start_line, text)], tail)
    }

    /// [`Detail::Names`]: `OPERATOR NAME` for a definition, nothing for other forms; the
    /// children of a container below it.
    fn name_lines(
        &self,
        item: &OutlineItem,
        form: &Form,
        depth: usize,
        expanded: &mut usize,
    ) -> Vec<Line> {
        let mut lines = Vec::new();
        if let (Some(op), Some(name)) = (form.operator.as_deref(), form.name.as_deref()) {
            let mut text = indent(depth);
            let key = form.method_key();
            let shown = key.as_deref().unwrap_or(name);
            push_with_conditionals(&mut text, form, &format!("{op} {shown}"));
            lines.push(Line::numbered(item.start_line, text));
        }
        let child_depth = depth + usize::from(!lines.is_empty());
        for child in &form.children {
            if self.filter.child_shown(child) {
                lines.extend(self.form_lines_with_tail(child, child_depth, expanded).0);
            }
        }
        lines
    }

    /// A form the file leaves open whose signature closes as if it did not
    /// (`(defun h ()` shown `(defun h ())`): its `)` follows a `...`, as every closer the
    /// file does not have (docs/views.md#collapsed-view).
    fn mark_unclosed(&self, item: &OutlineItem, text: &mut String) {
        let unclosed = self
            .diagnostics_in(item)
            .any(|d| d.kind == DiagnosticKind::Unclosed);
        if unclosed && text.ends_with(')') && !text.trim_end_matches(')').ends_with("...") {
            text.pop();
            text.push_str(" ...)");
        }
    }

    /// A container: its head line, then its children, the closing `)` after the last
    /// child (before that child's comment); verbatim when its own text matches
    /// `content_pattern` and no child matched, whole when it is a short form.
    fn container_lines(
        &self,
        item: &OutlineItem,
        form: &Form,
        depth: usize,
        expanded: &mut usize,
    ) -> (Vec<Line>, usize) {
        let before = *expanded;
        let mut children: Vec<Line> = Vec::new();
        let mut tail = 0;
        // Children `kinds` or `features` hide: the container is never shown whole then.
        let mut filtered = false;
        for child in &form.children {
            if !self.filter.child_shown(child) {
                filtered = true;
                continue;
            }
            let at = *expanded;
            let (lines, child_tail) = self.form_lines_with_tail(child, depth + 1, expanded);
            // Only the matches: the container's other children are not shown either
            // (its head line says where the match is).
            if self.options.detail == Detail::Matches && *expanded == at {
                filtered = true;
                continue;
            }
            children.extend(lines);
            tail = child_tail;
        }
        let child_matched = *expanded > before;
        if !child_matched && !filtered && self.content_matches(item) {
            *expanded = before + 1;
            return (self.verbatim(item, depth), 0);
        }
        if !child_matched && !filtered {
            if let Some(line) = self.short_form(item, depth) {
                return (vec![line], 0);
            }
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
            let at = text.len().saturating_sub(tail);
            text.insert(at, ')');
        }
        if let Some(cut) = form.children_cut_at {
            lines.push(Line::Note(format!(
                "[More forms inside, from line {cut}, are not listed: a container lists at most {MAX_CHILDREN}. Read them with {}.]",
                self.options.hints.render(&Hint::Raw {
                    offset: cut - 1,
                    limit: None
                })
            )));
        }
        (lines, tail)
    }

    /// The form whole on one line, when its source is one line of at most
    /// [`SHORT_FORM_CHARS`] characters, in a top-level form without a problem
    /// (docs/views.md#collapsed-view).
    fn short_form(&self, item: &OutlineItem, depth: usize) -> Option<Line> {
        // Characters are at most 4 bytes: a longer span is not short, whatever it holds.
        if item.start_line != item.end_line || item.end - item.start > 4 * SHORT_FORM_CHARS {
            return None;
        }
        if !self.intact.get() {
            return None;
        }
        let text = self.source.text(item.start, item.end);
        let text = text.trim_end_matches('\r');
        if text.chars().count() > SHORT_FORM_CHARS || text.contains('\n') {
            return None;
        }
        // The scanner closed it; the view checks it again before showing it as Lisp.
        if !Balance::of(text).is_closed() {
            return None;
        }
        let mut line = String::with_capacity(2 * depth + text.len());
        line.push_str(&indent(depth));
        line.push_str(text);
        Some(Line::numbered(item.start_line, line))
    }

    fn name_matches(&self, form: &Form) -> bool {
        let Some(p) = &self.options.name_pattern else {
            return false;
        };
        form.name.as_deref().is_some_and(|n| p.is_match(n))
            || form.method_key().is_some_and(|k| p.is_match(&k))
            || derived_name_matches(form, p)
    }

    fn content_matches(&self, item: &OutlineItem) -> bool {
        let Some(p) = &self.options.content_pattern else {
            return false;
        };
        p.is_match(&self.source.text(item.start, item.end))
    }

    /// Whether the item or one of its children matches the name (or content) pattern.
    fn item_matches(&self, item: &OutlineItem, by_name: bool) -> bool {
        let mut stack = vec![item];
        while let Some(item) = stack.pop() {
            if let Some(form) = &item.form {
                if (by_name && self.name_matches(form)) || (!by_name && self.content_matches(item))
                {
                    return true;
                }
                stack.extend(form.children.iter().filter(|c| self.filter.child_shown(c)));
            }
        }
        false
    }

    /// The diagnostics inside the item. They come in file order, each inside its item.
    /// The diagnostics inside the item. They come in file order, each inside its item.
    fn diagnostics_in<'d>(&'d self, item: &OutlineItem) -> impl Iterator<Item = &'d Diagnostic> {
        let (start, end) = (item.start, item.end);
        let first = self.diagnostics.partition_point(|d| d.offset < start);
        self.diagnostics[first..]
            .iter()
            .take_while(move |d| d.offset < end)
    }

    /// The item's source lines, each with its number. The first line keeps the text
    /// before the item when that is only indentation, else gets the view's indentation.
    fn verbatim(&self, item: &OutlineItem, depth: usize) -> Vec<Line> {
        let bytes = self.source.bytes();
        // The blanks before the item, when they are all that precedes it on its line. Only
        // the blanks are looked at, never the whole line: many items on one long line stay
        // linear.
        let blanks = bytes[..item.start]
            .iter()
            .rev()
            .take_while(|&&c| c == b' ' || c == b'\t')
            .count();
        let lead_start = item.start - blanks;
        let prefix = if lead_start == 0 || bytes[lead_start - 1] == b'\n' {
            String::from_utf8_lossy(&bytes[lead_start..item.start]).into_owned()
        } else {
            indent(depth)
        };
        let text = self.source.text(item.start, item.end);
        // An item that runs to the end of the file may end with its last newline.
        let text = text.strip_suffix('\n').unwrap_or(&text);
        text.split('\n')
            .enumerate()
            .take(self.max_lines())
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

    /// Whether only blanks (or a BOM) precede `at` on its line. `all` stops at the first
    /// other byte, so this looks back no further than the blanks.
    fn starts_line(&self, at: usize) -> bool {
        let bytes = self.source.bytes();
        bytes[..at]
            .iter()
            .rev()
            .take_while(|&&c| c != b'\n')
            .all(|&c| c == b' ' || c == b'\t' || c == 0xBF || c == 0xBB || c == 0xEF)
    }
}

/// Whether a comment line opens a file's copyright or licence text: from it to the first
/// form, `headers` shows no section title (the paragraphs of a licence are not sections).
fn is_licence(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    [
        "copyright",
        "licen",
        "redistribution",
        "permission is hereby",
        "warrant",
        "spdx",
        "all rights reserved",
        "this software",
        "free software",
    ]
    .iter()
    .any(|word| lower.contains(word))
}

/// Whether `item` is an `(in-package ...)` form (any case, any package prefix).
fn is_in_package(item: &OutlineItem) -> bool {
    let operator = item.form.as_ref().and_then(|f| f.operator.as_deref());
    operator.is_some_and(|op| {
        let bare = op.rsplit(':').next().unwrap_or(op);
        bare.eq_ignore_ascii_case("in-package")
    })
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

/// Whether a name the form makes without spelling it (a structure's accessor, a slot's
/// reader, docs/find.md#derived-definitions) matches: `-n copy-lexer` expands the
/// `defstruct` that makes it.
fn derived_name_matches(form: &Form, p: &super::Pattern) -> bool {
    if form.entry().and_then(|e| e.derives).is_none() {
        return false;
    }
    crate::model::derived::derive(form)
        .derived
        .iter()
        .any(|d| p.is_match(&d.name) || d.key.as_deref().is_some_and(|k| p.is_match(k)))
}
