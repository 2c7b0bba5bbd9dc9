//! The one PDF bound lopdf lacks: a **total** for the streams it decodes while loading.
//!
//! lopdf decodes object streams (`/Type /ObjStm`) and cross-reference streams
//! (`/Type /XRef`) eagerly, each under its own limit, and keeps every object they hold:
//! a 165 KB PDF of ten object streams, each inflating to 16 MiB of numbers, takes 1 GB of
//! memory. Before lopdf sees the file, this pre-scan finds every `stream` keyword,
//! looks at the dictionary before it, and inflates the streams that may be decoded
//! eagerly under one budget for all of them; a PDF over it is refused.
//!
//! A stream is charged when its dictionary (the bytes back to the previous `endobj` or
//! `endstream`, at most [`DICT_WINDOW`]) names `ObjStm` or `XRef`, or cannot be read with
//! confidence: longer than the window, or holding a `#xx` name escape or a string, which
//! could hide the type. A charged stream with one `FlateDecode` counts what it inflates
//! to (in a fixed buffer, never kept), with another filter the per-stream limit, without
//! a filter nothing. Keywords cannot be escaped in PDF, so a
//! stream lopdf decodes is a stream found here.
//!
//! The same pass counts the tokens lopdf would parse while loading (the bytes outside
//! stream data, and what the charged streams inflate to): over
//! [`super::pdf_tokens::MAX_TOKENS`] the PDF is refused before lopdf builds an object
//! of it.

use super::pdf_tokens::{TokenCount, MAX_TOKENS};
use super::Budget;
use crate::error::ToolError;
use flate2::read::ZlibDecoder;
use std::io::Read;

/// How far back from `stream` the dictionary is looked for.
const DICT_WINDOW: usize = 64 * 1024;

/// Bytes all eagerly decoded streams may inflate to together.
pub(super) const MAX_EAGER_BYTES: u64 = 32 * 1024 * 1024;

/// Refuses `bytes` when the streams lopdf would decode while loading inflate past
/// [`MAX_EAGER_BYTES`] in all; else the per-stream limit to give lopdf. Streams that do
/// not inflate here (encrypted: lopdf decrypts them first) share what is left of the
/// budget: the per-stream limit is lowered so that all of them together stay within it.
pub(super) fn check(bytes: &[u8], budget: &Budget) -> Result<usize, ToolError> {
    let per_stream = budget.limits.max_stream_bytes as u64;
    let mut spent: u64 = 0;
    let mut unmeasured: u64 = 0;
    let mut from = 0;
    let mut seen = 0u32;
    let mut tokens = TokenCount::loose();
    // Bytes before this offset are counted (or are stream data, which is not parsed).
    let mut counted_to = 0;
    while let Some(at) = memchr::memmem::find(&bytes[from..], b"stream") {
        let start = from + at;
        from = start + 6;
        seen = seen.wrapping_add(1);
        if seen.is_multiple_of(64) {
            budget.check()?;
        }
        let preceded_by_end = start >= 3 && &bytes[start - 3..start] == b"end";
        if preceded_by_end {
            continue;
        }
        let data = stream_data(bytes, from);
        if start >= counted_to {
            tokens.feed(&bytes[counted_to..start]);
            tokens.restart();
            counted_to = data_end(bytes, data);
            too_many_tokens(tokens.tokens, budget)?;
        }
        let dict = dictionary_before(bytes, start);
        if !charged(dict) {
            continue;
        }
        let left = MAX_EAGER_BYTES.saturating_sub(spent);
        spent += match filter(dict) {
            Filter::None => 0,
            Filter::Flate => {
                let n = inflated_len(data, left.min(per_stream), &mut tokens);
                unmeasured += u64::from(n == 0 && !data.is_empty());
                n
            }
            Filter::Other => per_stream,
        };
        too_many_tokens(tokens.tokens, budget)?;
        if spent > MAX_EAGER_BYTES {
            return Err(budget.over_limit(format!(
                "its object and cross-reference streams inflate to more than {MAX_EAGER_BYTES} \
                 bytes in all (a PDF decompression bomb is refused, not expanded)"
            )));
        }
    }
    tokens.feed(&bytes[counted_to.min(bytes.len())..]);
    too_many_tokens(tokens.tokens, budget)?;
    let share = MAX_EAGER_BYTES.saturating_sub(spent) / unmeasured.max(1);
    Ok(usize::try_from(share.clamp(1, per_stream)).unwrap_or(usize::MAX))
}

/// `UNSUPPORTED_DOCUMENT` past [`MAX_TOKENS`] tokens to parse.
pub(super) fn too_many_tokens(tokens: u64, budget: &Budget) -> Result<(), ToolError> {
    if tokens <= MAX_TOKENS {
        return Ok(());
    }
    Err(budget.over_limit(format!(
        "its objects hold more than {MAX_TOKENS} tokens (numbers, names, strings, brackets), \
         and the PDF parser keeps each as an object of about a hundred bytes"
    )))
}

/// The offset just past `data` (a slice of `bytes`) and its `endstream`.
fn data_end(bytes: &[u8], data: &[u8]) -> usize {
    let start = data.as_ptr() as usize - bytes.as_ptr() as usize;
    (start + data.len() + b"endstream".len()).min(bytes.len())
}

/// The bytes between the previous `endobj`/`endstream` (or the window's start) and `at`.
fn dictionary_before(bytes: &[u8], at: usize) -> &[u8] {
    let lo = at.saturating_sub(DICT_WINDOW);
    let window = &bytes[lo..at];
    let after = |key: &[u8]| memchr::memmem::rfind(window, key).map(|i| i + key.len());
    let start = after(b"endobj").max(after(b"endstream")).unwrap_or(0);
    &window[start..]
}

/// Whether a stream with this dictionary may be decoded while loading.
fn charged(dict: &[u8]) -> bool {
    let unsure = dict.len() >= DICT_WINDOW || dict.contains(&b'(') || dict.contains(&b'#');
    unsure
        || memchr::memmem::find(dict, b"ObjStm").is_some()
        || memchr::memmem::find(dict, b"XRef").is_some()
}

/// A stream's filters, as far as the budget is concerned.
enum Filter {
    /// No filter: its bytes are in the file already, nothing inflates.
    None,
    /// One `FlateDecode`: inflated here, and counted.
    Flate,
    /// Anything else (LZW, a chain...): counted as the per-stream limit.
    Other,
}

fn filter(dict: &[u8]) -> Filter {
    if memchr::memmem::find(dict, b"/Filter").is_none() {
        Filter::None
    } else if memchr::memmem::find_iter(dict, b"Decode").count() == 1
        && memchr::memmem::find(dict, b"/FlateDecode").is_some()
    {
        Filter::Flate
    } else {
        Filter::Other
    }
}

/// The stream's bytes after the `stream` keyword (its line break skipped), up to the next
/// `endstream`.
fn stream_data(bytes: &[u8], mut at: usize) -> &[u8] {
    if bytes.get(at) == Some(&b'\r') {
        at += 1;
    }
    if bytes.get(at) == Some(&b'\n') {
        at += 1;
    }
    let rest = &bytes[at.min(bytes.len())..];
    let end = memchr::memmem::find(rest, b"endstream").unwrap_or(rest.len());
    &rest[..end]
}

/// What `data` inflates to, counted up to `cap + 1`, in a fixed buffer, its tokens added
/// to `tokens`. Data that does not inflate counts what inflated before the error (lopdf
/// gets no further).
fn inflated_len(data: &[u8], cap: u64, tokens: &mut TokenCount) -> u64 {
    let mut reader = ZlibDecoder::new(data).take(cap.saturating_add(1));
    let mut buf = [0u8; 16 * 1024];
    let mut total = 0u64;
    let mut count = TokenCount::loose();
    while let Ok(n) = reader.read(&mut buf) {
        if n == 0 || count.tokens > MAX_TOKENS {
            break;
        }
        count.feed(&buf[..n]);
        total += n as u64;
    }
    tokens.tokens += count.tokens;
    total
}
