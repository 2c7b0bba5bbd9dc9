//! One ASCII literal found in bytes of any ASCII case, without a folded copy of them.
//!
//! Folding a file to lower case costs about as much as searching it, and a search by
//! name folds every file it looks at. Here two bytes of the literal (the rarest in Common
//! Lisp source among its first 256 bytes) are compared at once over 64 (AVX2) or 32
//! (SSE2) positions, each byte of the file OR-ed with `0x20` where the literal's byte is a
//! letter: `x | 0x20 == b'n'` holds for `N` and `n` only, so the probe is exact for its two
//! bytes and each candidate is confirmed byte by byte. Elsewhere than x86-64, the first of
//! the two in either case is found with `memchr2`. Candidates that cost too much to confirm
//! send the rest of the search to `memmem` over folded bytes ([`CONFIRMED_PER_BYTE`]).

use memchr::arch::all::packedpair::{HeuristicFrequencyRank, Pair};

/// A literal, folded to ASCII lower case, and the two offsets the probe compares.
pub(crate) struct Caseless {
    needle: Box<[u8]>,
    probe: Probe,
    /// `memmem`'s search for the needle, for bytes already folded (and the fallback).
    folded: memchr::memmem::Finder<'static>,
}

/// Two offsets of the needle, their bytes folded and the masks folding the file's bytes.
#[derive(Clone, Copy)]
struct Probe {
    at1: usize,
    at2: usize,
    byte1: u8,
    byte2: u8,
    mask1: u8,
    mask2: u8,
}

impl Probe {
    fn new(needle: &[u8]) -> Probe {
        let (at1, at2) = match Pair::with_ranker(needle, LispRank) {
            Some(pair) => (usize::from(pair.index1()), usize::from(pair.index2())),
            None => (0, 0),
        };
        let mask = |b: u8| if b.is_ascii_lowercase() { 0x20 } else { 0 };
        let byte = |at: usize| needle.get(at).copied().unwrap_or(0);
        let (byte1, byte2) = (byte(at1), byte(at2));
        Probe {
            at1,
            at2,
            byte1,
            byte2,
            mask1: mask(byte1),
            mask2: mask(byte2),
        }
    }

    /// The largest offset the probe reads past a candidate's start.
    fn reach(&self) -> usize {
        self.at1.max(self.at2)
    }
}

impl Caseless {
    /// `literal`, ASCII (other bytes are compared exactly).
    pub(crate) fn new(literal: &[u8]) -> Caseless {
        let needle: Box<[u8]> = literal.to_ascii_lowercase().into();
        let probe = Probe::new(&needle);
        let folded = memchr::memmem::Finder::new(&needle).into_owned();
        Caseless {
            needle,
            probe,
            folded,
        }
    }

    /// The first match in bytes already folded to ASCII lower case.
    pub(crate) fn find_folded(&self, folded: &[u8]) -> Option<usize> {
        self.folded.find(folded)
    }

    /// The matches in bytes already folded to ASCII lower case, as [`Caseless::find_iter`].
    pub(crate) fn find_iter_folded<'a>(
        &'a self,
        folded: &'a [u8],
    ) -> impl Iterator<Item = usize> + 'a {
        self.folded.find_iter(folded)
    }

    /// The first match in `hay`.
    pub(crate) fn find(&self, hay: &[u8]) -> Option<usize> {
        self.find_iter(hay).next()
    }

    /// The matches in `hay`, leftmost first and not overlapping (as `memmem::find_iter`).
    pub(crate) fn find_iter<'a>(&'a self, hay: &'a [u8]) -> Matches<'a> {
        Matches {
            caseless: self,
            hay,
            from: 0,
            work: 0,
            folded: None,
        }
    }

    /// The matches written all in lower case or all in upper case, in order: the two
    /// exact searches' matches merged, for a literal no match of which can overlap
    /// another (`(defun`, `defmacro`).
    pub(crate) fn lower_or_upper<'a>(&'a self, hay: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
        debug_assert!((1..self.needle.len()).all(|k| !self.needle.ends_with(&self.needle[..k])));
        let upper = self.needle.to_ascii_uppercase();
        self.find_iter(hay).filter(move |&at| {
            let written = &hay[at..at + self.needle.len()];
            *written == *self.needle || *written == *upper
        })
    }

    /// The first match starting at `from` or after, the bytes compared to confirm
    /// candidates counted in `work` against what [`CONFIRMED_PER_BYTE`] allows.
    fn find_from(&self, hay: &[u8], from: usize, work: &mut usize) -> Step {
        let n = self.needle.len();
        if from + n > hay.len() {
            return Step::Nothing;
        }
        if n == 0 {
            return Step::At(from);
        }
        let needle = &self.needle;
        let mut costly = false;
        // A candidate may end past the file: the probe need not reach the needle's end.
        // Compared byte by byte, inline: a call would spill the probe's registers.
        let is_match = |s: usize| {
            if *work > CONFIRMED_PER_BYTE * s + 2 * n + 64 {
                costly = true;
                return true;
            }
            let Some(h) = hay.get(s..s + n) else {
                return false;
            };
            let same = h
                .iter()
                .zip(needle.iter())
                .take_while(|(h, c)| h.to_ascii_lowercase() == **c)
                .count();
            *work += same + 1;
            same == n
        };
        let found = self.first(hay, from, is_match);
        match found {
            Some(at) if costly => Step::Costly(at),
            Some(at) => Step::At(at),
            None => Step::Nothing,
        }
    }

    /// The first start from `from` on that the probe and `is_match` accept.
    fn first(
        &self,
        hay: &[u8],
        from: usize,
        mut is_match: impl FnMut(usize) -> bool,
    ) -> Option<usize> {
        let last = hay.len() - self.needle.len();
        let mut s = from;
        #[cfg(target_arch = "x86_64")]
        if let Some(at) = x86::first(hay, &mut s, &self.probe, &mut is_match) {
            return Some(at);
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let p = &self.probe;
            let (lower, upper) = (p.byte1, p.byte1.to_ascii_uppercase());
            return memchr::memchr2_iter(lower, upper, &hay[s + p.at1..=last + p.at1])
                .map(|i| s + i)
                .find(|&c| is_match(c));
        }
        // The last starts, byte by byte, the probe first.
        let p = &self.probe;
        let probed =
            |c: usize| hay[c + p.at1] | p.mask1 == p.byte1 && hay[c + p.at2] | p.mask2 == p.byte2;
        #[allow(unreachable_code)]
        (s..=last).find(|&c| probed(c) && is_match(c))
    }
}

/// Bytes compared to confirm candidates, per byte searched, before the bytes are folded
/// and searched with `memmem` instead (one [`Caseless::find_iter`] is linear in any input):
/// a literal like `qqqe` in a run of `q`s has a candidate at every byte, each costing the
/// literal's length. Bytes already folded are searched with [`Caseless::find_folded`].
const CONFIRMED_PER_BYTE: usize = 4;

/// What [`Caseless::find_from`] found.
enum Step {
    At(usize),
    Nothing,
    /// Confirming cost too much: the search resumes at this start over folded bytes.
    Costly(usize),
}

/// [`Caseless::find_iter`].
pub(crate) struct Matches<'a> {
    caseless: &'a Caseless,
    hay: &'a [u8],
    from: usize,
    /// Bytes compared so far to confirm candidates.
    work: usize,
    /// Once confirming costs too much: the bytes are folded a window at a time.
    folded: Option<Window<'a>>,
}

/// Bytes of the haystack folded, and `memmem`'s search for the needle in them.
struct Window<'a> {
    /// Where the folded bytes start in the haystack.
    offset: usize,
    bytes: Vec<u8>,
    /// How many bytes a window folds: as many as were searched before confirming cost
    /// too much (so folding costs no more than that search did), and four needles more.
    size: usize,
    finder: &'a memchr::memmem::Finder<'static>,
}

impl Window<'_> {
    /// The window of `size` bytes of `hay` from `offset`, folded.
    fn fold(&mut self, hay: &[u8], offset: usize) {
        let end = hay.len().min(offset + self.size);
        self.offset = offset;
        self.bytes.clear();
        self.bytes
            .extend(hay[offset..end].iter().map(u8::to_ascii_lowercase));
    }

    /// The first match starting at `from` or after, window after window.
    fn find(&mut self, hay: &[u8], from: usize, n: usize) -> Option<usize> {
        loop {
            // Starts before the window's were searched in the one before.
            let start = from.max(self.offset);
            if let Some(i) = self.finder.find(&self.bytes[start - self.offset..]) {
                return Some(start + i);
            }
            let end = self.offset + self.bytes.len();
            if end >= hay.len() {
                return None;
            }
            // The starts whose match would end past the window are searched again.
            self.fold(hay, from.max(end + 1 - n));
        }
    }
}

impl Iterator for Matches<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let n = self.caseless.needle.len();
        let at = match &mut self.folded {
            Some(window) => window.find(self.hay, self.from, n)?,
            None => match self.caseless.find_from(self.hay, self.from, &mut self.work) {
                Step::At(at) => at,
                Step::Nothing => return None,
                Step::Costly(at) => {
                    let mut window = Window {
                        offset: at,
                        bytes: Vec::new(),
                        size: at + 4 * n + 4096,
                        finder: &self.caseless.folded,
                    };
                    window.fold(self.hay, at);
                    self.from = at;
                    self.folded.insert(window).find(self.hay, at, n)?
                }
            },
        };
        self.from = at + n.max(1);
        Some(at)
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Probe;
    use std::arch::x86_64::*;

    /// The first start from `*from` on that the probe and `is_match` accept; `None`
    /// once the probe's loads would pass the end of `hay`, `*from` then the first start
    /// left unchecked. Candidates are confirmed where they are found, no call between:
    /// the probe's constants stay in registers.
    pub(super) fn first(
        hay: &[u8],
        from: &mut usize,
        p: &Probe,
        is_match: impl FnMut(usize) -> bool,
    ) -> Option<usize> {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 is available (checked just above).
            unsafe { first_avx2(hay, from, p, is_match) }
        } else {
            // SAFETY: SSE2 is part of every x86-64 processor.
            unsafe { first_sse2(hay, from, p, is_match) }
        }
    }

    /// The candidates among 64 starts from `s` (bit `k` for `s + k`) that `is_match`
    /// accepts: the first.
    #[inline(always)]
    fn confirmed(
        s: usize,
        mut bits: u64,
        is_match: &mut impl FnMut(usize) -> bool,
    ) -> Option<usize> {
        while bits != 0 {
            let at = s + bits.trailing_zeros() as usize;
            if is_match(at) {
                return Some(at);
            }
            bits &= bits - 1;
        }
        None
    }

    /// [`first`], 64 starts at a time.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn first_avx2(
        hay: &[u8],
        from: &mut usize,
        p: &Probe,
        mut is_match: impl FnMut(usize) -> bool,
    ) -> Option<usize> {
        let (b1, b2) = (
            _mm256_set1_epi8(p.byte1 as i8),
            _mm256_set1_epi8(p.byte2 as i8),
        );
        let (m1, m2) = (
            _mm256_set1_epi8(p.mask1 as i8),
            _mm256_set1_epi8(p.mask2 as i8),
        );
        let end = hay.len().checked_sub(64 + p.reach())?;
        let (at1, at2) = (
            hay.as_ptr().wrapping_add(p.at1),
            hay.as_ptr().wrapping_add(p.at2),
        );
        let probe = |s: usize| {
            // SAFETY: `s <= end`: both loads end at or before `hay.len()`.
            let (x1, x2) = unsafe {
                (
                    _mm256_loadu_si256(at1.add(s).cast()),
                    _mm256_loadu_si256(at2.add(s).cast()),
                )
            };
            let eq1 = _mm256_cmpeq_epi8(_mm256_or_si256(x1, m1), b1);
            let eq2 = _mm256_cmpeq_epi8(_mm256_or_si256(x2, m2), b2);
            _mm256_and_si256(eq1, eq2)
        };
        let mut s = *from;
        while s <= end {
            let (low, high) = (probe(s), probe(s + 32));
            if _mm256_testz_si256(_mm256_or_si256(low, high), _mm256_set1_epi8(-1)) == 0 {
                let low = _mm256_movemask_epi8(low) as u32 as u64;
                let high = _mm256_movemask_epi8(high) as u32 as u64;
                if let Some(at) = confirmed(s, low | high << 32, &mut is_match) {
                    *from = s;
                    return Some(at);
                }
            }
            s += 64;
        }
        *from = s;
        None
    }

    /// [`first`], 32 starts at a time.
    #[target_feature(enable = "sse2")]
    pub(super) unsafe fn first_sse2(
        hay: &[u8],
        from: &mut usize,
        p: &Probe,
        mut is_match: impl FnMut(usize) -> bool,
    ) -> Option<usize> {
        let (b1, b2) = (_mm_set1_epi8(p.byte1 as i8), _mm_set1_epi8(p.byte2 as i8));
        let (m1, m2) = (_mm_set1_epi8(p.mask1 as i8), _mm_set1_epi8(p.mask2 as i8));
        let end = hay.len().checked_sub(32 + p.reach())?;
        let (at1, at2) = (
            hay.as_ptr().wrapping_add(p.at1),
            hay.as_ptr().wrapping_add(p.at2),
        );
        let probe = |s: usize| {
            // SAFETY: `s <= end`: both loads end at or before `hay.len()`.
            let (x1, x2) = unsafe {
                (
                    _mm_loadu_si128(at1.add(s).cast()),
                    _mm_loadu_si128(at2.add(s).cast()),
                )
            };
            let eq1 = _mm_cmpeq_epi8(_mm_or_si128(x1, m1), b1);
            let eq2 = _mm_cmpeq_epi8(_mm_or_si128(x2, m2), b2);
            _mm_movemask_epi8(_mm_and_si128(eq1, eq2)) as u32 as u64
        };
        let mut s = *from;
        while s <= end {
            let bits = probe(s) | probe(s + 16) << 16;
            if bits != 0 {
                if let Some(at) = confirmed(s, bits, &mut is_match) {
                    *from = s;
                    return Some(at);
                }
            }
            s += 32;
        }
        *from = s;
        None
    }
}

/// How frequent each byte is in Common Lisp source (0 to 255, higher for a more frequent
/// byte; a letter counted with its other case): `memchr`'s own ranks are those of prose
/// and code in general, where `(` is rare. Printed by `scripts/byte-ranks.py` over SBCL's
/// sources and Debian's Common Lisp libraries.
#[rustfmt::skip]
const RANK: [u8; 256] = [
    69, 0, 1, 2, 3, 4, 5, 6, 7, 184, 231, 8, 161, 165, 122, 9,
    10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 82, 21, 83, 22, 23,
    255, 162, 200, 214, 158, 175, 174, 187, 237, 238, 189, 183, 188, 234, 198, 177,
    205, 211, 206, 197, 207, 202, 201, 196, 203, 199, 204, 208, 169, 176, 172, 166,
    168, 249, 217, 232, 229, 253, 227, 212, 215, 245, 179, 190, 235, 223, 247, 239,
    225, 185, 241, 243, 251, 221, 192, 194, 219, 209, 181, 163, 171, 164, 157, 170,
    173, 250, 218, 233, 230, 254, 228, 213, 216, 246, 180, 191, 236, 224, 248, 240,
    226, 186, 242, 244, 252, 222, 193, 195, 220, 210, 182, 159, 167, 160, 178, 24,
    155, 123, 133, 138, 113, 96, 107, 70, 124, 84, 85, 86, 71, 87, 72, 88,
    97, 114, 125, 108, 143, 129, 98, 73, 74, 99, 100, 75, 126, 130, 25, 76,
    117, 89, 145, 115, 109, 77, 134, 101, 26, 137, 90, 131, 78, 150, 102, 91,
    152, 151, 103, 147, 132, 149, 148, 127, 135, 104, 110, 136, 139, 111, 116, 118,
    27, 28, 153, 156, 92, 119, 29, 30, 31, 32, 33, 34, 35, 36, 141, 93,
    146, 140, 79, 37, 38, 39, 40, 41, 144, 128, 42, 43, 44, 45, 46, 47,
    48, 94, 154, 142, 112, 120, 105, 49, 80, 106, 50, 51, 121, 95, 52, 81,
    53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68,
];

/// [`RANK`] for `memchr`'s choice of the probe's two bytes.
struct LispRank;

impl HeuristicFrequencyRank for LispRank {
    fn rank(&self, byte: u8) -> u8 {
        RANK[usize::from(byte)]
    }
}

#[cfg(test)]
mod tests {
    use super::Caseless;
    use proptest::prelude::*;

    /// What the search stands for: `memmem` over the bytes folded to lower case.
    fn folded_memmem(needle: &[u8], hay: &[u8]) -> Vec<usize> {
        let (needle, hay) = (needle.to_ascii_lowercase(), hay.to_ascii_lowercase());
        memchr::memmem::find_iter(&hay, &needle).collect()
    }

    fn found(needle: &[u8], hay: &[u8]) -> Vec<usize> {
        Caseless::new(needle).find_iter(hay).collect()
    }

    #[test]
    fn letters_match_in_either_case_and_other_bytes_exactly() {
        let hay = b"(defun Make-LVAR ()) ; MAKE-lvar \xc3\xa9 make_lvar make-lvar";
        assert_eq!(found(b"make-lvar", hay), vec![7, 23, 46]);
        assert_eq!(found(b"MAKE-Lvar", hay), vec![7, 23, 46]);
        // `@` OR 0x20 is a backquote, `[` is `{`: only letters are folded.
        assert_eq!(found(b"`x", b"@x `X"), vec![3]);
        assert_eq!(found(b"{", b"[{"), vec![1]);
        // Leftmost first, not overlapping; a match at the very end.
        assert_eq!(found(b"aa", b"AaAa a"), vec![0, 2]);
        assert_eq!(
            found(b"node", &[b"x".repeat(61), b"NODE".to_vec()].concat()),
            vec![61]
        );
        assert_eq!(found(b"n", b"N n"), vec![0, 2]);
        assert_eq!(found(b"", b"ab"), vec![0, 1, 2]);
        assert_eq!(found(b"long needle", b"long"), Vec::<usize>::new());
        assert_eq!(Caseless::new(b"lvar").find(b"x LVar"), Some(2));
    }

    #[test]
    fn costly_confirmations_go_on_over_folded_bytes_with_the_same_matches() {
        // The probe is two of the `q`s: every `q` of a run starts a candidate.
        let needle = [b"q".repeat(100), b"e".to_vec()].concat();
        let mut hay = b"Q".repeat(3_000);
        for k in 0..200 {
            hay.extend(b"x".repeat(k));
            hay.extend(b"qQ".repeat(50));
            hay.extend(if k % 2 == 0 { b"E" } else { b"e" });
        }
        let c = Caseless::new(&needle);
        let mut matches = c.find_iter(&hay);
        let found: Vec<usize> = matches.by_ref().collect();
        assert!(matches.folded.is_some(), "the confirmations were costly");
        assert_eq!(found.len(), 200);
        assert_eq!(found, folded_memmem(&needle, &hay));
        assert_eq!(c.find(&hay), found.first().copied());
    }

    proptest! {
        #[test]
        fn runs_of_candidates_give_what_memmem_over_folded_bytes_gives(
            k in 20usize..120,
            runs in proptest::collection::vec((0usize..400, 0u8..5), 0..120),
        ) {
            let needle = [b"q".repeat(k), b"e".to_vec()].concat();
            let mut hay = Vec::new();
            for (length, end) in runs {
                hay.extend((0..length).map(|i| if (i + length) % 7 == 0 { b'Q' } else { b'q' }));
                hay.extend(match end { 0 => &b"e"[..], 1 => b"E", 2 => b"x", 3 => b"\xc3", _ => b"" });
            }
            let c = Caseless::new(&needle);
            prop_assert_eq!(found(&needle, &hay), folded_memmem(&needle, &hay));
            prop_assert_eq!(c.find(&hay), folded_memmem(&needle, &hay).first().copied());
        }

        #[test]
        fn it_finds_what_memmem_over_folded_bytes_finds(
            needle in proptest::collection::vec(prop::sample::select(b"aAnNoO-@`[{\xc3".to_vec()), 0..6),
            hay in proptest::collection::vec(prop::sample::select(b"aAnNoO-@`[{ \xc3\xa9".to_vec()), 0..200),
        ) {
            prop_assert_eq!(found(&needle, &hay), folded_memmem(&needle, &hay));
        }
    }
}

#[cfg(all(test, target_arch = "x86_64"))]
mod x86_tests {
    use super::x86::{first_avx2, first_sse2};
    use super::{Caseless, Probe};
    use proptest::prelude::*;

    /// A probe of [`super::x86`], its confirmation a closure that notes each candidate.
    type Probing =
        unsafe fn(&[u8], &mut usize, &Probe, &mut dyn FnMut(usize) -> bool) -> Option<usize>;

    /// Every candidate start a probe gives over `hay` (none confirmed), and the first
    /// start it left unchecked.
    fn all(hay: &[u8], p: &Probe, probe: Probing) -> (Vec<usize>, usize) {
        let (mut out, mut from) = (Vec::new(), 0);
        // SAFETY: run only where the instructions are available (checked by the caller).
        let found = unsafe {
            probe(hay, &mut from, p, &mut |at| {
                out.push(at);
                false
            })
        };
        assert_eq!(found, None);
        (out, from)
    }

    proptest! {
        #[test]
        fn the_sse2_and_avx2_probes_agree_with_a_byte_by_byte_one(
            needle in proptest::collection::vec(prop::sample::select(b"aAnN-@`".to_vec()), 1..5),
            hay in proptest::collection::vec(prop::sample::select(b"aAnN-@` ".to_vec()), 0..300),
        ) {
            let c = Caseless::new(&needle);
            let p = &c.probe;
            let fold = |b: u8, m: u8| b | m;
            let by_byte = |upto: usize| -> Vec<usize> {
                (0..upto)
                    .filter(|&s| fold(hay[s + p.at1], p.mask1) == p.byte1
                        && fold(hay[s + p.at2], p.mask2) == p.byte2)
                    .collect()
            };
            // SAFETY: SSE2 is part of every x86-64 processor.
            let (sse2, upto) = all(&hay, p, |h, f, p, m| unsafe { first_sse2(h, f, p, m) });
            prop_assert_eq!(&sse2, &by_byte(upto));
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: AVX2 is available (checked just above).
                let (avx2, upto) = all(&hay, p, |h, f, p, m| unsafe { first_avx2(h, f, p, m) });
                prop_assert_eq!(&avx2, &by_byte(upto));
            }
        }
    }
}
