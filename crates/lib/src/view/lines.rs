//! Output lines: numbered source lines, notes, and the cut of over-long lines.

/// Lines longer than this many characters are cut with `…[+N chars]`.
pub const MAX_LINE_CHARS: usize = 2000;

/// One line of a view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A source-derived line with its 1-based line number and the separator after it
    /// (`:` for shown lines, `-` for grep context).
    Numbered {
        number: usize,
        sep: char,
        text: String,
    },
    /// A line shown without a number (raw mode without `line_numbers`, `--`).
    Plain(String),
    /// A `[note]` for the reader.
    Note(String),
    /// A source line already cut by [`shown_line`] (its marker included): shown as is,
    /// numbered when `number` is given.
    Shown {
        number: Option<usize>,
        sep: char,
        text: String,
    },
    /// A line of a grep of a text file, as `grep -n`/`rg -n` print it: `N:text` (a match)
    /// or `N-text` (context), the number unpadded and no space after the separator.
    Grep {
        number: usize,
        sep: char,
        text: String,
    },
}

impl Line {
    pub(crate) fn numbered(number: usize, text: impl Into<String>) -> Line {
        Line::Numbered {
            number,
            sep: ':',
            text: text.into(),
        }
    }
}

/// Joins lines into the content string: numbers right-aligned to `width`, every line
/// ended by a newline, over-long lines cut.
pub(crate) fn join(lines: &[Line], width: usize) -> String {
    let size: usize = lines
        .iter()
        .map(|line| match line {
            Line::Numbered { text, .. } => width + 3 + text.len(),
            Line::Plain(text) | Line::Note(text) => text.len() + 1,
            Line::Shown { text, .. } => width + 3 + text.len(),
            Line::Grep { text, .. } => 22 + text.len(),
        })
        .sum();
    let mut out = String::with_capacity(size);
    for line in lines {
        match line {
            Line::Numbered { number, sep, text } => {
                push_number(&mut out, *number, width);
                out.push(*sep);
                out.push(' ');
                push_cut(&mut out, text);
            }
            Line::Plain(text) => push_cut(&mut out, text),
            Line::Note(text) => out.push_str(text),
            Line::Shown { number, sep, text } => {
                if let Some(number) = number {
                    push_number(&mut out, *number, width);
                    out.push(*sep);
                    out.push(' ');
                }
                out.push_str(text);
            }
            Line::Grep { number, sep, text } => {
                push_number(&mut out, *number, 0);
                out.push(*sep);
                out.push_str(text);
            }
        }
        out.push('\n');
    }
    out
}

/// `number` right-aligned to `width` (as `format!("{number:>width$}")`, without its
/// allocation: one per output line).
fn push_number(out: &mut String, number: usize, width: usize) {
    let mut digits = [0u8; 20];
    let mut k = digits.len();
    let mut n = number;
    loop {
        k -= 1;
        digits[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let digits = &digits[k..];
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(digits.len())));
    out.extend(digits.iter().map(|&d| char::from(d)));
}

fn push_cut(out: &mut String, text: &str) {
    // A text of at most MAX_LINE_CHARS bytes has at most as many characters.
    if text.len() <= MAX_LINE_CHARS {
        out.push_str(text);
        return;
    }
    match text.char_indices().nth(MAX_LINE_CHARS) {
        None => out.push_str(text),
        Some((cut, _)) => {
            out.push_str(&text[..cut]);
            let rest = text[cut..].chars().count();
            out.push_str(&format!("…[+{rest} chars]"));
        }
    }
}

/// A line as the line views show it: whole, or cut at [`MAX_LINE_CHARS`] characters (or
/// where `kept`, a prefix of the line, ends) with a marker that names the byte range
/// holding the rest: `…[+N chars; the rest is {"type":"byteRange","start":S,"end":E}]`.
///
/// `kept` are the line's bytes as in the file (all of them, or a prefix), `start` the
/// offset of its first byte in the file, `len` its length in bytes (line break
/// excluded), `chars` its characters when known (else counted from `kept`). Returns the
/// text and, when cut, the byte range of the rest.
pub(crate) fn shown_line(
    kept: &[u8],
    start: u64,
    len: u64,
    chars: Option<u64>,
    hints: crate::hint::HintStyle,
) -> (String, Option<(u64, u64)>) {
    let whole = kept.len() as u64 >= len;
    if whole && kept.len() <= MAX_LINE_CHARS {
        return (String::from_utf8_lossy(kept).into_owned(), None);
    }
    let cut = match char_cut(kept, MAX_LINE_CHARS) {
        Some(cut) => cut,
        None if whole => return (String::from_utf8_lossy(kept).into_owned(), None),
        None => match std::str::from_utf8(kept) {
            // A character cut by the end of the prefix is not shown.
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            _ => kept.len(),
        },
    };
    let shown_chars = count_chars(&kept[..cut]);
    let rest_chars = match chars {
        Some(chars) => chars.saturating_sub(shown_chars),
        None => count_chars(&kept[cut..]).saturating_add(len.saturating_sub(kept.len() as u64)),
    };
    let rest = (start.saturating_add(cut as u64), start.saturating_add(len));
    let mut text = String::from_utf8_lossy(&kept[..cut]).into_owned();
    text.push_str(&format!(
        "…[+{rest_chars} chars; the rest is {}]",
        hints.render(&crate::hint::Hint::Rest {
            start: rest.0,
            end: rest.1
        })
    ));
    (text, Some(rest))
}

/// Characters of `bytes` as lossy decoding shows them (an invalid sequence is one).
fn count_chars(bytes: &[u8]) -> u64 {
    bytes
        .utf8_chunks()
        .map(|c| c.valid().chars().count() as u64 + u64::from(!c.invalid().is_empty()))
        .sum()
}

/// The byte offset of character `n` (0-based) of `bytes`, counted as [`count_chars`];
/// `None` when `bytes` has at most `n` characters.
fn char_cut(bytes: &[u8], n: usize) -> Option<usize> {
    let mut seen = 0usize;
    let mut at = 0usize;
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid();
        // At most one character per byte: a chunk shorter than what is left is whole.
        if seen + valid.len() > n {
            if let Some((i, _)) = valid.char_indices().nth(n - seen) {
                return Some(at + i);
            }
        }
        seen += valid.chars().count();
        at += valid.len();
        if !chunk.invalid().is_empty() {
            if seen == n {
                return Some(at);
            }
            seen += 1;
            at += chunk.invalid().len();
        }
    }
    None
}

/// The width of the largest line number of a file with `line_count` lines.
pub(crate) fn number_width(line_count: usize) -> usize {
    line_count.max(1).to_string().len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_aligned_and_long_lines_cut() {
        let lines = vec![
            Line::numbered(2, "a"),
            Line::numbered(10, "b"),
            Line::Note("[n]".into()),
        ];
        assert_eq!(join(&lines, 2), " 2: a\n10: b\n[n]\n");
        let mut n = String::new();
        for (number, width) in [(0, 1), (7, 3), (1234567, 2), (usize::MAX, 1)] {
            n.clear();
            push_number(&mut n, number, width);
            assert_eq!(n, format!("{number:>width$}"));
        }
        let long = "x".repeat(MAX_LINE_CHARS + 5);
        let out = join(&[Line::Plain(long)], 1);
        assert!(out.ends_with("x…[+5 chars]\n"));
        assert_eq!(
            out.chars().count(),
            MAX_LINE_CHARS + "…[+5 chars]\n".chars().count()
        );
        assert_eq!(number_width(0), 1);
        // A cut line names the byte range of its rest.
        let long = "é".repeat(MAX_LINE_CHARS + 3);
        let (text, rest) = shown_line(
            long.as_bytes(),
            100,
            long.len() as u64,
            None,
            Default::default(),
        );
        let cut = 2 * MAX_LINE_CHARS as u64;
        assert_eq!(rest, Some((100 + cut, 100 + long.len() as u64)));
        assert!(
            text.ends_with(&format!(
                "é…[+3 chars; the rest is {{\"type\":\"byteRange\",\"start\":{},\"end\":{}}}]",
                100 + cut,
                100 + long.len()
            )),
            "{}",
            &text[text.len() - 80..]
        );
        // A prefix of a longer line is cut where it ends, at a character boundary.
        let (text, rest) = shown_line(
            "abé".as_bytes()[..3].as_ref(),
            0,
            10,
            Some(9),
            Default::default(),
        );
        assert_eq!(rest, Some((2, 10)));
        assert!(text.starts_with("ab…[+7 chars;"), "{text}");
        assert_eq!(
            shown_line(b"short", 0, 5, None, Default::default()),
            ("short".into(), None)
        );
        assert_eq!(char_cut(b"a\xffb", 1), Some(1));
        assert_eq!(char_cut(b"a\xffb", 2), Some(2));
        assert_eq!(char_cut(b"a\xffb", 3), None);
        assert_eq!(count_chars(b"a\xff\xfeb"), 4);
        assert_eq!(number_width(999), 3);
    }
}
