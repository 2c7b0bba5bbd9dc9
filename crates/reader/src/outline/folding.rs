//! Folding source text for one line: whitespace and comments folded to one space,
//! capped lengths, invalid UTF-8 decoded, abbreviations that stay balanced Lisp.

use super::*;

/// Source text of `[start, end)` on one line: whitespace runs become one space, comments
/// are dropped, strings, characters and `|escapes|` are kept as written.
pub fn fold(b: &[u8], start: usize, end: usize) -> String {
    fold_capped(b, start, end, usize::MAX)
}

/// The start of [`fold`]'s text, enough to abbreviate it to `max_chars` or to tell it is
/// longer: a part that is shown only when short (a value, an option) is often a long
/// form, and folding all of it to throw it away was most of the cost of some signatures.
pub(super) fn fold_short(b: &[u8], start: usize, end: usize, max_chars: usize) -> String {
    fold_capped(b, start, end, short_cap(max_chars))
}

/// [`fold`], stopping after more than `cap` characters of text (see [`fold_into_capped`]).
pub(super) fn fold_capped(b: &[u8], start: usize, end: usize, cap: usize) -> String {
    let span = &b[start.min(end).min(b.len())..end.min(b.len())];
    if folds_to_itself(span) {
        return lossy(span).into_owned();
    }
    let mut out = String::with_capacity(end.saturating_sub(start).min(256));
    fold_into_capped(&mut out, b, start, end, cap);
    out
}

/// Characters of fold output past which the text is longer than `max_chars` even after
/// `trim_end` (a chunk ends in at most one blank, `\ `): its first `max_chars` characters
/// are those of the fold. (A cap of bytes, 4 to a character, folded four times what an
/// ASCII part needs: most of the cost of a dense file's long names.)
pub(super) fn short_cap(max_chars: usize) -> usize {
    max_chars + 2
}

/// [`fold`], borrowing the text of a plain token (the common case) from the file.
pub(super) fn fold_cow(b: &[u8], start: usize, end: usize) -> Cow<'_, str> {
    let span = &b[start.min(end).min(b.len())..end.min(b.len())];
    if folds_to_itself(span) {
        return lossy(span);
    }
    Cow::Owned(fold(b, start, end))
}

/// Whether [`fold`] leaves `span` as it is: it changes only whitespace (folded, or turned
/// into spaces inside strings) and comments (dropped), and a comment needs `;` or `#|`.
/// So a span without whitespace, `;` and `|` is its own text: a token (`defun`,
/// `sb-impl::x`, `#:foo`) or a string without blanks, the common names.
#[inline]
pub(super) fn folds_to_itself(span: &[u8]) -> bool {
    !span.iter().any(|&c| FOLD_CHANGES[c as usize])
}

/// The bytes [`folds_to_itself`] looks for: a table, since every name goes through it.
pub(super) static FOLD_CHANGES: [bool; 256] = {
    let classes = crate::scan::class_table();
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = matches!(
            classes[c],
            ByteClass::Whitespace | ByteClass::Semicolon | ByteClass::Bar
        );
        c += 1;
    }
    t
};

/// `String::from_utf8_lossy`, with the checks for ASCII and for valid UTF-8 (nearly every
/// token) first: for a short token `is_ascii` is a few instructions, `str::from_utf8` a
/// hundred, the lossy decoder more.
#[inline]
pub(super) fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    if bytes.is_ascii() {
        // SAFETY: ASCII is valid UTF-8.
        return Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// [`fold`], appended to `out`.
pub(super) fn fold_into(out: &mut String, b: &[u8], start: usize, end: usize) {
    fold_into_capped(out, b, start, end, usize::MAX);
}

/// [`fold_into`], stopping once more than `cap` characters have been appended (between
/// two chunks, or two runs of ASCII, so what was appended is the start of the fold, and
/// more than `cap` characters of it).
pub(super) fn fold_into_capped(out: &mut String, b: &[u8], start: usize, end: usize, cap: usize) {
    let span = &b[start.min(end).min(b.len())..end.min(b.len())];
    // SAFETY: `fold_plain` appends only ASCII bytes, or leaves `out` as it was.
    if fold_plain(unsafe { out.as_mut_vec() }, span, cap) {
        return;
    }
    let mut bytes = std::mem::take(out).into_bytes();
    let from = bytes.len();
    fold_chunks(&mut bytes, b, start, end, cap);
    *out = if std::str::from_utf8(&bytes[from..]).is_ok() {
        // SAFETY: `bytes[..from]` was a `String` and `bytes[from..]` was just checked; two
        // valid UTF-8 sequences concatenated are valid UTF-8. (Checking only the new part
        // keeps building a signature from parts linear.)
        unsafe { String::from_utf8_unchecked(bytes) }
    } else {
        // Invalid UTF-8 in the source: this part is decoded with U+FFFD.
        let part = String::from_utf8_lossy(&bytes[from..]).into_owned();
        bytes.truncate(from);
        // SAFETY: `bytes[..from]` was a `String`.
        let mut text = unsafe { String::from_utf8_unchecked(bytes) };
        text.push_str(&part);
        text
    };
}

/// [`fold`] abbreviated to `SHORT_PART_CHARS`, appended to `out`.
pub(super) fn push_short(out: &mut String, b: &[u8], start: usize, end: usize) {
    push_abbreviated(out, b, start, end, SHORT_PART_CHARS);
}

/// [`fold`] abbreviated to `max` characters ([`abbreviate_balanced`]), appended to `out`:
/// no string of its own when it is short.
pub(super) fn push_abbreviated(out: &mut String, b: &[u8], start: usize, end: usize, max: usize) {
    let from = out.len();
    fold_into_capped(out, b, start, end, short_cap(max));
    if out.len() - from > max && out[from..].chars().count() > max {
        let text = abbreviate_balanced(&out[from..], max);
        out.truncate(from);
        out.push_str(&text);
    }
}

/// The fold of a span of printable ASCII and whitespace without strings, escapes,
/// `#` or comments (most lambda lists and names, over one line or several): blank runs
/// become one space, none first or last, after `(` or before `)`; the runs between blanks
/// are copied whole. Returns false, with `out` as it was, at the first other byte (the
/// work thrown away is at most what the chunk-by-chunk fold then does again).
pub(super) fn fold_plain(out: &mut Vec<u8>, span: &[u8], cap: usize) -> bool {
    let from = out.len();
    let mut pending_space = false;
    let mut i = 0;
    while i < span.len() && out.len() - from <= cap {
        let c = span[i];
        match PLAIN[c as usize] {
            Plain::Blank => {
                pending_space = true;
                i += 1;
            }
            Plain::Other => {
                out.truncate(from);
                return false;
            }
            Plain::Text => {
                let run = span[i + 1..]
                    .iter()
                    .position(|&c| PLAIN[c as usize] != Plain::Text)
                    .map_or(span.len(), |k| i + 1 + k);
                if pending_space && out.len() > from && c != b')' && out.last() != Some(&b'(') {
                    out.push(b' ');
                }
                pending_space = false;
                out.extend_from_slice(&span[i..run]);
                i = run;
            }
        }
    }
    true
}

/// What a byte is to [`fold_plain`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Plain {
    /// Printable ASCII copied as it is.
    Text,
    Blank,
    /// Anything else: a string, escape, dispatch or comment starts, or not ASCII.
    Other,
}

static PLAIN: [Plain; 256] = {
    let mut t = [Plain::Other; 256];
    let mut c = b'!';
    while c <= b'~' {
        if !matches!(c, b'"' | b'|' | b'\\' | b'#' | b';') {
            t[c as usize] = Plain::Text;
        }
        c += 1;
    }
    t[b' ' as usize] = Plain::Blank;
    t[b'\t' as usize] = Plain::Blank;
    t[b'\n' as usize] = Plain::Blank;
    t[b'\r' as usize] = Plain::Blank;
    t[0x0c] = Plain::Blank;
    t
};

/// The bytes of [`fold`] chunk by chunk (tokens, strings, comments, dispatches), for any
/// span, appended to `out` (see [`fold_into_capped`] for `cap`).
pub(super) fn fold_chunks(out: &mut Vec<u8>, b: &[u8], start: usize, end: usize, cap: usize) {
    let b = &b[..end.min(b.len())];
    let mut fold = Folding {
        from: out.len(),
        pending_space: false,
        last_open: false,
        datum_start: start,
        last_character: false,
        chars: 0,
    };
    let mut i = start;
    while i < b.len() && fold.chars <= cap {
        match fold.chunk_end(b, i) {
            Chunk::Skipped(next) => i = next,
            Chunk::Copied(next) => {
                let next = next.min(b.len()).max(i + 1);
                fold.push(out, b, i, next);
                i = next;
            }
        }
    }
}

/// The state of a fold between two chunks.
struct Folding {
    /// Where the fold starts in `out`.
    from: usize,
    /// Whitespace or a comment was skipped: one space before the next chunk.
    pending_space: bool,
    /// Whether the last byte pushed is a real `(` (not the one of `#\(`).
    last_open: bool,
    /// Where the datum after a dispatch prefix starts (`#+#|x|#`): a token starts there.
    datum_start: usize,
    /// Whether the last chunk was a character object: `#\( )` keeps its space.
    last_character: bool,
    /// Characters appended, at most: bytes that do not continue a UTF-8 sequence.
    chars: usize,
}

/// What the bytes at a position are to a fold.
enum Chunk {
    /// Whitespace or a comment, skipped up to here.
    Skipped(usize),
    /// A chunk copied up to here.
    Copied(usize),
}

impl Folding {
    fn chunk_end(&mut self, b: &[u8], i: usize) -> Chunk {
        let skipped = |fold: &mut Folding, next| {
            fold.pending_space = true;
            Chunk::Skipped(next)
        };
        Chunk::Copied(match byte_class(b[i]) {
            ByteClass::Whitespace => {
                let run = b[i..]
                    .iter()
                    .position(|&c| byte_class(c) != ByteClass::Whitespace);
                return skipped(self, run.map_or(b.len(), |k| i + k));
            }
            ByteClass::Semicolon => {
                return skipped(
                    self,
                    memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |k| i + k),
                );
            }
            ByteClass::Hash if i == self.datum_start || hash_starts_token(b, i) => {
                match hash_start(b, i) {
                    HashStart::BlockComment => {
                        let next = block_comment_end(b, i).0;
                        // The reader starts afresh after a comment: `|##|` is two.
                        self.datum_start = next;
                        return skipped(self, next);
                    }
                    HashStart::Character => character_end(b, i).0,
                    HashStart::Other { after, prefix } => {
                        if prefix {
                            self.datum_start = after;
                        }
                        after
                    }
                }
            }
            ByteClass::DoubleQuote => string_end(b, i).0,
            ByteClass::Bar => multiple_escape_end(b, i).0,
            ByteClass::Backslash => (i + 2).min(b.len()),
            // A run of constituents is one chunk: none of them changes the state below
            // after the first (and none is a line break).
            ByteClass::Constituent => b[i + 1..]
                .iter()
                .position(|&c| byte_class(c) != ByteClass::Constituent)
                .map_or(b.len(), |k| i + 1 + k),
            _ => i + 1,
        })
    }

    /// Appends the chunk `b[i..next]`, after one space if whitespace came before it.
    fn push(&mut self, out: &mut Vec<u8>, b: &[u8], i: usize, next: usize) {
        let c = b[i];
        let class_here = byte_class(c);
        if (class_here == ByteClass::Close && !self.last_character)
            || (self.last_open && out.last() == Some(&b'('))
        {
            self.pending_space = false;
        }
        self.last_open = class_here == ByteClass::Open;
        self.last_character = c == b'#' && hash_start(b, i) == HashStart::Character;
        if self.pending_space && out.len() > self.from {
            out.push(b' ');
            self.chars += 1;
        }
        // Counted so: an invalid byte decoded as U+FFFD counts at most once, so the fold
        // never stops before `cap` characters.
        self.chars += b[i..next].iter().filter(|&&c| (c as i8) >= -0x40).count();
        self.pending_space = false;
        if matches!(
            class_here,
            ByteClass::Constituent | ByteClass::Open | ByteClass::Close | ByteClass::Prefix
        ) {
            // No whitespace inside: copied as is.
            out.extend_from_slice(&b[i..next]);
        } else {
            // Inside strings and escapes whitespace is kept, but a signature stays on one
            // line.
            out.extend(b[i..next].iter().map(|&c| {
                if c == b'\n' || c == b'\r' || c == b'\t' {
                    b' '
                } else {
                    c
                }
            }));
        }
    }
}

/// Where a text of Lisp (a signature, folded: no comments) leaves the reader: lists
/// still open, inside a string or a `|...|` escape, after a `\\` or `#\\`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Balance {
    pub depth: usize,
    pub string: bool,
    pub bar: bool,
    pub escape: bool,
}

/// The lists `text` leaves open, read from the top level (a `)` too many is ignored): the
/// depth of a text without strings, escapes, `#` or comments. Only the bytes `(` and `)`
/// are visited one by one.
fn paren_depth(text: &[u8]) -> usize {
    let mut depth = 0usize;
    for at in memchr::memchr2_iter(b'(', b')', text) {
        if text[at] == b'(' {
            depth += 1;
        } else {
            depth = depth.saturating_sub(1);
        }
    }
    depth
}

/// Texts up to this many bytes are balanced in one loop ([`Balance::of`]).
const SHORT_BALANCE: usize = 256;

/// What a byte is to [`Balance::of`]'s paren count.
#[derive(Clone, Copy)]
enum Paren {
    Open,
    Close,
    /// A string, `|`, escape, `#` or `;`: the state machine reads the text.
    Special,
    None,
}

static BALANCE: [Paren; 256] = {
    let mut t = [Paren::None; 256];
    t[b'(' as usize] = Paren::Open;
    t[b')' as usize] = Paren::Close;
    t[b'"' as usize] = Paren::Special;
    t[b'|' as usize] = Paren::Special;
    t[b'\\' as usize] = Paren::Special;
    t[b'#' as usize] = Paren::Special;
    t[b';' as usize] = Paren::Special;
    t
};

impl Balance {
    /// The state after reading `text` from the top level (a `)` too many is ignored).
    pub fn of(text: &str) -> Balance {
        let b = text.as_bytes();
        // Most texts (signatures) hold no string, `|`, escape, `#` or `;`: then only the
        // parentheses count, instead of the byte-by-byte state machine (which was a fifth
        // of a collapsed view's time on a dense file). A short text is read in one loop;
        // a longer one with SIMD searches, whose set-up costs more than a short loop.
        if b.len() <= SHORT_BALANCE {
            let mut depth = 0usize;
            for &c in b {
                match BALANCE[c as usize] {
                    Paren::Open => depth += 1,
                    Paren::Close => depth = depth.saturating_sub(1),
                    Paren::Special => return Balance::of_any(b),
                    Paren::None => {}
                }
            }
            return Balance {
                depth,
                ..Balance::default()
            };
        }
        if memchr::memchr3(b'"', b'|', b'\\', b).is_none()
            && memchr::memchr2(b'#', b';', b).is_none()
        {
            return Balance {
                depth: paren_depth(b),
                ..Balance::default()
            };
        }
        Balance::of_any(b)
    }

    /// [`Balance::of`] by the state machine, for any text.
    pub(super) fn of_any(text: &[u8]) -> Balance {
        let mut s = Balance::default();
        // Whether the last byte is a `#` that starts a token: the byte after it is a
        // dispatch character (`#"` starts no string, as in the scanner).
        let mut dispatch = false;
        let (mut prev, mut prev2) = (b' ', b' ');
        // Whether `prev` is the character of a dispatch prefix (`#+`, `#.`): a datum starts
        // after it.
        let mut feature = false;
        // Inside a `;` comment (never in folded text, which drops them).
        let mut comment = false;
        for &c in text {
            let after_dispatch = std::mem::take(&mut dispatch);
            if comment {
                comment = c != b'\n';
            } else if s.escape {
                s.escape = false;
            } else if after_dispatch && c.is_ascii_digit() {
                // A numeric argument: `#1;` is still a dispatch.
                dispatch = true;
            } else if after_dispatch && (c == b'"' || c == b';') {
                // Not a string, not a comment.
            } else if c == b'\\' {
                // In a string, a `|...|`, a token, or a character `#\\x`.
                s.escape = true;
            } else if s.string {
                s.string = c != b'"';
            } else if s.bar {
                s.bar = c != b'|';
            } else {
                match c {
                    b'"' => s.string = true,
                    // Folded text has no `#|` comments: a `|` is an escape, even after
                    // `#` inside a token (`foo#|x|#bar`).
                    b'|' => s.bar = true,
                    b'(' => s.depth += 1,
                    b')' => s.depth = s.depth.saturating_sub(1),
                    // A `#` that starts a datum: after a delimiter or a dispatch prefix.
                    b'#' => {
                        dispatch = !is_symbol_byte(prev)
                            || feature
                            || (prev2 == b',' && matches!(prev, b'@' | b'.'))
                    }
                    b';' => comment = true,
                    _ => {}
                }
            }
            feature = after_dispatch && c != b'\\';
            prev2 = prev;
            prev = c;
        }
        s
    }

    /// Whether the text is complete: no list, string or escape left open.
    pub fn is_closed(&self) -> bool {
        *self == Balance::default()
    }

    /// Appends `...` and what closes the text read: the string or escape, then the lists.
    pub(super) fn close(&self, out: &mut String) {
        if self.escape {
            out.push('.');
        }
        if self.string {
            out.push_str("...\"");
        } else if self.bar {
            out.push_str("...|");
        } else if !out.ends_with("...") {
            out.push_str(if self.depth == 0 { "..." } else { " ..." });
        }
        out.extend(std::iter::repeat_n(')', self.depth));
    }
}

/// `text` (Lisp text) cut to about `max` characters and closed: `...` where it is cut,
/// then the string and lists it leaves open, so that the result reads as balanced Lisp
/// (`(a (b c ...))`, `"abc..."`).
pub fn abbreviate_balanced(text: &str, max: usize) -> String {
    if text.len() <= max || text.chars().count() <= max {
        return text.to_string();
    }
    let keep = max.saturating_sub(3);
    let cut = if text.is_ascii() {
        keep // a character a byte: no walk over the characters
    } else {
        text.char_indices()
            .nth(keep)
            .map_or(text.len(), |(at, _)| at)
    };
    let mut out = text[..cut].trim_end().to_string();
    let mut state = Balance::of(&out);
    if state.escape {
        // A `\\` or `#\\` without its character: drop it.
        out.pop();
        if out.ends_with('#') {
            out.pop();
        }
        state = Balance::of(&out);
    }
    state.close(&mut out);
    out
}

/// [`abbreviate_balanced`] of a text made for it: kept as it is when short (no copy, and
/// no count of its characters when its bytes are few enough).
pub(super) fn abbreviated(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    abbreviate_balanced(&text, max)
}

/// Closes a text that the file leaves open (an unclosed form): `...` then the closers.
pub(super) fn close_open(text: &mut String) {
    let state = Balance::of(text);
    if !state.is_closed() {
        state.close(text);
    }
}

/// `text` cut to `max` characters, with `...` when cut.
pub fn abbreviate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max.saturating_sub(3)).collect();
    format!("{}...", cut.trim_end())
}
