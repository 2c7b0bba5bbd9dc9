//! The structure of a stretch of source (a top-level form) as a stream of events: lists
//! opened and closed, tokens, reader prefixes and other atoms. What a call search walks
//! to tell an operator from an argument. One pass, no recursion, as [`super::each_token`]
//! (the same lexer): strings, comments, character objects and the feature expressions of
//! `#+`/`#-` are stepped over, a datum the features exclude too.

use std::ops::ControlFlow;

use super::conditional;
use super::lexer::{
    class, hash_start, skip_block_comment, skip_character, skip_line_comment, skip_string,
    skip_token, Class, HashStart,
};

/// A reader prefix: what applies to the datum after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prefix {
    /// `'`
    Quote,
    /// `` ` ``
    Backquote,
    /// `,`, `,@`, `,.`
    Comma,
    /// `#'`
    Function,
    /// `#.` (read-time evaluation): its datum is code.
    Eval,
    /// A `#` dispatch whose datum is data: `#(`, `#S(`, `#A`, `#C`, `#P`.
    Data,
    /// `#1=`: transparent.
    Label,
    /// A dispatch the standard syntax does not define (a project's reader macro):
    /// transparent.
    Other,
}

/// One thing the reader meets, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// `(` at this position.
    Open(usize),
    /// `)` at this position.
    Close(usize),
    /// A token `[start, end)` (`#:foo` whole).
    Token(usize, usize),
    /// A prefix at this position.
    Prefix(Prefix, usize),
    /// A string, character object, radix number or other atom `[start, end)`.
    Atom(usize, usize),
}

/// Calls `event` for each event of `b[start..end]` in order, until it breaks. `reads` is
/// as for [`super::each_token_read`].
pub fn each_event_read(
    b: &[u8],
    start: usize,
    end: usize,
    reads: &mut dyn FnMut(bool, &[u8]) -> bool,
    event: &mut dyn FnMut(Event) -> ControlFlow<()>,
) {
    let end = end.min(b.len());
    let b = &b[..end];
    let mut i = start;
    while i < end {
        let (next, found) = match class(b[i]) {
            Class::Whitespace => (i + 1, None),
            Class::Open => (i + 1, Some(Event::Open(i))),
            Class::Close => (i + 1, Some(Event::Close(i))),
            Class::Prefix => {
                let (kind, width) = match b[i] {
                    b'\'' => (Prefix::Quote, 1),
                    b'`' => (Prefix::Backquote, 1),
                    _ if matches!(b.get(i + 1), Some(b'@' | b'.')) => (Prefix::Comma, 2),
                    _ => (Prefix::Comma, 1),
                };
                (i + width, Some(Event::Prefix(kind, i)))
            }
            Class::DoubleQuote => {
                let to = skip_string(b, i).0;
                (to, Some(Event::Atom(i, to)))
            }
            Class::Semicolon => (skip_line_comment(b, i), None),
            Class::Hash => hash(b, i, reads),
            Class::Constituent | Class::Bar | Class::Backslash => {
                let (to, _) = skip_token(b, i);
                (to, Some(Event::Token(i, to)))
            }
        };
        if let Some(found) = found {
            if event(found).is_break() {
                return;
            }
        }
        i = next.max(i + 1).min(end);
    }
}

/// At a `#` that starts a token: where to go on, and the event it makes.
fn hash(b: &[u8], i: usize, reads: &mut dyn FnMut(bool, &[u8]) -> bool) -> (usize, Option<Event>) {
    match hash_start(b, i) {
        HashStart::BlockComment => (skip_block_comment(b, i).0, None),
        HashStart::Character => {
            let to = skip_character(b, i).0;
            (to, Some(Event::Atom(i, to)))
        }
        HashStart::Other { after, prefix } => {
            let dispatch = if after > i + 1 { b[after - 1] } else { 0 };
            match dispatch.to_ascii_lowercase() {
                b'+' | b'-' if after == i + 2 => {
                    let expression = conditional::skip_feature_expression(b, after);
                    let text = conditional::expression_text(b, after, expression);
                    if reads(dispatch == b'+', text) {
                        (expression, None)
                    } else {
                        (conditional::skip_excluded(b, expression, reads), None)
                    }
                }
                b':' => {
                    let (to, _) = skip_token(b, after);
                    (to, Some(Event::Token(i, to)))
                }
                b'x' | b'b' | b'o' | b'r' | b'*' if !prefix => {
                    let to = skip_token(b, after).0;
                    (to, Some(Event::Atom(i, to)))
                }
                b'\'' => (after, Some(Event::Prefix(Prefix::Function, i))),
                b'.' => (after, Some(Event::Prefix(Prefix::Eval, i))),
                b'=' => (after, Some(Event::Prefix(Prefix::Label, i))),
                // `#1#`: a reference to a labelled datum.
                b'#' => (after, Some(Event::Atom(i, after))),
                // `#(`: `after` is at the `(`, read next as a list the prefix makes data;
                // so do `#S(`, `#2A(`, `#C(`, `#P"..."`.
                0 if b.get(after) == Some(&b'(') => (after, Some(Event::Prefix(Prefix::Data, i))),
                b's' | b'a' | b'c' | b'p' => (after, Some(Event::Prefix(Prefix::Data, i))),
                // A dispatch the standard syntax does not define (a project's reader
                // macro, `#L(...)`, `#?"..."`): what follows is read as it is.
                _ if prefix => (after, Some(Event::Prefix(Prefix::Other, i))),
                _ => (after, Some(Event::Atom(i, after))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        each_event_read(text.as_bytes(), 0, text.len(), &mut |_, _| true, &mut |e| {
            out.push(match e {
                Event::Open(_) => "(".to_string(),
                Event::Close(_) => ")".to_string(),
                Event::Token(s, e) => text[s..e].to_string(),
                Event::Prefix(p, _) => format!("{p:?}"),
                Event::Atom(s, e) => format!("<{}>", &text[s..e]),
            });
            ControlFlow::Continue(())
        });
        out
    }

    #[test]
    fn events_of_lists_tokens_prefixes_and_atoms() {
        assert_eq!(
            events("(f 'a #'g `(h ,x ,@y) \"s\" #\\( ; c\n #(v) #+sbcl k #.(e) #:u #x1F)"),
            [
                "(",
                "f",
                "Quote",
                "a",
                "Function",
                "g",
                "Backquote",
                "(",
                "h",
                "Comma",
                "x",
                "Comma",
                "y",
                ")",
                "<\"s\">",
                "<#\\(>",
                "Data",
                "(",
                "v",
                ")",
                "k",
                "Eval",
                "(",
                "e",
                ")",
                "#:u",
                "<#x1F>",
                ")"
            ]
        );
        let mut only_ccl = Vec::new();
        let text = "(a #+ccl (b) #-ccl c)";
        each_event_read(
            text.as_bytes(),
            0,
            text.len(),
            &mut |plus, x| plus != (x == b"ccl"),
            &mut |e| {
                if let Event::Token(s, e) = e {
                    only_ccl.push(&text[s..e]);
                }
                ControlFlow::Continue(())
            },
        );
        assert_eq!(only_ccl, ["a", "c"]);
    }
}
