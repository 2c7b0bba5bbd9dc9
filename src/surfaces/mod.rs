//! Surfaces: the only modules that know about argv, JSON lines, JSON-RPC or Emacs.

pub mod cli;
pub mod mcp;

use crate::error::ToolError;
use crate::grammar::Grammar;
use crate::guard::Guard;

/// Name of the per-project definer file looked for at each root.
pub const PROJECT_DEFINERS_FILE: &str = ".lisp-read-file.lisp";

/// The definer table for a surface: the built-in one, then `.lisp-read-file.lisp` at each
/// root (the working directory when unconfined), then `definers` (`--definers FILE`), so
/// that each can override the one before.
pub fn project_grammar(guard: &Guard, definers: Option<&str>) -> Result<Grammar, ToolError> {
    let mut grammar = Grammar::builtin();
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
            grammar.extend_from_str(&String::from_utf8_lossy(&file.bytes), &file.display_path)?;
        }
    }
    if let Some(path) = definers {
        let file = guard.read(path)?;
        grammar.extend_from_str(&String::from_utf8_lossy(&file.bytes), &file.display_path)?;
    }
    Ok(grammar)
}
