//! What the compatibility tools (`read_file`, `Read`, docs/mcp.md#compatibility-tools) share: the one
//! line-window code (which lines a 1-based `start_line` and a line budget select), the
//! reading of their integer arguments, and their error object. Only the formatting of the
//! lines, the bounds and the error names differ between the tools.

pub mod read_by_name;
pub mod read_envelope;
pub mod read_file;

use crate::cancel::CancelToken;
use crate::error::{ErrorCode, ToolError};
use crate::guard::{Guard, LineQuery};
use crate::shown::quoted;
use crate::source::Source;
use serde::Serialize;
use serde_json::{Map, Value};
use std::ops::Range;

/// A compatibility tool's error: the code its published definition uses, the path as shown, what to do next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CompatError {
    pub code: &'static str,
    pub path: String,
    pub message: String,
}

/// The string argument `name`: required, non-empty.
pub(crate) fn path_argument(arguments: &Map<String, Value>) -> Result<String, String> {
    match arguments.get("path") {
        Some(Value::String(path)) if !path.is_empty() => Ok(path.clone()),
        Some(Value::String(_)) => Err("path is empty; pass the path of a file to read".into()),
        Some(other) => Err(format!(
            "path must be a string, not {}; pass the path of a file to read",
            json_type(other)
        )),
        None => Err("path is missing; pass the path of a file to read".into()),
    }
}

/// The arguments a compatibility tool does not know, refused by name (its published
/// schema stays as it is: the strictness is in handling). The message names what the
/// tool accepts and, for a near miss or a parameter of another tool, what to use.
pub(crate) fn unknown_arguments(
    arguments: &Map<String, Value>,
    tool: &str,
    accepted: &[&str],
) -> Result<(), String> {
    let unknown: Vec<&String> = arguments
        .keys()
        .filter(|k| !accepted.contains(&k.as_str()))
        .collect();
    let Some(first) = unknown.first() else {
        return Ok(());
    };
    let normal = |name: &str| -> String {
        name.chars()
            .filter(|c| *c != '_' && *c != '-')
            .flat_map(char::to_lowercase)
            .collect()
    };
    let hint = |name: &str| -> Option<String> {
        let lines = if accepted.contains(&"max_lines") {
            "max_lines"
        } else {
            "limit"
        };
        if let Some(near) = accepted.iter().find(|a| normal(a) == normal(name)) {
            return Some(format!("did you mean {near}?"));
        }
        match normal(name).as_str() {
            "endline" | "end" | "lines" | "count" | "maxlines" | "limit" | "numlines" => Some(
                format!("{} is not supported: use {lines}", quote_name(name)),
            ),
            "offset" | "line" | "startline" | "start" | "from" => Some(format!(
                "{} is not supported: use start_line",
                quote_name(name)
            )),
            "strategy" | "includemetadata" | "namepattern" | "contentpattern" => Some(format!(
                "{} is a parameter of the lisp-read-file tool",
                quote_name(name)
            )),
            _ => None,
        }
    };
    let names: Vec<String> = unknown.iter().take(5).map(|k| quote_name(k)).collect();
    let more = if unknown.len() > 5 {
        format!(" and {} more", unknown.len() - 5)
    } else {
        String::new()
    };
    let plural = if unknown.len() == 1 { "" } else { "s" };
    let mut message = format!(
        "unknown argument{plural} {}{more}: {tool} accepts {}",
        names.join(", "),
        accepted.join(", ")
    );
    if let Some(hint) = hint(first) {
        message.push_str(&format!(" ({hint})"));
    }
    Err(message)
}

/// An argument's name as a message shows it.
fn quote_name(name: &str) -> String {
    crate::shown::shortened(name, 80)
}

/// Longest path (in characters) quoted whole in a message.
const MAX_SHOWN_PATH: usize = crate::shown::PATH_CHARS;

/// A path from a request as a message quotes it ([`crate::shown::path_prefix`]).
pub(crate) use crate::shown::path_prefix as shown_path;

/// A string of the arguments as a reply echoes it in JSON (which escapes it): whole when of
/// a sane length, else its start.
fn echoed_string(text: &str) -> String {
    match cut_at(text, MAX_SHOWN_PATH) {
        None => text.to_string(),
        Some(cut) => format!("{}…[+{} bytes]", &text[..cut], text.len() - cut),
    }
}

/// Where `text` is cut to at most `max` bytes (a character boundary), if it is longer.
fn cut_at(text: &str, max: usize) -> Option<usize> {
    if text.len() <= max {
        return None;
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    Some(cut)
}

/// The arguments as a reply echoes them: long strings cut to their start, large arrays
/// and objects replaced by a note of their size.
pub(crate) fn echoed_arguments(arguments: &Map<String, Value>) -> Map<String, Value> {
    arguments
        .iter()
        .map(|(k, v)| {
            let v = match v {
                Value::String(s) => Value::String(echoed_string(s)),
                Value::Array(_) | Value::Object(_) => {
                    let size = v.to_string().len();
                    if size <= MAX_SHOWN_PATH {
                        v.clone()
                    } else {
                        Value::String(format!("[{} of {size} bytes, not echoed]", json_type(v)))
                    }
                }
                other => other.clone(),
            };
            (echoed_string(k), v)
        })
        .collect()
}

/// The integer argument `name` in `min..=max`, `default` when absent or null. A JSON
/// number with a zero fraction (`3.0`) counts as an integer (the published schemas say
/// `number`). The message names `path`, the file being read.
pub(crate) fn integer_argument(
    arguments: &Map<String, Value>,
    path: &str,
    name: &str,
    default: usize,
    min: usize,
    max: usize,
) -> Result<usize, String> {
    let value = match arguments.get(name) {
        None | Some(Value::Null) => return Ok(default),
        Some(value) => value,
    };
    let range = || {
        if max == usize::MAX {
            format!("an integer of at least {min}")
        } else {
            format!("an integer from {min} to {max}")
        }
    };
    let number = match value {
        Value::Number(n) => n
            .as_u64()
            .map(|n| n as f64)
            .or_else(|| n.as_f64())
            .filter(|f| f.fract() == 0.0),
        _ => None,
    };
    match number {
        Some(n) if n >= min as f64 && n <= max as f64 => Ok(n as usize),
        _ => Err(format!(
            "{name} must be {}, not {} (reading '{}'); omit it for the default of {default}",
            range(),
            quoted(&value.to_string(), 80),
            shown_path(path)
        )),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The 0-based lines a window covers, and what the file holds around it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineWindow {
    /// 0-based line indices returned (empty when `start_line` is past the end).
    pub lines: Range<usize>,
    /// Lines in the whole file.
    pub total: usize,
}

impl LineWindow {
    /// The window of at most `max_lines` lines from 1-based `start_line` (≥ 1).
    pub(crate) fn new(source: &Source, start_line: usize, max_lines: usize) -> LineWindow {
        let total = source.line_count();
        let first = start_line.saturating_sub(1).min(total);
        let last = first.saturating_add(max_lines).min(total);
        LineWindow {
            lines: first..last,
            total,
        }
    }

    /// True when lines follow the window.
    pub(crate) fn truncated(&self) -> bool {
        self.lines.end < self.total
    }

    /// The 1-based line that continues the window, when it is cut.
    pub(crate) fn next_start_line(&self) -> Option<usize> {
        self.truncated().then_some(self.lines.end + 1)
    }

    /// 1-based first and last line of the window (for messages).
    pub(crate) fn first_and_last(&self) -> (usize, usize) {
        (self.lines.start + 1, self.lines.end)
    }
}

/// The lines of a window as both tools show them, and what the file holds around them.
/// A file over the size cap is read by the guard's streaming line scan: a window of any
/// file, its memory bounded by the cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WindowText {
    pub display_path: String,
    /// The window's lines, without their line breaks, decoded (U+FFFD for invalid bytes).
    pub lines: Vec<String>,
    pub window: LineWindow,
    pub byte_length: usize,
    pub mtime_ms: u64,
    /// False when invalid bytes were replaced (in the file; over the cap, in the window).
    pub valid_utf8: bool,
    /// The file's last line has no line break.
    pub ends_without_newline: bool,
    /// The window's one line, when it is longer than the size cap: its 1-based number and
    /// the bytes `start..end` of the file that hold what the window does not.
    pub cut_line: Option<(usize, u64, u64)>,
}

/// At most `max_lines` lines from 1-based `start_line`. A window of a file over the size
/// cap polls `cancel` as it scans (`CANCELLED` once set); a whole read is bounded by the cap.
pub(crate) fn read_window(
    guard: &Guard,
    path: &str,
    start_line: usize,
    max_lines: usize,
    cancel: &CancelToken,
) -> Result<WindowText, ToolError> {
    match guard.read(path) {
        Ok(file) => {
            let source = Source::new(&file.bytes);
            let window = LineWindow::new(&source, start_line, max_lines);
            Ok(WindowText {
                lines: window
                    .lines
                    .clone()
                    .zip(source.lines_from(window.lines.start))
                    .map(|(_, line)| line.into_owned())
                    .collect(),
                window,
                byte_length: file.bytes.len(),
                mtime_ms: file.mtime_ms,
                valid_utf8: source.is_valid_utf8(),
                ends_without_newline: ends_without_newline(&source),
                display_path: file.display_path,
                cut_line: None,
            })
        }
        Err(e) if e.code == ErrorCode::SizeLimitExceeded => {
            let scanned = guard.read_lines_cancellable(
                path,
                LineQuery {
                    first: start_line as u64,
                    count: max_lines as u64,
                    // Whole lines, as these tools return them; the cap bounds the window.
                    keep_per_line: usize::try_from(guard.max_file_bytes()).unwrap_or(usize::MAX),
                    // Every line's place: a line the cap cut is known by its kept prefix.
                    long_line_bytes: 0,
                },
                cancel,
            )?;
            let total = usize::try_from(scanned.total_lines).unwrap_or(usize::MAX);
            let first = start_line.saturating_sub(1).min(total);
            // A line the cap cut is left to the next window, which starts at it: these
            // tools return whole lines. Alone in its window, it is cut and said.
            let cut = scanned.long_lines.iter().find(|l| l.kept < l.len);
            let returned = match cut {
                Some(l) if l.index > 0 => usize::try_from(l.index).unwrap_or(0),
                _ => usize::try_from(scanned.returned).unwrap_or(0),
            };
            let cut_line = cut
                .filter(|l| l.index == 0)
                .map(|l| (first + 1, l.start + l.kept, l.start + l.len));
            let kept: Vec<&[u8]> = scanned.text.split(|&b| b == b'\n').take(returned).collect();
            let valid_utf8 = kept.iter().all(|line| std::str::from_utf8(line).is_ok());
            let lines: Vec<String> = kept
                .iter()
                .map(|line| String::from_utf8_lossy(line).into_owned())
                .collect();
            Ok(WindowText {
                lines,
                window: LineWindow {
                    lines: first..first + returned,
                    total,
                },
                byte_length: usize::try_from(scanned.info.size).unwrap_or(usize::MAX),
                mtime_ms: scanned.info.mtime_ms,
                valid_utf8,
                ends_without_newline: scanned.ends_without_newline && cut.is_none(),
                display_path: scanned.display_path,
                cut_line,
            })
        }
        Err(e) => Err(e),
    }
}

/// What a window says of its one line when the size cap cut it (`cut`: its 1-based
/// number and the bytes holding its rest): these tools have no byte window, the main
/// tool does.
pub fn cut_line_note((line, start, end): (usize, u64, u64)) -> String {
    format!(
        "[Line {line} is longer than the size cap: its rest is bytes {start}..{end}, read with lisp-read-file strategy {{\"type\":\"byteRange\",\"start\":{start},\"end\":{end}}}.]"
    )
}

/// True when the file's last line has no line break: it is returned without one.
pub(crate) fn ends_without_newline(source: &Source) -> bool {
    !source.bytes().is_empty() && !source.bytes().ends_with(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_at_the_start_middle_end_and_past_the_end() {
        let source = Source::new(b"a\nb\nc\nd\n");
        let w = LineWindow::new(&source, 1, 2);
        assert_eq!(
            (w.lines.clone(), w.total, w.next_start_line()),
            (0..2, 4, Some(3))
        );
        let w = LineWindow::new(&source, 3, 2);
        assert_eq!((w.lines.clone(), w.next_start_line()), (2..4, None));
        let w = LineWindow::new(&source, 9, 2);
        assert_eq!((w.lines.clone(), w.truncated()), (4..4, false));
        let w = LineWindow::new(&source, 1, usize::MAX);
        assert_eq!(w.lines, 0..4);
    }

    #[test]
    fn integer_arguments() {
        let args: Map<String, Value> = serde_json::from_str(
            r#"{"a": 3, "b": 3.0, "c": 2.5, "d": "3", "e": -1, "f": null, "g": 1e300}"#,
        )
        .unwrap();
        assert_eq!(integer_argument(&args, "p.lisp", "a", 1, 1, 500), Ok(3));
        assert_eq!(integer_argument(&args, "p.lisp", "b", 1, 1, 500), Ok(3));
        assert_eq!(integer_argument(&args, "p.lisp", "f", 7, 1, 500), Ok(7));
        assert_eq!(
            integer_argument(&args, "p.lisp", "absent", 7, 1, 500),
            Ok(7)
        );
        for bad in ["c", "d", "e", "g"] {
            let e = integer_argument(&args, "p.lisp", bad, 1, 1, 500).unwrap_err();
            assert!(e.contains("an integer from 1 to 500"), "{e}");
            assert!(e.contains("(reading 'p.lisp')"), "{e}");
        }
        assert!(integer_argument(&args, "p.lisp", "a", 1, 4, 500).is_err());
    }

    #[test]
    fn long_input_is_not_echoed() {
        let long = "p".repeat(1 << 20);
        let args: Map<String, Value> =
            serde_json::from_value(serde_json::json!({"start_line": long, "path": long})).unwrap();
        let e = integer_argument(&args, &long, "start_line", 1, 1, 9).unwrap_err();
        assert!(e.len() < 2 * MAX_SHOWN_PATH, "{}", e.len());
        let echoed = serde_json::to_string(&echoed_arguments(&args)).unwrap();
        assert!(echoed.len() < 3 * MAX_SHOWN_PATH, "{}", echoed.len());
        assert_eq!(shown_path("a.lisp"), "a.lisp");
    }

    #[test]
    fn path_arguments() {
        let args = |s: &str| serde_json::from_str::<Map<String, Value>>(s).unwrap();
        assert_eq!(
            path_argument(&args(r#"{"path": "a.lisp"}"#)),
            Ok("a.lisp".into())
        );
        assert!(path_argument(&args(r#"{"path": ""}"#))
            .unwrap_err()
            .contains("empty"));
        assert!(path_argument(&args(r#"{"path": 3}"#))
            .unwrap_err()
            .contains("a number"));
        assert!(path_argument(&args(r#"{}"#))
            .unwrap_err()
            .contains("missing"));
    }

    #[test]
    fn unknown_arguments_are_named_with_what_to_use() {
        let args = |s: &str| serde_json::from_str::<Map<String, Value>>(s).unwrap();
        let accepted = ["path", "start_line", "max_lines"];
        assert_eq!(
            unknown_arguments(
                &args(r#"{"path": "a", "max_lines": 3}"#),
                "read_file",
                &accepted
            ),
            Ok(())
        );
        let e = unknown_arguments(
            &args(r#"{"path": "a", "start_line": 5, "end_line": 6}"#),
            "read_file",
            &accepted,
        )
        .unwrap_err();
        assert_eq!(e, "unknown argument end_line: read_file accepts path, start_line, max_lines (end_line is not supported: use max_lines)");
        let e = unknown_arguments(
            &args(r#"{"path": "a", "maxLines": 3}"#),
            "read_file",
            &accepted,
        )
        .unwrap_err();
        assert!(e.ends_with("(did you mean max_lines?)"), "{e}");
        let e = unknown_arguments(
            &args(r#"{"path": "a", "strategy": {"type": "complete"}}"#),
            "Read",
            &["path", "start_line", "limit"],
        )
        .unwrap_err();
        assert!(e.contains("Read accepts path, start_line, limit"), "{e}");
        assert!(e.contains("lisp-read-file tool"), "{e}");
        let long = "k".repeat(10_000);
        let e = unknown_arguments(
            &args(&format!(r#"{{"path": "a", "{long}": 1}}"#)),
            "Read",
            &["path"],
        )
        .unwrap_err();
        assert!(e.len() < 300, "{}", e.len());
    }

    #[test]
    fn last_line_without_newline() {
        assert!(ends_without_newline(&Source::new(b"a\nb")));
        assert!(!ends_without_newline(&Source::new(b"a\nb\n")));
        assert!(!ends_without_newline(&Source::new(b"")));
    }
}
