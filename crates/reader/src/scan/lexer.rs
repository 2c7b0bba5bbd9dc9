//! Byte-level lexing primitives (CLHS 2.1.4, 2.4).
//!
//! Every function takes the input and a position and returns a position: no tokens are
//! allocated, nothing recurses, and a construct that runs to the end of input is reported
//! with a `terminated: false` flag rather than an error (the spirit of `rustc_lexer`).
//! The scanner works on bytes, not `str`: every syntax character of the standard syntax is
//! ASCII, UTF-8 continuation bytes are never ASCII, and byte offsets then point into the
//! original file even when it is not valid UTF-8.

use super::window::{Window, WIDTH};
use memchr::{memchr, memchr2};

/// Syntax types of the standard readtable, for the bytes the scanner must look at.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub(crate) enum Class {
    /// Constituents, and every non-ASCII byte (SBCL reads NBSP, BOM etc. as constituents).
    Constituent,
    /// Tab, Newline, Page, Return, Space (CLHS Figure 2-7).
    Whitespace,
    Open,
    Close,
    DoubleQuote,
    Semicolon,
    /// `'`, `` ` `` and `,`: terminating macro characters that prefix the next datum.
    Prefix,
    /// `|`: multiple escape.
    Bar,
    /// `\`: single escape.
    Backslash,
    /// `#`: the non-terminating dispatching macro character.
    Hash,
}

pub(crate) const fn class_table() -> [Class; 256] {
    let mut t = [Class::Constituent; 256];
    t[b'\t' as usize] = Class::Whitespace;
    t[b'\n' as usize] = Class::Whitespace;
    t[0x0c] = Class::Whitespace;
    t[b'\r' as usize] = Class::Whitespace;
    t[b' ' as usize] = Class::Whitespace;
    t[b'(' as usize] = Class::Open;
    t[b')' as usize] = Class::Close;
    t[b'"' as usize] = Class::DoubleQuote;
    t[b';' as usize] = Class::Semicolon;
    t[b'\'' as usize] = Class::Prefix;
    t[b'`' as usize] = Class::Prefix;
    t[b',' as usize] = Class::Prefix;
    t[b'|' as usize] = Class::Bar;
    t[b'\\' as usize] = Class::Backslash;
    t[b'#' as usize] = Class::Hash;
    t
}

pub(crate) static CLASS: [Class; 256] = class_table();

/// Bytes that simply continue a token: constituents and `#` (non-terminating).
pub(crate) static TOKEN_BYTE: [bool; 256] = {
    let table = class_table();
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = matches!(table[c], Class::Constituent | Class::Hash);
        c += 1;
    }
    t
};

#[inline]
pub(crate) fn class(b: u8) -> Class {
    CLASS[b as usize]
}

#[inline]
pub(crate) fn is_whitespace(b: u8) -> bool {
    class(b) == Class::Whitespace
}

/// A byte that ends a token: whitespace or a terminating macro character.
#[inline]
pub(crate) fn is_delimiter(b: u8) -> bool {
    matches!(
        class(b),
        Class::Whitespace
            | Class::Open
            | Class::Close
            | Class::DoubleQuote
            | Class::Semicolon
            | Class::Prefix
    )
}

/// Whether a `#` at `i` begins a token (and so dispatches) rather than continuing one:
/// `#` is non-terminating, so inside `foo#|x|` it is a constituent.
#[inline]
pub(crate) fn hash_starts_token(b: &[u8], i: usize) -> bool {
    if i == 0 {
        return true;
    }
    let prev = b[i - 1];
    // `,@` and `,.` are one macro: the `@`/`.` is not a constituent there.
    is_delimiter(prev) || (matches!(prev, b'@' | b'.') && i >= 2 && b[i - 2] == b',')
}

/// The length of the UTF-8 character starting with byte `lead` (1 for invalid bytes).
#[inline]
pub(crate) fn utf8_len(lead: u8) -> usize {
    match lead {
        0xf0..=0xf7 => 4,
        0xe0..=0xef => 3,
        0xc0..=0xdf => 2,
        _ => 1,
    }
}

/// The length of the character at `i`: a whole UTF-8 sequence when its continuation bytes
/// are there, else one byte (an invalid byte is a character of its own).
#[inline]
pub(crate) fn char_len_at(b: &[u8], i: usize) -> usize {
    let want = utf8_len(b[i]);
    if want > 1 && i + want <= b.len() && b[i + 1..i + want].iter().all(|&c| c & 0xC0 == 0x80) {
        want
    } else {
        1
    }
}

/// Whether the token `[start, end)` ends with a package marker that is not escaped
/// (`sb-impl::` yes; `foo\:` and `|a:|` no).
pub(crate) fn ends_with_package_marker(b: &[u8], start: usize, end: usize) -> bool {
    let mut i = start;
    let mut last_is_marker = false;
    while i < end {
        match b[i] {
            b'\\' => {
                i += 2;
                last_is_marker = false;
            }
            b'|' => {
                i = skip_multiple_escape(b, i).0;
                last_is_marker = false;
            }
            c => {
                last_is_marker = c == b':';
                i += 1;
            }
        }
    }
    last_is_marker
}

/// The end of the last byte in `[from, to)` that is neither whitespace nor part of a
/// comment: where a form cut by recovery really ends.
pub(crate) fn content_end(b: &[u8], from: usize, to: usize) -> usize {
    let b = &b[..to.min(b.len())];
    let mut i = from;
    let mut end = from;
    let mut datum_start = from;
    while i < b.len() {
        match class(b[i]) {
            Class::Whitespace => i += 1,
            Class::Semicolon => i = skip_line_comment(b, i),
            Class::Hash if i == datum_start || hash_starts_token(b, i) => match hash_start(b, i) {
                HashStart::BlockComment => {
                    // The reader starts afresh after a comment: `|##|` is two comments.
                    i = skip_block_comment(b, i).0;
                    datum_start = i;
                }
                HashStart::Character => {
                    i = skip_character(b, i).0;
                    end = i;
                }
                HashStart::Other { after, prefix } => {
                    i = after.max(i + 1);
                    end = i;
                    if prefix {
                        datum_start = i;
                    }
                }
            },
            Class::DoubleQuote => {
                i = skip_string(b, i).0;
                end = i;
            }
            Class::Bar => {
                i = skip_multiple_escape(b, i).0;
                end = i;
            }
            Class::Backslash => {
                i = (i + 2).min(b.len());
                end = i;
            }
            _ => {
                i += 1;
                end = i;
            }
        }
    }
    end
}

/// What a `#` that starts a token begins, as far as structure goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HashStart {
    /// `#|` or `#n|`.
    BlockComment,
    /// `#\x`.
    Character,
    /// Anything else: `after` is the position after `#`, its digits and its dispatch
    /// character. The dispatch character is consumed (so `#;` and `#"` are not a comment or
    /// a string, as in SBCL) unless it is `(` (a vector), `)` or whitespace (none).
    /// `prefix`: a new datum, so a new token, starts at `after` (`#+#|x|#` holds a
    /// comment), unlike after `#:`, `#x`, `#*` whose token continues.
    Other { after: usize, prefix: bool },
}

/// Classifies the `#` at `i` (which must start a token). Every lexer uses this one rule.
#[inline]
pub(crate) fn hash_start(b: &[u8], i: usize) -> HashStart {
    // `#'f`, `#+f`, `#-f`: nearly every `#` in code, so answered at once (what the general
    // rule below says of them).
    if let Some(b'\'' | b'+' | b'-') = b.get(i + 1) {
        return HashStart::Other {
            after: i + 2,
            prefix: true,
        };
    }
    let mut j = i + 1;
    while j < b.len() && b[j].is_ascii_digit() {
        j += 1;
    }
    match b.get(j) {
        Some(b'|') => HashStart::BlockComment,
        Some(b'\\') => HashStart::Character,
        Some(&c) if c == b'(' || c == b')' || is_whitespace(c) => HashStart::Other {
            after: j,
            prefix: false,
        },
        Some(b'<') => HashStart::Other {
            after: unreadable_end(b, j),
            prefix: false,
        },
        Some(&c) => HashStart::Other {
            after: j + 1,
            prefix: !matches!(
                c.to_ascii_lowercase(),
                b':' | b'*' | b'b' | b'o' | b'x' | b'r'
            ),
        },
        None => HashStart::Other {
            after: j,
            prefix: false,
        },
    }
}

/// `j` at the `<` of `#<`: an unreadable object runs to the `>` on its line, or is a token.
pub(crate) fn unreadable_end(b: &[u8], j: usize) -> usize {
    let line_end = memchr(b'\n', &b[j..]).map_or(b.len(), |k| j + k);
    memchr(b'>', &b[j..line_end]).map_or_else(|| skip_token(b, j + 1).0, |k| j + k + 1)
}

/// At a `#`: whether a block comment opens here, `#|` or `#n|` (SBCL ignores the digits).
#[inline]
pub(crate) fn is_block_comment_start(b: &[u8], i: usize) -> bool {
    let mut j = i + 1;
    while j < b.len() && b[j].is_ascii_digit() {
        j += 1;
    }
    b.get(j) == Some(&b'|')
}

/// Skips whitespace from `i`.
#[inline]
pub(crate) fn skip_whitespace(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && is_whitespace(b[i]) {
        i += 1;
    }
    i
}

/// `i` at `;`: returns the position of the newline ending the comment (or the end).
#[inline]
pub(crate) fn skip_line_comment(b: &[u8], i: usize) -> usize {
    memchr(b'\n', &b[i..]).map_or(b.len(), |k| i + k)
}

/// `i` at `"`: returns the position after the closing quote, and whether there was one.
#[inline]
pub(crate) fn skip_string(b: &[u8], i: usize) -> (usize, bool) {
    skip_escaped_until(b, i + 1, b'"')
}

/// `i` at an opening `|`: returns the position after the closing `|`, and whether found.
#[inline]
pub(crate) fn skip_multiple_escape(b: &[u8], i: usize) -> (usize, bool) {
    skip_escaped_until(b, i + 1, b'|')
}

/// Finds `close` from `i`, honouring `\` escapes; returns the position after it.
#[inline]
fn skip_escaped_until(b: &[u8], mut i: usize, close: u8) -> (usize, bool) {
    while let Some(k) = memchr2(close, b'\\', &b[i.min(b.len())..]) {
        let at = i + k;
        if b[at] == close {
            return (at + 1, true);
        }
        i = at + 2; // skip the escaped character
    }
    (b.len(), false)
}

/// `i` at `#|`: returns the position after the matching `|#` (nesting counted), and
/// whether it was found. Pairs do not overlap: in `|#|` the `|#` closes and the last `|`
/// starts afresh, as in SBCL's `sharp-vertical-bar`.
pub(crate) fn skip_block_comment(b: &[u8], i: usize) -> (usize, bool) {
    let mut level = 1usize;
    // Past `#|`, or `#n|`: SBCL ignores a numeric argument there.
    let mut j = i + 1;
    while j < b.len() && b[j].is_ascii_digit() {
        j += 1;
    }
    let mut j = j + 1;
    while let Some(k) = memchr2(b'|', b'#', &b[j.min(b.len())..]) {
        let at = j + k;
        let next = b.get(at + 1).copied();
        if b[at] == b'|' && next == Some(b'#') {
            level -= 1;
            j = at + 2;
            if level == 0 {
                return (j, true);
            }
        } else if b[at] == b'#' && next == Some(b'|') {
            level += 1;
            j = at + 2;
        } else {
            j = at + 1;
        }
    }
    (b.len(), false)
}

/// Skips the rest of a token from `i`: constituents, `#` (non-terminating), `\x` and
/// `|...|` escapes, up to whitespace or a terminating macro character. Returns the end
/// and whether every multiple escape was closed.
pub(crate) fn skip_token(b: &[u8], mut i: usize) -> (usize, bool) {
    while i < b.len() {
        // Runs of constituents (names are long: `define-source-transform`) in a tight loop.
        while i < b.len() && TOKEN_BYTE[b[i] as usize] {
            i += 1;
        }
        if i == b.len() {
            break;
        }
        match class(b[i]) {
            Class::Backslash => i = (i + 2).min(b.len()),
            Class::Bar => {
                let (end, closed) = skip_multiple_escape(b, i);
                if !closed {
                    return (end, false);
                }
                i = end;
            }
            _ => break,
        }
    }
    (i, true)
}

/// `i` at `#\`: the character object `#\x`, `#\(`, `#\Space`, `#\λ`. The character right
/// after the backslash is taken whatever it is; the token then continues as usual.
pub(crate) fn skip_character(b: &[u8], i: usize) -> (usize, bool) {
    // Past `#\`, or `#n\` (the argument is the font, ignored).
    let mut backslash = i + 1;
    while backslash < b.len() && b[backslash].is_ascii_digit() {
        backslash += 1;
    }
    let first = backslash + 1;
    if first >= b.len() {
        return (b.len(), true);
    }
    skip_token(b, first + char_len_at(b, first))
}

/// A construct that ran to the end of input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unterminated {
    String(usize),
    BlockComment(usize),
    MultipleEscape(usize),
}

/// The next parenthesis that is syntax (not inside a string, comment, character or
/// escape) at or after `i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Paren {
    Open(usize),
    Close(usize),
    /// End of input; with the construct that swallowed it, if any.
    End(Option<Unterminated>),
}

/// Steps over what starts at the syntax byte `i` (`"`, `;`, `|`, `\\` or `#`): a string,
/// a line comment, a multiple escape, an escaped character, a block comment, a character
/// object or a dispatch prefix. Returns where the search for parentheses goes on, or the
/// construct that runs to the end of input. `datum_start` is where the datum after the
/// last dispatch prefix (`#+`, `#'` ...) starts: a token starts there.
#[inline(always)]
fn skip_syntax(b: &[u8], i: usize, datum_start: &mut usize) -> Result<usize, Unterminated> {
    match class(b[i]) {
        Class::DoubleQuote => match skip_string(b, i) {
            (end, true) => Ok(end),
            (_, false) => Err(Unterminated::String(i)),
        },
        Class::Semicolon => Ok(skip_line_comment(b, i)),
        Class::Bar => match skip_multiple_escape(b, i) {
            (end, true) => Ok(end),
            (_, false) => Err(Unterminated::MultipleEscape(i)),
        },
        Class::Backslash => Ok(i + 2),
        Class::Hash if i == *datum_start || hash_starts_token(b, i) => match hash_start(b, i) {
            HashStart::BlockComment => match skip_block_comment(b, i) {
                (end, true) => {
                    // The reader starts afresh after a comment: `|##|` is two comments.
                    *datum_start = end;
                    Ok(end)
                }
                (_, false) => Err(Unterminated::BlockComment(i)),
            },
            HashStart::Character => Ok(skip_character(b, i).0),
            // `#(`, `#'`, `#+`, `#2A(`, `#;`...: a `(` after it is ordinary.
            HashStart::Other { after, prefix } => {
                let next = after.max(i + 1);
                if prefix {
                    *datum_start = next;
                }
                Ok(next)
            }
        },
        // A `#` inside a token, or any ordinary byte.
        _ => Ok(i + 1),
    }
}

/// Finds the next syntactic parenthesis at or after `i` (the recovery table's walk).
pub(crate) fn next_paren(b: &[u8], mut i: usize) -> (Paren, usize) {
    let n = b.len();
    let mut datum_start = usize::MAX;
    while i < n {
        let w = Window::at::<false>(b, i);
        let syntax = w.open | w.close | w.other;
        if syntax == 0 {
            i += w.len;
            continue;
        }
        let at = i + syntax.trailing_zeros() as usize;
        match b[at] {
            b'(' => return (Paren::Open(at), at + 1),
            b')' => return (Paren::Close(at), at + 1),
            _ => match skip_syntax(b, at, &mut datum_start) {
                Ok(next) => i = next,
                Err(u) => return (Paren::End(Some(u)), n),
            },
        }
    }
    (Paren::End(None), n)
}

/// The string, block comment or multiple escape still open at the end of `b`, reading
/// from `i` (outside any of them).
pub(crate) fn open_at(b: &[u8], mut i: usize) -> Option<Unterminated> {
    loop {
        match next_paren(b, i) {
            (Paren::End(open), _) => return open,
            (_, next) => i = next,
        }
    }
}

/// Where a list closes: its `)`, and (when counted) how many newlines lie between its
/// `(` and that `)`, so the scanner knows the line of the end without reading the bytes
/// again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Closed {
    pub at: usize,
    /// Counted by `close_list::<true>`; 0 from `close_list::<false>`.
    pub newlines: usize,
}

/// Finds the `)` that closes the list whose `(` is at `open`: `Ok` with its position, or
/// `Err` when the list runs to the end of input (with the construct that swallowed the
/// end, if any). `LINES`: also count the newlines on the way (the scanner's top-level
/// forms; the outline, which reads elements again, does not need them).
///
/// This is the scanner's hot loop. It takes the input 64 bytes at a time ([`Window`]):
/// up to the first byte that is neither ordinary nor a parenthesis, the parentheses only
/// change the depth, so when the window holds fewer `)` than the depth (the list cannot
/// close in it) the depth moves by the difference of two popcounts and the loop goes on
/// to the next window; otherwise its `)` are visited in order. The other syntax
/// bytes are stepped over by [`skip_syntax`] (`memchr` for strings and comments).
pub(crate) fn close_list<const LINES: bool>(
    b: &[u8],
    open: usize,
) -> Result<Closed, Option<Unterminated>> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has POPCNT, just checked (std caches the answer).
        return unsafe { close_list_popcnt::<LINES>(b, open) };
    }
    close_list_portable::<LINES>(b, open)
}

/// [`close_list_portable`] compiled with the POPCNT instruction, which x86_64's base
/// instruction set lacks (every x86_64 CPU since about 2008 has it): the loop counts the
/// parentheses of each window with two popcounts, else about a dozen instructions each.
/// Only the instruction is new; the byte loop the benchmarks compare against has no
/// population counts, so this is not a wider vector unit that it is denied.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn close_list_popcnt<const LINES: bool>(
    b: &[u8],
    open: usize,
) -> Result<Closed, Option<Unterminated>> {
    close_list_portable::<LINES>(b, open)
}

#[inline(always)]
fn close_list_portable<const LINES: bool>(
    b: &[u8],
    open: usize,
) -> Result<Closed, Option<Unterminated>> {
    let n = b.len();
    let mut depth = 1usize;
    let mut datum_start = usize::MAX;
    // Newlines in the windows left behind (when `LINES`).
    let mut newlines = 0usize;
    // The window starts at `base`; its bits below `from` are already dealt with.
    let mut base = open + 1;
    let mut from = 0;
    if base >= n {
        return Err(None);
    }
    let mut w = Window::at::<LINES>(b, base);
    loop {
        let live = u64::MAX << from;
        let other = w.other & live;
        // Parentheses from `from` up to the first other syntax byte.
        let plain = if other == 0 {
            live
        } else {
            live & ((1u64 << other.trailing_zeros()) - 1)
        };
        let (opens, closes) = (w.open & plain, w.close & plain);
        let close_count = closes.count_ones() as usize;
        if close_count >= depth {
            // The list may close here: at the first `)` where the closes so far
            // outnumber the opens before it by the depth. Only the closes are visited,
            // with a popcount each, so there is no branch on open-or-close to mispredict.
            let mut remaining = closes;
            let mut seen = 0;
            while remaining != 0 {
                let k = remaining.trailing_zeros();
                let below = (1u64 << k) - 1;
                seen += 1;
                if seen == depth + (opens & below).count_ones() as usize {
                    return Ok(Closed {
                        at: base + k as usize,
                        newlines: newlines + (w.newline & below).count_ones() as usize,
                    });
                }
                remaining &= remaining - 1;
            }
        }
        depth = depth + opens.count_ones() as usize - close_count;
        let next = if other == 0 {
            base + w.len
        } else {
            let k = other.trailing_zeros();
            let at = base + k as usize;
            // A comment line ending in this window: its newline is in the mask already.
            let line_end = w.newline & u64::MAX.checked_shl(k + 1).unwrap_or(0);
            if LINES && b[at] == b';' && line_end != 0 {
                base + line_end.trailing_zeros() as usize
            } else {
                skip_syntax(b, at, &mut datum_start).map_err(Some)?
            }
        };
        if next >= n {
            return Err(None);
        }
        if next < base + WIDTH {
            // Most constructs stepped over are short (`#'`, `#+`, a string or a comment
            // line): go on in the same window rather than computing a new one.
            from = (next - base) as u32;
        } else {
            if LINES {
                // Leaving a whole window (only the last can be shorter, and it ends the
                // input), and whatever a long string or comment skipped past it.
                newlines += w.newline.count_ones() as usize;
                newlines += count_newlines(&b[base + WIDTH..next]);
            }
            base = next;
            from = 0;
            w = Window::at::<LINES>(b, base);
        }
    }
}

/// Newlines in `bytes`. Most gaps the scanner counts are a few bytes (a blank line
/// between two forms): a plain loop then beats `memchr`'s setup.
#[inline]
pub(crate) fn count_newlines(bytes: &[u8]) -> usize {
    if bytes.len() < 64 {
        bytes.iter().filter(|&&c| c == b'\n').count()
    } else {
        memchr::memchr_iter(b'\n', bytes).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_escapes() {
        assert_eq!(skip_string(br#""a\"b" x"#, 0), (6, true));
        assert_eq!(skip_string(br#""abc"#, 0), (4, false));
        assert_eq!(skip_string(b"\"a\\", 0), (3, false));
        assert_eq!(skip_multiple_escape(b"|a\\|b| c", 0), (6, true));
    }

    #[test]
    fn block_comments_nest() {
        assert_eq!(skip_block_comment(b"#| a #| b |# c |# d", 0), (17, true));
        assert_eq!(skip_block_comment(b"#| a #| b |# c", 0), (14, false));
        assert_eq!(skip_block_comment(b"#||#", 0), (4, true));
        assert_eq!(skip_block_comment(b"#|#|#", 0), (5, false));
    }

    #[test]
    fn tokens_and_characters() {
        assert_eq!(skip_token(b"foo#|x|bar baz", 0), (10, true));
        assert_eq!(skip_token(b"a\\ b c", 0), (4, true));
        assert_eq!(skip_token(b"|abc", 0), (4, false));
        assert_eq!(skip_character(b"#\\( x", 0), (3, true));
        assert_eq!(skip_character(b"#\\Space)", 0), (7, true));
        assert_eq!(skip_character(b"#\\)", 0), (3, true));
        assert_eq!(skip_character("#\\λ)".as_bytes(), 0), (4, true));
        assert_eq!(skip_character(b"#\\", 0), (2, true));
        // An invalid byte is one character: it must not swallow the `)` after it.
        assert_eq!(skip_character(b"#\\\xE2)", 0), (3, true));
        assert_eq!(skip_character("#\\\u{2192})".as_bytes(), 0), (5, true));
    }

    #[test]
    fn package_markers_and_content_end() {
        assert!(ends_with_package_marker(b"sb-impl::", 0, 9));
        assert!(!ends_with_package_marker(b"foo\\:", 0, 5));
        assert!(!ends_with_package_marker(b"|a:|", 0, 4));
        assert!(ends_with_package_marker(b"|a|:", 0, 4));
        let src = b"(a (b \"c\" ; x\n  #| y |#\n\n";
        assert_eq!(content_end(src, 0, src.len()), 9);
        assert_eq!(content_end(b"(a #\\;  ", 0, 9), 6);
    }

    #[test]
    fn next_paren_skips_non_syntax() {
        let src = br#"a "(" ; (
 #\( |(| #| ( |# x#|y|) ("#;
        let (p, _) = next_paren(src, 0);
        assert_eq!(p, Paren::Close(src.len() - 3));
        assert!(matches!(
            next_paren(b"\"abc", 0).0,
            Paren::End(Some(Unterminated::String(0)))
        ));
        assert_eq!(next_paren(b",@#\\(", 0).0, Paren::End(None));
        // `#;` and `#"` consume their dispatch character, as the datum reader does.
        assert_eq!(next_paren(b"#;(", 0).0, Paren::Open(2));
        assert_eq!(next_paren(b"#\"(", 0).0, Paren::Open(2));
        assert_eq!(next_paren(b"#2A(", 0).0, Paren::Open(3));
        assert_eq!(content_end(b"#;(\n(", 0, 4), 3);
    }
}

#[cfg(test)]
mod close_list_tests {
    use super::*;

    /// The plain definition: walk `next_paren`, counting depth.
    fn reference(b: &[u8], open: usize) -> Result<usize, Option<Unterminated>> {
        let mut depth = 1usize;
        let mut i = open + 1;
        loop {
            let (paren, next) = next_paren(b, i);
            i = next;
            match paren {
                Paren::Open(_) => depth += 1,
                Paren::Close(at) => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(at);
                    }
                }
                Paren::End(u) => return Err(u),
            }
        }
    }

    /// A deterministic mix of syntax-heavy fragments, long enough to cross windows.
    fn sample(seed: u64, len: usize) -> Vec<u8> {
        const PIECES: &[&[u8]] = &[
            b"(",
            b")",
            b"((",
            b"))",
            b" ",
            b"\n",
            b"foo",
            b"\"s(\"",
            b"\"a\\\"b\"",
            b";c(\n",
            b"#|(|#",
            b"#||#",
            b"#\\(",
            b"#\\)",
            b"|a(|",
            b"\\(",
            b"#'",
            b"#+",
            b"#-",
            b"#(",
            b"#:x",
            b"x#y",
            b"#2A(",
            b"#;",
            b"\xce\xbb",
            b"'",
            b",@",
            b"#<x>",
            b"#",
            b"a",
            b"                                  ",
        ];
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut out = vec![b'('];
        while out.len() < len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            out.extend_from_slice(PIECES[(x % PIECES.len() as u64) as usize]);
        }
        out
    }

    #[test]
    fn agrees_with_the_plain_depth_count() {
        for seed in 0..3000 {
            let b = sample(seed, 20 + (seed as usize * 7) % 400);
            for open in (0..b.len()).filter(|&k| b[k] == b'(').take(8) {
                let counted = close_list::<true>(&b, open);
                if let Ok(c) = counted {
                    assert_eq!(c.newlines, count_newlines(&b[open..c.at]), "seed {seed}");
                }
                assert_eq!(
                    counted.map(|c| c.at),
                    close_list::<false>(&b, open).map(|c| c.at)
                );
                assert_eq!(
                    counted.map(|c| c.at),
                    reference(&b, open),
                    "seed {seed} open {open}: {:?}",
                    String::from_utf8_lossy(&b)
                );
            }
        }
        // Deep and long: the popcount path, windows crossed many times.
        let mut deep = b"(".repeat(10_000);
        deep.extend_from_slice(&b") x ".repeat(10_000));
        assert_eq!(
            close_list::<false>(&deep, 0).map(|c| c.at),
            reference(&deep, 0)
        );
        assert_eq!(
            close_list::<true>(&deep, 0).map(|c| c.at),
            Ok(deep.len() - 4)
        );
        // Newlines in every lane, and in strings and comments that cross windows.
        let mut lines = b"(".to_vec();
        for k in 0..2000 {
            lines.extend_from_slice(match k % 5 {
                0 => b"(a\nb)\n".as_slice(),
                1 => b"\"a long string\n that runs past a window of sixty-four bytes\n!\" ",
                2 => b";; a comment line that is long enough to cross the window edge\n",
                3 => b"#| block\n comment |# x",
                _ => b"\n\n\n",
            });
        }
        lines.push(b')');
        let c = close_list::<true>(&lines, 0).unwrap();
        assert_eq!(c.at, lines.len() - 1);
        assert_eq!(c.newlines, count_newlines(&lines));
        // Syntax bytes in the last lane of a window (bit 63), for every kind of them.
        for syntax in [b';', b'"', b'#', b'|', b'\\', b'(', b')'] {
            let mut edge = b"(".to_vec();
            edge.extend_from_slice(&[b'a'; 63]);
            edge.push(syntax);
            edge.extend_from_slice(b"x\"|\n)) ;\n)\n");
            let counted = close_list::<true>(&edge, 0);
            assert_eq!(counted.map(|c| c.at), reference(&edge, 0), "{syntax}");
            if let Ok(c) = counted {
                assert_eq!(c.newlines, count_newlines(&edge[..c.at]), "{syntax}");
            }
        }
    }
}
