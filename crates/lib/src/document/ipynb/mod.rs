//! Jupyter notebooks (nbformat 4, JSON read with serde_json): the cells in order, each
//! after a marker line `--- cell N (code) ---`, and the text outputs of code cells after
//! `out: ` (at most [`OUTPUT_LINES`] lines each). Images and other rich outputs are skipped
//! without being kept in memory.
//!
//! A notebook of a Common Lisp kernel is Lisp text: markers are `;;;` comment lines,
//! markdown and raw cells and outputs are `;;` comment lines, code cells are verbatim, so
//! the collapsed view and `name_pattern` work on it.

mod cells;

use super::{Budget, DocumentInfo, Extracted, Format, Text};
use crate::error::ToolError;
use cells::{write_cells, CellWriter};
use serde::de::IgnoredAny;
use serde::Deserialize;

/// Lines shown of one output; the rest are counted.
pub(super) const OUTPUT_LINES: usize = 20;

/// The notebook's top level, read first with the cells skipped unread: the kernel decides
/// how the cells are written ([`cells`] writes them on a second pass).
#[derive(Deserialize)]
struct Header {
    #[serde(default)]
    cells: Option<IgnoredAny>,
    #[serde(default)]
    metadata: Metadata,
    #[serde(default)]
    nbformat: Option<u64>,
    #[serde(default)]
    worksheets: Option<IgnoredAny>,
}

#[derive(Deserialize, Default)]
struct Metadata {
    #[serde(default)]
    kernelspec: Option<Kernel>,
    #[serde(default)]
    language_info: Option<Kernel>,
}

/// `metadata.kernelspec` and `metadata.language_info`: the members read of both.
#[derive(Deserialize, Default)]
struct Kernel {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    language: Option<String>,
}

/// Whether a kernel name or language is Common Lisp's: `common-lisp`, `lisp`, `sbcl`,
/// `cl-jupyter`, `common-lisp_sbcl`... (Emacs Lisp is not).
fn is_lisp(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    (name.contains("lisp") && !name.contains("emacs"))
        || ["sbcl", "cl-jupyter", "ccl", "ecl", "clasp", "cl"].contains(&name.as_str())
}

pub(super) fn extract(bytes: &[u8], budget: &Budget) -> Result<Extracted, ToolError> {
    let not_a_notebook =
        |e: serde_json::Error| budget.refuse(format!("it is not a Jupyter notebook ({e})"));
    let header: Header = serde_json::from_slice(bytes).map_err(not_a_notebook)?;
    if header.cells.is_none() {
        let why = if header.worksheets.is_some() || header.nbformat.is_some_and(|v| v < 4) {
            "it is an nbformat 3 notebook (only nbformat 4 is read: `jupyter nbconvert --to \
             notebook` upgrades it)"
        } else {
            "it has no cells member, so it is not a Jupyter notebook"
        };
        return Err(budget.refuse(why));
    }
    let meta = header.metadata;
    let names = [
        meta.kernelspec.as_ref().and_then(|k| k.language.clone()),
        meta.language_info.as_ref().and_then(|k| k.name.clone()),
        meta.kernelspec.as_ref().and_then(|k| k.name.clone()),
    ];
    let language = names.iter().flatten().next().cloned();
    let lisp = names.iter().flatten().any(|n| is_lisp(n));
    let mut text = Text::new(budget.limits.max_text_bytes);
    let mut writer = CellWriter::new(&mut text, budget, lisp);
    let written = write_cells(bytes, &mut writer);
    if let Some(stopped) = writer.stopped.take() {
        return Err(stopped);
    }
    written.map_err(not_a_notebook)?;
    let cells = writer.cells;
    Ok(Extracted {
        lisp,
        info: DocumentInfo {
            format: Format::Ipynb,
            pages: None,
            cells: Some(cells),
            language,
            truncated: text.truncated,
        },
        text: text.out,
    })
}

/// One cell's blank line (before all but the first), marker and source; `false` once the
/// text is full.
pub(super) fn write_source(
    text: &mut Text,
    number: usize,
    cell_type: &str,
    source: &str,
    lisp: bool,
) -> bool {
    let comment = if lisp { ";; " } else { "" };
    let marker = if lisp { ";;; " } else { "" };
    if number > 1 && !text.line("") {
        return false;
    }
    if !text.line(&format!("{marker}--- cell {number} ({cell_type}) ---")) {
        return false;
    }
    if cell_type == "code" || !lisp {
        text.lines(source)
    } else {
        source
            .lines()
            .all(|l| text.line(format!("{comment}{l}").trim_end()))
    }
}

/// The shown lines of one output's text: at most [`OUTPUT_LINES`], each after `out: `,
/// then how many more there were.
pub(super) fn output_lines(body: &str, comment: &str, mut push: impl FnMut(String)) {
    let mut total = 0;
    for line in body.lines() {
        if total < OUTPUT_LINES {
            push(format!("{comment}out: {line}").trim_end().to_string());
        }
        total += 1;
    }
    if total > OUTPUT_LINES {
        push(format!(
            "{comment}out: [{} more lines]",
            total - OUTPUT_LINES
        ));
    }
}
