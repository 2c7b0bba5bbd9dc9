//! The words of a file's text, as a sorted set of hashes: a file whose words do not
//! hold a name cannot use the symbol of that name, so a search for its uses can skip it
//! (the language server's index, and the files a long-lived surface keeps between
//! searches, [`super::source`]). A hash collision only costs a file searched for nothing,
//! never a missed answer.

/// A sorted set of name hashes.
#[derive(Clone, Debug, Default)]
pub struct NameSet(Box<[u64]>);

impl NameSet {
    pub(crate) fn of(mut hashes: Vec<u64>) -> NameSet {
        hashes.sort_unstable();
        hashes.dedup();
        NameSet(hashes.into_boxed_slice())
    }

    pub fn may_hold(&self, name: &[u8]) -> bool {
        self.may_hold_hash(NameSet::hash(name))
    }

    /// [`NameSet::may_hold`] of a name's [`NameSet::hash`].
    pub(crate) fn may_hold_hash(&self, hash: u64) -> bool {
        self.0.binary_search(&hash).is_ok()
    }

    /// The hashes of the words, each once.
    pub(crate) fn hashes(&self) -> &[u64] {
        &self.0
    }

    /// FNV-1a: the same in every run, and quick for short words (every token is hashed).
    pub(crate) fn hash(bytes: &[u8]) -> u64 {
        bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
    }
}

/// Ends a token (as the reader reads one).
fn ends_token(c: u8) -> bool {
    c.is_ascii_whitespace() || matches!(c, b'(' | b')' | b'"' | b'\'' | b'`' | b',' | b';')
}

/// Ends a word inside a token: a package marker, an escape, a prefix.
fn ends_word(c: u8) -> bool {
    matches!(c, b':' | b'|' | b'\\' | b'#' | b'@')
}

/// What a byte is to [`words`]: part of a word (0), or these bits.
const TOKEN_END: u8 = 1;
const WORD_END: u8 = 2;
const ESCAPE: u8 = 4;

/// [`TOKEN_END`], [`WORD_END`] and [`ESCAPE`] of every byte.
const CLASSES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        let token_end =
            b.is_ascii_whitespace() || matches!(b, b'(' | b')' | b'"' | b'\'' | b'`' | b',' | b';');
        let word_end = matches!(b, b':' | b'|' | b'\\' | b'#' | b'@');
        table[c] = if token_end {
            TOKEN_END
        } else if word_end {
            WORD_END | if matches!(b, b'|' | b'\\') { ESCAPE } else { 0 }
        } else {
            0
        };
        c += 1;
    }
    table
};

/// The start of a [`NameSet::hash`] (FNV-1a's offset basis), and one byte of it.
const HASH_START: u64 = 0xcbf2_9ce4_8422_2325;
fn hash_step(h: u64, c: u8) -> u64 {
    (h ^ u64::from(c)).wrapping_mul(0x0100_0000_01b3)
}

/// Whether [`words`] can answer for `name`: an ASCII name without the characters that
/// split words (else every file is a candidate).
pub fn words_answer_for(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|c| c.is_ascii() && !ends_token(c) && !ends_word(c))
}

/// The words of `bytes`, ASCII-lowercased: the runs between token ends and word ends,
/// and in a token written with escapes (`|...|`, `\`) the runs of it unescaped too.
/// Every token that [`crate::find::SymbolQuery::matches_token`] takes for a name that
/// [`words_answer_for`] holds, with the name found in the text as
/// [`crate::find`] finds it, holds that name as a word.
///
/// One pass, each word hashed as it is read (nothing copied); a token with an escape is
/// read once more for its unescaped runs.
pub fn words(bytes: &[u8]) -> NameSet {
    let mut hashes = Vec::with_capacity(bytes.len() / 8);
    let (mut h, mut len) = (HASH_START, 0usize);
    let (mut token_start, mut escapes) = (0usize, false);
    for (k, &c) in bytes.iter().enumerate() {
        let class = CLASSES[usize::from(c)];
        if class == 0 {
            h = hash_step(h, c.to_ascii_lowercase());
            len += 1;
            continue;
        }
        if len > 0 {
            // The same word twice in a row (`(foo (foo`) is kept once.
            if hashes.last() != Some(&h) {
                hashes.push(h);
            }
            (h, len) = (HASH_START, 0);
        }
        if class & TOKEN_END != 0 {
            if escapes {
                unescaped(&bytes[token_start..k], &mut hashes);
            }
            (token_start, escapes) = (k + 1, false);
        } else {
            escapes |= class & ESCAPE != 0;
        }
    }
    if len > 0 {
        hashes.push(h);
    }
    if escapes {
        unescaped(&bytes[token_start..], &mut hashes);
    }
    NameSet::of(hashes)
}

/// The runs of a token written with escapes, unescaped: split at the package markers and
/// prefixes that no escape protects.
fn unescaped(token: &[u8], hashes: &mut Vec<u64>) {
    let (mut h, mut len) = (HASH_START, 0usize);
    let mut escaped = false;
    let mut push = |h: &mut u64, len: &mut usize| {
        if *len > 0 {
            hashes.push(*h);
        }
        (*h, *len) = (HASH_START, 0);
    };
    for &c in token {
        match c {
            b'\\' if !escaped => escaped = true,
            b'|' if !escaped => {}
            b':' | b'#' | b'@' if !escaped => push(&mut h, &mut len),
            _ => {
                h = hash_step(h, c.to_ascii_lowercase());
                len += 1;
                escaped = false;
            }
        }
    }
    push(&mut h, &mut len);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words as first written: each token split off, each word copied, then hashed.
    fn words_by_copies(bytes: &[u8]) -> NameSet {
        let mut hashes = Vec::new();
        let mut word = Vec::new();
        let push = |word: &mut Vec<u8>, hashes: &mut Vec<u64>| {
            if !word.is_empty() {
                hashes.push(NameSet::hash(word));
                word.clear();
            }
        };
        for token in bytes.split(|&c| ends_token(c)).filter(|t| !t.is_empty()) {
            for &c in token {
                if ends_word(c) {
                    push(&mut word, &mut hashes);
                } else {
                    word.push(c.to_ascii_lowercase());
                }
            }
            push(&mut word, &mut hashes);
            if token.iter().any(|&c| c == b'|' || c == b'\\') {
                let mut escaped = false;
                for &c in token {
                    match c {
                        b'\\' if !escaped => escaped = true,
                        b'|' if !escaped => {}
                        b':' | b'#' | b'@' if !escaped => push(&mut word, &mut hashes),
                        _ => {
                            word.push(c.to_ascii_lowercase());
                            escaped = false;
                        }
                    }
                }
                push(&mut word, &mut hashes);
            }
        }
        NameSet::of(hashes)
    }

    #[test]
    fn one_pass_words_are_the_words_of_each_token() {
        let pieces: [&[u8]; 22] = [
            b"Foo",
            b"bar",
            b":",
            b"::",
            b"|",
            b"\\",
            b"#",
            b"@",
            b"'",
            b"`",
            b",",
            b";",
            b"\n",
            b" ",
            b"(",
            b")",
            b"\"",
            b"\t",
            b"x",
            b"\xc3\xa9",
            b"a|B c|d",
            b"foo",
        ];
        let mut seed = 11u64;
        for _ in 0..5000 {
            let mut text = Vec::new();
            for _ in 0..16 {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                text.extend_from_slice(pieces[(seed >> 33) as usize % pieces.len()]);
            }
            assert_eq!(
                words(&text).0,
                words_by_copies(&text).0,
                "{:?}",
                String::from_utf8_lossy(&text)
            );
        }
    }
}
