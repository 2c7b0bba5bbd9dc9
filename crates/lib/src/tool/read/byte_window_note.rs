//! The note of a byte window cut short of what was asked: at the size cap, or back to a
//! character boundary. A `byteRange` answer's content is the bytes verbatim, so the note
//! cannot be in it as the other windows' notes are; each surface says it beside the
//! content (the command line on stderr, MCP in a second text block), with the hint that
//! reads on (docs/tool.md#hints).

use super::{ReadRequest, ReadResult, Strategy};
use crate::hint::Hint;

/// `[Showing bytes S..E of S..A asked ...]` when `result` is a byte window of `request`
/// that stops before the end asked; `None` for every other answer.
#[must_use]
pub fn byte_window_note(request: &ReadRequest, result: &ReadResult) -> Option<String> {
    let Strategy::ByteRange { start, end } = request.strategy else {
        return None;
    };
    let Strategy::ByteRange {
        end: Some(shown_end),
        ..
    } = result.meta.applied_strategy
    else {
        return None;
    };
    let asked_end = end.unwrap_or(result.meta.byte_length as u64);
    if !result.meta.truncated || shown_end >= asked_end {
        return None;
    }
    if shown_end <= start {
        // Not one character fits: continuing at `start` would give the same window.
        return Some(format!(
            "[Showing no bytes of the {start}..{asked_end} asked: the character at byte \
             {start} is longer than the size cap; {}.]",
            request.hints.render(&Hint::SizeCap)
        ));
    }
    Some(format!(
        "[Showing bytes {start}..{shown_end} of the {start}..{asked_end} asked: a window \
         holds at most the size cap, and ends on a character boundary. Use {} to continue.]",
        request.hints.render(&Hint::ByteRange {
            start: shown_end,
            end: asked_end
        })
    ))
}
