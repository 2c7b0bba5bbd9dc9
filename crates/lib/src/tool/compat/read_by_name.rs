//! The `read` tool (docs/mcp.md#read-tool): the whole text of one file, by path or by the
//! name of an ASDF component, in the envelope `{success, data: {file, content}, error}`.
//!
//! `file` is, in this order: a path relative to the first root (or absolute inside a
//! root); `main`, the project's primary system definition (the `.asd` file at the first
//! root's top level named as the root directory, else the only one there); the name of a
//! component of the systems of the `.asd` files under the roots (`queue`, or with its
//! modules `src/queue`). A name two components share is an error listing them.
//! Everything is read through the guard.

use crate::cancel::CancelToken;
use crate::error::{ErrorCode, ToolError};
use crate::guard::{Guard, LoadedFile, WalkedFile, MAX_WALKED_FILES};
use crate::project::{asdf, plan::is_asd};
use crate::source::Source;
use serde::Serialize;
use serde_json::{Map, Value};

pub const NAME: &str = "read";
/// The description, exactly as the `read` story gives it.
pub const DESCRIPTION: &str = "파일 읽기. edit/write 전에 반드시 먼저 확인.";
pub const INPUT_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "file": {
      "type": "string",
      "description": "A path relative to the project root, the name of an ASDF component of the project's systems (e.g. \"queue\"), or main for the primary system definition."
    }
  },
  "required": ["file"]
}"#;
pub const OUTPUT_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "success": {"type": "boolean"},
    "data": {
      "type": ["object", "null"],
      "properties": {
        "file": {"type": "string", "description": "The file read, relative to the root."},
        "content": {"type": "string", "description": "Its whole text."}
      },
      "required": ["file", "content"],
      "additionalProperties": false
    },
    "error": {"type": ["string", "null"]}
  },
  "required": ["success", "data", "error"],
  "additionalProperties": false
}"#;

/// The envelope, for success and failure alike.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Output {
    pub success: bool,
    pub data: Option<Data>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Data {
    pub file: String,
    pub content: String,
}

impl Output {
    fn failed(message: String) -> Output {
        Output {
            success: false,
            data: None,
            error: Some(message),
        }
    }
}

/// Runs the tool on its MCP arguments.
pub fn read(guard: &Guard, arguments: &Map<String, Value>, cancel: &CancelToken) -> Output {
    let Some(Value::String(name)) = arguments.get("file") else {
        return Output::failed("file is required: a path relative to the project root, an ASDF component name, or main".into());
    };
    if let Some(unknown) = arguments.keys().find(|k| *k != "file") {
        return Output::failed(format!(
            "unknown parameter {}: read takes only file",
            crate::shown::quoted(unknown, 40)
        ));
    }
    match find(guard, name, cancel) {
        Ok(file) => {
            let source = Source::new(&file.bytes);
            if !source.is_valid_utf8() {
                // Content with U+FFFD in place of bad bytes, written back by an editor,
                // would destroy them: refuse rather than hand out a lossy copy.
                let at = std::str::from_utf8(&file.bytes).map_or_else(|e| e.valid_up_to(), |_| 0);
                return Output::failed(format!(
                    "Not UTF-8: {} has a byte that is not UTF-8 at offset {at}; its content \
                     cannot be returned intact (read it with lisp-read-file, which shows \
                     such bytes as U+FFFD, and fix its encoding before editing it)",
                    file.display_path
                ));
            }
            Output {
                success: true,
                data: Some(Data {
                    content: source.text(0, file.bytes.len()).into_owned(),
                    file: file.display_path,
                }),
                error: None,
            }
        }
        Err(message) => Output::failed(message),
    }
}

/// The file `name` names: a path, `main`, or a component.
fn find(guard: &Guard, name: &str, cancel: &CancelToken) -> Result<LoadedFile, String> {
    let not_found = || format!("File not found: {}", crate::guard::printable_path(name));
    match guard.read(name) {
        Ok(file) => return Ok(file),
        Err(e) if e.code != ErrorCode::NotFound => return Err(message(&e)),
        Err(_) => {}
    }
    if name.is_empty() || name.len() > 1000 || cancel.is_cancelled() {
        return Err(not_found());
    }
    let candidates = if name == "main" {
        main_systems(guard, cancel)
    } else {
        components(guard, name, cancel)
    };
    if cancel.is_cancelled() {
        return Err(format!(
            "{}: the request was cancelled before {} was found",
            ErrorCode::Cancelled,
            crate::guard::printable_path(name)
        ));
    }
    match candidates.as_slice() {
        [] => Err(not_found()),
        [one] => guard.read_walked(one).map_err(|e| message(&e)),
        many => Err(format!(
            "Ambiguous name {}: it names {} files: {}; pass one of these paths",
            crate::guard::printable_path(name),
            many.len(),
            many.iter()
                .take(20)
                .map(|f| f.display_path.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

fn message(e: &ToolError) -> String {
    match e.code {
        ErrorCode::NotFound => format!("File not found: {}", e.path),
        _ => format!("{}: {}", e.code, e.message),
    }
}

/// `main`: the `.asd` file at the first root's top level named as the root directory,
/// else every `.asd` file there (one is the answer, several are ambiguous).
fn main_systems(guard: &Guard, cancel: &CancelToken) -> Vec<WalkedFile> {
    let Ok(Some(root)) = guard.directory(".") else {
        return Vec::new();
    };
    let walk = guard.walk_cancellable(&root, &|p| !p.contains('/') && is_asd(p), cancel);
    let root_name = guard
        .roots()
        .first()
        .and_then(|r| r.file_name())
        .map(|n| n.to_string_lossy().to_lowercase());
    let named: Vec<WalkedFile> = walk
        .files
        .iter()
        .filter(|f| {
            let stem = f.relative_path.rsplit_once('.').map_or("", |(s, _)| s);
            root_name.as_deref() == Some(stem.to_lowercase().as_str())
        })
        .cloned()
        .collect();
    if named.is_empty() {
        walk.files
    } else {
        named
    }
}

/// The files of the components named `name` (or `module/name`) in the systems of the
/// `.asd` files under the roots, each file once. As the map, it reads no more `.asd`
/// files once [`MAX_WALKED_FILES`] components were read, and stops when cancelled.
fn components(guard: &Guard, name: &str, cancel: &CancelToken) -> Vec<WalkedFile> {
    let mut found: Vec<WalkedFile> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let wanted = name.trim_end_matches(".lisp");
    let mut components = 0usize;
    for root in guard.roots() {
        let Ok(Some(dir)) = guard.directory(&root.to_string_lossy()) else {
            continue;
        };
        for asd in guard.walk_cancellable(&dir, &is_asd, cancel).files {
            if cancel.is_cancelled() || components >= MAX_WALKED_FILES {
                return found;
            }
            let Ok(loaded) = guard.read_walked(&asd) else {
                continue;
            };
            for system in asdf::systems(&loaded.bytes, None) {
                components += system.components.len();
                for c in system.components {
                    if c.name == wanted || c.full_name == wanted {
                        let file = guard.sibling(&asd, &c.file);
                        let id = guard
                            .identity(&file)
                            .map_or_else(|| file.display_path.clone(), |(d, i)| format!("{d}:{i}"));
                        if seen.insert(id) {
                            found.push(file);
                        }
                    }
                }
            }
        }
    }
    found
}
