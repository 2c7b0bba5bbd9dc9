//! PDF text with lopdf: one `--- page N ---` marker line per page, then the page's text.
//!
//! Bounded: lopdf decodes object and cross-reference streams while loading, each at most
//! `max_stream_bytes` (its `LoadOptions::max_decompressed_size`); page contents are decoded
//! one page at a time under the same bound; at most `max_pages` pages are read; the text is
//! capped; the clock is checked between pages (not inside lopdf's load). The objects
//! lopdf builds are bounded by their tokens, counted before it parses
//! ([`super::pdf_tokens`]): at load by the pre-scan, and for each page's content here.

use super::pdf_tokens::{TokenCount, MAX_TOKENS};
use super::{Budget, DocumentInfo, Extracted, Format, Text};
use crate::error::ToolError;
use lopdf::{Document, LoadOptions};

/// Where a PDF header may start: the specification allows bytes before it, readers look in
/// the first KiB.
const HEADER_WINDOW: usize = 1024;

pub(super) fn extract(bytes: &[u8], budget: &Budget) -> Result<Extracted, ToolError> {
    let head = &bytes[..bytes.len().min(HEADER_WINDOW)];
    if memchr::memmem::find(head, b"%PDF-").is_none() {
        return Err(budget.refuse("it is not a PDF (no %PDF- header in its first 1024 bytes)"));
    }
    let eager_limit = super::pdf_budget::check(bytes, budget)?;
    let options = LoadOptions {
        max_decompressed_size: Some(eager_limit),
        ..LoadOptions::default()
    };
    let doc =
        Document::load_mem_with_options(bytes, options).map_err(|e| load_error(&e, budget))?;
    if doc.is_encrypted() {
        return Err(encrypted(budget));
    }
    budget.check()?;
    let pages = doc.get_pages();
    let total = pages.len();
    let mut text = Text::new(budget.limits.max_text_bytes);
    for (index, (&number, &page_id)) in pages.iter().enumerate() {
        budget.check()?;
        if index == budget.limits.max_pages {
            text.stop(&format!(
                "--- stopped after page {index} of {total}: the limit is {} pages ---",
                budget.limits.max_pages
            ));
            break;
        }
        if !text.line(&format!("--- page {number} ---")) {
            break;
        }
        let page = match page_tokens(&doc, page_id, budget) {
            Some(tokens) if tokens > MAX_TOKENS => format!(
                "[the text of page {number} was not extracted: its content holds more than \
                 {MAX_TOKENS} tokens, and the PDF parser keeps each as an object]"
            ),
            _ => match doc.extract_text_with_limit(&[number], budget.limits.max_stream_bytes) {
                Ok(page) => page,
                Err(e) => format!("[the text of page {number} could not be extracted: {e}]"),
            },
        };
        if !text.lines(page.trim_start_matches(['\n', '\r']).trim_end()) {
            break;
        }
    }
    Ok(Extracted {
        lisp: false,
        info: DocumentInfo {
            format: Format::Pdf,
            pages: Some(total),
            cells: None,
            language: None,
            truncated: text.truncated,
        },
        text: text.out,
    })
}

/// The tokens of a page's content, counted in its decoded bytes before lopdf parses them
/// into objects; `None` when it cannot be decoded (extracting then says why).
fn page_tokens(doc: &Document, page_id: lopdf::ObjectId, budget: &Budget) -> Option<u64> {
    let content = doc
        .get_page_content_with_limit(page_id, budget.limits.max_stream_bytes)
        .ok()?;
    Some(TokenCount::of(&content))
}

fn encrypted(budget: &Budget) -> ToolError {
    budget.refuse("it is encrypted (password-protected), and this tool takes no password")
}

/// A load failure: encryption named as such, anything else as a damaged file.
fn load_error(e: &lopdf::Error, budget: &Budget) -> ToolError {
    match e {
        lopdf::Error::Decryption(_)
        | lopdf::Error::InvalidPassword
        | lopdf::Error::AlreadyEncrypted => encrypted(budget),
        other => budget.refuse(format!("it is not a readable PDF ({other})")),
    }
}
