//! The `lisp-find` tool's published definition: its description and the JSON schemas of
//! its arguments and result, beside the request and result types they describe
//! (`FindRequest`, `FindResult`). The default `limit` is inserted by the surface from
//! [`super::DEFAULT_LIMIT`].

/// `lisp-find`: what it does and the rules a caller needs.
pub const DESCRIPTION: &str = "Find across a Common Lisp project without evaluating it: definitions by exact name (name) or by name regex/text (name_pattern), with file, line, kind and signature (include_body: the verbatim source), names a form makes without spelling them included (a defstruct's constructor, copier, predicate and accessors, a class slot's accessor/reader/writer, a defgeneric's :method options: kind says which, form the form that makes it); or every use of a symbol (symbol) as a token, case-insensitive, with or without package prefix, #'foo and 'foo included, never inside strings or comments, grouped by enclosing top-level form with the lines of the uses. Every entry carries its symbol's home package (package), resolved as the reader would from the scope's defpackage and in-package forms; pkg:sym asks for that symbol only. path: a file, a directory (its Lisp files, recursively) or an .asd file; default the first root. Paged like lisp-read-file: offset counts entries, limit counts lines.";

pub const INPUT_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "default": ".", "description": "A file, a directory (its .lisp/.lsp/.cl/.asd/.ros files, recursively, .gitignore honoured) or an .asd file (its directory). Relative to the first root, or absolute inside a root."},
    "name": {"type": "string", "minLength": 1, "description": "Definitions named exactly this: case-insensitive; with a package prefix (cl-ppcre:scan, through nicknames) only the definitions of that symbol, without one those of every package, grouped by package; (setf foo) names a setf function. Give exactly one of name, name_pattern, symbol."},
    "name_pattern": {"type": "string", "minLength": 1, "description": "Definitions whose name matches this Rust regex or contains this text, case-insensitive (methods also as NAME QUALIFIERS (SPECIALIZERS)), as lisp-read-file's name_pattern."},
    "symbol": {"type": "string", "minLength": 1, "description": "List the uses of this symbol: every token that is the symbol (case-insensitive; pkg:foo, pkg::foo, #'foo, 'foo, `foo, ,foo, :foo and #:foo included; with a package prefix here, cl-ppcre:scan, only the uses that the reader would read as that symbol (nicknames, local nicknames, :use, :import-from resolved from the scope's defpackage forms and each form's in-package; packages defined outside the scope matched by name); without one, the uses of every package, grouped by package), never inside strings, comments, #|...|# or #+/#- feature expressions, grouped by enclosing top-level form; forms that define it are marked definition: true."},
    "kinds": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "Only definitions with these operators (e.g. [\"defun\", \"defmacro\"]); with symbol, only uses inside top-level forms with these operators. Case-insensitive, package prefix ignored."},
    "features": {"type": "array", "items": {"type": "string"}, "description": "Leave out definitions and uses that #+/#- excludes under these features, e.g. [\"sbcl\", \"x86-64\", \"unix\"]."},
    "include_body": {"type": "boolean", "default": false, "description": "Definitions: add each definition's verbatim source text (body, and numbered lines in content)."},
    "offset": {"type": "integer", "minimum": 0, "default": 0, "description": "The first entry to return, 0-based (a cut result's footer and next_offset name it)."},
    "limit": {"type": "integer", "minimum": 1, "description": "Most lines of content per page: file headers, entry lines, body and use lines; the first entry is always returned whole."}
  },
  "additionalProperties": false
}"#;

pub const OUTPUT_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The scope searched, as given."},
    "mode": {"type": "string", "enum": ["definitions", "references"]},
    "definitions": {
      "type": "array",
      "description": "Definitions mode: this page's entries, by file then line.",
      "items": {
        "type": "object",
        "properties": {
          "file": {"type": "string"},
          "line": {"type": "integer", "minimum": 1},
          "end_line": {"type": "integer", "minimum": 1},
          "column": {"type": "integer", "minimum": 0},
          "kind": {"type": "string", "description": "The operator as written, lowercased; for a derived definition its kind: constructor, copier, predicate, accessor, setf-accessor, reader, writer, method, setf-expander, package, nickname."},
          "name": {"type": "string", "description": "As the outline prints it (methods: NAME QUALIFIERS (SPECIALIZERS))."},
          "signature": {"type": "string", "description": "The collapsed signature of the form (for a derived definition, of the form that makes it)."},
          "package": {"type": ["string", "null"], "description": "The home package of the symbol, lowercase (cl-ppcre, common-lisp, keyword), as the reader would intern it from the scope's defpackage forms and the in-package before the form (common-lisp-user without one); null for #:foo and a package's own name."},
          "package_unresolved": {"type": "boolean", "description": "Only when true: a package on the way is defined outside the scope; matched by name."},
          "body": {"type": "string", "description": "Only with include_body: the verbatim source (of the form that makes a derived definition)."},
          "form": {
            "type": "object",
            "description": "Only for a derived definition (line is then its slot's or option's): the form that makes it.",
            "properties": {
              "line": {"type": "integer", "minimum": 1},
              "end_line": {"type": "integer", "minimum": 1},
              "kind": {"type": "string", "description": "Its operator as written, lowercased."},
              "name": {"type": "string"}
            },
            "required": ["line", "end_line", "kind", "name"],
            "additionalProperties": false
          }
        },
        "required": ["file", "line", "end_line", "column", "kind", "name", "signature", "package"],
        "additionalProperties": false
      }
    },
    "references": {
      "type": "array",
      "description": "References mode: this page's top-level forms that use the symbol, by file then line.",
      "items": {
        "type": "object",
        "properties": {
          "file": {"type": "string"},
          "line": {"type": "integer", "minimum": 1},
          "end_line": {"type": "integer", "minimum": 1},
          "kind": {"type": "string", "description": "The form's operator as written, lowercased; empty when it has none."},
          "name": {"type": ["string", "null"], "description": "What the form defines, if anything."},
          "signature": {"type": "string"},
          "definition": {"type": "boolean", "description": "Whether the form defines the symbol."},
          "package": {"type": ["string", "null"], "description": "The home package of the symbol of these uses (a form using the symbols of two packages is two entries), lowercase (cl-ppcre, common-lisp, keyword), as the reader would intern it from the scope's defpackage forms and the in-package before the form (common-lisp-user without one); null for #:foo and a package's own name."},
          "package_unresolved": {"type": "boolean", "description": "Only when true: a package on the way is defined outside the scope; matched by name."},
          "uses": {
            "type": "array",
            "items": {
              "type": "object",
              "properties": {
                "line": {"type": "integer", "minimum": 1},
                "column": {"type": "integer", "minimum": 0},
                "text": {"type": "string", "description": "The line, cut at 200 characters."}
              },
              "required": ["line", "column", "text"],
              "additionalProperties": false
            }
          }
        },
        "required": ["file", "line", "end_line", "kind", "name", "signature", "definition", "uses", "package"],
        "additionalProperties": false
      }
    },
    "files_searched": {"type": "integer", "minimum": 0},
    "files_skipped": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "file": {"type": "string"},
          "code": {"type": "string"},
          "message": {"type": "string"}
        },
        "required": ["file", "code", "message"],
        "additionalProperties": false
      }
    },
    "total": {"type": "integer", "minimum": 0, "description": "Entries found, all pages."},
    "truncated": {"type": "boolean"},
    "next_offset": {"type": ["integer", "null"], "minimum": 0}
  },
  "required": ["path", "mode", "files_searched", "files_skipped", "total", "truncated", "next_offset"],
  "additionalProperties": false
}"#;
