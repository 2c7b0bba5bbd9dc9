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
        assert_eq!(number_width(999), 3);
    }
}
