//! Definitions and references across a project (docs/find.md): the `lisp-find` tool and
//! the `find` command as one library call, [`find`].
//!
//! A request names a scope (a file, a directory, an `.asd` file's directory) and one of:
//! a definition name (`name`), a definition name pattern (`name_pattern`), a symbol
//! whose uses to list (`symbol`), a symbol whose callers to list (`callers`), or a
//! definition whose callees to list (`callees`). The files of the scope are listed and read through the
//! guard and searched in parallel ([`crate::project::map_files`]); the answers are kept in
//! walk order, so the output does not depend on the threads.
//!
//! No index. What keeps a search fast is not looking: a file whose bytes do not
//! contain the name (case-insensitively) is not scanned at all; in a file that does, only
//! the top-level forms holding a candidate are lexed token by token (`references.rs`). A
//! long-lived surface may keep the files between searches ([`find_from`]): `kept.rs`
//! keeps what a search works out of a file's bytes alone with them.
//!
//! `definitions.rs` and `references.rs` search one file each; `calls.rs` reads the calls
//! of a form, `callers.rs` and `callees.rs` search one file for the callers and callees
//! modes (`callees::resolve` joins the files); `render.rs` pages the entries and makes the
//! text view (`names.rs` its names level); `symbol.rs` is the rule that says when two symbols are the same.
//!
//! This module does not touch the file system (the guard does), nor know about argv or
//! JSON-RPC.

mod budget;
mod callees;
mod callers;
mod calls;
mod calls_render;
mod cursor;
mod definitions;
mod derived;
mod kept;
pub mod learn_cap;
pub mod learned;
mod literal;
mod macros;
mod method_line;
mod names;
mod packages;
mod properties;
mod references;
mod render;
pub mod schema;
mod symbol;
mod template;
mod text;
mod through;

pub use crate::model::is_common_lisp_symbol;
pub use callees::{Callee, CalleeDefinition, CalleesEntry, MAX_CALLEE_DEFINITIONS};
pub use callers::Caller;
pub use symbol::{split_symbol, SymbolQuery};

use crate::cancel::CancelToken;
use crate::error::{ErrorCode, ToolError};
use crate::features::Features;
use crate::grammar::{symbol_key, Grammar};
use crate::guard::{Guard, LoadedFile, WalkedFile};
use crate::pattern::{PatternError, COMPILED_SIZE_LIMIT, MAX_PATTERN_BYTES};
use crate::project::source::{map_indexed_from, Memo, Sourced};
use crate::shown::quoted;
use crate::view::{self, Pattern};
use regex::bytes::{Regex, RegexBuilder};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Entries a page holds at most, in lines of `content`, when `limit` is not given.
pub const DEFAULT_LIMIT: usize = crate::view::DEFAULT_LIMIT;
/// Entries plus uses collected per request at most: past it the search stops taking files
/// and says so (memory stays bounded whatever the project).
pub const MAX_COLLECTED: usize = 200_000;
/// Characters of a use's line kept in `text` (the rest is cut, `…` appended).
pub const USE_TEXT_CHARS: usize = 200;

/// The parameters of the `lisp-find` tool (docs/find.md).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindRequest {
    /// A file, a directory (its Lisp files, recursively) or an `.asd` file (its
    /// directory). Relative to the first root; `.` by default.
    #[serde(default = "dot")]
    pub path: String,
    /// Definitions named exactly this (case-insensitive; package prefixes as in
    /// docs/find.md#symbols; `(setf foo)` too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Definitions whose name matches this regex or contains this text
    /// (case-insensitive), as `lisp-read-file`'s `name_pattern`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_pattern: Option<String>,
    /// The uses of this symbol, grouped by enclosing top-level form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// The top-level forms whose source text contains this text (literal,
    /// case-sensitive; strings and comments included), with the lines that hold it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The definitions whose code calls this symbol (docs/find.md#callers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callers: Option<String>,
    /// The definitions named this, with what their code calls (docs/find.md#callees).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callees: Option<String>,
    /// Only definitions with these operators; references: only in top-level forms with
    /// these operators.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kinds: Option<Vec<String>>,
    /// Leave out definitions and uses that `#+`/`#-` excludes under these features
    /// (as the reader would with them in `*features*`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub features: Option<Vec<String>>,
    /// Definitions: add each one's source text, verbatim.
    #[serde(default)]
    pub include_body: bool,
    /// How much of each entry the text shows: `names` for only its line, kind and name
    /// (docs/find.md#names); the default shows signatures and the lines of the uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<FindDetail>,
    /// The first entry to show, 0-based.
    #[serde(default)]
    pub offset: usize,
    /// Most lines of `content` a page holds (the first entry is always shown whole).
    #[serde(default = "default_limit")]
    pub limit: usize,
    /// How the surface spells the hints of the answer (set by the surface;
    /// docs/tool.md#hints).
    #[serde(skip)]
    pub hints: crate::hint::HintStyle,
}

fn dot() -> String {
    ".".into()
}
fn default_limit() -> usize {
    DEFAULT_LIMIT
}

impl FindRequest {
    /// A request with every default and no mode: set one of `name`, `name_pattern`,
    /// `symbol`, `text`.
    pub fn new(path: impl Into<String>) -> FindRequest {
        FindRequest {
            path: path.into(),
            name: None,
            name_pattern: None,
            symbol: None,
            text: None,
            callers: None,
            callees: None,
            kinds: None,
            features: None,
            include_body: false,
            detail: None,
            offset: 0,
            limit: DEFAULT_LIMIT,
            hints: crate::hint::HintStyle::default(),
        }
    }
}

/// A level of the text view coarser than the default (docs/find.md#names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FindDetail {
    /// Each entry as its line, `#+`/`#-` prefixes, kind and name (`24: defun disjoin`),
    /// as the map's names step: the answer to "which definitions use X" is their list.
    Names,
}

/// What a request looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FindMode {
    Definitions,
    References,
    Callers,
    Callees,
}

/// The result of the tool (docs/find.md#json).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindResult {
    /// The scope as shown (several paths of the command line joined by spaces).
    pub path: String,
    pub mode: FindMode,
    /// The text view.
    pub content: String,
    /// Definitions mode: the entries of this page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definitions: Option<Vec<Definition>>,
    /// References mode: the entries of this page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub references: Option<Vec<Reference>>,
    /// Callers mode: the entries of this page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callers: Option<Vec<Caller>>,
    /// Callees mode: the entries of this page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callees: Option<Vec<CalleesEntry>>,
    /// Files read and searched.
    pub files_searched: usize,
    /// Files of the scope that could not be read, with the guard's reason.
    pub files_skipped: Vec<SkippedFile>,
    /// Entries found (all pages).
    pub total: usize,
    /// The search stopped at its collection budget ([`MAX_COLLECTED`] entries and uses):
    /// later forms or files of the scope were not searched, so `total` counts only what
    /// was collected (`content` says where it stopped).
    pub stopped_at_budget: bool,
    /// Learning the scope's macros stopped at its bound in this file (as shown): what
    /// macros of it and of later files make may be missing (`content` says so too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learning_stopped_at: Option<String>,
    /// More entries than this page holds.
    pub truncated: bool,
    /// The `offset` of the next page.
    pub next_offset: Option<usize>,
    /// One of several paths given could not be read (it is in `files_skipped`): the
    /// command line's exit status is then 1, as a map's.
    #[serde(skip)]
    pub path_refused: bool,
}

/// A definition found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Definition {
    pub file: String,
    /// 1-based lines of the form (its `#+`/`#-` prefixes included).
    pub line: usize,
    pub end_line: usize,
    /// 0-based, in characters.
    pub column: usize,
    /// The operator as written, lowercased (`defun`, `cl:defmethod`).
    pub kind: String,
    /// As the outline prints it: `foo`, `(setf foo)`, `area :around (shape)` for methods.
    pub name: String,
    /// The collapsed one-line signature.
    pub signature: String,
    /// With `include_body`: the form's source text, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// A derived definition (docs/find.md#derived-definitions): the form that makes it
    /// (`line` is then the slot's or option's). `None` for a form that names itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<DefiningForm>,
    /// A definition made by the project's own macro (docs/find.md#definitions-made-by-the-projects-own-macros):
    /// the macro, lowercased; `form` is its call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// The home package of the defined symbol, folded (docs/find.md#packages); `null`
    /// for an uninterned symbol or a package's name.
    #[serde(default)]
    pub package: Option<String>,
    /// The package is defined outside the scope (or may be one that is).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub package_unresolved: bool,
    /// A `defpackage`'s exported names, folded, in order (docs/find.md#packages): what an
    /// agent asks of a package, without its whole form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exports: Option<Vec<String>>,
    #[serde(skip)]
    pub(crate) site: Site,
}

/// Where a definition or use is, for its package: the byte, the current package there,
/// the token as written (uses).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Site {
    pub at: usize,
    pub current: Option<String>,
    pub token: Option<String>,
}

/// The form that makes a derived definition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DefiningForm {
    /// 1-based lines of the form (its `#+`/`#-` prefixes included).
    pub line: usize,
    pub end_line: usize,
    /// Its operator as written, lowercased (`defstruct`).
    pub kind: String,
    /// Its name as the outline prints it (`lexer`).
    pub name: String,
}

/// A top-level form that uses the symbol.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    pub file: String,
    pub line: usize,
    pub end_line: usize,
    /// The operator as written, lowercased; empty when the form is not a list headed by a
    /// symbol.
    pub kind: String,
    /// What the form defines, as the outline prints it; `null` when it defines nothing.
    pub name: Option<String>,
    pub signature: String,
    /// Whether the form defines the symbol (or its `setf` function), itself or in a
    /// container (`progn`, `eval-when`).
    pub definition: bool,
    pub uses: Vec<Use>,
    /// The text view's line for the form: its `#+`/`#-` prefixes and `(operator name
    /// ...)` for a named form (the lambda list is not repeated: `find --name` gives it),
    /// else the signature. Not serialized: `kind`, `name` and `signature` hold it.
    #[serde(skip)]
    pub heading: String,
    /// The home package of the symbol of these uses, folded (docs/find.md#packages): a
    /// form using symbols of two packages is two entries. `null` for `#:foo`.
    #[serde(default)]
    pub package: Option<String>,
    /// The package is defined outside the scope (or may be one that is).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub package_unresolved: bool,
}

/// One use: a token that is the symbol.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Use {
    /// 1-based.
    pub line: usize,
    /// 0-based, in characters, where the token starts (after `'`, `#'`).
    pub column: usize,
    /// The line, cut at [`USE_TEXT_CHARS`] characters.
    pub text: String,
    /// Callers: the project's macro whose call this is and whose expansion calls the
    /// symbol (docs/find.md#calls-through-the-projects-macros), lowercased.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub through: Option<String>,
    #[serde(skip)]
    pub(crate) site: Site,
}

/// A file of the scope not searched.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedFile {
    pub file: String,
    pub code: ErrorCode,
    pub message: String,
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        [
            ErrorCode::InvalidArgument,
            ErrorCode::NotFound,
            ErrorCode::IsDirectory,
            ErrorCode::NotFile,
            ErrorCode::AccessDenied,
            ErrorCode::BinaryFile,
            ErrorCode::SizeLimitExceeded,
            ErrorCode::Cancelled,
            ErrorCode::Internal,
        ]
        .into_iter()
        .find(|c| c.as_str() == text)
        .ok_or_else(|| serde::de::Error::custom(format!("unknown error code {text}")))
    }
}

/// What one search compares, checked and compiled once per request.
pub(crate) enum Target {
    Name(SymbolQuery),
    Pattern(Box<Pattern>),
    Symbol(SymbolQuery),
    /// Literal text, case-sensitive, anywhere in a form (docs/find.md#text).
    Text,
    Callers(SymbolQuery),
    Callees(SymbolQuery),
}

/// A request checked: the target, the prefilter, the kinds.
pub(crate) struct Search {
    pub target: Target,
    /// Matches the name's text case-insensitively: a file without a match cannot hold the
    /// definition or use (`None`: every file is searched).
    pub prefilter: Option<literal::Finder>,
    /// Folded operator names (`kinds`).
    pub kinds: Option<HashSet<String>>,
    /// `features`: what the reader reads.
    pub features: Option<Features>,
    pub include_body: bool,
    /// Entries plus uses collected so far outside the files' own searches (the passes
    /// over the gathered answers).
    pub collected: AtomicUsize,
    /// The collection budget spent in the scope's file order ([`budget`]).
    pub budget: budget::OrderedBudget,
    /// The bound on what learning the scope's macros holds ([`learn_cap`]).
    pub learn_cap: learn_cap::LearnCap,
    /// `name` or `symbol` with a package prefix (`cl-ppcre:scan`): what the entries'
    /// packages must be (docs/find.md#packages); the files are searched by name.
    pub package: Option<crate::model::symbols::Written>,
    /// Definitions by name or pattern: the literals the prefilter was built from.
    pub literals: Option<Vec<String>>,
    /// The prefilter of the literals alone (`prefilter` once the learned macros are
    /// known): whether a form spells a name that can match.
    pub spelled: Option<literal::Finder>,
    /// Definitions by name or pattern: the literals with the names of the learned macros
    /// whose calls may make a wanted name; replaces `prefilter` in the files' search.
    pub widened: Option<literal::Finder>,
    /// The scope's learned definer macros (definitions mode).
    pub macros: crate::model::expand::Macros,
    /// A top-level `#.` form of the scope may define something (`model::expand::read_time`).
    pub read_time: bool,
    /// Definitions by name or pattern: which calls of learned macros can make a wanted
    /// name at all (`None`: every call may).
    pub gate: Option<crate::model::expand::pieces::Gate>,
    /// Callers: the scope's macros that may write a call of the symbol.
    pub through: through::Writers,
    /// Where the walked files' bytes come from ([`find_from`]).
    pub source: std::sync::Arc<dyn crate::project::source::FileSource>,
    /// What a long-lived surface keeps of what each file taught ([`learned`]), and the
    /// key of this search's learning.
    pub learned: Option<(std::sync::Arc<learned::LearnedCache>, String)>,
    /// The names a kept file must hold one of not to be skipped ([`kept`]), worked out
    /// once the search's writers are known, on the first kept file.
    pub kept_names: std::sync::OnceLock<kept::Names>,
}

impl Search {
    /// Whether the reader reads the datum after `#+expression` (`plus`) or `#-expression`
    /// under the request's features (without features: unless no features could make it
    /// read, as `#-(and)`; an undecided expression is read).
    pub(crate) fn reads(&self, plus: bool, expression: &[u8]) -> bool {
        crate::features::reads_under(plus, expression, self.features.as_ref()) != Some(false)
    }

    /// What the reader gives the conditional written `text` (`#+expr` or `#-expr`) under
    /// the request's features ([`crate::features::reads_under`]).
    fn conditional_reads(&self, text: &[u8]) -> Option<bool> {
        let expression = text.get(2..).unwrap_or_default();
        crate::features::reads_under(text.starts_with(b"#+"), expression, self.features.as_ref())
    }

    /// [`crate::outline::each_form`] over the top-level forms the reader may read: a form
    /// that stacked conditionals before it skip (`#+(or) #+(or) (defun a ()) (defun b
    /// ())` skips both, [`crate::features::Run`]) is not wanted.
    pub(crate) fn each_form_read<'a>(
        &self,
        b: &'a [u8],
        grammar: &'a Grammar,
        // Generic, not `dyn`: the check of each form is inlined beside it (a form costs
        // one dynamic call, as with `each_form` alone).
        wanted: &mut impl FnMut(&crate::scan::Item) -> ControlFlow<(), bool>,
        f: &mut dyn FnMut(&crate::scan::Item, &crate::outline::OutlineItem<'a>) -> ControlFlow<()>,
    ) {
        let mut run = crate::features::Run::default();
        let mut read = |item: &crate::scan::Item| {
            if run.is_clear() && item.conditionals.is_empty() {
                return true;
            }
            let conditionals = item.conditionals.iter();
            let verdicts = conditionals.map(|c| self.conditional_reads(&b[c.start..c.end]));
            run.datum(verdicts) != Some(false)
        };
        crate::outline::each_form(
            b,
            grammar,
            &mut |item| {
                if read(item) {
                    wanted(item)
                } else {
                    ControlFlow::Continue(false)
                }
            },
            f,
        );
    }

    /// The children of the container `item` that the reader may read, in order: the
    /// elements of one list are a run as the top-level forms are
    /// ([`Self::each_form_read`]), its atoms and declarations included, which the outline
    /// does not list as children (`(progn #+(or) #+(or) (defun a ()) nil (defun b ()))`
    /// skips `a` and `nil`). The list is read again only when it holds a `#+` or `#-`.
    pub(crate) fn children_read<'i, 'a>(
        &self,
        b: &[u8],
        item: &'i crate::outline::OutlineItem<'a>,
    ) -> Vec<&'i crate::outline::OutlineItem<'a>> {
        let Some(form) = &item.form else {
            return Vec::new();
        };
        let (core, end) = (form.core(), item.end.min(b.len()));
        let list = b.get(core..end).unwrap_or_default();
        let conditional =
            memchr::memchr_iter(b'#', list).any(|i| matches!(list.get(i + 1), Some(b'+' | b'-')));
        if form.children.is_empty() || !conditional || b.get(core) != Some(&b'(') {
            return form.children.iter().collect();
        }
        // The children are some of the list's elements, in order: both are walked once.
        let mut run = crate::features::Run::default();
        let mut children = form.children.iter().peekable();
        let mut read = Vec::new();
        for element in crate::scan::Elements::new(b, core, end) {
            let conditionals = element.conditionals.iter();
            let verdicts = conditionals.map(|c| self.conditional_reads(&b[c.start..c.end]));
            let reads = run.datum(verdicts) != Some(false);
            while children.peek().is_some_and(|c| c.start < element.start) {
                children.next();
            }
            if let Some(child) = children.next_if(|c| c.start == element.start) {
                if reads {
                    read.push(child);
                }
            }
        }
        read
    }

    pub(crate) fn kind_wanted(&self, operator: Option<&str>) -> bool {
        match &self.kinds {
            None => true,
            Some(kinds) => operator.is_some_and(|op| kinds.contains(&symbol_key(op))),
        }
    }

    /// Takes `n` from the collection budget (the file's own, in a file's search); false
    /// once it is spent.
    pub(crate) fn collect(&self, n: usize) -> bool {
        budget::take_in_file(n, MAX_COLLECTED)
            .unwrap_or_else(|| self.collected.fetch_add(n, Ordering::Relaxed) + n <= MAX_COLLECTED)
    }

    /// [`Self::collect`] of one entry and its `uses`: how many uses to keep. `Some(k)` with
    /// `k < uses` when the budget ran out in this entry (at least one use left to show
    /// keeps the entry, its uses cut: a form with more uses than the whole budget is still
    /// answered); `None` when not even the entry and one use fit.
    pub(crate) fn collect_uses(&self, uses: usize) -> Option<usize> {
        let n = 1 + uses;
        let fit = budget::take_part_in_file(n, MAX_COLLECTED).unwrap_or_else(|| {
            let before = self.collected.fetch_add(n, Ordering::Relaxed);
            MAX_COLLECTED.saturating_sub(before).min(n)
        });
        match fit {
            _ if fit == n => Some(uses),
            0 | 1 => None,
            _ => Some(fit - 1),
        }
    }

    /// `work` on each of `files`, read from the request's source, in parallel
    /// ([`crate::project::map_files`]).
    pub(crate) fn map_files<R: Send>(
        &self,
        guard: &Guard,
        files: &[WalkedFile],
        cancel: &CancelToken,
        work: impl Fn(&LoadedFile) -> R + Sync,
    ) -> Vec<Result<R, ToolError>> {
        let sourced = |sourced: &Sourced| work(&sourced.file);
        let mut results =
            crate::project::source::map_files_from(&*self.source, guard, files, cancel, sourced);
        // Every pass reads the large files the answer reads: what a macro of one teaches.
        search_large_files(guard, files, &mut results, cancel, &|_, file| work(file));
        results
    }

    /// `work` over every file of the scope, in order: a named file as it is, a walk's
    /// files through [`Search::map_files`]; a file that cannot be read gives nothing
    /// (its refusal is reported by the search itself).
    fn map_parts<R: Send>(
        &self,
        guard: &Guard,
        parts: &[ScopePart],
        cancel: &CancelToken,
        work: impl Fn(&LoadedFile) -> R + Sync,
    ) -> Vec<R> {
        let mut out = Vec::new();
        for part in parts {
            match part {
                ScopePart::Single(file) => out.push(work(file)),
                ScopePart::Walked(files) => out.extend(
                    self.map_files(guard, files, cancel, &work)
                        .into_iter()
                        .flatten(),
                ),
            }
        }
        out
    }

    /// [`Search::map_parts`] over only the files whose names (`names_of`: per part, per
    /// file, the names a first pass read in it) `chosen` accepts: the files read again
    /// when learning what the macros need.
    fn map_chosen_parts<R: Send>(
        &self,
        guard: &Guard,
        parts: &[ScopePart],
        names_of: &[Vec<Vec<String>>],
        chosen: impl Fn(&Vec<String>) -> bool,
        cancel: &CancelToken,
        work: impl Fn(&LoadedFile) -> R + Sync,
    ) -> Vec<R> {
        let mut out = Vec::new();
        for (part, names_of) in parts.iter().zip(names_of) {
            match part {
                ScopePart::Single(file) if names_of.iter().any(&chosen) => out.push(work(file)),
                ScopePart::Single(_) => {}
                ScopePart::Walked(files) => {
                    let those: Vec<_> = files
                        .iter()
                        .zip(names_of)
                        .filter(|(_, names)| chosen(names))
                        .map(|(f, _)| f.clone())
                        .collect();
                    out.extend(
                        self.map_files(guard, &those, cancel, &work)
                            .into_iter()
                            .flatten(),
                    );
                }
            }
        }
        out
    }

    pub(crate) fn mode(&self) -> FindMode {
        match self.target {
            Target::Symbol(_) | Target::Text => FindMode::References,
            Target::Callers(_) => FindMode::Callers,
            Target::Callees(_) => FindMode::Callees,
            _ => FindMode::Definitions,
        }
    }
}

/// What one file gave.
#[derive(Default)]
pub(crate) struct FileAnswer {
    pub definitions: Vec<Definition>,
    pub references: Vec<Reference>,
    /// The file was searched (not skipped because the collection budget was spent).
    pub searched: bool,
    /// The collection budget ran out: entries after these were not kept.
    pub over_budget: bool,
    /// Definitions mode: the file's structures, for the accessors of `:include`.
    pub structures: Vec<derived::FileStructure>,
    /// Definitions and callers modes: the file's budget of macro expansions ran short
    /// (linear in its size): definitions its later macro calls make, or calls they
    /// write, may be missing.
    pub expansions_cut: bool,
    /// Callers mode: the file's callers.
    pub callers: Vec<Caller>,
    /// Callees mode: the file's definitions named NAME and the names it defines.
    pub callees: callees::FileCallees,
    /// The packages the file defines.
    pub packages: Vec<crate::model::packages::PackageDef>,
}

impl FileAnswer {
    pub(crate) fn definitions(definitions: Vec<Definition>, over_budget: bool) -> FileAnswer {
        FileAnswer {
            definitions,
            searched: true,
            over_budget,
            ..FileAnswer::default()
        }
    }

    pub(crate) fn references(references: Vec<Reference>, over_budget: bool) -> FileAnswer {
        FileAnswer {
            references,
            searched: true,
            over_budget,
            ..FileAnswer::default()
        }
    }

    /// The answer with every entry naming the file `file`.
    fn named(mut self, file: &str) -> FileAnswer {
        self.definitions
            .iter_mut()
            .for_each(|d| d.file = file.to_string());
        self.references
            .iter_mut()
            .for_each(|r| r.file = file.to_string());
        self.callers
            .iter_mut()
            .for_each(|c| c.file = file.to_string());
        for (entry, _) in &mut self.callees.entries {
            entry.file = file.to_string();
        }
        for (_, definition) in &mut self.callees.index {
            definition.file = file.to_string();
        }
        self
    }
}

/// Finds definitions or references in the scope `request.path`.
///
/// # Errors
/// `INVALID_ARGUMENT` for a bad request (no mode or several, a bad pattern or symbol, an
/// empty `kinds`, `limit` 0); the guard's refusal when the path itself cannot be read;
/// `CANCELLED` when `cancel` is set before the answer is ready.
pub fn find(
    guard: &Guard,
    grammar: &Grammar,
    request: &FindRequest,
    cancel: &CancelToken,
) -> Result<FindResult, ToolError> {
    find_in(
        guard,
        grammar,
        std::slice::from_ref(&request.path),
        request,
        cancel,
    )
}

/// [`find`] over several scopes (the command line's `PATH...`): their files in the order
/// given, each file once; `request.path` is not used.
///
/// # Errors
/// As [`find`].
pub fn find_in(
    guard: &Guard,
    grammar: &Grammar,
    paths: &[String],
    request: &FindRequest,
    cancel: &CancelToken,
) -> Result<FindResult, ToolError> {
    let disk = std::sync::Arc::new(crate::project::source::Disk);
    find_from(guard, grammar, paths, request, cancel, disk)
}

/// [`find_in`] with the walked files' bytes from `source` (a long-lived surface's cache:
/// the same answer, without reading again what did not change).
///
/// # Errors
/// As [`find`].
pub fn find_from(
    guard: &Guard,
    grammar: &Grammar,
    paths: &[String],
    request: &FindRequest,
    cancel: &CancelToken,
    source: std::sync::Arc<dyn crate::project::source::FileSource>,
) -> Result<FindResult, ToolError> {
    find_kept(guard, grammar, paths, request, cancel, source, None)
}

/// [`find_from`] with what each file taught ([`learned`]) kept in `learned` between
/// searches.
///
/// # Errors
/// As [`find`].
pub fn find_kept(
    guard: &Guard,
    grammar: &Grammar,
    paths: &[String],
    request: &FindRequest,
    cancel: &CancelToken,
    source: std::sync::Arc<dyn crate::project::source::FileSource>,
    learned: Option<std::sync::Arc<learned::LearnedCache>>,
) -> Result<FindResult, ToolError> {
    let joined = paths.join(" ");
    let mut search = check(request, &joined, grammar)?;
    search.source = source;
    let macrolets = matches!(search.target, Target::Pattern(_));
    search.learned =
        learned.map(|cache| (cache, learned::key(request.features.as_deref(), macrolets)));
    // The scope as answers show it (each path by the one rule, docs/guard.md).
    let shown = crate::shown::path_prefix(&joined);
    let scope = collect_scope(guard, paths, search.source.wants_stamps(), cancel)?;
    search.budget = budget::OrderedBudget::new(scope.files(), MAX_COLLECTED);
    search.learn_cap = learn_cap::LearnCap::new(scope.files());
    if macros::wanted(&search) {
        macros::learn(guard, &scope.parts, grammar, &mut search, cancel);
    }
    if through::wanted(&search) {
        through::learn(guard, &scope.parts, &mut search, cancel);
    }
    let search = search;
    let mut answers: Vec<(String, Result<FileAnswer, ToolError>)> = Vec::new();
    for part in scope.parts {
        // The index of each file in the scope's order, for the collection budget.
        let first = answers.len();
        let work = |i: usize, file: &LoadedFile| {
            search_file(first + i, file, None, grammar, &search, cancel)
        };
        match part {
            ScopePart::Single(file) => {
                let answer = work(0, &file);
                answers.push((file.display_path.clone(), Ok(answer)));
            }
            ScopePart::Walked(files) => {
                let source = &*search.source;
                let kept = |i: usize, s: &Sourced| {
                    search_file(
                        first + i,
                        &s.file,
                        s.memo.as_ref(),
                        grammar,
                        &search,
                        cancel,
                    )
                };
                let mut results = map_indexed_from(source, guard, &files, cancel, kept);
                search_large_files(guard, &files, &mut results, cancel, &work);
                // Entries name a file as the walk listed it (a symlink by its own name,
                // not its target's), so that they come in walk order.
                answers.extend(files.iter().zip(results).map(|(f, answer)| {
                    let listed = shown_file(&f.display_path);
                    (listed.clone(), answer.map(|a| a.named(&listed)))
                }));
            }
        }
    }
    if cancel.is_cancelled() {
        return Err(ToolError::new(
            ErrorCode::Cancelled,
            shown,
            "the request was cancelled before its answer was ready; ask again if it is still wanted",
        ));
    }
    let mut notes = Vec::new();
    if search.mode() == FindMode::Definitions && !derived::add_included(&mut answers, &search) {
        notes.push(format!(
            "[more structures :include others than {} levels of their slots allow: some accessors of included slots are not listed; search a smaller path]",
            crate::model::derived::MAX_INCLUDE_DEPTH
        ));
    }
    if let Target::Pattern(p) = &search.target {
        if p.too_costly() {
            return Err(ToolError::new(
                ErrorCode::InvalidArgument,
                shown.clone(),
                format!(
                    "name_pattern {} is too costly to match; simplify it (fewer or smaller counted repetitions, less nesting)",
                    p.quoted()
                ),
            ));
        }
    }
    notes.splice(0..0, scope.notes);
    // A path shown escaped, copied back as shown, names another file: said once.
    if answers.iter().any(|(listed, _)| listed.contains('\\')) {
        notes.push(crate::shown::ESCAPED_PATH_NOTE.to_string());
    }
    // A project's or user's definer table decides what is a definition: said once.
    notes.extend(grammar.notes().iter().cloned());
    let learning_stop = search.learn_cap.stopped();
    notes.extend(learning_stop.as_deref().map(learn_cap::note));
    let mut gathered = render::Gathered {
        notes,
        learning_stop,
        named_refused: scope.named_refused,
        skipped: scope.skipped,
        ..render::Gathered::default()
    };
    let cut: Vec<&str> = answers
        .iter()
        .filter(|(_, a)| a.as_ref().is_ok_and(|a| a.expansions_cut))
        .map(|(file, _)| file.as_str())
        .collect();
    if !cut.is_empty() {
        gathered
            .notes
            .push(expansions_cut_note(&cut, search.mode()));
    }
    let mut callees_found = Vec::new();
    let mut package_definitions = Vec::new();
    let last_kept = search.budget.last_kept();
    for (index, (file, answer)) in answers.into_iter().enumerate() {
        if last_kept.is_some_and(|last| index > last) {
            // Past the budget's cut: not searched, whatever a thread had found in it.
            if let Some(stop) = &mut gathered.budget_stop {
                stop.files_after += 1;
            }
            continue;
        }
        match answer {
            Ok(answer) => {
                package_definitions.extend(answer.packages);
                gathered.searched += usize::from(answer.searched);
                if last_kept == Some(index) {
                    gathered.budget_stop = Some(render::BudgetStop {
                        file: file.clone(),
                        within: answer.over_budget,
                        files_after: 0,
                    });
                }
                gathered.definitions.extend(answer.definitions);
                gathered.references.extend(answer.references);
                gathered.callers.extend(answer.callers);
                callees_found.push(answer.callees);
            }
            Err(e) => gathered.skipped.push(SkippedFile {
                file,
                code: e.code,
                message: e.message,
            }),
        }
    }
    // A budget spent by the scope's last file, which was searched whole, left nothing out.
    if gathered
        .budget_stop
        .as_ref()
        .is_some_and(|stop| !stop.within && stop.files_after == 0)
    {
        gathered.budget_stop = None;
    }
    if search.mode() == FindMode::Callees {
        gathered.callees = callees::resolve(callees_found);
    }
    packages::resolve(&mut gathered, package_definitions, &search);
    Ok(render::page(shown, &search, request, gathered))
}

/// Files named at most in the note of files whose macro expansions ran short.
const MAX_CUT_FILES_NAMED: usize = 5;

/// The note that some files' macro expansions stopped at their budget, saying what the
/// search may miss for it.
fn expansions_cut_note(files: &[&str], mode: FindMode) -> String {
    let missing = if mode == FindMode::Callers {
        "calls their later macro calls write"
    } else {
        "definitions their later macro calls make"
    };
    let named = files[..files.len().min(MAX_CUT_FILES_NAMED)].join(", ");
    let more = files.len().saturating_sub(MAX_CUT_FILES_NAMED);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    format!(
        "[the macro expansions of {} file{} stopped at their budget (linear in the file's size): {missing} may be missing: {named}{more}]",
        files.len(),
        if files.len() == 1 { "" } else { "s" },
    )
}

/// A walked file may be this many times the size cap: it is still searched, alone (the
/// parallel run holds at most 8 files under the cap; this one file more).
pub const LARGE_FILE_FACTOR: u64 = 32;

/// Searches, one at a time, the files the parallel run refused as over the size cap, up
/// to [`LARGE_FILE_FACTOR`] times the cap: a scan is linear and the answer is what is
/// bounded (paging, the collection budget), so a large file is not left out. Memory: one
/// such file at a time.
pub(crate) fn search_large_files<R>(
    guard: &Guard,
    files: &[WalkedFile],
    results: &mut [Result<R, ToolError>],
    cancel: &CancelToken,
    work: &dyn Fn(usize, &LoadedFile) -> R,
) {
    let large = large_guard(guard);
    for (index, (file, result)) in files.iter().zip(results.iter_mut()).enumerate() {
        let over_cap = matches!(result, Err(e) if e.code == ErrorCode::SizeLimitExceeded);
        if over_cap && !cancel.is_cancelled() {
            *result = large.read_walked(file).map(|loaded| work(index, &loaded));
        }
    }
}

/// The guard under the cap of a large file searched alone.
fn large_guard(guard: &Guard) -> Guard {
    guard.with_max_file_bytes(guard.max_file_bytes().saturating_mul(LARGE_FILE_FACTOR))
}

/// The answer of one file; `memo`: what is kept of the file's bytes (a long-lived
/// surface's cache, [`kept`]).
fn search_file(
    index: usize,
    file: &LoadedFile,
    memo: Option<&Memo>,
    grammar: &Grammar,
    search: &Search,
    cancel: &CancelToken,
) -> FileAnswer {
    // Past the budget's cut (or cancelled): not searched, nothing kept.
    let left_out = || FileAnswer {
        over_budget: true,
        ..FileAnswer::default()
    };
    if cancel.is_cancelled() || search.budget.excludes(index) {
        return left_out();
    }
    let (answer, spent) = budget::in_file(|| answer_of_file(file, memo, grammar, search, cancel));
    match search.budget.finish(index, spent) {
        true => answer,
        false => left_out(),
    }
}

/// [`search_file`] within the file's own budget.
fn answer_of_file(
    file: &LoadedFile,
    memo: Option<&Memo>,
    grammar: &Grammar,
    search: &Search,
    cancel: &CancelToken,
) -> FileAnswer {
    if let Some(answer) = memo.and_then(|memo| kept::skipped(file, memo, search)) {
        return answer;
    }
    let mut answer = match &search.target {
        Target::Symbol(query) => references::in_file(file, grammar, search, query, cancel),
        Target::Text => text::in_file(file, grammar, search, cancel),
        Target::Callers(query) => callers::in_file(file, grammar, search, query, cancel),
        Target::Callees(query) => callees::in_file(file, grammar, search, query, cancel),
        _ => definitions::in_file(file, grammar, search, cancel),
    };
    packages::of_file(file, search, &mut answer);
    answer
}

/// The files of a request: each path a file read now, or a directory's walk.
struct Scope {
    parts: Vec<ScopePart>,
    skipped: Vec<SkippedFile>,
    notes: Vec<String>,
    /// One of the paths given could not be read (listed in `skipped`).
    named_refused: bool,
}

enum ScopePart {
    Single(LoadedFile),
    Walked(Vec<WalkedFile>),
}

impl Scope {
    /// How many files the scope holds (the answers' indices).
    fn files(&self) -> usize {
        let part = |part: &ScopePart| match part {
            ScopePart::Single(_) => 1,
            ScopePart::Walked(files) => files.len(),
        };
        self.parts.iter().map(part).sum()
    }
}

/// A path of the request: a directory to walk (an `.asd` file's too), or a file read.
enum Opened {
    Directory(crate::guard::Directory),
    File(LoadedFile),
}

fn open_path(guard: &Guard, path: &str) -> Result<Opened, ToolError> {
    let directory = match guard.directory(path)? {
        Some(directory) => Some(directory),
        None if path.to_ascii_lowercase().ends_with(".asd") => {
            let parent = match path.trim_end_matches('/').rsplit_once('/') {
                Some(("", _)) => "/",
                Some((dir, _)) => dir,
                None => ".",
            };
            // The `.asd` file must exist: its refusal is the answer otherwise.
            guard.read(path)?;
            guard.directory(parent)?
        }
        None => None,
    };
    if let Some(directory) = directory {
        return Ok(Opened::Directory(directory));
    }
    match guard.read(path) {
        Err(e) if e.code == ErrorCode::SizeLimitExceeded => {
            large_guard(guard).read(path).map(Opened::File)
        }
        read => read.map(Opened::File),
    }
}

fn collect_scope(
    guard: &Guard,
    paths: &[String],
    stamped: bool,
    cancel: &CancelToken,
) -> Result<Scope, ToolError> {
    // Several paths may name one file twice (`a.lisp ./a.lisp`, a directory and a file
    // in it): then files are told apart by identity, which costs a resolution each, so
    // one path (one walk: names are unique) compares shown paths only. A symbolic link
    // is a file of its own, as one walk lists it: its identity goes with its name.
    let several = paths.len() > 1;
    let mut seen = HashSet::new();
    let mut refused = HashSet::new();
    let mut first = |guard: &Guard, file: &WalkedFile| {
        let identity = several.then(|| guard.identity(file)).flatten();
        seen.insert(identity.map_or_else(
            || (0, 0, None, file.display_path.clone()),
            |(d, i)| (d, i, guard.link_identity(file), String::new()),
        ))
    };
    let mut scope = Scope {
        parts: Vec::new(),
        skipped: Vec::new(),
        notes: Vec::new(),
        named_refused: false,
    };
    for path in paths {
        // One of several paths that cannot be read is a skipped file of the answer (the
        // others still answer); a path given alone is the answer's refusal.
        let opened = match open_path(guard, path) {
            Ok(opened) => opened,
            Err(e) if several => {
                scope.named_refused = true;
                // A path given twice is listed once, as a file read twice is searched once.
                let file = shown_file(&crate::shown::path_prefix(path));
                if refused.insert(file.clone()) {
                    scope.skipped.push(SkippedFile {
                        file,
                        code: e.code,
                        message: e.message,
                    });
                }
                continue;
            }
            Err(e) => return Err(e),
        };
        match opened {
            Opened::Directory(directory) => {
                let walk = match stamped {
                    true => guard.walk_stamped(&directory, &view::is_lisp_path, cancel),
                    false => guard.walk_cancellable(&directory, &view::is_lisp_path, cancel),
                };
                if walk.stopped_at_limit {
                    scope.notes.push(format!(
                        "[{} lists more than {} Lisp files: only the first {} were searched; search a sub-directory]",
                        directory.display_path,
                        crate::guard::MAX_WALKED_FILES,
                        crate::guard::MAX_WALKED_FILES
                    ));
                }
                scope
                    .skipped
                    .extend(walk.skipped.into_iter().map(|s| SkippedFile {
                        file: shown_file(&s.display_path),
                        code: s.error.code,
                        message: s.error.message,
                    }));
                scope.notes.extend(walk.notes);
                let files: Vec<WalkedFile> =
                    walk.files.into_iter().filter(|f| first(guard, f)).collect();
                scope.parts.push(ScopePart::Walked(files));
            }
            Opened::File(file) => {
                let mut named = guard.named_file(path);
                named.display_path.clone_from(&file.display_path);
                if first(guard, &named) {
                    scope.parts.push(ScopePart::Single(file));
                }
            }
        }
    }
    Ok(scope)
}

/// Checks the request and compiles what it searches with; `scope` is the paths as given.
fn check(request: &FindRequest, scope: &str, grammar: &Grammar) -> Result<Search, ToolError> {
    let path = crate::shown::path_prefix(scope);
    let invalid =
        |message: String| ToolError::new(ErrorCode::InvalidArgument, path.clone(), message);
    let given: Vec<&str> = [
        ("name", request.name.is_some()),
        ("name_pattern", request.name_pattern.is_some()),
        ("symbol", request.symbol.is_some()),
        ("text", request.text.is_some()),
        ("callers", request.callers.is_some()),
        ("callees", request.callees.is_some()),
    ]
    .into_iter()
    .filter_map(|(n, set)| set.then_some(n))
    .collect();
    if given.len() != 1 {
        return Err(invalid(if given.is_empty() {
            "give one of name (a definition's name), name_pattern (a regex or text matched against definition names), symbol (whose uses to list), text (which forms contain it), callers (a symbol whose callers to list) or callees (a definition whose calls to list)".into()
        } else {
            format!(
                "give only one of name, name_pattern, symbol, text, callers and callees, not {}",
                given.join(" and ")
            )
        }));
    }
    if request.detail.is_some() && request.callees.is_some() {
        return Err(invalid(
            "detail \"names\" lists entries by name, and callees are what an entry calls: leave detail out with callees".into(),
        ));
    }
    if request.limit == 0 {
        return Err(invalid(format!(
            "limit must be at least 1; omit it for the default of {DEFAULT_LIMIT} lines"
        )));
    }
    let kinds =
        match &request.kinds {
            Some(kinds) if kinds.iter().all(|k| k.trim().is_empty()) => return Err(invalid(
                "kinds is empty: give at least one operator, e.g. [\"defun\"], or leave kinds out"
                    .into(),
            )),
            Some(kinds) => Some(kinds.iter().map(|k| symbol_key(k.trim())).collect()),
            None => None,
        };
    let symbol = |field: &str, text: &str| {
        if text.len() > MAX_PATTERN_BYTES {
            return Err(invalid(format!(
                "{field} is {} bytes, over the limit of {MAX_PATTERN_BYTES}; give a symbol's name",
                text.len()
            )));
        }
        SymbolQuery::parse(text).ok_or_else(|| {
            invalid(format!(
                "{field} {} names no symbol; give a symbol such as foo, pkg:foo or (setf foo)",
                quoted(text, 80)
            ))
        })
    };
    // A package prefix is decided by the packages of the scope once every file is
    // searched (`packages.rs`): each file is searched for the name.
    let qualified = |text: &str, mut query: SymbolQuery| {
        let package = query
            .package
            .take()
            .map(|_| crate::model::symbols::Written::parse(text));
        (query, package)
    };
    use crate::model::expand::pieces::{Gate, Wanted};
    let mut package = None;
    let mut literals = None;
    let mut gate = None;
    let (target, prefilter) = if let Some(name) = &request.name {
        let (query, p) = qualified(name, symbol("name", name)?);
        package = p;
        let words = with_structures(vec![query.name.clone()], grammar);
        let prefilter = Some(literal::Finder::any(&words));
        literals = Some(words);
        gate = Wanted::exact(&query.name).map(Gate::new);
        (Target::Name(query), prefilter)
    } else if let Some(text) = &request.symbol {
        let (query, p) = qualified(text, symbol("symbol", text)?);
        package = p;
        let prefilter = Some(literal::Finder::any(std::slice::from_ref(&query.name)));
        (Target::Symbol(query), prefilter)
    } else if let Some(text) = &request.text {
        if text.is_empty() || text.len() > MAX_PATTERN_BYTES {
            return Err(invalid(format!(
                "text is {} bytes: give between 1 and {MAX_PATTERN_BYTES} bytes of literal text",
                text.len()
            )));
        }
        let prefilter = Some(literal::Finder::plain(
            RegexBuilder::new(&regex::escape(text))
                .unicode(!text.is_ascii())
                .build()
                .map_err(|e| {
                    invalid(format!(
                        "text cannot be searched ({e}); give a shorter text"
                    ))
                })?,
        ));
        (Target::Text, prefilter)
    } else if let Some(text) = &request.callers {
        let (query, p) = qualified(text, symbol("callers", text)?);
        package = p;
        let prefilter = Some(literal::Finder::any(std::slice::from_ref(&query.name)));
        (Target::Callers(query), prefilter)
    } else if let Some(text) = &request.callees {
        // Every file: the names the callees are defined by are not known beforehand.
        (Target::Callees(symbol("callees", text)?), None)
    } else {
        let text = request.name_pattern.as_deref().unwrap_or_default();
        let pattern = Pattern::regex_or_literal(text, true).map_err(|e| {
            invalid(match e {
                PatternError::TooLong(n) => format!(
                    "name_pattern is {n} bytes, over the limit of {MAX_PATTERN_BYTES}; use a shorter pattern"
                ),
                PatternError::Invalid(why) => format!(
                    "invalid name_pattern {}: {why}; patterns use Rust regex syntax (no backreferences or lookaround) and must compile to at most {COMPILED_SIZE_LIMIT} bytes",
                    quoted(text, 80)
                ),
            })
        })?;
        gate = pattern_literals(text)
            .and_then(|words| Wanted::containing(&words))
            .map(Gate::new);
        literals = pattern_literals(text).map(|words| with_structures(words, grammar));
        let prefilter = literals.as_deref().map(literal::Finder::any);
        (Target::Pattern(Box::new(pattern)), prefilter)
    };
    Ok(Search {
        target,
        prefilter,
        kinds,
        features: request.features.as_ref().map(Features::new),
        include_body: request.include_body,
        collected: AtomicUsize::new(0),
        budget: budget::OrderedBudget::new(0, MAX_COLLECTED),
        learn_cap: learn_cap::LearnCap::new(0),
        package,
        literals,
        spelled: None,
        widened: None,
        macros: crate::model::expand::Macros::default(),
        read_time: false,
        gate,
        through: through::Writers::default(),
        kept_names: std::sync::OnceLock::new(),
        source: std::sync::Arc::new(crate::project::source::Disk),
        learned: None,
    })
}

/// A file as entries name it: as the guard shows it, without a leading `./` (an
/// unconfined walk of `.`) nor the slashes after it (`.//a.lisp` is `a.lisp`, not the
/// absolute `/a.lisp`).
pub(crate) fn shown_file(display_path: &str) -> String {
    let mut path = display_path;
    while let Some(rest) = path.strip_prefix("./") {
        path = rest.trim_start_matches('/');
    }
    path.to_string()
}

/// Texts one of which every name matching `name_pattern` contains (the regex's required
/// prefixes or suffixes, and the text itself, which also matches literally), or `None`
/// when no such finite set is known. A definition's name is cut from its file, so a file
/// that contains none of them (case-insensitively) cannot hold a match, nor can a form
/// without one: the literals find the forms to classify as the symbol's name does for
/// references. A literal with whitespace is no use (names are shown with whitespace
/// folded), nor one with parentheses (a method's printed specializers).
fn pattern_literals(text: &str) -> Option<Vec<String>> {
    use regex_syntax::hir::literal::{ExtractKind, Extractor};
    let mut literals = vec![text.to_string()];
    if let Ok(hir) = regex_syntax::Parser::new().parse(text) {
        let found = [ExtractKind::Prefix, ExtractKind::Suffix]
            .into_iter()
            .find_map(|kind| {
                let seq = Extractor::new().kind(kind).extract(&hir);
                let literals = seq.literals()?;
                let texts: Option<Vec<String>> = literals
                    .iter()
                    .map(|l| String::from_utf8(l.as_bytes().to_vec()).ok())
                    .collect();
                texts.filter(|t| !t.is_empty() && t.iter().all(|l| !l.is_empty()))
            })?;
        literals.extend(found);
    }
    // Parentheses and spaces: a method's name as printed (`area :around (shape)`) has
    // them where the file may not.
    let unusable = |l: &String| {
        l.is_empty() || l.contains(|c: char| c.is_whitespace() || c == '(' || c == ')')
    };
    if literals.iter().any(unusable) {
        return None;
    }
    // A text that contains another is implied by it: one literal searches fastest.
    literals.sort_by_key(String::len);
    let mut kept: Vec<String> = Vec::new();
    for l in literals {
        let folded = l.to_lowercase();
        if !kept.iter().any(|k| folded.contains(&k.to_lowercase())) {
            kept.push(l);
        }
    }
    Some(kept)
}

/// `literals` and the operators that make structures: a structure's derived names
/// (`make-point`, `point-x`) are not in its file, its operator is
/// (docs/find.md#derived-definitions).
fn with_structures(mut literals: Vec<String>, grammar: &Grammar) -> Vec<String> {
    use crate::grammar::{Derives, Lookup};
    let mut foreign = false;
    for op in grammar.operators() {
        if let Lookup::Definer(d) = grammar.lookup(op) {
            if d.derives == Some(Derives::Structure) {
                literals.push(op.to_string());
            }
            foreign |= d.foreign_name.is_some();
        }
    }
    if foreign {
        literals = with_c_spellings(literals);
    }
    literals
}

/// `literals` and the C names a CFFI-style definer may spell them with: `ssl-new` is
/// made from `"SSL_new"`, `*errno*` from `"errno"` (docs/reader.md#definer-table).
fn with_c_spellings(literals: Vec<String>) -> Vec<String> {
    let mut out = literals.clone();
    // A set for the membership test: a definer table may hold many structure definers.
    let mut seen: std::collections::HashSet<String> = literals.iter().cloned().collect();
    for literal in literals {
        let bare = literal
            .strip_prefix('*')
            .and_then(|l| l.strip_suffix('*'))
            .filter(|l| !l.is_empty())
            .unwrap_or(&literal);
        let c_name = bare.replace('-', "_");
        for spelling in [bare.to_string(), c_name] {
            if seen.insert(spelling.clone()) {
                out.push(spelling);
            }
        }
    }
    out
}

/// The folded name as a case-insensitive literal search over bytes: ASCII case folding
/// for an ASCII name (the fast path; a name spelled with the Kelvin sign or the long s
/// for `k` or `s` is not found), Unicode simple case folding otherwise.
pub(crate) fn name_finder(name: &str) -> Regex {
    RegexBuilder::new(&regex::escape(name))
        .case_insensitive(true)
        .unicode(!name.is_ascii())
        .build()
        .unwrap_or_else(|_| Regex::new("").expect("a valid regex"))
}

/// The line naming a form that uses or mentions something: `(defun foo ...)`, its name
/// as written (`(defoptimizer (foo derive-type) ...)`; a method's as printed,
/// `(defmethod area :around (shape) ...)`), with the form's `#+`/`#-` prefixes in front;
/// the signature for a form without a name, or whose name cannot be cut from it.
pub(crate) fn heading(form: &crate::outline::Form) -> String {
    let Some(operator) = form.operator.as_deref().filter(|_| form.name.is_some()) else {
        return signature(form);
    };
    let name = match form.method_key() {
        Some(key) if form.is_method() => Some(key),
        _ => written_name(form.signature(), operator),
    };
    let Some(name) = name else {
        return signature(form);
    };
    let mut text = form.conditionals().join(" ");
    if !text.is_empty() {
        text.push(' ');
    }
    text.push_str(&format!("({operator} {name} ...)"));
    text
}

/// The datum after the operator in a one-line signature (`(foo bar)` of
/// `(defoptimizer (foo bar) (x) ...)`), when more follows it; `None` otherwise.
fn written_name(signature: &str, operator: &str) -> Option<String> {
    let rest = signature.strip_prefix('(')?.strip_prefix(operator)?;
    let rest = rest.strip_prefix(char::is_whitespace)?.trim_start();
    let end = if rest.starts_with('(') {
        let mut depth = 0usize;
        rest.char_indices().find_map(|(k, c)| {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    return (depth == 0).then_some(k + 1);
                }
                _ => {}
            }
            None
        })?
    } else {
        rest.find(|c: char| c.is_whitespace() || c == ')')?
    };
    let (name, tail) = rest.split_at(end);
    (!name.is_empty() && tail.trim() != ")").then(|| name.to_string())
}

/// The uses at `positions` (increasing, inside `item`) as entries, in line order: one
/// for `item`, or, when every use of a container lies inside its child forms, one for
/// each child holding uses (and so on down: `(progn (defun a ...) (defun b ...))` gives
/// `a` and `b` their own uses). Entries never overlap. `defines`: whether an entry's
/// form defines what was searched.
pub(crate) fn entries_of(
    file: &LoadedFile,
    cursor: &mut cursor::Cursor,
    item: &crate::outline::OutlineItem,
    spans: &[(usize, usize)],
    defines: &dyn Fn(&crate::outline::OutlineItem) -> bool,
    grammar: &Grammar,
) -> Vec<Reference> {
    let positions: Vec<usize> = spans.iter().map(|&(at, _)| at).collect();
    let mut groups = Vec::new();
    split_by_children(item, &positions, 0, &mut groups);
    let bytes = &file.bytes;
    let file = shown_file(&file.display_path);
    let mut entries = Vec::with_capacity(groups.len());
    for (g, range) in groups {
        let mut uses: Vec<Use> = Vec::with_capacity(range.len());
        for &(at, end) in &spans[range] {
            let (line, column) = cursor.position(at, None);
            // A line with several uses is read once.
            let text = match uses.last() {
                Some(last) if last.line == line => last.text.clone(),
                _ => cursor.line_text(),
            };
            // The token as written, for its package (a text's occurrences have none).
            let token = (end > at).then(|| String::from_utf8_lossy(&bytes[at..end]).into_owned());
            let site = Site {
                at,
                current: None,
                token,
            };
            uses.push(Use {
                line,
                column,
                text,
                through: None,
                site,
            });
        }
        let Some(form) = g.form.as_ref() else {
            continue;
        };
        let entry = Reference {
            file: file.clone(),
            line: g.start_line,
            end_line: g.end_line,
            kind: form.operator.as_deref().unwrap_or_default().to_lowercase(),
            name: form
                .name
                .as_deref()
                .map(|n| form.method_key().unwrap_or_else(|| n.to_string())),
            signature: signature(form),
            heading: heading(form),
            definition: defines(g),
            uses,
            package: None,
            package_unresolved: false,
        };
        // A `macrolet`'s uses in its bindings go to the definitions its templates write.
        if form.operator.as_deref().map(symbol_key).as_deref() == Some("macrolet") {
            entries.extend(template::split(entry, g, bytes, grammar));
        } else {
            entries.push(entry);
        }
    }
    entries
}

/// The groups of [`entries_of`]: `positions[first..]`'s uses of `item`, split among its
/// child forms when they hold every one. Children are disjoint and in order, so one walk
/// per level; the depth is the outline's, at most
/// [`crate::outline::MAX_CONTAINER_DEPTH`].
fn split_by_children<'i, 'a>(
    item: &'i crate::outline::OutlineItem<'a>,
    positions: &[usize],
    first: usize,
    out: &mut Vec<(&'i crate::outline::OutlineItem<'a>, std::ops::Range<usize>)>,
) {
    let whole = first..first + positions.len();
    let children = item.form.as_ref().map_or(&[][..], |f| &f.children[..]);
    let mut parts: Vec<(&crate::outline::OutlineItem, std::ops::Range<usize>)> = Vec::new();
    let mut child = 0;
    for (k, &at) in positions.iter().enumerate() {
        while child < children.len() && children[child].end <= at {
            child += 1;
        }
        match children.get(child) {
            Some(c) if c.start <= at && c.form.is_some() => match parts.last_mut() {
                Some((last, range)) if std::ptr::eq(*last, c) => range.end = first + k + 1,
                _ => parts.push((c, first + k..first + k + 1)),
            },
            // A use outside every child form: the container is the entry.
            _ => {
                out.push((item, whole));
                return;
            }
        }
    }
    if parts.is_empty() {
        out.push((item, whole));
        return;
    }
    for (c, range) in parts {
        let (start, end) = (range.start - first, range.end - first);
        split_by_children(c, &positions[start..end], range.start, out);
    }
}

/// The callers (`request.callers`) or callees (`request.callees`) in files already in
/// memory (a long-lived surface's open buffers and cache), each `(path, bytes)` named by
/// its path as given; in the order given, not paged. The request's mode, features and
/// kinds apply as in [`find`]; a file the prefilter rules out is not copied.
///
/// # Errors
/// As [`find`]: `INVALID_ARGUMENT` for a request that is neither mode; `CANCELLED`.
pub fn calls_in_memory(
    files: &[(&str, &[u8])],
    grammar: &Grammar,
    request: &FindRequest,
    cancel: &CancelToken,
) -> Result<(Vec<Caller>, Vec<CalleesEntry>), ToolError> {
    let mut search = check(request, ".", grammar)?;
    through::learn_in_memory(files, &mut search);
    if !matches!(search.mode(), FindMode::Callers | FindMode::Callees) {
        return Err(ToolError::new(
            ErrorCode::InvalidArgument,
            ".",
            "calls_in_memory answers callers or callees only",
        ));
    }
    search.budget = budget::OrderedBudget::new(files.len(), MAX_COLLECTED);
    let search = search;
    let indices: Vec<usize> = (0..files.len()).collect();
    let answers = crate::project::par_map(&indices, cancel, |&index| {
        let (path, bytes) = files[index];
        let hay = literal::Haystack::new(bytes);
        if search.prefilter.as_ref().is_some_and(|p| !p.is_in(&hay)) && !search.through.is_in(&hay)
        {
            return FileAnswer::default();
        }
        let file = LoadedFile {
            display_path: path.to_string(),
            bytes: bytes.to_vec(),
            mtime_ms: 0,
            info: None,
        };
        search_file(index, &file, None, grammar, &search, cancel)
    });
    if cancel.is_cancelled() {
        return Err(ToolError::new(
            ErrorCode::Cancelled,
            ".",
            "the request was cancelled before its answer was ready",
        ));
    }
    let (mut callers, mut callees) = (Vec::new(), Vec::new());
    // The files past the collection budget's cut are left out, as in [`find`].
    let kept = search
        .budget
        .last_kept()
        .map_or(files.len(), |last| last + 1);
    for ((path, _), answer) in files.iter().zip(answers).take(kept) {
        let Some(answer) = answer else { continue };
        let answer = answer.named(path);
        callers.extend(answer.callers);
        callees.push(answer.callees);
    }
    let callees = match search.mode() {
        FindMode::Callees => callees::resolve(callees),
        _ => Vec::new(),
    };
    Ok((callers, callees))
}

/// The signature with the form's `#+`/`#-` prefixes in front, as the collapsed view shows it.
pub(crate) fn signature(form: &crate::outline::Form) -> String {
    let conditionals = form.conditionals();
    if conditionals.is_empty() {
        return form.signature().to_string();
    }
    let mut text = conditionals.join(" ");
    text.push(' ');
    text.push_str(form.signature());
    text
}

#[cfg(test)]
mod tests;
