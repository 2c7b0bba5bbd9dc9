//! DOCX text: `word/document.xml` read with quick-xml as a stream of events. Paragraphs are
//! lines; a heading is marked `#` by its level (`## Reading` for Heading 2, `#` for
//! Title), a list item `- ` (indented two spaces per level); a table row is one line with
//! ` | ` between its cells. `word/styles.xml`, when present, names the heading styles
//! (by their `heading N` name or outline level, so localized style ids work too).
//!
//! Headers, footers, footnotes, comments and deleted text are not read.

use super::zip_limits::Archive;
use super::{Budget, DocumentInfo, Extracted, Format, Text};
use crate::error::ToolError;
use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};
use std::collections::HashMap;

/// The clock is looked at once per this many XML events.
const EVENTS_PER_CHECK: u32 = 4096;

pub(super) fn extract(bytes: &[u8], budget: &Budget) -> Result<Extracted, ToolError> {
    let mut archive = Archive::open(bytes, "DOCX", budget)?;
    let document = archive.read("word/document.xml", budget)?.ok_or_else(|| {
        budget.refuse("it has no word/document.xml, so it is not a Word document")
    })?;
    let headings = match archive.read("word/styles.xml", budget)? {
        Some(styles) => heading_styles(&styles, budget)?,
        None => HashMap::new(),
    };
    let mut walker = Walker::new(&headings, budget.limits.max_text_bytes);
    each_event(&document, "word/document.xml", budget, |event| {
        walker.event(event)
    })?;
    Ok(Extracted {
        lisp: false,
        info: DocumentInfo {
            format: Format::Docx,
            pages: None,
            cells: None,
            language: None,
            truncated: walker.text.truncated,
        },
        text: walker.text.out,
    })
}

/// Calls `f` on every event of the XML `bytes` until it returns `false` or the end.
fn each_event(
    bytes: &[u8],
    name: &str,
    budget: &Budget,
    mut f: impl FnMut(&Event) -> bool,
) -> Result<(), ToolError> {
    let mut reader = Reader::from_reader(bytes);
    let mut buf = Vec::new();
    let mut count = 0u32;
    loop {
        count = count.wrapping_add(1);
        if count.is_multiple_of(EVENTS_PER_CHECK) {
            budget.check()?;
        }
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| budget.refuse(format!("its {name} is not well-formed XML ({e})")))?;
        if matches!(event, Event::Eof) || !f(&event) {
            return Ok(());
        }
        buf.clear();
    }
}

/// The value of the attribute `w:val` (any prefix) of `e`.
fn val(e: &BytesStart) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == "val")
        .and_then(|a| {
            a.normalized_value(XmlVersion::Implicit1_0)
                .ok()
                .map(|v| v.into_owned())
        })
}

/// Heading level of a style, by its name: `heading 1`..`heading 9`, `Title` (1).
fn level_of_name(name: &str) -> Option<usize> {
    let name = name.trim().to_ascii_lowercase();
    if name == "title" {
        return Some(1);
    }
    let n: usize = name.strip_prefix("heading")?.trim().parse().ok()?;
    (1..=9).contains(&n).then_some(n)
}

/// What a paragraph style makes of its paragraphs: a heading of a level, a list item.
#[derive(Clone, Copy, Default)]
struct Style {
    level: Option<usize>,
    list: bool,
}

/// Style id → what the style makes, from `word/styles.xml`.
fn heading_styles(styles: &[u8], budget: &Budget) -> Result<HashMap<String, Style>, ToolError> {
    let mut map: HashMap<String, Style> = HashMap::new();
    let mut id: Option<String> = None;
    each_event(styles, "word/styles.xml", budget, |event| {
        match event {
            Event::Start(e) | Event::Empty(e) => match e.local_name().as_ref() {
                "style" => {
                    id = e
                        .attributes()
                        .flatten()
                        .find(|a| a.key.local_name().as_ref() == "styleId")
                        .and_then(|a| {
                            a.normalized_value(XmlVersion::Implicit1_0)
                                .ok()
                                .map(|v| v.into_owned())
                        });
                }
                "name" => {
                    if let (Some(id), Some(name)) = (&id, val(e)) {
                        let style = map.entry(id.clone()).or_default();
                        style.level = style.level.or(level_of_name(&name));
                        style.list |= name.to_ascii_lowercase().starts_with("list");
                    }
                }
                "outlineLvl" => {
                    let level = val(e).and_then(|v| v.parse::<usize>().ok());
                    if let (Some(id), Some(level)) = (&id, level.filter(|&l| l < 9)) {
                        map.entry(id.clone()).or_default().level = Some(level + 1);
                    }
                }
                "numPr" => {
                    if let Some(id) = &id {
                        map.entry(id.clone()).or_default().list = true;
                    }
                }
                _ => {}
            },
            Event::End(e) if e.local_name().as_ref() == "style" => id = None,
            _ => {}
        }
        true
    })?;
    Ok(map)
}

/// A table being read: the cells of its current row, the text of its current cell.
#[derive(Default)]
struct Table {
    row: Vec<String>,
    cell: String,
}

/// The state of a walk through `word/document.xml`.
struct Walker<'a> {
    headings: &'a HashMap<String, Style>,
    text: Text,
    para: String,
    level: Option<usize>,
    list: Option<usize>,
    in_text: bool,
    /// Inside `w:pPr`, whose `w:tab` elements are tab stops, not tabs.
    in_props: bool,
    tables: Vec<Table>,
}

impl<'a> Walker<'a> {
    fn new(headings: &'a HashMap<String, Style>, cap: usize) -> Walker<'a> {
        Walker {
            headings,
            text: Text::new(cap),
            para: String::new(),
            level: None,
            list: None,
            in_text: false,
            in_props: false,
            tables: Vec::new(),
        }
    }

    /// One event; `false` once the text is full.
    fn event(&mut self, event: &Event) -> bool {
        match event {
            Event::Start(e) => self.start(e),
            Event::Empty(e) => {
                self.start(e);
                self.end(e.local_name().as_ref());
            }
            Event::End(e) => self.end(e.local_name().as_ref()),
            Event::Text(t) if self.in_text => self.para.push_str(&t.xml10_content()),
            Event::CData(t) if self.in_text => self.para.push_str(t.as_ref()),
            Event::GeneralRef(r) if self.in_text => {
                if let Ok(Some(c)) = r.resolve_char_ref() {
                    self.para.push(c);
                } else if let Some(c) = predefined(&r.xml10_content()) {
                    self.para.push(c);
                }
            }
            _ => {}
        }
        !self.text.truncated
    }

    fn start(&mut self, e: &BytesStart) {
        match e.local_name().as_ref() {
            "p" => {
                self.para.clear();
                self.level = None;
                self.list = None;
            }
            "pStyle" => {
                if let Some(id) = val(e) {
                    let style = self.headings.get(&id).copied().unwrap_or_default();
                    // Without styles.xml: the ids Word and python-docx give them.
                    self.level = style.level.or_else(|| {
                        level_of_name(&id.to_ascii_lowercase().replace("heading", "heading "))
                    });
                    if style.list {
                        self.list = Some(self.list.unwrap_or(0));
                    }
                }
            }
            "outlineLvl" => {
                if let Some(level) = val(e).and_then(|v| v.parse::<usize>().ok()) {
                    self.level = (level < 9).then_some(level + 1);
                }
            }
            "numPr" => self.list = Some(self.list.unwrap_or(0)),
            "ilvl" => self.list = val(e).and_then(|v| v.parse().ok()).map(|l: usize| l.min(8)),
            "pPr" => self.in_props = true,
            "t" => self.in_text = true,
            "tab" if !self.in_props => self.para.push('\t'),
            "br" | "cr" => self.para.push('\n'),
            "tbl" => self.tables.push(Table::default()),
            "tc" => {
                if let Some(t) = self.tables.last_mut() {
                    t.cell.clear();
                }
            }
            _ => {}
        }
    }

    fn end(&mut self, name: &str) {
        match name {
            "t" => self.in_text = false,
            "pPr" => self.in_props = false,
            "p" => self.end_paragraph(),
            "tc" => {
                if let Some(t) = self.tables.last_mut() {
                    let cell = std::mem::take(&mut t.cell);
                    t.row.push(cell);
                }
            }
            "tr" => {
                if let Some(t) = self.tables.last_mut() {
                    let line = std::mem::take(&mut t.row).join(" | ");
                    self.put(&line, true);
                }
            }
            "tbl" => {
                self.tables.pop();
            }
            _ => {}
        }
    }

    fn end_paragraph(&mut self) {
        let para = std::mem::take(&mut self.para);
        if !self.tables.is_empty() {
            self.put(&para, false);
            return;
        }
        let prefix = match (self.level, self.list) {
            (Some(level), _) => format!("{} ", "#".repeat(level)),
            (None, Some(indent)) => format!("{}- ", "  ".repeat(indent)),
            (None, None) => String::new(),
        };
        let mut lines = para.split('\n');
        let first = lines.next().unwrap_or_default();
        if self.text.line(&format!("{prefix}{first}")) {
            for line in lines {
                if !self.text.line(line) {
                    break;
                }
            }
        }
    }

    /// Text inside a table goes to the innermost cell; a row of a nested table is one
    /// piece of its outer cell (`row` is set when `text` is a whole row: it ends the
    /// current table's row and goes to the table around it).
    fn put(&mut self, text: &str, row: bool) {
        let depth = self.tables.len();
        let target = if row {
            depth.checked_sub(2)
        } else {
            depth.checked_sub(1)
        };
        match target.and_then(|i| self.tables.get_mut(i)) {
            Some(table) => {
                let text = text.replace('\n', " ");
                let text = text.trim();
                if !text.is_empty() {
                    if !table.cell.is_empty() {
                        table.cell.push_str(if row { "; " } else { " " });
                    }
                    table.cell.push_str(text);
                }
            }
            None => {
                for line in text.split('\n') {
                    if !self.text.line(line) {
                        break;
                    }
                }
            }
        }
    }
}

/// The character of one of XML's five predefined entities.
fn predefined(name: &str) -> Option<char> {
    match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        _ => None,
    }
}
