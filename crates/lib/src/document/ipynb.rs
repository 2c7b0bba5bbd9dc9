//! Jupyter notebooks (nbformat 4, JSON read with serde_json): the cells in order, each
//! after a marker line `--- cell N (code) ---`, and the text outputs of code cells after
//! `out: ` (at most [`OUTPUT_LINES`] lines each). Images and other rich outputs are skipped
//! without being kept in memory.
//!
//! A notebook of a Common Lisp kernel is Lisp text: markers are `;;;` comment lines,
//! markdown and raw cells and outputs are `;;` comment lines, code cells are verbatim, so
//! the collapsed view and `name_pattern` work on it.

use super::{Budget, DocumentInfo, Extracted, Format, Text};
use crate::error::ToolError;
use serde::de::IgnoredAny;
use serde::Deserialize;

/// Lines shown of one output; the rest are counted.
pub(super) const OUTPUT_LINES: usize = 20;

#[derive(Deserialize)]
struct Notebook {
    #[serde(default)]
    cells: Option<Vec<Cell>>,
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

#[derive(Deserialize)]
struct Cell {
    cell_type: String,
    #[serde(default)]
    source: Option<MultiText>,
    #[serde(default)]
    outputs: Vec<Output>,
}

/// nbformat's multiline strings: one string, or a list of lines with their breaks.
#[derive(Deserialize)]
#[serde(untagged)]
enum MultiText {
    One(String),
    Many(Vec<String>),
}

impl MultiText {
    fn joined(&self) -> String {
        match self {
            MultiText::One(s) => s.clone(),
            MultiText::Many(parts) => parts.concat(),
        }
    }
}

#[derive(Deserialize)]
struct Output {
    #[serde(default)]
    text: Option<MultiText>,
    #[serde(default)]
    data: Option<Data>,
    #[serde(default)]
    ename: Option<String>,
    #[serde(default)]
    evalue: Option<String>,
}

#[derive(Deserialize)]
struct Data {
    #[serde(rename = "text/plain", default)]
    plain: Option<MultiText>,
}

/// Whether a kernel name or language is Common Lisp's: `common-lisp`, `lisp`, `sbcl`,
/// `cl-jupyter`, `common-lisp_sbcl`... (Emacs Lisp is not).
fn is_lisp(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    (name.contains("lisp") && !name.contains("emacs"))
        || ["sbcl", "cl-jupyter", "ccl", "ecl", "clasp", "cl"].contains(&name.as_str())
}

pub(super) fn extract(bytes: &[u8], budget: &Budget) -> Result<Extracted, ToolError> {
    let notebook: Notebook = serde_json::from_slice(bytes)
        .map_err(|e| budget.refuse(format!("it is not a Jupyter notebook ({e})")))?;
    let Some(cells) = notebook.cells else {
        let why = if notebook.worksheets.is_some() || notebook.nbformat.is_some_and(|v| v < 4) {
            "it is an nbformat 3 notebook (only nbformat 4 is read: `jupyter nbconvert --to \
             notebook` upgrades it)"
        } else {
            "it has no cells member, so it is not a Jupyter notebook"
        };
        return Err(budget.refuse(why));
    };
    let meta = notebook.metadata;
    let names = [
        meta.kernelspec.as_ref().and_then(|k| k.language.clone()),
        meta.language_info.as_ref().and_then(|k| k.name.clone()),
        meta.kernelspec.as_ref().and_then(|k| k.name.clone()),
    ];
    let language = names.iter().flatten().next().cloned();
    let lisp = names.iter().flatten().any(|n| is_lisp(n));
    let mut text = Text::new(budget.limits.max_text_bytes);
    for (index, cell) in cells.iter().enumerate() {
        budget.check()?;
        if !write_cell(&mut text, index + 1, cell, lisp) {
            break;
        }
    }
    Ok(Extracted {
        lisp,
        info: DocumentInfo {
            format: Format::Ipynb,
            pages: None,
            cells: Some(cells.len()),
            language,
            truncated: text.truncated,
        },
        text: text.out,
    })
}

/// One cell: a blank line before all but the first, its marker, its text, its outputs.
fn write_cell(text: &mut Text, number: usize, cell: &Cell, lisp: bool) -> bool {
    let comment = if lisp { ";; " } else { "" };
    let marker = if lisp { ";;; " } else { "" };
    let source = cell
        .source
        .as_ref()
        .map(MultiText::joined)
        .unwrap_or_default();
    if number > 1 && !text.line("") {
        return false;
    }
    if !text.line(&format!(
        "{marker}--- cell {number} ({}) ---",
        cell.cell_type
    )) {
        return false;
    }
    let ok = if cell.cell_type == "code" || !lisp {
        text.lines(&source)
    } else {
        source
            .lines()
            .all(|l| text.line(format!("{comment}{l}").trim_end()))
    };
    ok && cell.outputs.iter().all(|o| write_output(text, o, comment))
}

/// The text of one output, at most [`OUTPUT_LINES`] lines, each after `out: `.
fn write_output(text: &mut Text, output: &Output, comment: &str) -> bool {
    let body = if let Some(t) = &output.text {
        t.joined()
    } else if let Some(plain) = output.data.as_ref().and_then(|d| d.plain.as_ref()) {
        plain.joined()
    } else if let Some(name) = &output.ename {
        format!("{name}: {}", output.evalue.as_deref().unwrap_or_default())
    } else {
        return true;
    };
    let total = body.lines().count();
    for line in body.lines().take(OUTPUT_LINES) {
        if !text.line(format!("{comment}out: {line}").trim_end()) {
            return false;
        }
    }
    if total > OUTPUT_LINES {
        return text.line(&format!(
            "{comment}out: [{} more lines]",
            total - OUTPUT_LINES
        ));
    }
    true
}
