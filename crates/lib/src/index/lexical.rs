//! A small lexical walk over one stretch of source: where lists open and close, where
//! tokens are, and where `#.` (read-time evaluation) is written. Strings, comments,
//! character objects and `|...|` escapes are stepped over. One pass, no recursion, no
//! allocation: what the editor's selection ranges and the `#.` notes need, without
//! classifying anything.

use crate::scan::Span;

/// What the walk meets, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Open(usize),
    Close(usize),
    /// A token (symbol, number), its prefixes (`'`, `#'`, `,`) left out.
    Token(Span),
    /// The `#` of a `#.`.
    ReadEval(usize),
}

fn is_terminating(c: u8) -> bool {
    c.is_ascii_whitespace() || matches!(c, b'(' | b')' | b'"' | b'\'' | b'`' | b',' | b';')
}

/// The end of a token that starts at `i` (escapes `\x` and `|...|` included).
pub fn token_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'|' => {
                i += 1;
                while i < b.len() && b[i] != b'|' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            c if is_terminating(c) => break,
            _ => i += 1,
        }
    }
    i.min(b.len())
}

fn string_end(b: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// Past the `#|...|#` at `i` (nested ones included); the end of `b` when unterminated.
pub fn block_comment_end(b: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i + 1 < b.len() {
        if b[i] == b'#' && b[i + 1] == b'|' {
            depth += 1;
            i += 2;
        } else if b[i] == b'|' && b[i + 1] == b'#' {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    b.len()
}

/// Walks `b[start..end]`, calling `f` for each event; `f` returning false stops the walk.
pub fn walk(b: &[u8], start: usize, end: usize, f: &mut dyn FnMut(Event) -> bool) {
    let b = &b[..end.min(b.len())];
    let mut i = start;
    while i < b.len() {
        let c = b[i];
        let go_on = match c {
            b'(' => f(Event::Open(i)),
            b')' => f(Event::Close(i)),
            b'"' => {
                i = string_end(b, i);
                continue;
            }
            b';' => {
                i = memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |n| i + n);
                continue;
            }
            // `,@x` and `,.x`: the `@`/`.` belongs to the comma.
            b',' if matches!(b.get(i + 1), Some(b'@' | b'.')) => {
                i += 2;
                continue;
            }
            b'\'' | b'`' | b',' => true,
            c if c.is_ascii_whitespace() => true,
            b'#' => {
                // Dispatch: digits, then the sub-character.
                let mut j = i + 1;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                match b.get(j) {
                    Some(b'|') => {
                        i = block_comment_end(b, i);
                        continue;
                    }
                    Some(b'\\') => {
                        // `#\x`, `#\Space`: the character's name is a token.
                        i = token_end(b, j + 2);
                        continue;
                    }
                    Some(b'.') => {
                        if !f(Event::ReadEval(i)) {
                            return;
                        }
                        i = j + 1;
                        continue;
                    }
                    Some(b'\'' | b'(' | b'+' | b'-' | b'=' | b'#') | None => {
                        i = j + usize::from(matches!(
                            b.get(j),
                            Some(b'\'' | b'+' | b'-' | b'=' | b'#')
                        ));
                        continue;
                    }
                    Some(b':') => {
                        let e = token_end(b, j + 1);
                        if !f(Event::Token(Span::new(i, e))) {
                            return;
                        }
                        i = e.max(i + 1);
                        continue;
                    }
                    Some(_) => {
                        // `#x1F`, `#p"..."`, `#*101`, `#A`: skip the dispatch character.
                        i = j + 1;
                        continue;
                    }
                }
            }
            _ => {
                let e = token_end(b, i).max(i + 1);
                if !f(Event::Token(Span::new(i, e))) {
                    return;
                }
                i = e;
                continue;
            }
        };
        if !go_on {
            return;
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str) -> Vec<Event> {
        let mut out = Vec::new();
        walk(text.as_bytes(), 0, text.len(), &mut |e| {
            out.push(e);
            true
        });
        out
    }

    #[test]
    fn strings_comments_and_characters_are_stepped_over() {
        let e = events("(a \"(b\" ; (c\n #\\( #|(d|# #.e)");
        let opens = e.iter().filter(|e| matches!(e, Event::Open(_))).count();
        let closes = e.iter().filter(|e| matches!(e, Event::Close(_))).count();
        assert_eq!((opens, closes), (1, 1));
        assert!(e.contains(&Event::ReadEval(25)));
        assert!(e.contains(&Event::Token(Span::new(1, 2))));
    }

    #[test]
    fn any_bytes_end_the_walk() {
        for text in ["\"", "#|", "#", "|a", "\\", "#\\", "#1", "(#.", ",@"] {
            events(text);
        }
    }
}
