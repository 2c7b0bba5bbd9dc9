//! How many objects lopdf would build from PDF syntax: a count of its tokens (numbers,
//! names, strings, keywords, brackets), made by a small streaming lexer before lopdf sees
//! the bytes.
//!
//! lopdf keeps every token of a PDF's objects as an `Object` of about a hundred bytes: a
//! 2 MB PDF holding one array of 1,000,000 numbers took 125 MB, a 32 MB one 1.9 GB.
//! The size of the file does not bound that; the number of tokens does. So the pre-scan
//! counts the tokens of what lopdf parses while loading (the file outside stream data,
//! and the object streams it decodes) and the tokens of each page's content before its
//! text is extracted, and refuses past [`MAX_TOKENS`] (docs/documents.md#limits).
//!
//! The lexer knows just enough PDF to count as lopdf splits: white space and comments
//! separate, `( ... )` with nesting and `\` escapes is one string, `< ... >` one hex
//! string, `<<`, `>>`, `[`, `]`, `{`, `}` one token each, `/` starts a name. That is how
//! a content stream is parsed, from its start. The objects of a file are parsed from
//! the offsets its cross-reference table gives, which may point into what a sequential
//! reading takes for a string or a comment; so they are counted [`TokenCount::loose`]ly:
//! every delimiter a token and every run between delimiters and white space another,
//! never fewer than lopdf can parse from any offset.

/// Tokens a PDF's loaded objects may hold, and tokens one page's content may hold.
pub(super) const MAX_TOKENS: u64 = 500_000;

/// A token count over bytes fed in order, in any pieces.
#[derive(Debug, Default)]
pub(super) struct TokenCount {
    pub tokens: u64,
    state: State,
    /// Strings, hex strings and comments are not read as such (see the module's doc).
    loose: bool,
}

#[derive(Debug, Default, Clone, Copy)]
enum State {
    #[default]
    Between,
    /// Inside a number, keyword or name.
    Token,
    /// Inside a literal string: its nesting depth, and whether a `\` escapes the next byte.
    String {
        depth: u32,
        escaped: bool,
    },
    /// After a `<`: a dictionary's `<<` or a hex string.
    Angle,
    Hex,
    Comment,
}

fn is_white(b: u8) -> bool {
    matches!(b, 0 | b'\t' | b'\n' | 0x0c | b'\r' | b' ')
}

fn is_delimiter(b: u8) -> bool {
    matches!(
        b,
        b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%'
    )
}

impl TokenCount {
    /// A count that reads no string, hex string or comment as one.
    pub(super) fn loose() -> TokenCount {
        TokenCount {
            loose: true,
            ..TokenCount::default()
        }
    }

    /// Forgets where the last piece ended (the next piece is not its continuation).
    pub(super) fn restart(&mut self) {
        self.state = State::Between;
    }

    /// The tokens of `bytes` alone.
    pub(super) fn of(bytes: &[u8]) -> u64 {
        let mut count = TokenCount::default();
        count.feed(bytes);
        count.tokens
    }

    pub(super) fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.state = match self.state {
                State::Between => self.start(b),
                State::Token if is_white(b) => State::Between,
                State::Token if is_delimiter(b) => self.start(b),
                State::Token => State::Token,
                State::String { depth, escaped } => string_byte(depth, escaped, b),
                State::Angle if b == b'<' => State::Between,
                State::Angle | State::Hex if b == b'>' => State::Between,
                State::Angle | State::Hex => State::Hex,
                State::Comment if b == b'\n' || b == b'\r' => State::Between,
                State::Comment => State::Comment,
            };
        }
    }

    /// The state after `b` outside any token; counts the token `b` starts.
    fn start(&mut self, b: u8) -> State {
        if is_white(b) {
            return State::Between;
        }
        if self.loose {
            self.tokens += 1;
            return if is_delimiter(b) {
                State::Between
            } else {
                State::Token
            };
        }
        if b == b')' {
            return State::Between;
        }
        if b == b'%' {
            return State::Comment;
        }
        self.tokens += 1;
        match b {
            b'(' => State::String {
                depth: 1,
                escaped: false,
            },
            b'<' => State::Angle,
            b'[' | b']' | b'{' | b'}' | b'>' => State::Between,
            _ => State::Token,
        }
    }
}

fn string_byte(depth: u32, escaped: bool, b: u8) -> State {
    if escaped {
        return State::String {
            depth,
            escaped: false,
        };
    }
    match b {
        b'\\' => State::String {
            depth,
            escaped: true,
        },
        b'(' => State::String {
            depth: depth + 1,
            escaped: false,
        },
        b')' if depth == 1 => State::Between,
        b')' => State::String {
            depth: depth - 1,
            escaped: false,
        },
        _ => State::String {
            depth,
            escaped: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_counted_as_pdf_splits_them() {
        // `<<` is one token, `>>` two (a dictionary costs lopdf more than a number).
        assert_eq!(
            TokenCount::of(b"1 0 obj << /Type /Page /Kids [3 0 R] >> endobj"),
            15
        );
        assert_eq!(TokenCount::of(b"/Type/Page"), 2);
        assert_eq!(
            TokenCount::of(b"(a (nested) \\) string) <48656c6c6f> Tj"),
            3
        );
        assert_eq!(TokenCount::of(b"% a comment 1 2 3\n42"), 1);
        assert_eq!(TokenCount::of(b"[1 2 3]"), 5);
        assert_eq!(TokenCount::of(b""), 0);
    }

    #[test]
    fn a_loose_count_sees_through_strings_and_comments() {
        let mut count = TokenCount::loose();
        count.feed(b"(unclosed 1 2 3 % x\n4 5");
        assert_eq!(count.tokens, 9);
        let mut count = TokenCount::loose();
        count.feed(b"<</A[1 2]>>");
        assert_eq!(count.tokens, 10);
    }

    #[test]
    fn pieces_count_as_the_whole() {
        let text: &[u8] = b"1 0 obj << /A (x (y) \\) z) /B <00ff> /C [1.5 -2 true] >> stream";
        let whole = TokenCount::of(text);
        for size in 1..text.len() {
            let mut count = TokenCount::default();
            for piece in text.chunks(size) {
                count.feed(piece);
            }
            assert_eq!(count.tokens, whole, "pieces of {size}");
        }
    }
}
