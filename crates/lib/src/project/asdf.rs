//! ASDF system definitions read as data, never evaluated (docs/project.md#asdf-order).
//!
//! The bytes of an `.asd` file give its `defsystem` forms; each system gives its Lisp
//! source files in load order: `:components` in the order written, a component moved after
//! the siblings its `:depends-on` names (a stable depth-first order; a cycle keeps the
//! written order), `:module` directories (`:pathname` overrides the name), `:file` and
//! `:cl-source-file` components as `NAME.lisp` (or their `:pathname`; a
//! `:default-component-class` or a class the `.asd` file defines may give another type,
//! `asdf/classes.rs`); other components (`:static-file`, `:doc-file`, classes not known as Lisp
//! source) are not Lisp and are left out. `:serial t`
//! keeps the written order. A reader conditional in front of a component (`#+sbcl (:file
//! "x")`) and `:if-feature` are decided when features are given; without them the component
//! is kept (every file the system may load).
//!
//! The reader here is a small one for the data of a system definition: lists, strings,
//! symbols, quotes and `#` syntax; anything else is an opaque datum. It keeps at most
//! [`MAX_DATA`] data and [`MAX_DEPTH`] levels of nesting, and runs in one pass without
//! recursion, so a hostile file costs linear time. Paths are relative to the `.asd` file's
//! directory, with forward slashes; whether they exist or may be read is the guard's call.

use crate::features::{self, Features};
use classes::{Classes, Kind};

mod classes;

/// Most data one file is read into; past it the rest of the file is ignored.
pub const MAX_DATA: usize = 200_000;
/// Deepest nesting kept; deeper lists are read over but not kept.
pub const MAX_DEPTH: usize = 64;
/// Most components one system lists.
pub const MAX_COMPONENTS: usize = 20_000;

/// A system of an `.asd` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct System {
    /// As written, lowercased for symbols (`cl-ppcre`, `cl-ppcre/test`).
    pub name: String,
    /// Its Lisp source files in load order.
    pub components: Vec<Component>,
    /// The systems its `:depends-on` names (`(:version NAME ...)` and `(:feature F NAME)`
    /// give their NAME), lowercased.
    pub depends_on: Vec<String>,
}

/// A Lisp source file component.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Component {
    /// The component's own name (`queue`).
    pub name: String,
    /// The names of its modules and its own, joined by `/` (`src/queue`).
    pub full_name: String,
    /// The file, relative to the `.asd` file's directory (`src/queue.lisp`).
    pub file: String,
}

/// Most bytes of a feature expression written back as text for [`features::decide`].
const MAX_EXPRESSION_BYTES: usize = 4096;

/// `datum` (an `:if-feature` value: a symbol or a list of them) as feature-expression
/// text, `(not sbcl)`; anything else, or one too long, gives text that does not decide.
fn expression_text(datum: &Datum, out: &mut String) {
    if out.len() > MAX_EXPRESSION_BYTES {
        return;
    }
    match datum {
        Datum::Sym(name) => out.push_str(name),
        Datum::List(items) => {
            out.push('(');
            for (k, item) in items.iter().enumerate() {
                if k > 0 {
                    out.push(' ');
                }
                expression_text(item, out);
            }
            out.push(')');
        }
        // Not a feature expression: `"x"` is undecidable, so the component is kept.
        _ => out.push_str("\"?\""),
    }
}

/// One datum of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Datum {
    List(Vec<Datum>),
    Str(String),
    /// A symbol's name, lowercased, package prefix and `#:` removed.
    Sym(String),
    /// `#+EXPR FORM` (`plus`) or `#-EXPR FORM`.
    Cond {
        plus: bool,
        expr: Vec<u8>,
        form: Box<Datum>,
    },
    Other,
}

/// The systems that `bytes` (an `.asd` file) defines, in the order written. `features`:
/// decide reader conditionals and `:if-feature` (`None`: keep every component).
pub fn systems(bytes: &[u8], features: Option<&Features>) -> Vec<System> {
    let data = read_data(bytes);
    // A top-level form behind a reader conditional (`#+sbcl (defsystem ...)`) is read as
    // a component is: kept without features, decided with them.
    let forms: Vec<&[Datum]> = data.iter().filter_map(|d| kept(d, features)).collect();
    let classes = classes::Classes::of(&forms);
    forms
        .iter()
        .filter_map(|items| system(items, features, &classes))
        .collect()
}

fn system(items: &[Datum], features: Option<&Features>, classes: &Classes) -> Option<System> {
    if !matches!(items.first(), Some(Datum::Sym(s)) if s == "defsystem") {
        return None;
    }
    let name = name_of(items.get(1)?)?;
    let plist = items.get(2..).unwrap_or_default();
    let dir = match plist_get(plist, "pathname") {
        Some(d) => directory_of(d).unwrap_or_default(),
        None => String::new(),
    };
    let mut components = Vec::new();
    let files = classes.default_of(plist, &Kind::Lisp("lisp".into()));
    collect(plist, &dir, "", &files, features, classes, &mut components);
    let depends_on = match plist_get(plist, "depends-on") {
        Some(Datum::List(deps)) => deps.iter().filter_map(dependency_name).collect(),
        _ => Vec::new(),
    };
    Some(System {
        name: name.to_lowercase(),
        components,
        depends_on,
    })
}

/// The system a `:depends-on` entry names.
fn dependency_name(datum: &Datum) -> Option<String> {
    let datum = match datum {
        Datum::Cond { form, .. } => form,
        d => d,
    };
    match datum {
        Datum::List(items) => match items.first() {
            Some(Datum::Sym(k)) if k == "version" => items.get(1).and_then(name_of),
            Some(Datum::Sym(k)) if k == "feature" => items.get(2).and_then(name_of),
            _ => None,
        },
        d => name_of(d).map(|n| n.to_lowercase()),
    }
    .map(|n| n.to_lowercase())
}

/// A module being read: its components in load order, the index of the next, its
/// directory, its name prefix, what its `:file` components are.
type Level<'d> = (Vec<&'d [Datum]>, usize, String, String, Kind);

/// Appends the Lisp files of a component list (`plist` holds `:components`), depth-first
/// with an explicit stack.
fn collect(
    plist: &[Datum],
    dir: &str,
    prefix: &str,
    files: &Kind,
    features: Option<&Features>,
    classes: &Classes,
    out: &mut Vec<Component>,
) {
    let mut stack: Vec<Level> = vec![(
        ordered(plist, features),
        0,
        dir.to_string(),
        prefix.to_string(),
        files.clone(),
    )];
    while let Some((list, next, dir, prefix, files)) = stack.last_mut() {
        let Some(fields) = list.get(*next).copied() else {
            stack.pop();
            continue;
        };
        *next += 1;
        if out.len() >= MAX_COMPONENTS {
            return;
        }
        let (Some(Datum::Sym(kind)), Some(name)) =
            (fields.first(), fields.get(1).and_then(name_of))
        else {
            continue;
        };
        let rest = fields.get(2..).unwrap_or_default();
        let full_name = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        match kind.as_str() {
            "module" => {
                let sub = match plist_get(rest, "pathname") {
                    Some(p) => directory_of(p).unwrap_or_default(),
                    None => format!("{name}/"),
                };
                let sub_dir = joined(dir, &sub);
                let sub_dir = if sub_dir.is_empty() || sub_dir.ends_with('/') {
                    sub_dir
                } else {
                    format!("{sub_dir}/")
                };
                let files = classes.default_of(rest, files);
                if stack.len() < MAX_DEPTH {
                    stack.push((ordered(rest, features), 0, sub_dir, full_name, files));
                }
            }
            class => {
                let kind = match class {
                    "file" => files.clone(),
                    class => classes.kind(class).unwrap_or(Kind::NotLisp),
                };
                let Kind::Lisp(kind_type) = kind else {
                    continue;
                };
                let file = match plist_get(rest, "pathname") {
                    Some(Datum::Str(p)) if has_type(p) => p.clone(),
                    Some(Datum::Str(p)) => format!("{p}.{kind_type}"),
                    _ => format!("{name}.{kind_type}"),
                };
                out.push(Component {
                    name,
                    full_name,
                    file: joined(dir, &file),
                });
            }
        }
    }
}

/// The component forms of `plist`'s `:components` in load order: conditionals and
/// `:if-feature` decided, then moved after the siblings they depend on.
fn ordered<'d>(plist: &'d [Datum], features: Option<&Features>) -> Vec<&'d [Datum]> {
    let Some(Datum::List(list)) = plist_get(plist, "components") else {
        return Vec::new();
    };
    let mut written: Vec<&[Datum]> = Vec::new();
    for datum in list.iter().take(MAX_COMPONENTS) {
        let Some(fields) = kept(datum, features) else {
            continue;
        };
        let rest = fields.get(2..).unwrap_or_default();
        let wanted = match (plist_get(rest, "if-feature"), features) {
            (Some(expr), Some(features)) => {
                let mut text = String::new();
                expression_text(expr, &mut text);
                features::decide(text.as_bytes(), features) != Some(false)
            }
            _ => true,
        };
        if wanted {
            written.push(fields);
        }
    }
    if plist_get(plist, "serial").is_some_and(|v| !matches!(v, Datum::Sym(s) if s == "nil")) {
        return written;
    }
    by_dependencies(written)
}

/// The fields of a component datum, unless a reader conditional excludes it.
fn kept<'d>(datum: &'d Datum, features: Option<&Features>) -> Option<&'d [Datum]> {
    let mut datum = datum;
    while let Datum::Cond { plus, expr, form } = datum {
        if let Some(features) = features {
            if features::reads(*plus, expr, features) == Some(false) {
                return None;
            }
        }
        datum = form;
    }
    match datum {
        Datum::List(fields) => Some(fields),
        _ => None,
    }
}

/// Components moved after the siblings their `:depends-on` names: depth-first in written
/// order, so the order is stable; an edge back into a component being placed (a cycle)
/// is ignored. Linear in components and edges.
fn by_dependencies(written: Vec<&[Datum]>) -> Vec<&[Datum]> {
    let names: std::collections::HashMap<String, usize> = written
        .iter()
        .enumerate()
        .filter_map(|(i, f)| f.get(1).and_then(name_of).map(|n| (n, i)))
        .rev()
        .collect();
    let deps: Vec<Vec<usize>> = written
        .iter()
        .map(|fields| {
            let rest = fields.get(2..).unwrap_or_default();
            match plist_get(rest, "depends-on") {
                Some(Datum::List(ds)) => ds
                    .iter()
                    .filter_map(|d| name_of(d).and_then(|n| names.get(&n).copied()))
                    .collect(),
                _ => Vec::new(),
            }
        })
        .collect();
    dependencies_first(&deps)
        .into_iter()
        .map(|i| written[i])
        .collect()
}

/// The indices `0..deps.len()` with each after the ones `deps[i]` names: depth-first in
/// index order, so the order is stable; an edge back into a node being placed (a cycle)
/// is ignored. Linear in nodes and edges, no recursion. Orders components within a
/// system here and systems within a directory (`plan.rs`).
pub(crate) fn dependencies_first(deps: &[Vec<usize>]) -> Vec<usize> {
    // 0: not visited, 1: being placed, 2: placed.
    let mut state = vec![0u8; deps.len()];
    let mut order = Vec::with_capacity(deps.len());
    for root in 0..deps.len() {
        let mut stack = vec![(root, 0usize)];
        while let Some((node, edge)) = stack.pop() {
            if edge == 0 {
                if state[node] != 0 {
                    continue;
                }
                state[node] = 1;
            }
            if let Some(&dep) = deps[node].get(edge) {
                stack.push((node, edge + 1));
                if state[dep] == 0 {
                    stack.push((dep, 0));
                }
            } else {
                state[node] = 2;
                order.push(node);
            }
        }
    }
    order
}

/// The value after `:key` in a property list.
fn plist_get<'d>(plist: &'d [Datum], key: &str) -> Option<&'d Datum> {
    plist
        .chunks(2)
        .find(|pair| matches!(&pair[0], Datum::Sym(s) if s == key))
        .and_then(|pair| pair.get(1))
}

/// A component or system name: a string, or a symbol's name lowercased.
fn name_of(datum: &Datum) -> Option<String> {
    match datum {
        Datum::Str(s) => Some(s.clone()),
        Datum::Sym(s) if s != "nil" => Some(s.clone()),
        _ => None,
    }
}

/// A `:pathname` as a directory prefix (`"src"` and `"src/"` give `src/`, `""` nothing).
fn directory_of(datum: &Datum) -> Option<String> {
    let Datum::Str(p) = datum else {
        return None;
    };
    let p = normalize(p);
    Some(if p.is_empty() || p.ends_with('/') {
        p
    } else {
        format!("{p}/")
    })
}

fn has_type(path: &str) -> bool {
    let last = path.rsplit('/').next().unwrap_or(path);
    last.rfind('.').is_some_and(|i| i > 0)
}

/// `a/./b/../c` as `a/c`; no leading `./`, no trailing `/`. A `..` past the start of a
/// relative path is kept (the guard decides whether that file may be read); an absolute
/// path stays absolute (`/a/../b` as `/b`, a `..` past `/` dropped, as the system's own).
pub fn normalize(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            ".." if absolute => {}
            _ => parts.push(part),
        }
    }
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

/// `path` (a `:pathname` or a component's file) from the directory `dir`, as ASDF takes
/// it: relative to `dir`, or as written when absolute.
fn joined(dir: &str, path: &str) -> String {
    if path.starts_with('/') {
        normalize(path)
    } else {
        normalize(&format!("{dir}{path}"))
    }
}

/// What is waiting for the next datum.
enum Frame {
    List(Vec<Datum>),
    /// `'x`, `#'x`, `#.x`, `#p"..."`...: the datum that follows, kept (`true`) or opaque.
    Prefix(bool),
    /// `#+`/`#-`: its expression starts at this byte.
    CondExpr {
        plus: bool,
        start: usize,
    },
    CondForm {
        plus: bool,
        expr: Vec<u8>,
    },
}

struct Reader<'b> {
    b: &'b [u8],
    i: usize,
    stack: Vec<Frame>,
    top: Vec<Datum>,
    count: usize,
    /// Lists opened past [`MAX_DEPTH`], read over.
    skipped_depth: usize,
}

/// The top-level data of `bytes`.
fn read_data(bytes: &[u8]) -> Vec<Datum> {
    let mut r = Reader {
        b: bytes,
        i: 0,
        stack: Vec::new(),
        top: Vec::new(),
        count: 0,
        skipped_depth: 0,
    };
    while r.i < r.b.len() && r.count < MAX_DATA {
        r.step();
    }
    r.top
}

impl Reader<'_> {
    fn step(&mut self) {
        let c = self.b[self.i];
        match c {
            b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' => self.i += 1,
            b';' => self.skip_line(),
            b'(' => {
                self.i += 1;
                if self.skipped_depth > 0 || self.depth() >= MAX_DEPTH {
                    self.skipped_depth += 1;
                } else {
                    self.stack.push(Frame::List(Vec::new()));
                }
            }
            b')' => {
                self.i += 1;
                if self.skipped_depth > 0 {
                    self.skipped_depth -= 1;
                    if self.skipped_depth == 0 {
                        self.deliver(Datum::Other);
                    }
                } else if let Some(Frame::List(items)) = self.stack.pop() {
                    self.deliver(Datum::List(items));
                } else {
                    // A stray `)`, or one that closes a pending prefix: drop what waited.
                    self.stack.clear();
                }
            }
            b'"' => {
                let s = self.string();
                self.deliver(Datum::Str(s));
            }
            b'\'' | b'`' | b',' => {
                self.i += 1;
                if self.b.get(self.i) == Some(&b'@') {
                    self.i += 1;
                }
                self.stack.push(Frame::Prefix(c == b'\''));
            }
            b'#' => self.dispatch(),
            _ => {
                let s = self.token();
                self.deliver(s);
            }
        }
    }

    fn depth(&self) -> usize {
        self.stack.len()
    }

    /// A datum is complete: hand it to what waits for it.
    fn deliver(&mut self, datum: Datum) {
        if self.skipped_depth > 0 {
            return;
        }
        self.count += 1;
        let mut datum = datum;
        loop {
            match self.stack.pop() {
                None => {
                    self.top.push(datum);
                    return;
                }
                Some(Frame::List(mut items)) => {
                    items.push(datum);
                    self.stack.push(Frame::List(items));
                    return;
                }
                Some(Frame::Prefix(keep)) => {
                    if !keep {
                        datum = Datum::Other;
                    }
                }
                Some(Frame::CondExpr { plus, start }) => {
                    let end = self.i.min(self.b.len());
                    let expr = self.b.get(start..end).unwrap_or_default().to_vec();
                    self.stack.push(Frame::CondForm { plus, expr });
                    return;
                }
                Some(Frame::CondForm { plus, expr }) => {
                    datum = Datum::Cond {
                        plus,
                        expr,
                        form: Box::new(datum),
                    };
                }
            }
        }
    }

    fn dispatch(&mut self) {
        let next = self.b.get(self.i + 1).copied().unwrap_or(b' ');
        self.i += 2;
        match next.to_ascii_lowercase() {
            b'|' => self.skip_block_comment(),
            b'+' | b'-' => self.stack.push(Frame::CondExpr {
                plus: next == b'+',
                start: self.i,
            }),
            // `#p"x"` is the string's pathname: kept as the string.
            b'p' => self.stack.push(Frame::Prefix(true)),
            b':' => {
                let s = self.token();
                self.deliver(s);
            }
            b'\\' => {
                // A character: one character, then the rest of its token.
                self.i += 1;
                let _ = self.token();
                self.deliver(Datum::Other);
            }
            b'(' => {
                self.i -= 1;
                self.stack.push(Frame::Prefix(false));
            }
            _ => self.stack.push(Frame::Prefix(false)),
        }
    }

    fn skip_line(&mut self) {
        self.i = memchr::memchr(b'\n', &self.b[self.i..]).map_or(self.b.len(), |k| self.i + k);
    }

    fn skip_block_comment(&mut self) {
        let mut depth = 1usize;
        while self.i < self.b.len() && depth > 0 {
            match (self.b[self.i], self.b.get(self.i + 1)) {
                (b'|', Some(b'#')) => {
                    depth -= 1;
                    self.i += 2;
                }
                (b'#', Some(b'|')) => {
                    depth += 1;
                    self.i += 2;
                }
                _ => self.i += 1,
            }
        }
    }

    fn string(&mut self) -> String {
        self.i += 1;
        let mut out = Vec::new();
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'"' => {
                    self.i += 1;
                    break;
                }
                b'\\' => {
                    if let Some(&c) = self.b.get(self.i + 1) {
                        out.push(c);
                    }
                    self.i += 2;
                }
                c => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    /// A symbol or number token (with `|...|` parts), as a [`Datum::Sym`].
    fn token(&mut self) -> Datum {
        let mut out = Vec::new();
        let mut escaped = false;
        while self.i < self.b.len() {
            let c = self.b[self.i];
            if c == b'|' {
                escaped = !escaped;
            } else if !escaped
                && matches!(
                    c,
                    b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'(' | b')' | b'"' | b';' | b'\''
                )
            {
                break;
            } else if c == b'\\' {
                self.i += 1;
                if let Some(&c) = self.b.get(self.i) {
                    out.push(c);
                }
            } else if escaped {
                out.push(c);
            } else {
                out.push(c.to_ascii_lowercase());
            }
            self.i += 1;
        }
        let text = String::from_utf8_lossy(&out);
        let name = text.rsplit(':').next().unwrap_or_default();
        Datum::Sym(name.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(text: &str, features: Option<&Features>) -> Vec<Vec<String>> {
        systems(text.as_bytes(), features)
            .into_iter()
            .map(|s| s.components.into_iter().map(|c| c.file).collect())
            .collect()
    }

    #[test]
    fn serial_modules_pathnames_and_several_systems() {
        let text = r#"
(in-package :asdf-user)
#| a comment (defsystem "no") |#
(defsystem :foo
  :pathname "src/"
  :serial t
  :components ((:file "packages")
               (:static-file "README")
               (:module "util" :components ((:file "a") (:file "b" :pathname "bee")))
               (:module "x" :pathname "" :components ((:file "c.d")))
               (:file "e" :pathname "other/e.cl")))
(asdf:defsystem #:foo/tests :depends-on (#:foo (:version "Bar" "1.0") #+sbcl "sb") :components ((:file "t")))"#;
        assert_eq!(
            files(text, None),
            [
                vec![
                    "src/packages.lisp",
                    "src/util/a.lisp",
                    "src/util/bee.lisp",
                    "src/c.d.lisp",
                    "src/other/e.cl"
                ],
                vec!["t.lisp"]
            ]
        );
        let systems = systems(text.as_bytes(), None);
        assert_eq!(systems[1].name, "foo/tests");
        assert!(systems[0].depends_on.is_empty());
        assert_eq!(systems[1].depends_on, ["foo", "bar", "sb"]);
        assert_eq!(systems[0].components[1].full_name, "util/a");
    }

    #[test]
    fn absolute_pathnames_are_taken_as_written() {
        // As ASDF merges them: an absolute :pathname replaces the directory it is in.
        let text = r#"(defsystem "s" :pathname "src/"
  :components ((:file "a" :pathname "/opt/x/y")
               (:module "m" :pathname "/opt/mod/" :components ((:file "b") (:file "c" :pathname "/c")))
               (:module "n" :pathname "/" :components ((:file "d")))
               (:file "e" :pathname "/opt/../../e.lisp")))
(defsystem "t" :pathname "/srv/t" :components ((:file "f")))"#;
        assert_eq!(
            files(text, None),
            [
                vec![
                    "/opt/x/y.lisp",
                    "/opt/mod/b.lisp",
                    "/c.lisp",
                    "/d.lisp",
                    "/e.lisp"
                ],
                vec!["/srv/t/f.lisp"]
            ]
        );
        assert_eq!(normalize("/a/./b/../c/"), "/a/c");
        assert_eq!(normalize("a/../../b"), "../b");
    }

    #[test]
    fn depends_on_orders_siblings_stably_and_cycles_keep_written_order() {
        let text = r#"(defsystem "s" :components ((:file "c" :depends-on ("b")) (:file "a")
             (:file "b" :depends-on ("a")) (:file "x" :depends-on ("y")) (:file "y" :depends-on ("x"))))"#;
        assert_eq!(
            files(text, None),
            [vec!["a.lisp", "b.lisp", "c.lisp", "y.lisp", "x.lisp"]]
        );
    }

    #[test]
    fn conditionals_are_kept_without_features_and_decided_with_them() {
        let text = r#"(defsystem "s" :components (#+sbcl (:file "sb") #-sbcl (:file "other")
            (:file "f" :if-feature :ccl) #.(foo) (:file "z")))"#;
        assert_eq!(
            files(text, None),
            [vec!["sb.lisp", "other.lisp", "f.lisp", "z.lisp"]]
        );
        let sbcl = Features::new(["sbcl"]);
        assert_eq!(files(text, Some(&sbcl)), [vec!["sb.lisp", "z.lisp"]]);
    }

    /// A `defsystem` behind a reader conditional (clx's `#+sbcl (defsystem #:clx ...)`,
    /// aserve's `#-allegro`) is a system, kept without features and decided with them.
    #[test]
    fn a_conditional_defsystem_is_read() {
        let text = r#"#+sbcl (defsystem #:clx :components ((:file "package")))
#-sbcl (asdf:defsystem "other" :components ((:file "o")))"#;
        assert_eq!(files(text, None), [vec!["package.lisp"], vec!["o.lisp"]]);
        let sbcl = Features::new(["sbcl"]);
        assert_eq!(files(text, Some(&sbcl)), [vec!["package.lisp"]]);
    }

    /// `:default-component-class`, on the system or a module and inherited by the modules
    /// inside (as ASDF's `class-for-type` looks up the parents), gives `:file` its class:
    /// `cl-source-file.cl` (aserve) `.cl`; a class the `.asd` file defines on one of those
    /// (htmlgen's `acl-file` with `source-file-type` "cl", a `(type :initform "cl")` slot)
    /// its type; one on `static-file` (clx's `legacy-file`) is not Lisp. A component of
    /// such a class (`(:xrender-source-file "xrender")`) is read the same way.
    #[test]
    fn component_classes_give_file_types() {
        let text = r#"(defclass acl-file (cl-source-file) ())
(defmethod source-file-type ((c acl-file) (s module)) "cl")
(defclass slot-typed (cl-source-file) ((type :initform "lsp")))
(defclass clx-source-file (cl-source-file) ())
(defclass xrender-source-file (clx-source-file) ())
(defclass legacy-file (static-file) ())
(defsystem a :default-component-class cl-source-file.cl
  :components ((:file "packages") (:module "test" :components ((:file "t-aserve")))))
(defsystem h :default-component-class 'acl-file :components ((:file "htmlgen")))
(defsystem s :default-component-class slot-typed :components ((:file "s")))
(defsystem #:clx :default-component-class clx-source-file
  :components ((:file "package")
               (:module "extensions" :components ((:xrender-source-file "xrender") (:file "glx")))
               (:module "debug" :default-component-class legacy-file
                :components ((:file "debug" :pathname "debug.lisp")))
               (:unknown-class "u") (:static-file "README")))"#;
        assert_eq!(
            files(text, None),
            [
                vec!["packages.cl", "test/t-aserve.cl"],
                vec!["htmlgen.cl"],
                vec!["s.lsp"],
                vec![
                    "package.lisp",
                    "extensions/xrender.lisp",
                    "extensions/glx.lisp"
                ],
            ]
        );
    }

    #[test]
    fn hostile_input_is_bounded() {
        let deep = format!("(defsystem \"d\" :components {}", "(".repeat(100_000));
        assert!(files(&deep, None).is_empty());
        let many = format!(
            "(defsystem \"m\" :components ({}))",
            "(:file \"a\" :depends-on (\"a\"))".repeat(30_000)
        );
        let got = files(&many, None);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].len(), MAX_COMPONENTS);
        for junk in [
            "#",
            "#+",
            "'",
            ")))",
            "(defsystem",
            "(defsystem)",
            "\"",
            "#|",
            "#\\",
        ] {
            let _ = systems(junk.as_bytes(), None);
        }
        // Random bytes drawn from the reader's syntax: never a panic.
        let alphabet = b"()#+-'`,@\"\\|;:.\n abp";
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2_000 {
            let text: Vec<u8> = (0..64)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    alphabet[(state % alphabet.len() as u64) as usize]
                })
                .collect();
            let mut with_system = b"(defsystem \"s\" :components (".to_vec();
            with_system.extend_from_slice(&text);
            let _ = systems(&text, None);
            let _ = systems(&with_system, Some(&Features::new(["sbcl"])));
        }
    }
}
