//! The stretches of a form's text outside its comments: what the reader can read of it.
//! A test that gathers the words a form may hand to a macro (the expansion gate of a
//! search by name) need not look at `; ...` and `#| ... |#`, which the reader drops.
//! Strings, `|...|`, `\x` and character objects (`#\;`) are stepped over as the scanner
//! does, so a `;` or `#|` inside them is never taken for a comment.

use super::lexer::{
    class, hash_start, skip_block_comment, skip_character, skip_line_comment, skip_string,
    skip_token, Class, HashStart,
};

/// Calls `stretch(from, to)` for each non-empty stretch of `b[start..end]` between
/// comments, in order (a comment running past `end` ends the last one).
pub fn each_uncommented(b: &[u8], start: usize, end: usize, stretch: &mut dyn FnMut(usize, usize)) {
    let end = end.min(b.len());
    let b = &b[..end];
    let mut run = start;
    let mut i = start;
    let mut comment = |from: usize, to: usize, run: &mut usize| {
        if from > *run {
            stretch(*run, from);
        }
        *run = to;
    };
    while i < end {
        let next = match class(b[i]) {
            Class::Semicolon => {
                let to = skip_line_comment(b, i);
                comment(i, to, &mut run);
                to
            }
            Class::DoubleQuote => skip_string(b, i).0,
            Class::Constituent | Class::Bar | Class::Backslash => skip_token(b, i).0,
            // Every `#` met here starts a token: tokens are stepped over whole.
            Class::Hash => match hash_start(b, i) {
                HashStart::BlockComment => {
                    let to = skip_block_comment(b, i).0;
                    comment(i, to, &mut run);
                    to
                }
                HashStart::Character => skip_character(b, i).0,
                HashStart::Other {
                    after,
                    prefix: true,
                } => after,
                // `#:foo`, `#x1F`, `#*101`: the token goes on after the dispatch character.
                HashStart::Other {
                    after,
                    prefix: false,
                } => skip_token(b, after).0,
            },
            Class::Whitespace | Class::Open | Class::Close | Class::Prefix => i + 1,
        };
        i = next.max(i + 1).min(end);
    }
    if end > run {
        stretch(run, end);
    }
}

#[cfg(test)]
mod tests {
    use super::each_uncommented;

    fn uncommented(text: &str) -> String {
        let mut out = Vec::new();
        each_uncommented(text.as_bytes(), 0, text.len(), &mut |s, e| {
            out.push(&text[s..e])
        });
        out.join("|")
    }

    #[test]
    fn comments_are_left_out() {
        assert_eq!(uncommented("(a ; b c\n d)"), "(a |\n d)");
        assert_eq!(uncommented("(a #| b #| c |# d |# e)"), "(a | e)");
        assert_eq!(uncommented("(a #|| b ||#e)"), "(a |e)");
        assert_eq!(uncommented("; all\n"), "\n");
        assert_eq!(uncommented("(a ; to the end"), "(a ");
    }

    /// A `;` or `#|` inside a string, an escape, a character or a token is read, not
    /// dropped.
    #[test]
    fn what_looks_like_a_comment_inside_other_syntax_is_kept() {
        for text in [
            "(a \"b ; c\" d)",
            "(a \"b \\\" ; c\" d)",
            "(a |b ; c| d)",
            "(a b\\;c d)",
            "(a #\\; b c)",
            "(a x#|y| d)",
            "(a #:x#|y| d)",
            "(a \"#| b\" c \"|#\")",
            "(a #; b)",
        ] {
            assert_eq!(uncommented(text), text);
        }
        // After a string or a character, a comment is one.
        assert_eq!(uncommented("(\"x\";c\n #\\a;c\n)"), "(\"x\"|\n #\\a|\n)");
    }
}
