//! Properties of `find` on generated input: no panic on any bytes; every reported use is a
//! token that spells the symbol, at its line and column, inside its form's lines, in
//! order; entries in file order; definitions inside the file's lines.

use lisp_read_file::cancel::CancelToken;
use lisp_read_file::find::{find, FindRequest};
use lisp_read_file::grammar::Grammar;
use lisp_read_file::guard::Guard;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use std::path::PathBuf;
use std::sync::OnceLock;

const CASES: u32 = 512;

const PIECES: &[&str] = &[
    "foo",
    "FOO",
    "Foo",
    "pkg:",
    "pkg::",
    "'",
    "#'",
    "#+",
    "#-",
    "(",
    ")",
    "(",
    ")",
    "\"",
    ";",
    "\n",
    " ",
    " ",
    "#|",
    "|#",
    "|",
    "\\",
    "#\\",
    "#:",
    ",@",
    ",",
    "`",
    "foo-bar",
    "xfoo",
    "λ",
    "\r\n",
    "(defun ",
    "(progn ",
    "(defmacro foo ",
    "#x",
    "#.",
    ":",
    "(setf foo)",
    "bar",
    "(defstruct ",
    "(defstruct (foo ",
    "(:conc-name ",
    "(:constructor ",
    "(:include foo)",
    ":read-only t",
    "(defclass foo () (",
    ":accessor ",
    "(:method ",
    "(defgeneric foo ",
];

fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("lrf-find-props-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
}

fn input() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => vec(select(PIECES), 0..80).prop_map(|p| p.concat().into_bytes()),
        1 => vec(any::<u8>(), 0..200),
    ]
}

fn run(bytes: &[u8], edit: impl FnOnce(&mut FindRequest)) -> lisp_read_file::find::FindResult {
    let name = format!("f{:?}.lisp", std::thread::current().id()).replace(['(', ')'], "");
    std::fs::write(dir().join(&name), bytes).unwrap();
    let guard = Guard::confined(std::slice::from_ref(dir()), 1 << 20).unwrap();
    let mut request = FindRequest::new(name);
    edit(&mut request);
    match find(&guard, &Grammar::builtin(), &request, &CancelToken::new()) {
        Ok(result) => result,
        // A file the guard refuses (binary bytes) is a refusal, never a panic.
        Err(e) => panic!("unexpected error {e:?}"),
    }
}

/// The token that starts `text` (up to a delimiter outside `|...|`, `\\x` escaping one
/// character) and its symbol's name, folded: lowercase, escapes removed, package dropped.
fn token_at(text: &str) -> (String, String) {
    let mut token = String::new();
    let mut name = String::new();
    let mut chars = text.chars();
    let mut in_bars = false;
    if let Some(rest) = text.strip_prefix("#:") {
        token.push_str("#:");
        chars = rest.chars();
    }
    while let Some(c) = chars.next() {
        if !in_bars
            && matches!(
                c,
                ' ' | '\t' | '\n' | '\r' | '(' | ')' | '"' | ';' | '\'' | '`' | ','
            )
        {
            break;
        }
        token.push(c);
        match c {
            '|' => in_bars = !in_bars,
            '\\' => {
                if let Some(next) = chars.next() {
                    token.push(next);
                    name.extend(next.to_lowercase());
                }
            }
            ':' if !in_bars => name.clear(),
            _ => name.extend(c.to_lowercase()),
        }
    }
    (token, name)
}

fn is_binary(bytes: &[u8]) -> bool {
    lisp_read_file::guard::is_binary(bytes)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn uses_are_tokens_of_the_symbol_in_order(bytes in input()) {
        prop_assume!(!is_binary(&bytes));
        let result = run(&bytes, |r| r.symbol = Some("foo".into()));
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let lines: Vec<&str> = text.split('\n').collect();
        // In file order within each package (entries are grouped by package).
        let mut last_entries: std::collections::HashMap<Option<String>, usize> = Default::default();
        for r in result.references.unwrap() {
            let last_entry = last_entries.entry(r.package.clone()).or_default();
            prop_assert!(r.line >= *last_entry, "entries in order (one line may hold several forms)");
            prop_assert!(r.line <= r.end_line);
            *last_entry = r.end_line;
            let mut last = (0, 0);
            for u in &r.uses {
                prop_assert!((u.line, u.column) > last, "uses in order");
                last = (u.line, u.column);
                prop_assert!(r.line <= u.line && u.line <= r.end_line);
                let line = lines[u.line - 1].trim_end_matches('\r');
                // From the use to the end of the file: a token may span lines (`|a\nb|`).
                let rest: String = lines[u.line - 1..].join("\n").chars().skip(u.column).collect();
                let (token, name) = token_at(&rest);
                prop_assert_eq!(&name, "foo", "token {:?} at {}:{} of {:?}", token, u.line, u.column, text);
                prop_assert!(u.text.trim_end_matches('…') == line.chars().take(200).collect::<String>());
            }
        }
    }

    #[test]
    fn definitions_lie_in_the_file(bytes in input()) {
        prop_assume!(!is_binary(&bytes));
        let result = run(&bytes, |r| {
            r.name_pattern = Some(".".into());
            r.include_body = true;
        });
        let line_count = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
        let mut last = (0, 0);
        for d in result.definitions.unwrap() {
            prop_assert!(1 <= d.line && d.line <= d.end_line && d.end_line <= line_count);
            match &d.form {
                // A derived definition: inside the form that makes it; several may share
                // a slot (an accessor and its setf).
                Some(form) => {
                    prop_assert!(form.line <= d.line && d.end_line <= form.end_line);
                    prop_assert!((d.line, d.column) >= last, "definitions in order");
                }
                None => prop_assert!((d.line, d.column) > last, "definitions in order"),
            }
            last = (d.line, d.column);
            prop_assert!(d.body.is_some_and(|b| !b.is_empty()));
        }
    }
}
