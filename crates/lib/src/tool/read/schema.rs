//! The `lisp-read-file` tool's published definition: its description and the JSON
//! schemas of its arguments and result, beside the request and result types they describe
//! (`ReadRequest`, `ReadResult`). The defaults are not written here: a surface inserts
//! them from `ReadRequest::new`, so that each has one source (docs/decisions.md).

/// One line for `lisp-read-file`; the compatibility tools keep their published words verbatim.
pub const DESCRIPTION: &str = "Read before you edit: a collapsed outline of a Common Lisp file (one line per definition, with its line number); expand the definitions you need verbatim with name_pattern or content_pattern; other text files give raw lines or grep with context; PDF, DOCX and Jupyter notebook files give their text (pages, paragraphs, cells; a Common Lisp notebook is outlined like a Lisp file). A directory or an .asd file gives the project map: the outline of every Lisp file under ==> PATH <== headers, in ASDF load order, with patterns across files.";

pub const INPUT_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "description": "File to read, or a directory or .asd file for the project map: relative to the first root, or absolute inside a root."},
    "collapsed": {"type": "boolean", "description": "Collapsed view for Lisp files (one line per top-level form); false gives raw lines."},
    "name_pattern": {"type": "string", "description": "Rust regex or literal text, case-insensitive: expand, verbatim, the definitions whose name matches the regex or contains the text (methods also as NAME QUALIFIERS (SPECIALIZERS), typed as printed: area :around (shape))."},
    "content_pattern": {"type": "string", "description": "Rust regex or literal text, case-sensitive: expand the forms whose text matches the regex or contains the text (e.g. (handler-case); for a non-Lisp file, grep with context_lines around matches."},
    "matches_only": {"type": "boolean", "description": "With name_pattern or content_pattern: show only the matching forms (verbatim, with their line numbers and the file's in-package), not the outline around them: the way to read one definition."},
    "offset": {"type": "integer", "minimum": 0, "description": "0-based first line (a cut view's footer names the offset that continues it)."},
    "limit": {"type": "integer", "minimum": 1, "description": "Maximum lines returned."},
    "comments": {"type": "string", "enum": ["none", "headers", "preceding", "all"], "description": "Top-level comments in the collapsed view: none, section headers (;;; lines), the block above each form, or all."},
    "kinds": {"type": "array", "items": {"type": "string"}, "description": "Collapsed view: show only the top-level forms (and container children) whose operator is one of these, case-insensitive, package prefix ignored (e.g. [\"defmethod\"]); the others are counted in a note."},
    "features": {"type": "array", "items": {"type": "string"}, "description": "Collapsed view: the features present (e.g. [\"sbcl\", \"x86-64\", \"unix\"]); forms that #+/#- exclude under them are hidden and counted in a note (undecidable expressions keep the form)."},
    "context_lines": {"type": "integer", "minimum": 0, "description": "Lines of context around matches in the text-filtered (grep) view."},
    "before_context": {"type": "integer", "minimum": 0, "description": "Grep of a text file: lines of context before each match (as grep -B); with after_context, replaces context_lines (a side not given has none)."},
    "after_context": {"type": "integer", "minimum": 0, "description": "Grep of a text file: lines of context after each match (as grep -A); with before_context, replaces context_lines."},
    "max_count": {"type": "integer", "minimum": 1, "description": "Grep of a text file: stop after this many matching lines (as grep -m); the answer is then complete, meta.stopped_at_max_count says so."},
    "line_numbers": {"type": "boolean", "description": "Prefix raw lines with their numbers (N: )."},
    "strategy": {
      "type": "object",
      "description": "How much of the file to read. default: the views of this tool (collapsed outline, raw lines, grep, project map), paged by offset/limit. complete: the whole text verbatim, up to the size cap. byteRange: bytes start..end (end exclusive, optional), verbatim, cut to UTF-8 character boundaries. lineRange: lines startLine..endLine (1-based, inclusive; endLine optional; at most limit lines). byteRange and lineRange read files of any size.",
      "anyOf": [
        {"properties": {"type": {"const": "default"}}, "required": ["type"], "additionalProperties": false},
        {"properties": {"type": {"const": "complete"}}, "required": ["type"], "additionalProperties": false},
        {"properties": {"type": {"const": "byteRange"}, "start": {"type": "integer", "minimum": 0}, "end": {"type": "integer", "minimum": 0}}, "required": ["type", "start"], "additionalProperties": false},
        {"properties": {"type": {"const": "lineRange"}, "startLine": {"type": "integer", "minimum": 1}, "endLine": {"type": "integer", "minimum": 1}}, "required": ["type", "startLine"], "additionalProperties": false}
      ]
    },
    "include_metadata": {"type": "boolean", "description": "Add the file's size, modification time, owner and permissions (metadata)."},
    "detail": {"type": "string", "enum": ["full", "no-docstrings", "names", "counts"], "description": "Collapsed outline without patterns: how much each definition shows. names: one line per definition (LINE: OPERATOR NAME), the cheapest outline of a file; counts (maps only): each file's number of definitions, one N PATH line per file. A map starts its budget at this step."}
  },
  "required": ["path"],
  "additionalProperties": false
}"#;

pub const OUTPUT_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Relative to its root."},
    "mode": {"type": "string", "enum": ["lisp-collapsed", "raw", "text-filtered", "project"]},
    "meta": {
      "type": "object",
      "properties": {
        "total_forms": {"type": "integer", "minimum": 0},
        "expanded_forms": {"type": "integer", "minimum": 0},
        "truncated": {"type": "boolean"},
        "next_offset": {"type": ["integer", "null"], "minimum": 0},
        "total_lines": {"type": ["integer", "null"], "minimum": 0, "description": "Lines in the file; null when not counted (byteRange, or a whole-file view of a file over the size cap)."},
        "byte_length": {"type": "integer", "minimum": 0},
        "mtime_ms": {"type": "integer", "minimum": 0},
        "diagnostics": {
          "type": "array",
          "items": {
            "type": "object",
            "properties": {
              "kind": {"type": "string", "enum": ["unclosed", "unterminated_string", "unterminated_comment", "unterminated_escape", "stray", "missing_datum", "bare_hash", "unreadable"]},
              "offset": {"type": "integer", "minimum": 0},
              "line": {"type": "integer", "minimum": 1},
              "column": {"type": "integer", "minimum": 1},
              "recovered_line": {"type": ["integer", "null"]},
              "message": {"type": "string"}
            },
            "required": ["kind", "offset", "line", "message"]
          }
        },
        "diagnostics_omitted": {"type": "integer", "minimum": 1},
        "fallback_encoding": {"type": "string", "enum": ["replace"]},
        "applied_strategy": {
          "type": "object",
          "description": "The strategy as applied: a byte range as cut to character boundaries and the size cap, a line range as returned.",
          "anyOf": [
            {"properties": {"type": {"const": "default"}}, "required": ["type"], "additionalProperties": false},
            {"properties": {"type": {"const": "complete"}}, "required": ["type"], "additionalProperties": false},
            {"properties": {"type": {"const": "byteRange"}, "start": {"type": "integer", "minimum": 0}, "end": {"type": "integer", "minimum": 0}}, "required": ["type", "start", "end"], "additionalProperties": false},
            {"properties": {"type": {"const": "lineRange"}, "startLine": {"type": "integer", "minimum": 1}, "endLine": {"type": "integer", "minimum": 1}}, "required": ["type", "startLine"], "additionalProperties": false}
          ]
        },
        "remaining_bytes": {"type": "integer", "minimum": 0, "description": "Bytes of the file after what was returned (complete, byteRange)."},
        "remaining_lines": {"type": "integer", "minimum": 0, "description": "Lines of the file after what was returned (raw views, lineRange)."},
        "cut_lines": {
          "type": "array",
          "description": "Lines cut at 2,000 characters: the bytes start..end hold the rest (strategy byteRange reads them).",
          "items": {
            "type": "object",
            "properties": {
              "line": {"type": "integer", "minimum": 1},
              "start": {"type": "integer", "minimum": 0},
              "end": {"type": "integer", "minimum": 0}
            },
            "required": ["line", "start", "end"],
            "additionalProperties": false
          }
        },
        "stopped_at_max_count": {"type": "integer", "minimum": 1, "description": "The grep of a text file stopped after this many matching lines (max_count): the answer is complete for the request; lines after it were not searched."},
        "document": {
          "type": "object",
          "description": "The file is a document (PDF, DOCX, Jupyter notebook): the view shows its extracted text, and byte_length, lines and ranges count that text.",
          "properties": {
            "format": {"type": "string", "enum": ["pdf", "docx", "ipynb"]},
            "pages": {"type": "integer", "minimum": 0, "description": "PDF: pages in the document."},
            "cells": {"type": "integer", "minimum": 0, "description": "Notebook: cells in the notebook."},
            "language": {"type": "string", "description": "Notebook: the kernel's language; a Common Lisp kernel's cells are read as Lisp."},
            "truncated": {"type": "boolean", "description": "The text was cut by a document limit (pages, text size); its last line says which."}
          },
          "required": ["format"],
          "additionalProperties": false
        }
      },
      "required": ["total_forms", "expanded_forms", "truncated", "next_offset", "total_lines", "byte_length", "mtime_ms", "diagnostics", "applied_strategy"],
      "additionalProperties": false
    },
    "files": {
      "type": "array",
      "description": "Project map: its files in map order, with the map lines each takes and its top-level forms.",
      "items": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "lines": {"type": "integer", "minimum": 0}, "forms": {"type": "integer", "minimum": 0}},
        "required": ["path", "lines", "forms"],
        "additionalProperties": false
      }
    },
    "files_skipped": {
      "type": "array",
      "description": "Project map: the files it could not show, with the error code and message of the refusal.",
      "items": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "code": {"type": "string"}, "message": {"type": "string"}},
        "required": ["path", "code", "message"],
        "additionalProperties": false
      }
    },
    "step": {"type": "string", "enum": ["full", "no-docstrings", "names", "counts", "matches"], "description": "Project map: how much of each file is shown (the first step whose whole map fits the budget)."},
    "metadata": {
      "type": "object",
      "description": "Only with include_metadata: what the file system says about the file.",
      "properties": {
        "size": {"type": "integer", "minimum": 0},
        "mtime_ms": {"type": "integer", "minimum": 0},
        "owner_uid": {"type": "integer", "minimum": 0},
        "owner_gid": {"type": "integer", "minimum": 0},
        "mode": {"type": "integer", "minimum": 0, "description": "Permission bits (420 is 0o644)."},
        "permissions": {"type": "string", "description": "As ls -l shows them: rw-r--r--."}
      },
      "required": ["size", "mtime_ms", "owner_uid", "owner_gid", "mode", "permissions"],
      "additionalProperties": false
    }
  },
  "required": ["path", "mode", "meta"],
  "additionalProperties": false
}"#;
