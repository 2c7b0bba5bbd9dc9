//! The command line (SPEC §8.1): `lisp-read-file outline [--json] PATH...`.
//!
//! Exit status: 0 success, 1 a tool error (a file refused or unreadable), 2 a usage error.

use crate::error::ToolError;
use crate::grammar::Grammar;
use crate::guard::{Guard, DEFAULT_MAX_FILE_BYTES};
use crate::outline::{outline_bytes, Outline, OutlineItem};
use clap::{Args, Parser, Subcommand};
use serde::Serialize;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// Name of the per-project definer file looked for at each root.
pub const PROJECT_DEFINERS_FILE: &str = ".lisp-read-file.lisp";

#[derive(Parser, Debug)]
#[command(
    name = "lisp-read-file",
    version,
    about = "Read Common Lisp projects the way a Lisp hacker skims them: outlines of every definition, without evaluating anything.",
    long_about = None,
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the top-level items of each file with their positions (SPEC §8.4).
    ///
    /// One line per file, in argument order. A file that cannot be read gives an error
    /// line (an object with an `error` member in --json) and the others still print;
    /// the exit status is then 1.
    Outline(OutlineArgs),
}

/// Options shared by every command that reads files.
#[derive(Args, Debug, Clone)]
struct GuardArgs {
    /// Confine reading to this directory (repeatable). Relative paths are relative to the
    /// first root; paths that leave every root are refused. Without --root any file may be read.
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// Refuse files larger than this many bytes.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_FILE_BYTES)]
    max_file_bytes: u64,
    /// Extra definer table (same shape as grammar/definers.lisp); `.lisp-read-file.lisp`
    /// at a root (or the current directory) is read too when present.
    #[arg(long, value_name = "FILE")]
    definers: Option<String>,
}

#[derive(Args, Debug)]
struct OutlineArgs {
    /// Print one JSON object per file (the public format of SPEC §8.4).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    guard: GuardArgs,
    /// Files to outline.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<String>,
}

/// Runs the command line; returns the process exit status.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Outline(args) => run_outline(args),
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
    let mut grammar = Grammar::builtin();
    // The project's table first, so that --definers can override it.
    let project_files: Vec<String> = if args.roots.is_empty() {
        vec![PROJECT_DEFINERS_FILE.to_string()]
    } else {
        guard
            .roots()
            .iter()
            .map(|root| {
                root.join(PROJECT_DEFINERS_FILE)
                    .to_string_lossy()
                    .into_owned()
            })
            .collect()
    };
    for path in project_files {
        if let Ok(file) = guard.read(&path) {
            grammar.extend_from_str(&String::from_utf8_lossy(&file.bytes), &file.display_path)?;
        }
    }
    if let Some(path) = &args.definers {
        let file = guard.read(path)?;
        grammar.extend_from_str(&String::from_utf8_lossy(&file.bytes), &file.display_path)?;
    }
    Ok((guard, grammar))
}

fn run_outline(args: OutlineArgs) -> io::Result<ExitCode> {
    let (guard, grammar) = match setup(&args.guard) {
        Ok(setup) => setup,
        Err(e) => {
            eprintln!("{}: {}", e.code, e.message);
            return Ok(ExitCode::from(1));
        }
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut failed = false;
    for path in &args.paths {
        match guard.read(path) {
            Ok(file) => {
                let outline = outline_bytes(&file.bytes, &grammar);
                if args.json {
                    serde_json::to_writer(
                        &mut out,
                        &FileOutline {
                            path: &file.display_path,
                            outline: &outline,
                        },
                    )?;
                    out.write_all(b"\n")?;
                } else {
                    write_outline_text(&mut out, &file.display_path, &outline)?;
                }
            }
            Err(e) => {
                failed = true;
                if args.json {
                    serde_json::to_writer(
                        &mut out,
                        &FileError {
                            path: &e.path,
                            error: ErrorBody {
                                code: e.code.as_str(),
                                message: &e.message,
                            },
                        },
                    )?;
                    out.write_all(b"\n")?;
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

#[derive(Serialize)]
struct FileOutline<'a> {
    path: &'a str,
    #[serde(flatten)]
    outline: &'a Outline,
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
fn write_outline_text(out: &mut impl Write, path: &str, outline: &Outline) -> io::Result<()> {
    writeln!(
        out,
        "{path}: {} lines, {} bytes, {} items",
        outline.line_count,
        outline.byte_length,
        outline.items.len()
    )?;
    let width = outline.line_count.max(1).to_string().len();
    for item in &outline.items {
        write_item_text(out, item, width, 1)?;
    }
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
    let lines = format!("{}-{}", item.start_line, item.end_line);
    let indent = "  ".repeat(depth);
    let kind = format!("{:?}", item.kind).to_lowercase();
    match &item.form {
        Some(form) => {
            let mut text = form.conditionals.join(" ");
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(&form.signature);
            if let Some(doc) = &form.doc {
                text.push_str(" ;; ");
                text.push_str(doc);
            }
            writeln!(
                out,
                "{indent}{lines:>w$} {kind:<7} {text}",
                w = 2 * width + 1
            )?;
            for child in &form.children {
                write_item_text(out, child, width, depth + 1)?;
            }
        }
        None => writeln!(out, "{indent}{lines:>w$} {kind}", w = 2 * width + 1)?,
    }
    Ok(())
}
