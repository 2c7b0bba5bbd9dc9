//! The stretches of a form's text outside its comments: what the reader can read of it.
//! A test that gathers the words a form may hand to a macro (the expansion gate of a
//! search by name) need not look at `; ...` and `#| ... |#`, which the reader drops.
//! Strings, `|...|`, `\x` and character objects (`#\;`) are stepped over as the scanner
//! does, so a `;` or `#|` inside them is never taken for a comment.

use super::lexer::{
    hash_start, skip_block_comment, skip_character, skip_line_comment, skip_string, skip_token,
    HashStart, TOKEN_BYTE,
};

/// Calls `stretch(from, to)` for each non-empty stretch of `b[start..end]` between
/// comments, in order (a comment running past `end` ends the last one).
///
/// Only `;`, `"`, `#`, `|` and `\` can change what the bytes after them are, so the text
/// between them is skipped with vectorized searches (`memchr`) instead of a byte loop; a
/// `#` right after a constituent continues a token, any other starts a dispatch, as in
/// the scanner.
pub fn each_uncommented(b: &[u8], start: usize, end: usize, stretch: &mut dyn FnMut(usize, usize)) {
    let end = end.min(b.len());
    let b = &b[..end];
    let mut run = start;
    let mut i = start;
    // Where the last construct stepped over ends: a token may start there, whatever the
    // byte before it.
    let mut boundary = start;
    let mut next = Next::default();
    while let Some(at) = next.special(b, i) {
        let to = match b[at] {
            b';' => {
                let to = skip_line_comment(b, at);
                if at > run {
                    stretch(run, at);
                }
                run = to;
                to
            }
            b'"' => skip_string(b, at).0,
            // Inside a token or at its start, the token ends where the scanner ends it.
            b'|' | b'\\' => skip_token(b, at).0,
            _ if at > boundary && TOKEN_BYTE[usize::from(b[at - 1])] => {
                // `#` inside a token: a constituent.
                i = at + 1;
                continue;
            }
            _ => match hash_start(b, at) {
                HashStart::BlockComment => {
                    let to = skip_block_comment(b, at).0;
                    if at > run {
                        stretch(run, at);
                    }
                    run = to;
                    to
                }
                HashStart::Character => skip_character(b, at).0,
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
        };
        i = to.max(at + 1).min(end);
        boundary = i;
    }
    if end > run {
        stretch(run, end);
    }
}

/// The next of `;`, `"`, `#` and of `|`, `\\`, each found once (kept until passed): the
/// searches together read the text once.
#[derive(Default)]
struct Next {
    /// The next `;`, `"` or `#` at or after the last search's start (`None`: not yet
    /// searched; `Some(None)`: none left).
    three: Option<Option<usize>>,
    /// The next `|` or `\\`, likewise.
    two: Option<Option<usize>>,
}

impl Next {
    /// The first special byte at or after `i`.
    fn special(&mut self, b: &[u8], i: usize) -> Option<usize> {
        if i >= b.len() {
            return None;
        }
        if self.three.is_none_or(|n| n.is_some_and(|n| n < i)) {
            self.three = Some(memchr::memchr3(b';', b'"', b'#', &b[i..]).map(|k| i + k));
        }
        if self.two.is_none_or(|n| n.is_some_and(|n| n < i)) {
            self.two = Some(memchr::memchr2(b'|', b'\\', &b[i..]).map(|k| i + k));
        }
        match (self.three.flatten(), self.two.flatten()) {
            (Some(a), Some(c)) => Some(a.min(c)),
            (a, c) => a.or(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::each_uncommented;
    use crate::scan::lexer::{
        class, hash_start, skip_block_comment, skip_character, skip_line_comment, skip_string,
        skip_token, Class, HashStart,
    };

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

    /// The byte loop this replaced, stepping over every token and construct in turn: the
    /// vectorized one must give the same stretches on any text.
    #[rustfmt::skip]
    fn reference(b: &[u8], start: usize, end: usize, stretch: &mut dyn FnMut(usize, usize)) {
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

    /// A function giving the stretches between comments.
    type Uncommented = fn(&[u8], usize, usize, &mut dyn FnMut(usize, usize));

    fn stretches(f: Uncommented, b: &[u8], start: usize) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        f(b, start, b.len(), &mut |s, e| out.push((s, e)));
        out
    }

    #[test]
    fn the_vectorized_search_agrees_with_the_byte_loop() {
        const ALPHABET: &[u8] = b"a#|\\;\"( \n,@.x'";
        // Every text of up to five bytes of the alphabet, from each start.
        let mut texts: Vec<Vec<u8>> = vec![Vec::new()];
        for _ in 0..5 {
            let longer: Vec<Vec<u8>> = texts
                .iter()
                .filter(|t| t.len() == texts.last().map_or(0, Vec::len))
                .flat_map(|t| ALPHABET.iter().map(move |&c| [t.as_slice(), &[c]].concat()))
                .collect();
            texts.extend(longer);
        }
        // And longer ones, from a fixed pseudo-random sequence.
        let mut seed: u64 = 0x2026_1127;
        for _ in 0..20_000 {
            let len = (seed >> 33) as usize % 64;
            let text = (0..len)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    ALPHABET[(seed >> 33) as usize % ALPHABET.len()]
                })
                .collect();
            texts.push(text);
        }
        for text in &texts {
            for start in [0, 1, 2].into_iter().filter(|&s| s <= text.len()) {
                assert_eq!(
                    stretches(each_uncommented, text, start),
                    stretches(reference, text, start),
                    "{:?} from {start}",
                    String::from_utf8_lossy(text)
                );
            }
        }
    }
}
