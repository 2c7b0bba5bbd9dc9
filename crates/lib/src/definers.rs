//! The definer table of a project: the built-in table, the project's own
//! `.lisp-read-file.lisp` at each root, and an operator's `--definers` file.

use crate::error::ToolError;
use crate::grammar::Grammar;
use crate::guard::Guard;

/// Name of the per-project definer file looked for at each root.
pub const PROJECT_DEFINERS_FILE: &str = ".lisp-read-file.lisp";

/// The definer table for a surface: the built-in one, then `.lisp-read-file.lisp` at each
/// root (the working directory when unconfined), then `definers` (`--definers FILE`), so
/// that each can override the one before. Also returns warnings to report.
///
/// `--definers` is the operator's argument, like `--root`: it is read wherever it is, not
/// through the roots, and an unreadable or malformed one is an error. A malformed project
/// file is only a warning: the table goes on without it, so that one bad file in a
/// project does not stop every read.
pub fn project_grammar(
    guard: &Guard,
    definers: Option<&str>,
    max_file_bytes: u64,
) -> Result<(Grammar, Vec<String>), ToolError> {
    let mut grammar = Grammar::builtin();
    let mut warnings = Vec::new();
    let project_files: Vec<String> = if guard.roots().is_empty() {
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
            let text = String::from_utf8_lossy(&file.bytes);
            if let Err(e) = grammar.extend_from_str(&text, &file.display_path) {
                warnings.push(format!(
                    "ignored {}: {}; fix it to use its definers",
                    file.display_path, e.message
                ));
            }
        }
    }
    if let Some(path) = definers {
        let file = Guard::unconfined(max_file_bytes).read(path)?;
        grammar.extend_from_str(&String::from_utf8_lossy(&file.bytes), &file.display_path)?;
    }
    Ok((grammar, warnings))
}
