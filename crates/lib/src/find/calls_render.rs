//! The text view of the callers and callees entries (docs/find.md#text-format).

use super::{CalleesEntry, Caller};
use std::fmt::Write;

/// The caller's line (its heading, as a reference's), then each line with calls once,
/// without its indentation: ` 33: (foo x))`. A call a macro writes is said once per
/// entry: `  [through M]` after the heading when every call of the entry is through M,
/// else after each line whose call is through one. An entry whose calls are all on its
/// heading's line, which says the heading, is that line alone.
pub(crate) fn caller_text(c: &Caller) -> String {
    let heading = if c.heading.is_empty() {
        &c.signature
    } else {
        &c.heading
    };
    let first = c.calls.first();
    let all_through = first
        .and_then(|u| u.through.as_deref())
        .filter(|m| c.calls.iter().all(|u| u.through.as_deref() == Some(*m)));
    let tag = |m: Option<&str>| m.map(|m| format!("  [through {m}]")).unwrap_or_default();
    if let Some(only) = first
        .filter(|u| c.calls.iter().all(|v| v.line == c.line) && said_by(&u.text, heading, &c.kind))
    {
        return format!("{}: {}{}\n", c.line, only.text.trim(), tag(all_through));
    }
    let mut text = format!("{}: {heading}{}\n", c.line, tag(all_through));
    // The calls come in line order: each line's run once.
    for (k, u) in c.calls.iter().enumerate() {
        if k > 0 && c.calls[k - 1].line == u.line {
            continue;
        }
        let _ = write!(text, " {}: {}", u.line, u.text.trim());
        if all_through.is_none() {
            let mut run = c.calls[k..].iter().take_while(|v| v.line == u.line);
            text.push_str(&tag(run.find_map(|v| v.through.as_deref())));
        }
        text.push('\n');
    }
    text
}

/// The definition's line, one line per callee of the scope with its definitions, then
/// the names outside the scope on one line.
pub(crate) fn callees_text(e: &CalleesEntry) -> String {
    let mut text = format!("{}: {}\n", e.line, e.signature);
    for callee in &e.callees {
        let mut lines: Vec<String> = callee.calls.iter().map(|u| u.line.to_string()).collect();
        lines.dedup();
        let places: Vec<String> = callee
            .definitions
            .iter()
            .map(|d| format!("{}:{} ({} {})", d.file, d.line, d.kind, d.name))
            .collect();
        let _ = writeln!(
            text,
            "  calls {} (line{} {}) -> {}",
            callee.name,
            if lines.len() == 1 { "" } else { "s" },
            lines.join(", "),
            places.join(", ")
        );
    }
    if !e.outside.is_empty() {
        let _ = writeln!(text, "  not defined in the scope: {}", e.outside.join(", "));
    }
    text
}

/// Whether a line says a form's heading: it starts with the operator and the first
/// token of the name (`(defmethod area` of `(defmethod area :around (shape) ...)`), or
/// with the operator alone when the heading names nothing (`(declaim ...)`), its
/// `#+`/`#-` prefixes aside.
pub(crate) fn said_by(line: &str, heading: &str, operator: &str) -> bool {
    let lower = heading.to_ascii_lowercase();
    let Some(start) = lower.find(&format!("({operator} ")) else {
        return false;
    };
    let name = start + operator.len() + 2;
    let end = match heading[name..].find([' ', ')']) {
        Some(k) if &heading[name..name + k] == "..." => name,
        Some(k) => name + k,
        None => heading.len(),
    };
    let line = line.trim_start().to_ascii_lowercase();
    let line = line.get(line.find(&format!("({operator} ")).unwrap_or(usize::MAX)..);
    line.is_some_and(|l| l.starts_with(&lower[start..end]))
}
