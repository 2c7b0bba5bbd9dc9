//! How user text is written in any answer, message or log line: the one place that
//! escapes and shortens it (docs/guard.md#how-paths-are-shown).
//!
//! **Paths**, applied once, where a path is first made into text. A file name may hold
//! any byte but `/` and NUL: a newline followed by `==> FORGED.lisp <==` would forge a
//! section of a project map, an ESC would drive the reader's terminal, a bidirectional
//! override would show a name reversed. So:
//!
//! - `\` is written `\\`;
//! - tab, newline and carriage return are written `\t`, `\n`, `\r`;
//! - every other control character (`char::is_control`: C0, DEL, C1), the format
//!   characters that break lines or reorder text (U+2028, U+2029 and every Bidi_Control
//!   character: U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) and the invisible
//!   zero-width space and no-break space (U+200B, U+FEFF) are written `\u{HEX}`
//!   (lowercase hex, as Rust writes it);
//! - a byte of a file name that is not UTF-8 is written `\xHH`.
//!
//! Every other character is itself. The rule is reversible (every `\` of the name is
//! doubled, so each `\` of the shown text starts an escape) and not idempotent: text
//! already shown must never be shown again.
//!
//! **File contents on a terminal** ([`shown_on_terminal`]): a surface that writes a
//! file's text to a terminal escapes the same characters the same way, but for `\`, tab
//! and newline, so that a file can neither forge a line (a carriage return over
//! `==> PATH <==`) nor drive the terminal (ESC, OSC); Lisp's own backslashes stay as they
//! are, so this is for a person reading, not reversible. Pipes, JSON and MCP carry the
//! text verbatim.
//!
//! **Other user text in messages** (a name, an argument, a pattern): [`shortened`] writes
//! it by the same rule, [`quoted`] in Rust string syntax; both cut it after a number of
//! characters with `…[+N chars]`, so that a request carrying megabytes is never echoed.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::os::unix::ffi::OsStrExt;

/// `text` (a path or one of its parts) as answers show it.
#[must_use]
pub fn shown_path(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    push_shown(&mut shown, text);
    shown
}

/// A name from the system, any bytes, as answers show it: as [`shown_path`], and each
/// byte that is not UTF-8 written `\xHH`.
#[must_use]
pub fn shown_os_path(name: &OsStr) -> String {
    let mut shown = String::with_capacity(name.len());
    for chunk in name.as_bytes().utf8_chunks() {
        push_shown(&mut shown, chunk.valid());
        for byte in chunk.invalid() {
            let _ = write!(shown, "\\x{byte:02x}");
        }
    }
    shown
}

/// The bytes of the name that `shown` (a path as [`shown_path`] or [`shown_os_path`] wrote
/// it) stands for: the rule is reversible, so a surface that got a path as answers show it
/// (a find entry's `file`) can name the file again. `None` when `shown` is no shown text
/// (a `\` that starts no escape of the rule).
#[must_use]
pub fn unshown_path(shown: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(shown.len());
    let mut chars = shown.chars();
    let mut buf = [0; 4];
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        match chars.next()? {
            '\\' => out.push(b'\\'),
            't' => out.push(b'\t'),
            'n' => out.push(b'\n'),
            'r' => out.push(b'\r'),
            'x' => {
                let hex = chars.as_str().get(..2).filter(|h| is_hex(h))?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                chars.nth(1);
            }
            'u' => {
                let rest = chars.as_str().strip_prefix('{')?;
                let (hex, after) = rest.split_once('}').filter(|(h, _)| is_hex(h))?;
                let c = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                chars = after.chars();
            }
            _ => return None,
        }
    }
    Some(out)
}

/// Whether `text` is hexadecimal digits only (`from_str_radix` takes a sign too).
fn is_hex(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A path from a user quoted in a message: `"SHOWN"`, its first `max_chars` characters
/// shown, then `…[+N chars]` when cut (a request can carry megabytes).
#[must_use]
pub fn quoted_path(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => format!("\"{}\"", shown_path(text)),
        Some((cut, _)) => {
            let rest = text[cut..].chars().count();
            format!("\"{}\"…[+{rest} chars]", shown_path(&text[..cut]))
        }
    }
}

/// A path already shown (a `display_path`) quoted in a message: `"SHOWN"`, never shown twice.
#[must_use]
pub fn quoted_shown(shown: &str) -> String {
    format!("\"{shown}\"")
}

/// True when `c` is written as an escape.
fn escaped(c: char) -> bool {
    c == '\\'
        || c.is_control()
        || matches!(
            c,
            '\u{2028}'
                | '\u{2029}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{061c}'
                | '\u{200b}'
                | '\u{feff}'
        )
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

fn push_shown(shown: &mut String, text: &str) {
    // Most paths are printable ASCII: copied whole (a search shows every file's path).
    if text
        .bytes()
        .all(|b| (b' '..b'\x7f').contains(&b) && b != b'\\')
    {
        shown.push_str(text);
        return;
    }
    for c in text.chars() {
        if !escaped(c) {
            shown.push(c);
            continue;
        }
        match c {
            '\\' => shown.push_str("\\\\"),
            '\t' => shown.push_str("\\t"),
            '\n' => shown.push_str("\\n"),
            '\r' => shown.push_str("\\r"),
            _ => {
                let _ = write!(shown, "\\u{{{:x}}}", u32::from(c));
            }
        }
    }
}

/// A file's text as a terminal shows it: each character [`shown_path`] escapes, but `\`,
/// tab and newline, written as it writes it (`\r`, `\u{1b}`); the text itself when
/// there is none.
#[must_use]
pub fn shown_on_terminal(text: &str) -> Cow<'_, str> {
    let raw = |c: char| matches!(c, '\\' | '\t' | '\n') || !escaped(c);
    if text.chars().all(raw) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if raw(c) {
            shown.push(c);
        } else {
            push_shown(&mut shown, c.encode_utf8(&mut [0; 4]));
        }
    }
    Cow::Owned(shown)
}

/// Said once after a map or a search that shows a path with an escape: a name copied
/// back as shown would name another file (`a\\tb.lisp` read as given is `a\tb.lisp`, with
/// a backslash), which a repository can plant as a decoy.
pub const ESCAPED_PATH_NOTE: &str = "[A path above is shown escaped (docs/guard.md, \"How paths are shown\"): \\\\ is one backslash, \\t a tab, \\n a newline, \\r a carriage return, \\u{HEX} a character, \\xHH a byte. Undo the escapes before passing the path back: as shown, it names another file.]";

/// Whether `text`, a map or a search answer, has a `==> PATH <==` header whose path
/// holds an escape (every `\` of a shown path starts one).
#[must_use]
pub fn has_escaped_header(text: &str) -> bool {
    text.lines()
        .any(|l| l.starts_with("==> ") && l.ends_with(" <==") && l.contains('\\'))
}

/// Longest path shown whole in a message, in characters: the guard refuses longer paths.
pub(crate) const PATH_CHARS: usize = 4096;

/// A path from a request, as a message quotes it before the guard has seen it: shown by
/// the rule, whole when of a sane length, else its start and `…[+N chars]`.
#[must_use]
pub(crate) fn path_prefix(path: &str) -> String {
    shortened(path, PATH_CHARS)
}

/// `text` written by the rule above, cut after `max_chars` characters.
#[must_use]
pub(crate) fn shortened(text: &str, max_chars: usize) -> String {
    let (head, rest) = split(text, max_chars);
    let mut shown = String::with_capacity(head.len() + 16);
    push_shown(&mut shown, head);
    push_rest(&mut shown, rest);
    shown
}

/// `text` in double quotes with Rust's string escapes (`"a\"b"`), cut after `max_chars`
/// characters: for a pattern or a name whose exact spelling matters.
#[must_use]
pub(crate) fn quoted(text: &str, max_chars: usize) -> String {
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
        let _ = write!(shown, "…[+{rest} chars]");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;

    /// The inverse of the rule, to prove it reversible.
    fn unshown(shown: &str) -> Vec<u8> {
        unshown_path(shown).expect("shown text")
    }

    #[test]
    fn control_characters_and_the_backslash_are_escaped() {
        assert_eq!(shown_path("a/b.lisp"), "a/b.lisp");
        assert_eq!(shown_path("back\\slash.lisp"), "back\\\\slash.lisp");
        assert_eq!(
            shown_path("x\n==> FORGED.lisp <==\r\u{1b}[31m"),
            "x\\n==> FORGED.lisp <==\\r\\u{1b}[31m"
        );
        assert_eq!(shown_path("\u{202e}lmth.exe"), "\\u{202e}lmth.exe");
        assert_eq!(shown_path("\u{85}\u{7f}\t"), "\\u{85}\\u{7f}\\t");
        assert_eq!(
            shown_path("g\u{61c}x\u{200b}y\u{feff}z\u{2067}"),
            "g\\u{61c}x\\u{200b}y\\u{feff}z\\u{2067}"
        );
        assert_eq!(shown_path("é ü 日本"), "é ü 日本");
        let name = OsString::from_vec(b"a\xffb\\".to_vec());
        assert_eq!(shown_os_path(&name), "a\\xffb\\\\");
    }

    #[test]
    fn text_that_no_name_is_shown_as_reads_back_as_none() {
        for text in [
            "a\\",
            "a\\q",
            "\\x4",
            "\\x+f",
            "\\u{}",
            "\\u{d800}",
            "\\u{41",
            "\\u41}",
        ] {
            assert_eq!(unshown_path(text), None, "{text}");
        }
        assert_eq!(unshown_path("a\\xffb\\\\").unwrap(), b"a\xffb\\");
    }

    proptest::proptest! {
        /// Shown text has no control character, and reads back to the name's bytes.
        #[test]
        fn the_rule_is_reversible(bytes in proptest::collection::vec(proptest::sample::select(
            vec![b'a', b'/', b'\\', b'\n', b'\r', 0x1b, 0x7f, 0xc2, 0x85, 0xe2, 0x80, 0xae, 0x8b, 0xd8, 0x9c, 0xef, 0xbb, 0xbf, 0xff, b'x', b'{', b'u']), 0..40)) {
            let name = OsString::from_vec(bytes.clone());
            let shown = shown_os_path(&name);
            proptest::prop_assert!(!shown.chars().any(escaped_but_backslash));
            proptest::prop_assert_eq!(unshown(&shown), bytes);
        }
    }

    fn escaped_but_backslash(c: char) -> bool {
        c != '\\' && escaped(c)
    }

    #[test]
    fn a_terminal_sees_contents_escaped_but_backslashes_tabs_and_newlines() {
        assert!(matches!(
            shown_on_terminal("(f #\\a)\n\tx"),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            shown_on_terminal("d\r==> F <==\u{1b}[2J\u{202e}\u{85}\n"),
            "d\\r==> F <==\\u{1b}[2J\\u{202e}\\u{85}\n"
        );
    }

    #[test]
    fn only_a_header_with_an_escape_is_an_escaped_header() {
        assert!(has_escaped_header(
            "==> a/t\\tx.lisp <==\n1: (defun f ())\n"
        ));
        assert!(!has_escaped_header("==> a/tx.lisp <==\n1: (f #\\a)\n"));
        assert!(!has_escaped_header("1: \"==> a\\b <==\"\n"));
    }

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
            for shown in [shortened(text, 80), quoted(text, 80), path_prefix(text)] {
                assert!(!shown.chars().any(char::is_control), "{shown:?}");
            }
        }
        assert_eq!(shortened("a\nb", 80), "a\\nb");
    }
}
