//! The command line (docs/cli.md):
//!
//! * `lisp-read-file [OPTIONS] PATH...`: the view of one file (collapsed, expanded, raw,
//!   grep); the project map of a directory, an `.asd` file or several paths;
//! * `lisp-read-file outline [--json] PATH...`: top-level items with positions;
//! * `lisp-read-file find (--name N | --name-pattern RE | --symbol S | --callers S | --callees N) [PATH]...`:
//!   definitions and references across files ([`lisp_read_file::find`]);
//! * `lisp-read-file mcp [--root DIR]... [--tools LIST]`: the MCP server ([`crate::mcp`]);
//! * `lisp-read-file lsp [--root DIR]...`: the language server ([`crate::lsp`]).
//!
//! Exit status: 0 success, 1 a tool error (a file refused or unreadable, a bad pattern),
//! 2 a usage error.

mod misplaced_subcommand;
mod terminal;

#[cfg(feature = "mcp")]
use crate::mcp::{self, ServerOptions, ToolName};
use clap::{Args, Parser, Subcommand, ValueEnum};
use lisp_read_file::cancel::CancelToken;
use lisp_read_file::error::ToolError;
use lisp_read_file::find::{self, FindRequest};
use lisp_read_file::grammar::Grammar;
use lisp_read_file::guard::{Guard, DEFAULT_MAX_FILE_BYTES};
use lisp_read_file::hint::{Hint, HintStyle};
use lisp_read_file::outline::{Items, OutlineItem, StreamedOutline};
use lisp_read_file::scan::ItemKind;
use lisp_read_file::tool::{self, ReadRequest, Strategy, DEFAULT_CONTEXT_LINES, DEFAULT_LIMIT};
use lisp_read_file::view::{Comments, Detail};
use serde::Serialize;
use std::io::Read as _;
use std::io::{self, Write};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "lisp-read-file",
    version,
    about = "Read Common Lisp projects the way a Lisp hacker skims them: outlines of every definition, without evaluating anything.",
    long_about = "Read Common Lisp projects the way a Lisp hacker skims them.\n\n\
For a Lisp file (.lisp .lsp .cl .asd .ros) it prints the collapsed view: one line per \
top-level definition, its signature, the body replaced by `...`. Definitions whose name \
matches --name-pattern or whose text matches --content-pattern are shown whole, verbatim. \
For other text files --content-pattern greps with context; without a pattern it prints \
a window of lines. PDF, DOCX and Jupyter notebook files give their extracted text \
(a notebook of a Common Lisp kernel is read as Lisp). A directory, an .asd file or \
several paths give the project map: every Lisp file's outline under a ==> PATH <== \
header, in ASDF load order. Nothing is ever evaluated, and broken files still give a view.",
    after_help = "Examples:\n  \
lisp-read-file src/package.lisp                  collapsed view\n  \
lisp-read-file .                                 project map (ASDF order when an .asd is there)\n  \
lisp-read-file -n '^make-' src/ tests/           expand matching definitions across files\n  \
lisp-read-file -n '^parse-' src/reader.lisp      expand definitions named parse-...\n  \
lisp-read-file -c 'handler-case' src/io.lisp     expand forms that mention handler-case\n  \
lisp-read-file --kinds defmethod src/shapes.lisp only the methods\n  \
lisp-read-file --features sbcl,unix src/os.lisp  hide forms #+/#- exclude on SBCL/Unix\n  \
lisp-read-file --raw --offset 100 --limit 50 src/io.lisp\n  \
lisp-read-file -c TODO NOTES.md                  grep with 5 lines of context\n  \
lisp-read-file --lines 100000..100050 big.log    a line window of a file of any size\n  \
lisp-read-file --bytes 2000..4000 data.json      bytes, e.g. the rest of a cut line\n  \
lisp-read-file outline --json src/*.lisp         items with byte offsets, one JSON per file\n  \
lisp-read-file find --name-pattern '^make-' src  definitions across a directory\n  \
lisp-read-file find --symbol parse-integer .     every use of a symbol, by form\n  \
lisp-read-file find --callers parse-integer .    the definitions that call it\n  \
lisp-read-file mcp --root .                      MCP server on stdio (for code agents)\n\n\
Exit status: 0 success, 1 tool error (CODE: message on stderr; with --json the error \
object on stdout), 2 usage error.",
    args_conflicts_with_subcommands = true,
    args_override_self = true,
    subcommand_negates_reqs = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    read: ReadArgs,
}

/// The view of one file (docs/tool.md), or the project map of a directory, an `.asd`
/// file or several paths (docs/project.md).
#[derive(Args, Debug)]
struct ReadArgs {
    /// Raw lines instead of the collapsed view (collapsed=false).
    #[arg(long)]
    raw: bool,
    /// Expand definitions whose name matches this regex or contains it as literal text
    /// (case-insensitive; for methods also `NAME QUALIFIERS (SPECIALIZERS)`, as printed).
    #[arg(short = 'n', long, value_name = "REGEX")]
    name_pattern: Option<String>,
    /// Expand forms whose source text matches this regex or contains it as literal text
    /// (case-sensitive; `-c '(handler-case'` works); for text files, grep.
    #[arg(short = 'c', long, value_name = "REGEX")]
    content_pattern: Option<String>,
    /// With -n or -c: show only the matching forms (with the file's in-package), as a
    /// directory's map does: the way to read one definition.
    #[arg(long)]
    matches_only: bool,
    /// First line to show, 0-based (collapsed view: skip forms that start before it).
    #[arg(long, value_name = "N", default_value_t = 0)]
    offset: usize,
    /// Most lines to print.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_LIMIT, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    limit: usize,
    /// Top-level comments in the collapsed view.
    #[arg(long, value_enum, default_value_t = CommentsArg::None)]
    comments: CommentsArg,
    /// Collapsed view and maps: how much each definition shows (a map starts at this step
    /// of its budget), e.g. `--detail names` for one line per definition.
    #[arg(long, value_enum)]
    detail: Option<DetailArg>,
    /// Collapsed view: show only the forms with these operators (comma-separated,
    /// case-insensitive, package prefix ignored), e.g. `--kinds defun,defmacro`.
    #[arg(long, value_name = "OPS", value_delimiter = ',')]
    kinds: Option<Vec<String>>,
    /// Collapsed view: hide the forms `#+`/`#-` exclude under these features
    /// (comma-separated), e.g. `--features sbcl,x86-64,unix`.
    #[arg(long, value_name = "FEATURES", value_delimiter = ',')]
    features: Option<Vec<String>>,
    /// Lines of context around each match when grepping a text file [default: 5].
    #[arg(short = 'C', long = "context", value_name = "N")]
    context_lines: Option<usize>,
    /// Grepping a text file: lines of context before each match (as grep -B); with -A
    /// or alone, the side not given has none unless --context is given.
    #[arg(short = 'B', long, value_name = "N")]
    before_context: Option<usize>,
    /// Grepping a text file: lines of context after each match (as grep -A).
    #[arg(short = 'A', long, value_name = "N")]
    after_context: Option<usize>,
    /// Grepping a text file: stop after N matching lines (as grep -m), e.g.
    /// `-c "timed out" -m 1 -B 5 app.log` for the first one and what came before.
    #[arg(short = 'm', long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    max_count: Option<usize>,
    /// Number the lines in raw mode.
    #[arg(long)]
    line_numbers: bool,
    /// Reading strategy: default (the views) or complete (the whole text, verbatim, up to
    /// the size cap). See also --bytes and --lines.
    #[arg(long, value_enum, default_value_t = StrategyArg::Default, conflicts_with_all = ["bytes", "lines"])]
    strategy: StrategyArg,
    /// Read bytes START..END of the file (END exclusive; `START..` to the end), verbatim,
    /// cut to UTF-8 character boundaries: strategy byteRange. Works on files of any size.
    #[arg(long, value_name = "START..END", value_parser = parse_range, conflicts_with = "lines")]
    bytes: Option<(u64, Option<u64>)>,
    /// Read lines FIRST..LAST (1-based, inclusive; `FIRST..` to the end, at most --limit
    /// lines): strategy lineRange. Works on files of any size.
    #[arg(long, value_name = "FIRST..LAST", value_parser = parse_range)]
    lines: Option<(u64, Option<u64>)>,
    /// Add the file's size, modification time, owner and permissions (with --json).
    #[arg(long)]
    metadata: bool,
    /// How hints are written: as flags of this command line, as the MCP tools' JSON
    /// arguments, or as keyword arguments of the Common Lisp client's functions (`lisp`).
    #[arg(long, value_enum, value_name = "STYLE", default_value = "command-line")]
    hint_style: HintStyleArg,
    /// Print the result object (path, mode, content, meta) as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    guard: GuardArgs,
    /// The file to read; `-` reads Lisp source from standard input. A directory or an
    /// `.asd` file gives the project map; several paths give the map of them all.
    #[arg(value_name = "PATH", required = true, num_args = 1..)]
    paths: Vec<String>,
}

/// `--hint-style`: the surface whose syntax the hints of the answer use.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum HintStyleArg {
    /// Flags of this command line (`--offset 15`).
    CommandLine,
    /// JSON arguments of the MCP tools (`offset=15`).
    Arguments,
    /// Keyword arguments of the Common Lisp client (`:offset 15`).
    Lisp,
}

impl HintStyleArg {
    fn style(self) -> HintStyle {
        match self {
            HintStyleArg::CommandLine => COMMAND_LINE,
            HintStyleArg::Arguments => HintStyle::ARGUMENTS,
            HintStyleArg::Lisp => HintStyle::LISP,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum StrategyArg {
    /// The views: collapsed, raw or grep, paged by --offset and --limit.
    Default,
    /// The whole text, verbatim, up to the size cap.
    Complete,
}

/// `N..M` or `N..` (a range of bytes or lines).
fn parse_range(text: &str) -> Result<(u64, Option<u64>), String> {
    let Some((start, end)) = text.split_once("..") else {
        return Err(format!(
            "expected START..END or START.. (e.g. 10..20), not {text:?}"
        ));
    };
    let number = |s: &str| {
        s.trim()
            .parse::<u64>()
            .map_err(|e| format!("{s:?} is not a number ({e}); expected START..END or START.."))
    };
    let start = number(start)?;
    let end = if end.trim().is_empty() {
        None
    } else {
        Some(number(end)?)
    };
    Ok((start, end))
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FindDetailArg {
    /// `LINE: KIND NAME` per entry (methods with their specializers), nothing else.
    Names,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum DetailArg {
    /// Signatures with the first line of the docstring.
    Full,
    /// Signatures without docstrings.
    NoDocstrings,
    /// `LINE: OPERATOR NAME` per definition (methods with their specializers).
    Names,
    /// A map only: each file's number of definitions.
    Counts,
}

impl From<DetailArg> for Detail {
    fn from(d: DetailArg) -> Detail {
        match d {
            DetailArg::Full => Detail::Full,
            DetailArg::NoDocstrings => Detail::NoDocstrings,
            DetailArg::Names => Detail::Names,
            DetailArg::Counts => Detail::Counts,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum CommentsArg {
    /// No top-level comments.
    None,
    /// The first line of each ;;; / ;;;; comment block, as section titles.
    Headers,
    /// The comment block directly above each shown form.
    Preceding,
    /// Every top-level comment.
    All,
}

impl From<CommentsArg> for Comments {
    fn from(c: CommentsArg) -> Comments {
        match c {
            CommentsArg::None => Comments::None,
            CommentsArg::Headers => Comments::Headers,
            CommentsArg::Preceding => Comments::Preceding,
            CommentsArg::All => Comments::All,
        }
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the top-level items of each file with their positions.
    ///
    /// One line per file, in argument order. A file that cannot be read gives an error
    /// line (an object with an `error` member in --json) and the others still print;
    /// the exit status is then 1.
    Outline(OutlineArgs),
    /// Find definitions (by name or name pattern) or the uses of a symbol across files.
    ///
    /// PATH is a file, a directory (its Lisp files, recursively, honouring .gitignore) or
    /// an .asd file (its directory); several PATHs are searched in the order given.
    /// Output: one `==> FILE <==` header per file, an entry per definition or using form
    /// (`LINE: signature`), the lines of the uses under it, a footer with the counts
    /// (docs/find.md).
    #[command(args_override_self = true)]
    Find(Box<FindArgs>),
    /// Serve the tools over MCP on stdin/stdout (for code agents).
    ///
    /// Newline-delimited JSON-RPC, the MCP stdio transport. Tools: lisp-read-file (the
    /// views of this command line), lisp-find (the find command), read_file and Read
    /// (plain line windows). Logs go to
    /// stderr; stdout carries protocol messages only. Without --root the client's MCP
    /// roots are the allowed directories when it offers them, else the working directory.
    #[cfg(feature = "mcp")]
    Mcp(McpArgs),
    /// Serve a Common Lisp language server (LSP) on stdin/stdout, for editors (docs/lsp.md).
    ///
    /// Diagnostics from the reader, document and workspace symbols, folding, selection
    /// ranges, definitions, references and hover, with no Lisp image. The roots are the
    /// client's workspace folders (else its rootUri, else the working directory) unless
    /// --root is given.
    #[cfg(feature = "lsp")]
    Lsp(LspArgs),
}

#[cfg(feature = "lsp")]
#[derive(Args, Debug)]
struct LspArgs {
    /// Allow reading inside this directory (repeatable), instead of the client's
    /// workspace folders.
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// Refuse files (and buffers) larger than this many bytes.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_FILE_BYTES)]
    max_file_bytes: u64,
    /// Extra definer table (same shape as grammar/definers.lisp); `.lisp-read-file.lisp`
    /// at each root is read too when present.
    #[arg(long, value_name = "FILE")]
    definers: Option<String>,
}

#[cfg(feature = "mcp")]
#[derive(Args, Debug)]
struct McpArgs {
    /// Allow reading inside this directory (repeatable); relative paths are relative to
    /// the first root. Default: the client's MCP roots, else the working directory.
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// Tools to offer, comma-separated, from: lisp-read-file, lisp-find, read_file, Read, read.
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "lisp-read-file,lisp-find,read_file", value_parser = parse_tool_name)]
    tools: Vec<ToolName>,
    /// Refuse files larger than this many bytes.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_FILE_BYTES)]
    max_file_bytes: u64,
    /// Extra definer table (same shape as grammar/definers.lisp); `.lisp-read-file.lisp`
    /// at each root is read too when present.
    #[arg(long, value_name = "FILE")]
    definers: Option<String>,
    /// How much to log on stderr.
    #[arg(long, value_enum, default_value_t = LogLevel::Warn)]
    log_level: LogLevel,
}

#[cfg(feature = "mcp")]
#[derive(ValueEnum, Debug, Clone, Copy)]
enum LogLevel {
    Off,
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

#[cfg(feature = "mcp")]
fn parse_tool_name(name: &str) -> Result<ToolName, String> {
    ToolName::parse(name.trim()).ok_or_else(|| {
        format!(
            "unknown tool {name:?}; choose from lisp-read-file, lisp-find, read_file, Read, read"
        )
    })
}

/// Options shared by every command that reads files.
#[derive(Args, Debug, Clone)]
struct GuardArgs {
    /// Confine reading to this directory (repeatable). Relative paths are relative to the
    /// first root; paths that leave every root are refused. Without --root any file may be read.
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// The size cap: the most bytes loaded or returned. A whole read of a larger file is
    /// refused; windows of it (--lines, --bytes) are read; find searches a larger Lisp file
    /// alone, up to 32 times the cap.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_FILE_BYTES)]
    max_file_bytes: u64,
    /// Extra definer table (same shape as grammar/definers.lisp); `.lisp-read-file.lisp`
    /// at a root (or the current directory) is read too when present.
    #[arg(long, value_name = "FILE")]
    definers: Option<String>,
}

#[derive(Args, Debug)]
struct OutlineArgs {
    /// Print one JSON object per file (items with byte offsets and lines, kinds, signatures).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    guard: GuardArgs,
    /// Files to outline.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<String>,
}

#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["name", "name_pattern", "symbol", "text", "callers", "callees"])))]
struct FindArgs {
    /// Definitions named exactly NAME (case-insensitive; `pkg:foo` and `(setf foo)` too).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// Definitions whose name matches this regex or contains this text (case-insensitive).
    #[arg(short = 'n', long, value_name = "REGEX")]
    name_pattern: Option<String>,
    /// The uses of this symbol, grouped by enclosing top-level form.
    #[arg(short = 's', long, value_name = "SYMBOL")]
    symbol: Option<String>,
    /// The top-level forms whose text contains TEXT (literal, case-sensitive, strings and
    /// comments included), each with the lines that hold it.
    #[arg(short = 't', long, value_name = "TEXT")]
    text: Option<String>,
    /// The definitions whose code calls SYMBOL (as a function: operator position, #'sym,
    /// funcall/apply of 'sym), each with the lines of its calls.
    #[arg(long, value_name = "SYMBOL")]
    callers: Option<String>,
    /// The definitions named NAME, each with the definitions of the scope its code calls
    /// and the names it calls that the scope does not define.
    #[arg(long, value_name = "NAME")]
    callees: Option<String>,
    /// Only definitions with these operators; with --symbol, only uses inside top-level
    /// forms with these operators (comma-separated), e.g. `--kinds defun,defmacro`.
    #[arg(long, value_name = "OPS", value_delimiter = ',')]
    kinds: Option<Vec<String>>,
    /// Leave out definitions and uses that `#+`/`#-` excludes under these features
    /// (comma-separated), e.g. `--features sbcl,x86-64,unix`.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    features: Option<Vec<String>>,
    /// Show each definition's source text, verbatim.
    #[arg(long)]
    body: bool,
    /// `names`: each entry as `LINE: KIND NAME` only, without signatures, use or call
    /// lines: the list of definitions that use (--symbol) or call (--callers) a symbol.
    #[arg(long, value_enum, value_name = "LEVEL")]
    detail: Option<FindDetailArg>,
    /// The first entry to show, 0-based (a cut result's footer names it).
    #[arg(long, value_name = "N", default_value_t = 0)]
    offset: usize,
    /// Most lines of output per page (the first entry is always shown whole).
    #[arg(long, value_name = "N", default_value_t = lisp_read_file::find::DEFAULT_LIMIT, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    limit: usize,
    /// Print the result object (docs/find.md#json) as JSON.
    #[arg(long)]
    json: bool,
    /// How hints are written: as flags of this command line, as the MCP tools' JSON
    /// arguments, or as keyword arguments of the Common Lisp client's functions (`lisp`).
    #[arg(long, value_enum, value_name = "STYLE", default_value = "command-line")]
    hint_style: HintStyleArg,
    #[command(flatten)]
    guard: GuardArgs,
    /// Files or directories to search (default: the current directory, or the first root).
    #[arg(value_name = "PATH")]
    paths: Vec<String>,
}

/// Hints as flags of this command line (docs/tool.md#hints): appended to the command
/// that printed them, they override its flags of the same name.
const COMMAND_LINE: HintStyle = HintStyle(command_line_hint);

fn command_line_hint(hint: &Hint) -> String {
    match *hint {
        Hint::Offset(offset) => format!("--offset {offset}"),
        Hint::Raw {
            offset,
            limit: Some(limit),
        } => format!("--raw --offset {offset} --limit {limit}"),
        Hint::Raw {
            offset,
            limit: None,
        } => format!("--raw --offset {offset}"),
        Hint::RawLines => "--raw".to_string(),
        Hint::LineRange { start } => format!("--lines {start}.."),
        Hint::ByteRange { start, end } | Hint::Rest { start, end } => {
            format!("--bytes {start}..{end}")
        }
        Hint::Kinds(kinds) => format!("--kinds {}", kinds.join(",")),
        Hint::Parameter("context_lines") => "--context".to_string(),
        Hint::Parameter(name) => format!("--{}", name.replace('_', "-")),
        Hint::SkippedFiles => "--json (files_skipped)".to_string(),
        Hint::SizeCap => "raise the cap with --max-file-bytes".to_string(),
    }
}

/// Runs the command line; returns the process exit status.
pub(crate) fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            if e.kind() == clap::error::ErrorKind::UnknownArgument {
                if let Some(message) = misplaced_subcommand::misplaced_subcommand(&args) {
                    eprintln!("{message}");
                    return ExitCode::from(2);
                }
            }
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Some(Command::Outline(args)) => run_outline(args),
        Some(Command::Find(args)) => run_find(*args),
        #[cfg(feature = "mcp")]
        Some(Command::Mcp(args)) => Ok(run_mcp(args)),
        #[cfg(feature = "lsp")]
        Some(Command::Lsp(args)) => Ok(run_lsp(args)),
        None => run_read(cli.read),
    };
    match result {
        Ok(status) => status,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("INTERNAL: cannot write output: {e}");
            ExitCode::from(1)
        }
    }
}

/// The guard and grammar for a command, or the error line to print.
fn setup(args: &GuardArgs) -> Result<(Guard, Grammar), ToolError> {
    let guard = if args.roots.is_empty() {
        Guard::unconfined(args.max_file_bytes)
    } else {
        Guard::confined(&args.roots, args.max_file_bytes)?
    };
    let (grammar, warnings) = lisp_read_file::definers::project_grammar(
        &guard,
        args.definers.as_deref(),
        args.max_file_bytes,
    )?;
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
    Ok((guard, grammar))
}

fn run_read(args: ReadArgs) -> io::Result<ExitCode> {
    let path = args.paths.first().cloned().unwrap_or_default();
    let request = ReadRequest {
        path: path.clone(),
        collapsed: !args.raw,
        name_pattern: args.name_pattern.clone(),
        content_pattern: args.content_pattern.clone(),
        matches_only: args.matches_only,
        offset: args.offset,
        limit: args.limit,
        comments: args.comments.into(),
        kinds: args.kinds.clone(),
        features: args.features.clone(),
        context_lines: args.context_lines.unwrap_or(DEFAULT_CONTEXT_LINES),
        // --context with -B or -A sets the side not given (as grep -C 3 -A 1).
        before_context: args
            .before_context
            .or(args.after_context.and(args.context_lines)),
        after_context: args
            .after_context
            .or(args.before_context.and(args.context_lines)),
        max_count: args.max_count,
        line_numbers: args.line_numbers,
        strategy: match (args.bytes, args.lines, args.strategy) {
            (Some((start, end)), _, _) => Strategy::ByteRange { start, end },
            (_, Some((start_line, end_line)), _) => Strategy::LineRange {
                start_line,
                end_line,
            },
            (_, _, StrategyArg::Complete) => Strategy::Complete,
            (_, _, StrategyArg::Default) => Strategy::Default,
        },
        include_metadata: args.metadata,
        detail: args.detail.map(Detail::from),
        hints: args.hint_style.style(),
    };
    let result = setup(&args.guard).and_then(|(guard, grammar)| {
        if args.paths.len() > 1 {
            several_paths(&args.paths)?;
        }
        if path == "-" {
            let mut bytes = Vec::new();
            io::stdin()
                .take(guard.max_file_bytes().saturating_add(1))
                .read_to_end(&mut bytes)
                .map_err(|e| {
                    ToolError::new(
                        lisp_read_file::error::ErrorCode::Internal,
                        "-",
                        format!("cannot read standard input: {e}"),
                    )
                })?;
            let file = guard.check_bytes("-", bytes)?;
            tool::read_loaded(file, &grammar, &request, Some(true))
        } else if args.paths.len() > 1 {
            several_paths(&args.paths)?;
            tool::project::read_paths(&guard, &grammar, &request, &args.paths)
        } else {
            tool::read(&guard, &grammar, &request)
        }
    });
    let mut out = terminal::stdout(args.json);
    // Several paths: like `outline`, a path that could not be read makes the status 1;
    // a pattern that matched nothing too, as `grep` and `rg` say "no match" (docs/cli.md).
    let patterns = request.name_pattern.is_some() || request.content_pattern.is_some();
    let failed = |result: &tool::ReadResult| {
        let skipped = result.files_skipped.as_ref().is_some_and(|s| !s.is_empty());
        let no_match = patterns && result.meta.expanded_forms == 0;
        ExitCode::from(u8::from((args.paths.len() > 1 && skipped) || no_match))
    };
    match result {
        Ok(result) if args.json => {
            serde_json::to_writer(&mut out, &result)?;
            out.write_all(b"\n")?;
            out.flush()?;
            // As in text: the JSON line is the result, the cut and how to go on a note.
            if let Some(note) = tool::byte_window_note(&request, &result) {
                eprintln!("{note}");
            }
            Ok(failed(&result))
        }
        Ok(result) => {
            out.write_all(result.content.as_bytes())?;
            out.flush()?;
            // A byte window is the bytes verbatim on stdout: its cut is said on stderr.
            if let Some(note) = tool::byte_window_note(&request, &result) {
                eprintln!("{note}");
            }
            Ok(failed(&result))
        }
        Err(e) => {
            if args.json {
                write_error_line(&mut out, &e)?;
                out.flush()?;
            } else {
                eprintln!("{}: {}", e.code, e.message);
            }
            Ok(ExitCode::from(1))
        }
    }
}

fn run_find(args: FindArgs) -> io::Result<ExitCode> {
    let paths = if args.paths.is_empty() {
        vec![".".to_string()]
    } else {
        args.paths.clone()
    };
    let request = FindRequest {
        path: paths[0].clone(),
        name: args.name,
        name_pattern: args.name_pattern,
        symbol: args.symbol,
        text: args.text,
        callers: args.callers,
        callees: args.callees,
        kinds: args.kinds,
        features: args.features,
        include_body: args.body,
        detail: args
            .detail
            .map(|FindDetailArg::Names| find::FindDetail::Names),
        offset: args.offset,
        limit: args.limit,
        hints: args.hint_style.style(),
    };
    let result = setup(&args.guard).and_then(|(guard, grammar)| {
        find::find_in(&guard, &grammar, &paths, &request, &CancelToken::new())
    });
    let mut out = terminal::stdout(args.json);
    match result {
        Ok(result) => {
            if args.json {
                serde_json::to_writer(&mut out, &result)?;
                out.write_all(b"\n")?;
            } else {
                out.write_all(result.content.as_bytes())?;
            }
            out.flush()?;
            // A path given that could not be read fails the command, as in a map.
            Ok(ExitCode::from(u8::from(result.path_refused)))
        }
        Err(e) => {
            if args.json {
                write_error_line(&mut out, &e)?;
                out.flush()?;
            } else {
                eprintln!("{}: {}", e.code, e.message);
            }
            Ok(ExitCode::from(1))
        }
    }
}

/// Several paths are a map: standard input is not one of them.
fn several_paths(paths: &[String]) -> Result<(), ToolError> {
    if paths.iter().any(|p| p == "-") {
        return Err(ToolError::new(
            lisp_read_file::error::ErrorCode::InvalidArgument,
            "-",
            "- (standard input) is read alone; pass it as the only path, or pass files and directories",
        ));
    }
    Ok(())
}

fn run_outline(args: OutlineArgs) -> io::Result<ExitCode> {
    let (guard, grammar) = match setup(&args.guard) {
        Ok(setup) => setup,
        Err(e) => {
            eprintln!("{}: {}", e.code, e.message);
            return Ok(ExitCode::from(1));
        }
    };
    let mut out = io::BufWriter::with_capacity(1 << 16, terminal::stdout(args.json));
    let mut failed = false;
    for path in &args.paths {
        match guard.read(path) {
            Ok(file) => {
                // Streamed: items are written as they are made, never all kept.
                let outline = StreamedOutline::new(&file.bytes, &grammar);
                if args.json {
                    write_outline_json(&mut out, &file.display_path, &outline)?;
                } else {
                    write_outline_text(&mut out, &file.display_path, &outline)?;
                }
            }
            Err(e) => {
                failed = true;
                if args.json {
                    write_error_line(&mut out, &e)?;
                } else {
                    out.flush()?;
                    eprintln!("{}: {}", e.code, e.message);
                }
            }
        }
    }
    out.flush()?;
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// One line of JSON per file: `path`, `byte_length`, `line_count`, `items`,
/// `diagnostics`, the items serialized one at a time as they are made.
fn write_outline_json(
    out: &mut impl Write,
    path: &str,
    outline: &StreamedOutline,
) -> io::Result<()> {
    out.write_all(b"{\"path\":")?;
    serde_json::to_writer(&mut *out, path)?;
    write!(
        out,
        ",\"byte_length\":{},\"line_count\":{},\"items\":[",
        outline.byte_length(),
        outline.line_count
    )?;
    let mut result = Ok(());
    let mut first = true;
    outline.each_item(&mut |item| {
        let separator = if first { &b""[..] } else { b"," };
        first = false;
        result = out
            .write_all(separator)
            .and_then(|()| serde_json::to_writer(&mut *out, item).map_err(io::Error::from));
        if result.is_ok() {
            ControlFlow::Continue(())
        } else {
            ControlFlow::Break(())
        }
    });
    result?;
    out.write_all(b"],\"diagnostics\":")?;
    serde_json::to_writer(&mut *out, &outline.diagnostics)?;
    out.write_all(b"}\n")
}

/// `lisp-read-file lsp`: serves until `exit` or the end of input.
#[cfg(feature = "lsp")]
fn run_lsp(args: LspArgs) -> ExitCode {
    let options = crate::lsp::Options {
        roots: args.roots,
        max_file_bytes: args.max_file_bytes,
        definers: args.definers,
    };
    match crate::lsp::serve_stdio(options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::from(1)
        }
    }
}

/// `lisp-read-file mcp`: logs to stderr at the chosen level, then serves until stdin closes.
#[cfg(feature = "mcp")]
fn run_mcp(args: McpArgs) -> ExitCode {
    let level = match args.log_level {
        LogLevel::Off => None,
        LogLevel::Error => Some(tracing::Level::ERROR),
        LogLevel::Warn => Some(tracing::Level::WARN),
        LogLevel::Info => Some(tracing::Level::INFO),
        LogLevel::Debug => Some(tracing::Level::DEBUG),
        LogLevel::Trace => Some(tracing::Level::TRACE),
    };
    if let Some(level) = level {
        // stderr only: stdout is the protocol's.
        let _ = tracing_subscriber::fmt()
            .with_writer(io::stderr)
            .with_ansi(false)
            .with_max_level(level)
            .try_init();
    }
    let mut tools = Vec::new();
    for tool in args.tools {
        if !tools.contains(&tool) {
            tools.push(tool);
        }
    }
    let options = ServerOptions {
        roots: args.roots,
        tools,
        max_file_bytes: args.max_file_bytes,
        definers: args.definers,
    };
    match mcp::serve_stdio(options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::from(1)
        }
    }
}

/// The error object on one line: `{"path": …, "error": {"code", "message"}}`
/// ([docs/tool.md](docs/tool.md#outline-json)).
fn write_error_line(out: &mut impl Write, e: &ToolError) -> io::Result<()> {
    let line = FileError {
        path: &e.path,
        error: ErrorBody {
            code: e.code.as_str(),
            message: &e.message,
        },
    };
    serde_json::to_writer(&mut *out, &line)?;
    out.write_all(b"\n")
}

#[derive(Serialize)]
struct FileError<'a> {
    path: &'a str,
    error: ErrorBody<'a>,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    code: &'a str,
    message: &'a str,
}

/// The readable form: a header per file, a line per item (`LINES KIND TEXT`), children
/// indented, diagnostics last.
fn write_outline_text(
    out: &mut impl Write,
    path: &str,
    outline: &StreamedOutline,
) -> io::Result<()> {
    writeln!(
        out,
        "{path}: {} lines, {} bytes, {} items",
        outline.line_count,
        outline.byte_length(),
        outline.item_count
    )?;
    let width = outline.line_count.max(1).to_string().len();
    let mut result = Ok(());
    outline.each_item(&mut |item| {
        result = write_item_text(out, item, width, 1);
        if result.is_ok() {
            ControlFlow::Continue(())
        } else {
            ControlFlow::Break(())
        }
    });
    result?;
    for d in &outline.diagnostics {
        writeln!(out, "  ! {}:{}: {}", d.line, d.column, d.message)?;
    }
    Ok(())
}

fn write_item_text(
    out: &mut impl Write,
    item: &OutlineItem,
    width: usize,
    depth: usize,
) -> io::Result<()> {
    // Written piece by piece (no format! per item): this runs once per item of every file.
    let mut line = String::with_capacity(128);
    line.extend(std::iter::repeat_n(' ', 2 * depth));
    let lines = format!("{}-{}", item.start_line, item.end_line);
    line.extend(std::iter::repeat_n(
        ' ',
        (2 * width + 1).saturating_sub(lines.len()),
    ));
    line.push_str(&lines);
    line.push(' ');
    let kind = match item.kind {
        ItemKind::Form => "form",
        ItemKind::Comment => "comment",
        ItemKind::Whitespace => "whitespace",
        ItemKind::Shebang => "shebang",
        ItemKind::Stray => "stray",
    };
    line.push_str(kind);
    match &item.form {
        Some(form) => {
            line.extend(std::iter::repeat_n(' ', 7usize.saturating_sub(kind.len())));
            line.push(' ');
            for (k, c) in form.conditionals().iter().enumerate() {
                if k > 0 {
                    line.push(' ');
                }
                line.push_str(c);
            }
            if !form.conditionals().is_empty() {
                line.push(' ');
            }
            line.push_str(form.signature());
            if let Some(doc) = form.doc() {
                line.push_str(" ;; ");
                line.push_str(doc);
            }
            line.push('\n');
            out.write_all(line.as_bytes())?;
            for child in &form.children {
                write_item_text(out, child, width, depth + 1)?;
            }
        }
        None => {
            line.push('\n');
            out.write_all(line.as_bytes())?;
        }
    }
    Ok(())
}
