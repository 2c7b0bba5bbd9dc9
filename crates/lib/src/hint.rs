//! Hints: what a view or a tool tells its caller to do next (continue at an offset, read a
//! form raw, read a window, narrow a map), as data. The library says *what* to pass; the
//! surface that prints the answer says *how* it is typed there: JSON arguments over MCP
//! (the default, [`HintStyle::ARGUMENTS`]), flags on the command line (the CLI gives its
//! own [`HintStyle`]), keyword arguments of the Common Lisp client's functions
//! ([`HintStyle::LISP`], asked for with `hint_style`). So a hint followed literally works
//! where it was printed (docs/tool.md#hints).

use std::fmt;

/// One thing to pass to the same tool to go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hint<'a> {
    /// Continue at 0-based line `offset`.
    Offset(usize),
    /// The raw lines from 0-based line `offset` (`limit` of them when given).
    Raw { offset: usize, limit: Option<usize> },
    /// The raw lines instead of the collapsed view (where the view is named, not opened).
    RawLines,
    /// Strategy `lineRange` from 1-based `start` (at most `limit` lines from there).
    LineRange { start: u64 },
    /// Strategy `byteRange` of `start..end`.
    ByteRange { start: u64, end: u64 },
    /// The rest of a cut line, the bytes `start..end`: the strategy alone, as a long
    /// line's marker names it (docs/views.md#long-lines).
    Rest { start: u64, end: u64 },
    /// Only the forms of these operators.
    Kinds(&'a [&'a str]),
    /// A parameter by its name in the request (`name_pattern`, `limit`, `symbol`...).
    Parameter(&'a str),
    /// Where the refusals of the files a map or a search skipped are listed.
    SkippedFiles,
    /// How to raise the size cap: a flag of the command line, but a server's cap is set
    /// by the user who starts it, never by the model calling its tools.
    SizeCap,
}

/// How a surface spells a [`Hint`].
#[derive(Clone, Copy)]
pub struct HintStyle(pub fn(&Hint) -> String);

impl HintStyle {
    /// JSON arguments, as an MCP client passes them: `offset=10`,
    /// `collapsed=false offset=29 limit=6`, `strategy {"type":"lineRange","startLine":1}`.
    pub const ARGUMENTS: HintStyle = HintStyle(arguments);

    /// Keyword arguments of the Common Lisp client's `read-file` and `lisp-find`
    /// (docs/lisp-client.md): `:offset 10`, `:collapsed nil :offset 29 :limit 6`,
    /// `:strategy '(:line-range 1)`, `:kinds '("defun" "defmacro")`.
    pub const LISP: HintStyle = HintStyle(lisp);

    /// The style a request names (`hint_style`): `arguments` or `lisp`.
    pub fn named(name: &str) -> Option<HintStyle> {
        match name {
            "arguments" => Some(HintStyle::ARGUMENTS),
            "lisp" => Some(HintStyle::LISP),
            _ => None,
        }
    }

    /// The hint as this style spells it.
    pub fn render(&self, hint: &Hint) -> String {
        (self.0)(hint)
    }
}

impl Default for HintStyle {
    fn default() -> Self {
        HintStyle::ARGUMENTS
    }
}

impl fmt::Debug for HintStyle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HintStyle")
    }
}

/// Every style renders the same request: two styles are not a difference in what is asked.
impl PartialEq for HintStyle {
    fn eq(&self, _: &HintStyle) -> bool {
        true
    }
}

impl Eq for HintStyle {}

fn arguments(hint: &Hint) -> String {
    match *hint {
        Hint::Offset(offset) => format!("offset={offset}"),
        Hint::Raw {
            offset,
            limit: Some(limit),
        } => format!("collapsed=false offset={offset} limit={limit}"),
        Hint::Raw {
            offset,
            limit: None,
        } => format!("collapsed=false offset={offset}"),
        Hint::RawLines => "collapsed=false".to_string(),
        Hint::LineRange { start } => {
            format!("strategy {{\"type\":\"lineRange\",\"startLine\":{start}}}")
        }
        Hint::ByteRange { start, end } => {
            format!("strategy {{\"type\":\"byteRange\",\"start\":{start},\"end\":{end}}}")
        }
        Hint::Rest { start, end } => {
            format!("{{\"type\":\"byteRange\",\"start\":{start},\"end\":{end}}}")
        }
        Hint::Kinds(kinds) => {
            let quoted: Vec<String> = kinds.iter().map(|k| format!("\"{k}\"")).collect();
            format!("kinds=[{}]", quoted.join(","))
        }
        Hint::Parameter(name) => name.to_string(),
        Hint::SkippedFiles => "files_skipped".to_string(),
        Hint::SizeCap => {
            "ask the user to restart the server with a larger --max-file-bytes".to_string()
        }
    }
}

/// Keywords as the Lisp client's functions take them: a parameter's `_` is `-`, a list is
/// quoted. The size cap is an argument of the program the client starts, which the
/// calling Lisp program sets (`*extra-arguments*`).
fn lisp(hint: &Hint) -> String {
    match *hint {
        Hint::Offset(offset) => format!(":offset {offset}"),
        Hint::Raw {
            offset,
            limit: Some(limit),
        } => format!(":collapsed nil :offset {offset} :limit {limit}"),
        Hint::Raw {
            offset,
            limit: None,
        } => format!(":collapsed nil :offset {offset}"),
        Hint::RawLines => ":collapsed nil".to_string(),
        Hint::LineRange { start } => format!(":strategy '(:line-range {start})"),
        Hint::ByteRange { start, end } | Hint::Rest { start, end } => {
            format!(":strategy '(:byte-range {start} {end})")
        }
        Hint::Kinds(kinds) => {
            let quoted: Vec<String> = kinds.iter().map(|k| format!("\"{k}\"")).collect();
            format!(":kinds '({})", quoted.join(" "))
        }
        Hint::Parameter(name) => format!(":{}", name.replace('_', "-")),
        Hint::SkippedFiles => ":files-skipped".to_string(),
        Hint::SizeCap => {
            "bind lisp-read-file:*extra-arguments* to (\"--max-file-bytes\" \"BYTES\") for a larger cap"
                .to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_json_values() {
        let s = HintStyle::default();
        assert_eq!(s.render(&Hint::Offset(10)), "offset=10");
        assert_eq!(
            s.render(&Hint::Raw {
                offset: 29,
                limit: Some(6)
            }),
            "collapsed=false offset=29 limit=6"
        );
        assert_eq!(
            s.render(&Hint::Kinds(&["defun", "defmacro"])),
            "kinds=[\"defun\",\"defmacro\"]"
        );
        assert_eq!(
            s.render(&Hint::LineRange { start: 1 }),
            "strategy {\"type\":\"lineRange\",\"startLine\":1}"
        );
    }

    #[test]
    fn lisp_hints_are_keyword_arguments() {
        let s = HintStyle::named("lisp").unwrap();
        assert_eq!(s.render(&Hint::Offset(10)), ":offset 10");
        assert_eq!(
            s.render(&Hint::Raw {
                offset: 29,
                limit: Some(6)
            }),
            ":collapsed nil :offset 29 :limit 6"
        );
        assert_eq!(
            s.render(&Hint::Kinds(&["defun", "defmacro"])),
            ":kinds '(\"defun\" \"defmacro\")"
        );
        assert_eq!(
            s.render(&Hint::LineRange { start: 1 }),
            ":strategy '(:line-range 1)"
        );
        assert_eq!(
            s.render(&Hint::Rest { start: 4, end: 9 }),
            ":strategy '(:byte-range 4 9)"
        );
        assert_eq!(s.render(&Hint::Parameter("name_pattern")), ":name-pattern");
        assert!(HintStyle::named("cli").is_none());
    }
}
