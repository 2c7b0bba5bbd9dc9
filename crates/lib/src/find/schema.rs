//! The `lisp-find` tool's published definition: its description and the JSON schemas of
//! its arguments and result, beside the request and result types they describe
//! (`FindRequest`, `FindResult`). The default `limit` is inserted by the surface from
//! [`super::DEFAULT_LIMIT`].

/// `lisp-find`: what it does and the rules a caller needs.
pub const DESCRIPTION: &str = "Find across a Common Lisp project without evaluating it: definitions by exact name (name) or by name regex/text (name_pattern), with file, line, kind and signature (include_body: the verbatim source; a defpackage's entry lists its exports: the cheap answer to what a package exports), names a form makes without spelling them included (a defstruct's constructor, copier, predicate and accessors, a class slot's accessor/reader/writer, a defgeneric's :method options: kind says which, form the form that makes it; and the definitions a call of the project's own definer macro makes, its template instantiated without evaluating anything: via names the macro); or every use of a symbol (symbol) as a token, case-insensitive, with or without package prefix, #'foo and 'foo included, never inside strings or comments, grouped by enclosing form (a top-level form, or the child forms of a container that hold all its uses) with the lines of the uses (detail: names for only the forms' kinds and names, the cheap answer to which definitions use it); or the forms that mention a literal text (text), strings and comments included, each with the lines that hold it: the cheap way to ask which definitions mention T; or the definitions that call a symbol (callers: operator position, #'foo, (function foo), (funcall 'foo ...), (apply 'foo ...); not a variable of that name, not quoted data, not a local flet/labels function of that name; methods one by one with qualifiers and specializers; with the lines of the calls); or what the definitions named NAME call (callees: the definitions of the scope they call with file and line, and apart the names called that the scope does not define, Common Lisp's own left out). Every definition and use carries its symbol's home package (package), resolved as the reader would from the scope's defpackage and in-package forms; pkg:sym asks for that symbol only. path: a file, a directory (its Lisp files, recursively) or an .asd file; default the first root. Paged like lisp-read-file: offset counts entries, limit counts lines.";

pub const INPUT_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "default": ".", "description": "A file, a directory (its .lisp/.lsp/.cl/.asd/.ros files, recursively, .gitignore honoured) or an .asd file (its directory). Relative to the first root, or absolute inside a root."},
    "name": {"type": "string", "minLength": 1, "description": "Definitions named exactly this: case-insensitive; with a package prefix (cl-ppcre:scan, through nicknames) only the definitions of that symbol, without one those of every package, grouped by package; (setf foo) names a setf function. Give exactly one of name, name_pattern, symbol, text, callers, callees."},
    "name_pattern": {"type": "string", "minLength": 1, "description": "Definitions whose name matches this Rust regex or contains this text, case-insensitive (methods also as NAME QUALIFIERS (SPECIALIZERS)), as lisp-read-file's name_pattern."},
    "symbol": {"type": "string", "minLength": 1, "description": "List the uses of this symbol: every token that is the symbol (case-insensitive; pkg:foo, pkg::foo, #'foo, 'foo, `foo, ,foo, :foo and #:foo included; with a package prefix here, cl-ppcre:scan, only the uses that the reader would read as that symbol (nicknames, local nicknames, :use, :import-from resolved from the scope's defpackage forms and each form's in-package; packages defined outside the scope matched by name); without one, the uses of every package, grouped by package), never inside strings, comments, #|...|# or #+/#- feature expressions, grouped by enclosing form (the top-level form, or the child forms of a progn/eval-when that hold all its uses); forms that define it are marked definition: true."},
    "text": {"type": "string", "minLength": 1, "description": "List the forms whose source text contains this literal text (case-sensitive; strings, comments and docstrings inside the form included; top-level comments between forms are not forms), each with its line and the lines holding the text; the result is in references mode with definition: false."},
    "callers": {"type": "string", "minLength": 1, "description": "List the definitions whose code calls this symbol as a function (operator position, #'foo, (function foo), funcall/apply of 'foo; a setf of (foo ...) is a call of (setf foo)), matched by name as symbol is; a local flet/labels/macrolet function of the same name is not it. Each with the lines of its calls; methods one by one."},
    "callees": {"type": "string", "minLength": 1, "description": "For the definitions named this (as name matches), list the definitions of the scope their code calls (with file and line) and, apart, the names called that the scope does not define (Common Lisp's own operators left out). Searches every file of the scope."},
    "kinds": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": "Only definitions with these operators (e.g. [\"defun\", \"defmacro\"]); with symbol, only uses inside top-level forms with these operators; with callers, only callers with these operators; with callees, only definitions named NAME with these operators. Case-insensitive, package prefix ignored."},
    "features": {"type": "array", "items": {"type": "string"}, "description": "Leave out definitions and uses that #+/#- excludes under these features, e.g. [\"sbcl\", \"x86-64\", \"unix\"]."},
    "include_body": {"type": "boolean", "default": false, "description": "Definitions: add each definition's verbatim source text (body, and numbered lines in content)."},
    "detail": {"type": "string", "enum": ["names"], "description": "names: each entry in content as LINE: KIND NAME only (methods with their specializers), without signatures, use or call lines: the cheap answer to which definitions use (symbol) or call (callers) a symbol. Not with callees. The structured result is the same."},
    "offset": {"type": "integer", "minimum": 0, "default": 0, "description": "The first entry to return, 0-based (a cut result's footer and next_offset name it)."},
    "limit": {"type": "integer", "minimum": 1, "description": "Most lines of content per page: file headers, entry lines, body and use lines; the first entry is always returned whole."}
  },
  "additionalProperties": false
}"#;

pub const OUTPUT_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The scope searched, as given."},
    "mode": {"type": "string", "enum": ["definitions", "references", "callers", "callees"]},
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
          "exports": {"type": "array", "items": {"type": "string"}, "description": "Only for a defpackage (or define-package): its exported names, lowercase, in order."},
          "body": {"type": "string", "description": "Only with include_body: the verbatim source (of the form that makes a derived definition)."},
          "via": {"type": "string", "description": "Only for a definition a project's own definer macro makes (its call instantiated): the macro, lowercased; form is the call."},
          "form": {
            "type": "object",
            "description": "Only for a derived definition (line is then its slot's or option's) or one a project's macro makes (via): the form that makes it.",
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
      "description": "References mode: this page's forms that use the symbol (or hold the text), by file then line.",
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
    "callers": {
      "type": "array",
      "description": "Callers mode: this page's definitions whose code calls the symbol (a top-level form that defines nothing: name null), by file then line.",
      "items": {
        "type": "object",
        "properties": {
          "file": {"type": "string"},
          "line": {"type": "integer", "minimum": 1},
          "end_line": {"type": "integer", "minimum": 1},
          "kind": {"type": "string", "description": "The operator as written, lowercased."},
          "name": {"type": ["string", "null"], "description": "As the outline prints it (methods: NAME QUALIFIERS (SPECIALIZERS))."},
          "qualifiers": {"type": "array", "items": {"type": "string"}, "description": "Methods: the qualifiers as written."},
          "specializers": {"type": "array", "items": {"type": "string"}, "description": "Methods: the specializer of each required parameter."},
          "signature": {"type": "string"},
          "calls": {"type": "array", "description": "Each call: where its operator (or quoted symbol) starts.", "items": {
              "type": "object",
              "properties": {
                "line": {"type": "integer", "minimum": 1},
                "column": {"type": "integer", "minimum": 0},
                "text": {"type": "string", "description": "The line, cut at 200 characters."},
                "through": {"type": "string", "description": "Only for a call a project's own macro writes: the macro, lowercased; the call is the macro call, whose expansion (its template instantiated without evaluating anything) calls the symbol."}
              },
              "required": ["line", "column", "text"],
              "additionalProperties": false
            }},
          "package": {"type": ["string", "null"], "description": "The home package of the called symbol (lowercase; null when none is known); a definition calling the symbols of two packages by that name is two entries."},
          "package_unresolved": {"type": "boolean", "description": "True when that package is defined outside the searched scope (or may be)."}
        },
        "required": ["file", "line", "end_line", "kind", "name", "signature", "calls", "package"],
        "additionalProperties": false
      }
    },
    "callees": {
      "type": "array",
      "description": "Callees mode: this page's definitions named NAME, each with what its code calls.",
      "items": {
        "type": "object",
        "properties": {
          "file": {"type": "string"},
          "line": {"type": "integer", "minimum": 1},
          "end_line": {"type": "integer", "minimum": 1},
          "kind": {"type": "string"},
          "name": {"type": "string"},
          "qualifiers": {"type": "array", "items": {"type": "string"}},
          "specializers": {"type": "array", "items": {"type": "string"}},
          "signature": {"type": "string"},
          "callees": {
            "type": "array",
            "description": "The definitions of the scope it calls, in the order of their first call.",
            "items": {
              "type": "object",
              "properties": {
                "name": {"type": "string", "description": "As first written in the caller; (setf foo) for a setf of a (foo ...) place."},
                "calls": {"type": "array", "items": {
              "type": "object",
              "properties": {
                "line": {"type": "integer", "minimum": 1},
                "column": {"type": "integer", "minimum": 0},
                "text": {"type": "string", "description": "The line, cut at 200 characters."}
              },
              "required": ["line", "column", "text"],
              "additionalProperties": false
            }},
                "definitions": {
                  "type": "array",
                  "description": "Where it is defined in the scope (at most 256).",
                  "items": {
                    "type": "object",
                    "properties": {
                      "file": {"type": "string"},
                      "line": {"type": "integer", "minimum": 1},
                      "kind": {"type": "string", "description": "The operator, or the derived kind (accessor, constructor, ...)."},
                      "name": {"type": "string"}
                    },
                    "required": ["file", "line", "kind", "name"],
                    "additionalProperties": false
                  }
                }
              },
              "required": ["name", "calls", "definitions"],
              "additionalProperties": false
            }
          },
          "outside": {"type": "array", "items": {"type": "string"}, "description": "Names it calls that the scope does not define, as first written (Common Lisp's own left out)."}
        },
        "required": ["file", "line", "end_line", "kind", "name", "signature", "callees", "outside"],
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
    "stopped_at_budget": {"type": "boolean", "description": "The search stopped at its collection budget (200000 entries and uses): later forms or files were not searched and total counts only what was collected; content says where it stopped."},
    "learning_stopped_at": {"type": "string", "description": "Only when learning the scope's macros stopped at its bound (1048576 value nodes): the file where it stopped; definitions and calls that macros of it and of later files make may be missing."},
    "truncated": {"type": "boolean"},
    "next_offset": {"type": ["integer", "null"], "minimum": 0}
  },
  "required": ["path", "mode", "files_searched", "files_skipped", "total", "stopped_at_budget", "truncated", "next_offset"],
  "additionalProperties": false
}"#;
