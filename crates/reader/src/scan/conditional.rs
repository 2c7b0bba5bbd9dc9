//! What a reader conditional (`#+expression` / `#-expression`) covers inside a form: its
//! feature expression, and the data the reader skips when the expression fails. Shared
//! by the token and event walks ([`super::each_token_read`], [`super::each_event_read`]).

use super::datum::{read_datum, skip_blank, DepthCounter};
use super::lexer::{close_list, hash_start, skip_token, HashStart};

/// At `i`: a `#+` (`Some(true)`) or `#-` (`Some(false)`), the position after its sign.
pub(super) fn at(b: &[u8], i: usize) -> Option<(bool, usize)> {
    if b.get(i) != Some(&b'#') {
        return None;
    }
    match hash_start(b, i) {
        HashStart::Other { after, .. } if after == i + 2 && matches!(b[i + 1], b'+' | b'-') => {
            Some((b[i + 1] == b'+', after))
        }
        _ => None,
    }
}

/// `i` after `#+`/`#-`: skips blanks, comments and the feature expression (a token or a
/// list), whose symbols are keywords, not uses; returns where the expression ends.
pub(super) fn skip_feature_expression(b: &[u8], i: usize) -> usize {
    let at = skip_blank(b, i);
    match b.get(at) {
        Some(b'(') => match close_list::<false>(b, at) {
            Ok(closed) => closed.at + 1,
            Err(_) => b.len(),
        },
        Some(_) => skip_token(b, at).0.max(at + 1),
        None => b.len(),
    }
}

/// The text of the feature expression that ends at `expression`, after `#+`/`#-` at
/// `after` (blanks and comments before it left out).
pub(super) fn expression_text(b: &[u8], after: usize, expression: usize) -> &[u8] {
    &b[skip_blank(b, after).min(expression)..expression]
}

/// Where what a failed conditional skips ends, from `i` (after its feature expression).
/// The reader skips the next datum with `*read-suppress*` bound, and a failed conditional
/// met in that read returns no value, so the read goes on (SBCL's `sharp-plus-minus`):
/// `#+(or) #+(or) a b c` skips `a` and `b`. One datum more to skip for each conditional
/// that `reads` says fails; one less for each datum stepped over. Stops at a `)` or the
/// end. Linear: each step moves past a conditional or a datum.
pub(super) fn skip_excluded(
    b: &[u8],
    mut i: usize,
    reads: &mut dyn FnMut(bool, &[u8]) -> bool,
) -> usize {
    let mut pending = 1usize;
    loop {
        let at = skip_blank(b, i);
        if at >= b.len() || b[at] == b')' {
            return at;
        }
        if let Some((plus, after)) = self::at(b, at) {
            let expression = skip_feature_expression(b, after);
            if !reads(plus, expression_text(b, after, expression)) {
                pending += 1;
            }
            i = expression.max(at + 1);
            continue;
        }
        // A prefix applies to the datum read after it, conditionals and all: `' #+(or) x
        // y` is `'y`. Stepped over, it is read with that datum.
        if let Some(width) = prefix_width(b, at) {
            i = at + width;
            continue;
        }
        i = read_datum(b, at, &mut DepthCounter::<false>)
            .end
            .max(at + 1);
        pending -= 1;
        if pending == 0 {
            return i;
        }
    }
}

/// The width of the prefix at `i` whose datum is read next (`'`, `` ` ``, `,`, `,@`, `,.`,
/// `#'`, `#.`), or `None`.
fn prefix_width(b: &[u8], i: usize) -> Option<usize> {
    match (b[i], b.get(i + 1)) {
        (b'\'' | b'`', _) => Some(1),
        (b',', Some(b'@' | b'.')) => Some(2),
        (b',', _) => Some(1),
        (b'#', Some(b'\'' | b'.')) => Some(2),
        _ => None,
    }
}
