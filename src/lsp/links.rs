//! `documentLink` for `.asd` files: the name of each `(:file "foo")` component (and
//! `:cl-source-file`) links to its file, as ASDF finds it: below its modules' directories
//! (a module's `:pathname` in place of its name), its own `:pathname` in place of its name.
//! The files come from the library's reading of system definitions
//! (`lisp_read_file::project::asdf`, read as data, never evaluated); this module finds
//! where each component's name is written, by one pass over the bytes with an explicit
//! stack of the lists open. Only files that exist inside the roots are linked.

use super::convert::{path_of, uri_of, LineIndex};
use super::Server;
use lisp_read_file::index::lexical::{block_comment_end, token_end};
use lisp_read_file::project::asdf;
use lisp_read_file::scan::Span;
use lsp_types::Uri;
use serde_json::{json, Value};
use std::collections::HashMap;

/// Most links one document gets.
pub(super) const MAX_LINKS: usize = asdf::MAX_COMPONENTS;

pub(super) fn document_links(server: &Server, uri: &Uri, bytes: &[u8]) -> Value {
    let Some(path) = path_of(uri).filter(|p| p.to_ascii_lowercase().ends_with(".asd")) else {
        return Value::Array(Vec::new());
    };
    let directory = std::path::Path::new(&path)
        .parent()
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Every component of every system of the file, by its full name (`src/queue`).
    let mut files: HashMap<String, String> = HashMap::new();
    for system in asdf::systems(bytes, None) {
        for component in system.components {
            files.entry(component.full_name).or_insert(component.file);
        }
    }
    let index = LineIndex::new(bytes);
    let mut links = Vec::new();
    for (full_name, span) in component_names(bytes) {
        let Some(file) = files.get(&full_name) else {
            continue;
        };
        // An absolute :pathname is taken as written (the guard still decides).
        let target = if file.starts_with('/') {
            file.clone()
        } else {
            format!("{directory}/{file}")
        };
        if server
            .guard
            .identity(&server.guard.named_file(&target))
            .is_none()
        {
            continue;
        }
        if let Some(target) = uri_of(&target) {
            links.push(json!({"range": index.range(span), "target": target, "tooltip": file}));
        }
    }
    Value::Array(links)
}

/// A list open during the walk: its head, and its second element once read.
struct Open {
    items: usize,
    head: Option<String>,
    name: Option<String>,
}

/// Each `:file`-like component's full name (its modules' names and its own, joined by
/// `/`) and where its name is written, in the order written.
fn component_names(b: &[u8]) -> Vec<(String, Span)> {
    let mut out = Vec::new();
    let mut stack: Vec<Open> = Vec::new();
    // Lists opened past `asdf::MAX_DEPTH`, read over (as the system reader does).
    let mut deeper = 0usize;
    let mut i = 0;
    while i < b.len() && out.len() < MAX_LINKS {
        let (datum, next) = match b[i] {
            b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'\'' | b'`' | b',' | b'@' => (None, i + 1),
            b';' => (
                None,
                memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |n| i + n),
            ),
            b'(' if deeper > 0 || stack.len() >= asdf::MAX_DEPTH => {
                deeper += 1;
                (None, i + 1)
            }
            b'(' => {
                stack.push(Open {
                    items: 0,
                    head: None,
                    name: None,
                });
                (None, i + 1)
            }
            b')' if deeper > 0 => {
                deeper -= 1;
                (None, i + 1)
            }
            b')' => {
                stack.pop();
                if let Some(parent) = stack.last_mut() {
                    parent.items += 1;
                }
                (None, i + 1)
            }
            b'"' => {
                let (text, end) = string(b, i);
                (Some((Some(text), Span::new(i, end))), end)
            }
            b'#' if b.get(i + 1) == Some(&b'|') => (None, block_comment_end(b, i)),
            // `#\x`: a character, never a name.
            b'#' if b.get(i + 1) == Some(&b'\\') => (None, token_end(b, (i + 3).min(b.len()))),
            _ => {
                let end = token_end(b, i).max(i + 1);
                let text = String::from_utf8_lossy(&b[i..end]).to_lowercase();
                let text = text.trim_start_matches('#').trim_start_matches(':');
                (Some((Some(text.to_string()), Span::new(i, end))), end)
            }
        };
        i = next;
        if deeper > 0 {
            continue;
        }
        let (Some((Some(text), span)), Some(top)) = (datum, stack.last_mut()) else {
            continue;
        };
        top.items += 1;
        match top.items {
            1 => top.head = Some(text),
            2 => {
                top.name = Some(text.clone());
                let is_file = matches!(
                    top.head.as_deref(),
                    Some("file" | "cl-source-file" | "cl-source-file.cl" | "cl-source-file.lsp")
                );
                if is_file {
                    let mut full: Vec<&str> = stack[..stack.len() - 1]
                        .iter()
                        .filter(|o| o.head.as_deref() == Some("module"))
                        .filter_map(|o| o.name.as_deref())
                        .collect();
                    full.push(&text);
                    out.push((full.join("/"), span));
                }
            }
            _ => {}
        }
    }
    out
}

/// The text of the string at `i` (a `"`) and where it ends.
fn string(b: &[u8], i: usize) -> (String, usize) {
    let mut text = Vec::new();
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => {
                text.extend(b.get(j + 1));
                j += 2;
            }
            b'"' => return (String::from_utf8_lossy(&text).into_owned(), j + 1),
            c => {
                text.push(c);
                j += 1;
            }
        }
    }
    (String::from_utf8_lossy(&text).into_owned(), b.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn component_names_know_their_modules_and_skip_comments() {
        let text = br#"(defsystem "s" ; (:file "not")
  :components ((:file "package")
               #| (:file "gone") |#
               (:module "src" :pathname "source"
                :components ((:file "a" :depends-on ("package"))
                             (:module inner :components ((:file "b")))))))"#;
        let found: Vec<(String, &[u8])> = component_names(text)
            .into_iter()
            .map(|(n, s)| (n, &text[s.start..s.end]))
            .collect();
        assert_eq!(
            found,
            [
                ("package".to_string(), &b"\"package\""[..]),
                ("src/a".to_string(), &b"\"a\""[..]),
                ("src/inner/b".to_string(), &b"\"b\""[..]),
            ]
        );
    }

    #[test]
    fn a_hostile_nesting_is_walked_in_bounded_memory() {
        // Past the depth kept, lists are read over: the component inside is not linked,
        // and the one after them is.
        let mut text = "(".repeat(200_000);
        text.push_str("(:file \"x\")");
        text.push_str(&")".repeat(200_000));
        text.push_str("(:file \"y\")");
        let names: Vec<String> = component_names(text.as_bytes())
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["y"]);
    }
}
