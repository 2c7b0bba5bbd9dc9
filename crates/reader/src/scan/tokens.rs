//! The tokens of a stretch of source (a top-level form): what a reference search compares
//! with a symbol. One pass, no recursion, no allocation: strings, `;` and `#|...|#`
//! comments, character objects (`#\(`), numbers in radix syntax (`#x1F`) and the feature
//! expressions of `#+`/`#-` are stepped over; every other token is handed to the caller,
//! prefixes (`'`, `` ` ``, `,`, `,@`, `#'`) left out. An uninterned `#:foo` is handed
//! whole (`#:` included), so that the caller sees it is not a package prefix.

use std::ops::ControlFlow;

use super::conditional;
use super::lexer::{
    class, hash_start, skip_block_comment, skip_character, skip_line_comment, skip_string,
    skip_token, Class, HashStart,
};

/// Calls `token(start, end)` for each token of `b[start..end]` in order, until it breaks.
/// A construct that runs past `end` (an unterminated string, an unclosed feature
/// expression) ends the walk at `end`.
pub fn each_token(
    b: &[u8],
    start: usize,
    end: usize,
    token: &mut dyn FnMut(usize, usize) -> ControlFlow<()>,
) {
    each_token_read(b, start, end, &mut |_, _| true, token);
}

/// [`each_token`], where `reads(plus, expression)` says whether the reader reads the datum
/// after `#+expression` (`plus`) or `#-expression`: when it does not, that datum's tokens
/// are stepped over (the `features` of a search).
pub fn each_token_read(
    b: &[u8],
    start: usize,
    end: usize,
    reads: &mut dyn FnMut(bool, &[u8]) -> bool,
    token: &mut dyn FnMut(usize, usize) -> ControlFlow<()>,
) {
    let end = end.min(b.len());
    let b = &b[..end];
    let mut i = start;
    while i < end {
        i = match class(b[i]) {
            Class::Whitespace | Class::Open | Class::Close => i + 1,
            // `,@x` and `,.x`: the `@`/`.` belongs to the comma.
            Class::Prefix if b[i] == b',' && matches!(b.get(i + 1), Some(b'@' | b'.')) => i + 2,
            Class::Prefix => i + 1,
            Class::DoubleQuote => skip_string(b, i).0,
            Class::Semicolon => skip_line_comment(b, i),
            Class::Hash => match hash(b, i, reads, token) {
                ControlFlow::Continue(next) => next,
                ControlFlow::Break(()) => return,
            },
            Class::Constituent | Class::Bar | Class::Backslash => {
                let (to, _) = skip_token(b, i);
                if token(i, to).is_break() {
                    return;
                }
                to
            }
        }
        .max(i + 1)
        .min(end);
    }
}

/// At a `#` that starts a token: steps over what it begins; returns where to go on.
fn hash(
    b: &[u8],
    i: usize,
    reads: &mut dyn FnMut(bool, &[u8]) -> bool,
    token: &mut dyn FnMut(usize, usize) -> ControlFlow<()>,
) -> ControlFlow<(), usize> {
    ControlFlow::Continue(match hash_start(b, i) {
        HashStart::BlockComment => skip_block_comment(b, i).0,
        HashStart::Character => skip_character(b, i).0,
        HashStart::Other { after, prefix } => {
            let dispatch = if after > i + 1 { b[after - 1] } else { 0 };
            match dispatch.to_ascii_lowercase() {
                b'+' | b'-' if after == i + 2 => {
                    let expression = conditional::skip_feature_expression(b, after);
                    let text = conditional::expression_text(b, after, expression);
                    if reads(dispatch == b'+', text) {
                        expression
                    } else {
                        conditional::skip_excluded(b, expression, reads)
                    }
                }
                // `#:foo`: the token continues after the dispatch character.
                b':' => {
                    let (to, _) = skip_token(b, after);
                    token(i, to)?;
                    to
                }
                // `#x1F`, `#b101`, `#o17`, `#3r12`, `#*1010`: numbers and bit vectors.
                b'x' | b'b' | b'o' | b'r' | b'*' if !prefix => skip_token(b, after).0,
                // `#'f`, `#(`, `#.`, `#p"..."`, `#2A(...)`, `#1=`, ...: what follows is read.
                _ => after,
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        each_token(text.as_bytes(), 0, text.len(), &mut |s, e| {
            out.push(&text[s..e]);
            ControlFlow::Continue(())
        });
        out
    }

    #[test]
    fn tokens_skip_strings_comments_characters_and_feature_expressions() {
        assert_eq!(
            tokens("(defun foo (x) \"foo\" ; foo\n #| foo |# (bar #\\( 'baz `(,q ,@r) #'f))"),
            ["defun", "foo", "x", "bar", "baz", "q", "r", "f"]
        );
        assert_eq!(
            tokens("#+(or sbcl foo) (a #-foo b) |x y| p:q p::r #:s :k #x1F #*101 x\\ y"),
            ["a", "b", "|x y|", "p:q", "p::r", "#:s", ":k", "x\\ y"]
        );
        assert_eq!(
            tokens("#| a |# #|| b ||# c #\\a d #\\Space e"),
            ["c", "d", "e"]
        );
        assert_eq!(tokens("(a \"unterminated"), ["a"]);
        assert_eq!(tokens("#.(x) #p\"y\" #(z) #2A((w))"), ["x", "z", "w"]);
    }
}
