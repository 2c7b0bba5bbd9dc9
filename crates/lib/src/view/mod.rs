//! View: renders what the reader sees (docs/views.md): the collapsed outline of a Lisp file with
//! matching forms expanded verbatim, a raw line window, or grep-with-context for text.
//!
//! Pure functions of the source, its outline and the options. Line numbers are 1-based and
//! right-aligned to the width of the file's last line number; notes in `[brackets]` say
//! what the reader would otherwise miss (a recovered region, a pattern that matched
//! nothing, a cut view).

pub(crate) mod collapsed;
mod filter;
mod lines;
mod raw;
mod text_filtered;
mod text_streamed;

use crate::cancel::CancelToken;
use crate::hint::Hint;
use crate::outline::{Items, Outline, StreamedOutline};
pub use crate::pattern::Pattern;
use crate::source::Source;
use serde::{Deserialize, Serialize};

pub use filter::{FeatureList, Kinds};
pub use lines::MAX_LINE_CHARS;
pub use raw::{render_window, Paging};
pub use text_streamed::{StreamedGrep, SHOWN_LINE_BYTES};

/// Which view was rendered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mode {
    #[serde(rename = "lisp-collapsed")]
    LispCollapsed,
    #[serde(rename = "raw")]
    Raw,
    #[serde(rename = "text-filtered")]
    TextFiltered,
    /// The map of a directory, an `.asd` file or several paths (docs/project.md).
    #[serde(rename = "project")]
    Project,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::LispCollapsed => "lisp-collapsed",
            Mode::Raw => "raw",
            Mode::TextFiltered => "text-filtered",
            Mode::Project => "project",
        }
    }
}

/// Which top-level comments the collapsed view shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Comments {
    /// None.
    #[default]
    None,
    /// The first line of each top-level `;;;` / `;;;;` comment block, as section titles.
    Headers,
    /// The comment block directly above each shown form.
    Preceding,
    /// Every top-level comment.
    All,
}

/// Default `limit`: lines a view returns (the one definition; the tool, the CLI and the
/// MCP schema's `default`, checked by a test, use it).
pub const DEFAULT_LIMIT: usize = 2000;
/// Default `context_lines` of the text-filtered view.
pub const DEFAULT_CONTEXT_LINES: usize = 5;

/// What to render.
#[derive(Clone, Debug)]
pub struct ViewOptions {
    /// Collapsed view for Lisp files (`false`: raw lines).
    pub collapsed: bool,
    /// Expand definitions whose name matches (case-insensitive).
    pub name_pattern: Option<Pattern>,
    /// Expand forms whose text matches; grep for text files.
    pub content_pattern: Option<Pattern>,
    /// 0-based first line.
    pub offset: usize,
    /// Maximum number of lines returned.
    pub limit: usize,
    pub comments: Comments,
    /// Collapsed view: show only the forms with these operators (docs/views.md#kinds-and-features).
    pub kinds: Option<Kinds>,
    /// Collapsed view: hide the forms `#+`/`#-` exclude under these features.
    pub features: Option<FeatureList>,
    /// Context lines around each match in text-filtered mode (before and after, unless
    /// `before_context` or `after_context` is given: [`ViewOptions::before`]).
    pub context_lines: usize,
    /// Text-filtered mode: context lines before each match, when not `context_lines`.
    pub before_context: Option<usize>,
    /// Text-filtered mode: context lines after each match, when not `context_lines`.
    pub after_context: Option<usize>,
    /// Text-filtered mode: stop after this many matching lines (as `grep -m`).
    pub max_count: Option<usize>,
    /// Number lines in raw mode.
    pub line_numbers: bool,
    /// Set when the caller no longer wants the answer: the views stop early (the
    /// result is then incomplete, and [`crate::tool::read_cancellable`] says so).
    pub cancel: CancelToken,
    /// Collapsed view: how much each form shows (a project map's budget steps,
    /// docs/project.md#budget).
    pub detail: Detail,
    /// How the surface that prints the view spells its hints (docs/tool.md#hints).
    pub hints: crate::hint::HintStyle,
}

impl ViewOptions {
    /// Lines of leading context of a match in the text-filtered view: `before_context`;
    /// 0 when only `after_context` is given (as `grep -A`); else `context_lines`.
    pub fn before(&self) -> usize {
        one_side(self.before_context, self.after_context, self.context_lines)
    }

    /// Lines of trailing context of a match in the text-filtered view (as [`Self::before`]).
    pub fn after(&self) -> usize {
        one_side(self.after_context, self.before_context, self.context_lines)
    }
}

/// The context of one side: its own setting, else none when the other side's is set
/// (`-B 5` alone shows no trailing context, as in grep), else `context_lines`.
fn one_side(this: Option<usize>, other: Option<usize>, both: usize) -> usize {
    match (this, other) {
        (Some(n), _) => n,
        (None, Some(_)) => 0,
        (None, None) => both,
    }
}

/// How much the collapsed view shows of each form that no pattern expands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Detail {
    /// Signatures with the first line of the docstring (the single-file view).
    #[default]
    Full,
    /// Signatures without docstrings.
    NoDocstrings,
    /// `OPERATOR NAME` of each definition (methods with their qualifiers and
    /// specializers); forms without a name are not listed.
    Names,
    /// Only the top-level forms a pattern matches (or holds a match), as [`Detail::Full`]
    /// shows them: a project map's cross-file patterns.
    Matches,
    /// A project map's files with their number of definitions, one line each (a map only).
    Counts,
}

impl Default for ViewOptions {
    fn default() -> Self {
        ViewOptions {
            collapsed: true,
            name_pattern: None,
            content_pattern: None,
            offset: 0,
            limit: DEFAULT_LIMIT,
            comments: Comments::None,
            kinds: None,
            features: None,
            context_lines: DEFAULT_CONTEXT_LINES,
            before_context: None,
            after_context: None,
            max_count: None,
            line_numbers: false,
            cancel: CancelToken::default(),
            detail: Detail::Full,
            hints: crate::hint::HintStyle::default(),
        }
    }
}

/// A rendered view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct View {
    pub mode: Mode,
    pub content: String,
    /// Top-level forms in the file (0 for text files).
    pub total_forms: usize,
    /// Forms shown verbatim because a pattern matched them.
    pub expanded_forms: usize,
    /// Whether the view stops before the end of what it would show.
    pub truncated: bool,
    /// The `offset` that continues a truncated view.
    pub next_offset: Option<usize>,
    /// Lines cut at [`MAX_LINE_CHARS`] characters, with the byte range of their rest.
    pub cut_lines: Vec<CutLine>,
    /// The text-filtered view stopped after this many matching lines (`max_count`): the
    /// answer is whole for the request, and lines after it were not searched.
    pub stopped_at_max_count: Option<usize>,
}

impl View {
    /// A view of `mode` with nothing in it yet.
    pub(crate) fn empty(mode: Mode) -> View {
        View {
            mode,
            content: String::new(),
            total_forms: 0,
            expanded_forms: 0,
            truncated: false,
            next_offset: None,
            cut_lines: Vec::new(),
            stopped_at_max_count: None,
        }
    }
}

/// A line a view cut (docs/views.md#long-lines): its 1-based number and the bytes
/// `start..end` of the file that hold what is not shown (strategy `byteRange` reads them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CutLine {
    pub line: u64,
    pub start: u64,
    pub end: u64,
}

/// Renders the view of a file. `outline` is `Some` for Lisp files.
pub fn render(source: &Source, outline: Option<&Outline>, options: &ViewOptions) -> View {
    match outline {
        Some(outline) if options.collapsed => collapsed::render(source, outline, options),
        Some(_) => raw_lisp(source, options),
        None if options.content_pattern.is_some() || options.name_pattern.is_some() => {
            text_filtered::render(source, options)
        }
        None => raw::render(source, options),
    }
}

/// Renders the view of a Lisp file from an outline made anew on each walk, so that the
/// memory used does not grow with the number of forms.
pub fn render_streamed(source: &Source, outline: &StreamedOutline, options: &ViewOptions) -> View {
    if options.collapsed {
        collapsed::render_items(source, outline, outline.form_count, options)
    } else {
        raw_lisp(source, options)
    }
}

/// What the collapsed view of a file shows, counted (a project map's counts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shown {
    /// Top-level forms `kinds` and `features` leave.
    pub forms: usize,
    /// The lines those forms start on: the fewest lines the full and no-docstrings views
    /// can take (each such line is a line of the view at least).
    pub lines: usize,
    /// Definitions among them and their children: the lines of [`Detail::Names`].
    pub definitions: usize,
}

/// What the collapsed view of a file shows, counted without rendering (a kept or a
/// streamed outline).
pub fn count_shown<'a>(outline: &dyn Items<'a>, options: &ViewOptions) -> Shown {
    collapsed::count_shown(outline, options)
}

/// The raw lines of a Lisp file.
fn raw_lisp(source: &Source, options: &ViewOptions) -> View {
    let mut view = raw::render(source, options);
    let say = |hint: Hint| options.hints.render(&hint);
    for (given, names) in [
        (
            options.name_pattern.is_some() || options.content_pattern.is_some(),
            ["name_pattern", "content_pattern"],
        ),
        (
            options.kinds.is_some() || options.features.is_some(),
            ["kinds", "features"],
        ),
    ] {
        if given {
            view.content.push_str(&format!(
                "[{} and {} apply to the collapsed view; {} shows raw lines.]\n",
                say(Hint::Parameter(names[0])),
                say(Hint::Parameter(names[1])),
                say(Hint::RawLines)
            ));
        }
    }
    view
}

/// Whether a path names a Common Lisp source file, by extension (docs/views.md#which-files-are-lisp).
pub fn is_lisp_path(path: &str) -> bool {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    matches!(ext.as_deref(), Some("lisp" | "lsp" | "cl" | "asd" | "ros"))
}

#[cfg(test)]
mod tests;
