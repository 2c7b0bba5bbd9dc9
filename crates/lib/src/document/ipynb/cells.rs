//! The cells of a notebook written as they are parsed, never held: serde seeds over
//! serde_json's streaming deserializer that write each cell's text when the cell ends and
//! keep of an output only the lines shown. A notebook of 700,000 empty outputs (2 MB)
//! took 84 MB as `Vec<Output>`; here it takes what its text takes.
//!
//! Jupyter writes a cell's keys sorted (`outputs` before `source`), so a cell's outputs
//! are kept as their shown lines until its source is read, bounded by the text cap.

use super::{output_lines, write_source};
use crate::document::{Budget, Text};
use crate::error::ToolError;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// What the cells are written with, and where a budget refusal is kept while serde unwinds.
pub(super) struct CellWriter<'t, 'b> {
    pub text: &'t mut Text,
    pub budget: &'b Budget<'b>,
    pub lisp: bool,
    /// Cells seen, all of them (the text may be full before the last).
    pub cells: usize,
    /// Set when the budget stopped the parse (time, cancellation).
    pub stopped: Option<ToolError>,
    outputs_seen: usize,
}

impl<'t, 'b> CellWriter<'t, 'b> {
    pub(super) fn new(text: &'t mut Text, budget: &'b Budget<'b>, lisp: bool) -> Self {
        CellWriter {
            text,
            budget,
            lisp,
            cells: 0,
            stopped: None,
            outputs_seen: 0,
        }
    }

    /// The budget's check, as a serde error that unwinds the parse (the refusal is kept).
    fn check<E: de::Error>(&mut self) -> Result<(), E> {
        match self.budget.check() {
            Ok(()) => Ok(()),
            Err(e) => {
                self.stopped = Some(e);
                Err(E::custom("stopped by the document budget"))
            }
        }
    }

    fn comment(&self) -> &'static str {
        if self.lisp {
            ";; "
        } else {
            ""
        }
    }
}

/// Parses `bytes` (a notebook already checked to have `cells`) and writes its cells.
///
/// # Errors
/// serde_json's error for a cell of the wrong shape; a budget refusal is in `stopped`.
pub(super) fn write_cells(bytes: &[u8], writer: &mut CellWriter<'_, '_>) -> serde_json::Result<()> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    NotebookSeed(writer).deserialize(&mut de)?;
    de.end()
}

/// The top-level object: only `cells` is read, the rest skipped.
struct NotebookSeed<'w, 't, 'b>(&'w mut CellWriter<'t, 'b>);

impl<'de> DeserializeSeed<'de> for NotebookSeed<'_, '_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for NotebookSeed<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a notebook object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "cells" {
                map.next_value_seed(CellsSeed(&mut *self.0))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

struct CellsSeed<'w, 't, 'b>(&'w mut CellWriter<'t, 'b>);

impl<'de> DeserializeSeed<'de> for CellsSeed<'_, '_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for CellsSeed<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of cells")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(CellSeed(&mut *self.0))?.is_some() {}
        Ok(())
    }
}

/// One cell: its type, source and shown output lines, written when the cell ends.
struct CellSeed<'w, 't, 'b>(&'w mut CellWriter<'t, 'b>);

impl<'de> DeserializeSeed<'de> for CellSeed<'_, '_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for CellSeed<'_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a cell object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let writer = self.0;
        writer.check()?;
        let mut cell_type: Option<String> = None;
        let mut source = String::new();
        let mut outputs = ShownOutputs {
            lines: Vec::new(),
            bytes: 0,
            cap: writer.text_cap(),
        };
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "cell_type" => cell_type = Some(map.next_value()?),
                "source" => {
                    source.clear();
                    map.next_value_seed(OptionalSeed(MultiTextSeed(&mut source)))?;
                }
                "outputs" => map.next_value_seed(OutputsSeed {
                    writer: &mut *writer,
                    shown: &mut outputs,
                })?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let cell_type = cell_type.ok_or_else(|| de::Error::missing_field("cell_type"))?;
        writer.cells += 1;
        let number = writer.cells;
        let lisp = writer.lisp;
        if write_source(writer.text, number, &cell_type, &source, lisp) {
            for line in &outputs.lines {
                if !writer.text.line(line) {
                    break;
                }
            }
        }
        Ok(())
    }
}

impl CellWriter<'_, '_> {
    fn text_cap(&self) -> usize {
        self.budget.limits.max_text_bytes
    }
}

/// The shown lines of a cell's outputs, kept up to the text cap (past it the text would
/// be cut anyway).
struct ShownOutputs {
    lines: Vec<String>,
    bytes: usize,
    cap: usize,
}

impl ShownOutputs {
    fn push(&mut self, line: String) {
        if self.bytes <= self.cap {
            self.bytes += line.len() + 1;
            self.lines.push(line);
        }
    }
}

struct OutputsSeed<'w, 's, 't, 'b> {
    writer: &'w mut CellWriter<'t, 'b>,
    shown: &'s mut ShownOutputs,
}

impl<'de> DeserializeSeed<'de> for OutputsSeed<'_, '_, '_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for OutputsSeed<'_, '_, '_, '_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of outputs")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(output) = seq.next_element_seed(OutputSeed)? {
            self.writer.outputs_seen += 1;
            if self.writer.outputs_seen.is_multiple_of(4096) {
                self.writer.check()?;
            }
            if let Some(body) = output.body() {
                let comment = self.writer.comment();
                output_lines(&body, comment, |line| self.shown.push(line));
            }
        }
        Ok(())
    }
}

/// What an output shows: its `text`, else its `text/plain` data, else its error.
#[derive(Default)]
struct Output {
    text: Option<String>,
    plain: Option<String>,
    ename: Option<String>,
    evalue: Option<String>,
}

impl Output {
    fn body(self) -> Option<String> {
        if let Some(text) = self.text {
            Some(text)
        } else if let Some(plain) = self.plain {
            Some(plain)
        } else {
            self.ename
                .map(|name| format!("{name}: {}", self.evalue.unwrap_or_default()))
        }
    }
}

struct OutputSeed;

impl<'de> DeserializeSeed<'de> for OutputSeed {
    type Value = Output;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Output, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for OutputSeed {
    type Value = Output;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an output object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Output, A::Error> {
        let mut output = Output::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "text" => output.text = optional_text(&mut map)?,
                "data" => output.plain = map.next_value_seed(DataSeed)?,
                "ename" => output.ename = map.next_value()?,
                "evalue" => output.evalue = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(output)
    }
}

/// A multiline string that may be `null`.
fn optional_text<'de, A: MapAccess<'de>>(map: &mut A) -> Result<Option<String>, A::Error> {
    let mut text = String::new();
    let present = map.next_value_seed(OptionalSeed(MultiTextSeed(&mut text)))?;
    Ok(present.then_some(text))
}

/// `data` of an output: only `text/plain` is kept (images and HTML are skipped unread).
struct DataSeed;

impl<'de> DeserializeSeed<'de> for DataSeed {
    type Value = Option<String>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<String>, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for DataSeed {
    type Value = Option<String>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an output's data object")
    }
    fn visit_none<E: de::Error>(self) -> Result<Option<String>, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Option<String>, E> {
        Ok(None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<String>, D::Error> {
        d.deserialize_map(self)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<String>, A::Error> {
        let mut plain = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "text/plain" {
                plain = optional_text(&mut map)?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(plain)
    }
}

/// `null` gives `false`; anything else is read by the inner seed and gives `true`.
struct OptionalSeed<S>(S);

impl<'de, S: DeserializeSeed<'de, Value = ()>> DeserializeSeed<'de> for OptionalSeed<S> {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de, S: DeserializeSeed<'de, Value = ()>> Visitor<'de> for OptionalSeed<S> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string, a list of strings or null")
    }
    fn visit_none<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        self.0.deserialize(d).map(|()| true)
    }
}

/// nbformat's multiline string (one string, or a list of lines with their breaks),
/// appended to a buffer: the lines are never kept one by one.
struct MultiTextSeed<'s>(&'s mut String);

impl<'de> DeserializeSeed<'de> for MultiTextSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for MultiTextSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string or a list of strings")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.0.push_str(v);
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(AppendStr(&mut *self.0))?.is_some() {}
        Ok(())
    }
}

/// One string of a list, appended.
struct AppendStr<'s>(&'s mut String);

impl<'de> DeserializeSeed<'de> for AppendStr<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for AppendStr<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.0.push_str(v);
        Ok(())
    }
}
