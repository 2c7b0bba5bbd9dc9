//! Where the syntax bytes are among the next 64 bytes of input, as bit masks: how the
//! scanner steps over runs of ordinary bytes (symbols, numbers, whitespace, prefixes)
//! many at a time instead of one table lookup per byte.
//!
//! Only seven bytes matter to a scanner looking for the end of a list: `(` and `)`, and
//! `"` `;` `|` `\` `#`, which may start a string, a comment, an escape or a dispatch macro
//! (inside which parentheses are not syntax). Every other byte, non-ASCII included, is
//! stepped over. On x86_64 the masks come from SSE2 compares (part of the base
//! instruction set, so no feature detection), elsewhere from a plain loop.

/// Bit `k` of each mask is set when byte `at + k` of the input is such a byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Window {
    /// `(`
    pub open: u64,
    /// `)`
    pub close: u64,
    /// `"` `#` `;` `\` `|`
    pub other: u64,
    /// `\n`, when asked for (`Window::at::<true>`), else 0: the scanner counts the lines
    /// of top-level forms as it closes them, instead of reading their bytes again.
    pub newline: u64,
    /// How many bytes the window covers: 64, fewer at the end of the input.
    pub len: usize,
}

/// The width of a window, in bytes.
pub(crate) const WIDTH: usize = 64;

impl Window {
    /// The window of the bytes from `at` (which must be at most `b.len()`).
    #[inline(always)]
    pub(crate) fn at<const LINES: bool>(b: &[u8], at: usize) -> Window {
        let rest = &b[at..];
        match rest.first_chunk::<WIDTH>() {
            Some(chunk) => masks::<LINES>(chunk, WIDTH),
            None => {
                // The last bytes: NUL is an ordinary byte, so padding sets no bit.
                let mut chunk = [0u8; WIDTH];
                chunk[..rest.len()].copy_from_slice(rest);
                masks::<LINES>(&chunk, rest.len())
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn masks<const LINES: bool>(chunk: &[u8; WIDTH], len: usize) -> Window {
    // SAFETY: SSE2 is part of the x86_64 base instruction set, present on every CPU.
    unsafe { masks_sse2::<LINES>(chunk, len) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
#[inline]
fn masks_sse2<const LINES: bool>(chunk: &[u8; WIDTH], len: usize) -> Window {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    let bits = |v: __m128i| _mm_movemask_epi8(v) as u16 as u64;
    let splat = |c: u8| _mm_set1_epi8(c as i8);
    let mut w = Window {
        len,
        ..Window::default()
    };
    for k in 0..WIDTH / 16 {
        // SAFETY: the 16 bytes at 16*k lie inside `chunk`; `loadu` needs no alignment.
        let v = unsafe { _mm_loadu_si128(chunk.as_ptr().add(16 * k).cast()) };
        // `"` (0x22) and `#` (0x23) differ in bit 0 only, `\` (0x5C) and `|` (0x7C) in
        // bit 5 only, and no other byte becomes 0x23 or 0x7C by setting that bit.
        let quote_or_hash = _mm_cmpeq_epi8(_mm_or_si128(v, splat(0x01)), splat(b'#'));
        let escape = _mm_cmpeq_epi8(_mm_or_si128(v, splat(0x20)), splat(b'|'));
        let semicolon = _mm_cmpeq_epi8(v, splat(b';'));
        let other = _mm_or_si128(_mm_or_si128(quote_or_hash, escape), semicolon);
        w.open |= bits(_mm_cmpeq_epi8(v, splat(b'('))) << (16 * k);
        w.close |= bits(_mm_cmpeq_epi8(v, splat(b')'))) << (16 * k);
        w.other |= bits(other) << (16 * k);
        if LINES {
            w.newline |= bits(_mm_cmpeq_epi8(v, splat(b'\n'))) << (16 * k);
        }
    }
    w
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn masks<const LINES: bool>(chunk: &[u8; WIDTH], len: usize) -> Window {
    let mut w = masks_portable(chunk, len);
    if !LINES {
        w.newline = 0;
    }
    w
}

/// The same masks, one byte at a time (other targets, and the tests' reference).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn masks_portable(chunk: &[u8; WIDTH], len: usize) -> Window {
    let mut w = Window {
        len,
        ..Window::default()
    };
    for (k, &c) in chunk.iter().enumerate() {
        w.open |= u64::from(c == b'(') << k;
        w.close |= u64::from(c == b')') << k;
        w.other |= u64::from(matches!(c, b'"' | b'#' | b';' | b'\\' | b'|')) << k;
        w.newline |= u64::from(c == b'\n') << k;
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_value_in_every_lane() {
        for c in 0..=255u8 {
            for k in [0, 1, 15, 16, 31, 40, 63] {
                let mut chunk = [b'a'; WIDTH];
                chunk[k] = c;
                assert_eq!(
                    masks::<true>(&chunk, WIDTH),
                    masks_portable(&chunk, WIDTH),
                    "{c:#x}"
                );
            }
        }
        assert_eq!(masks::<false>(&[b'\n'; WIDTH], WIDTH).newline, 0);
        let w = Window::at::<true>(b"(a \"b\" ;c\n #\\) |d|)", 0);
        assert_eq!(w.len, 19);
        assert_eq!(w.newline, 1 << 9);
        assert_eq!(w.open, 1);
        assert_eq!(w.close, (1 << 13) | (1 << 18));
        assert_eq!(
            w.other,
            (1 << 3) | (1 << 5) | (1 << 7) | (1 << 11) | (1 << 12) | (1 << 15) | (1 << 17)
        );
        assert_eq!(Window::at::<false>(b"ab", 2).len, 0);
    }
}
