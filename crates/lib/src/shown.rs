//! User text as messages show it: the one place that shortens and escapes it.
//!
//! A request can carry megabytes and any bytes; a reply, a log line or a terminal must
//! get neither. Every message that quotes a path, a pattern, a name or an argument goes
//! through [`shortened`] (bare) or [`quoted`] (in double quotes, Rust string syntax):
//! control characters escaped (`\n`, `\u{1b}`), cut after a number of characters with
//! `…[+N chars]` saying how much was left out.

/// Longest path shown whole in a message, in characters: the guard refuses longer paths.
pub const PATH_CHARS: usize = 4096;

/// A path as a message quotes it: whole when of a sane length, else its start (a request
/// can carry megabytes; a reply never echoes them).
#[must_use]
pub fn path(path: &str) -> String {
    shortened(path, PATH_CHARS)
}

/// `text` with control characters escaped, cut after `max_chars` characters.
#[must_use]
pub fn shortened(text: &str, max_chars: usize) -> String {
    let (head, rest) = split(text, max_chars);
    let mut shown = String::with_capacity(head.len() + 16);
    for c in head.chars() {
        if c.is_control() {
            shown.extend(c.escape_default());
        } else {
            shown.push(c);
        }
    }
    push_rest(&mut shown, rest);
    shown
}

/// `text` in double quotes with Rust's string escapes (`"a\"b"`), cut after `max_chars`
/// characters: for a pattern or a name whose exact spelling matters.
#[must_use]
pub fn quoted(text: &str, max_chars: usize) -> String {
    let (head, rest) = split(text, max_chars);
    let mut shown = format!("{head:?}");
    push_rest(&mut shown, rest);
    shown
}

/// The first `max_chars` characters and the number of characters after them.
fn split(text: &str, max_chars: usize) -> (&str, usize) {
    match text.char_indices().nth(max_chars) {
        None => (text, 0),
        Some((cut, _)) => (&text[..cut], text[cut..].chars().count()),
    }
}

fn push_rest(shown: &mut String, rest: usize) {
    if rest > 0 {
        shown.push_str(&format!("…[+{rest} chars]"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_shown_whole_and_long_text_says_what_was_cut() {
        assert_eq!(shortened("a.lisp", 10), "a.lisp");
        assert_eq!(shortened("abcdef", 2), "ab…[+4 chars]");
        assert_eq!(shortened("éé", 1), "é…[+1 chars]");
        assert_eq!(quoted("ab", 5), "\"ab\"");
        assert_eq!(quoted("abcdef", 2), "\"ab\"…[+4 chars]");
        assert_eq!(quoted("a\"b", 5), "\"a\\\"b\"");
    }

    #[test]
    fn control_characters_never_reach_a_message_raw() {
        for text in ["a\nb", "a\rb", "a\u{1b}[31mb", "a\u{7}b", "a\u{85}b"] {
            for shown in [shortened(text, 80), quoted(text, 80)] {
                assert!(!shown.chars().any(char::is_control), "{shown:?}");
            }
        }
        assert_eq!(shortened("a\nb", 80), "a\\nb");
    }
}
