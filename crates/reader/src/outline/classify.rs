//! Classification: what a form is (operator, name, definer, container children), read
//! from its elements with the grammar.

use super::*;

/// Buffers reused from form to form, so that classifying a form allocates only the
/// strings it keeps. A stack of each: a container's children are classified while the
/// container's own buffers are in use.
#[derive(Default)]
pub(super) struct Scratch {
    pub(super) read: Vec<Vec<Datum>>,
    pub(super) shown: Vec<Vec<(usize, Shown)>>,
}

/// The text of one shown part of a signature, made when the signature is written.
pub(super) enum Shown {
    /// The form's name, as in [`Form::name`].
    Name,
    /// The folded source text of `[start, end)`.
    Fold(usize, usize),
    /// The folded source text of `[start, end)` abbreviated to `max` characters
    /// ([`abbreviate_balanced`]).
    Short {
        start: usize,
        end: usize,
        max: usize,
    },
    Text(String),
}

/// The elements of a list, read on demand and kept for random access.
pub(super) struct Parts<'a> {
    pub(super) b: &'a [u8],
    /// The list itself: its `(` and its end.
    pub(super) list: (usize, usize),
    pub(super) iter: Elements<'a>,
    pub(super) read: Vec<Datum>,
}

impl<'a> Parts<'a> {
    pub(super) fn new(b: &'a [u8], list: &Datum, scratch: &mut Scratch) -> Self {
        Parts {
            b,
            list: (list.core, list.end),
            iter: Elements::new(b, list.core, list.end),
            read: scratch.read.pop().unwrap_or_default(),
        }
    }

    /// Gives the buffer back.
    pub(super) fn finish(mut self, scratch: &mut Scratch) {
        self.read.clear();
        scratch.read.push(self.read);
    }

    pub(super) fn get(&mut self, index: usize) -> Option<&Datum> {
        while self.read.len() <= index {
            let next = self.iter.next()?;
            self.read.push(next);
        }
        self.read.get(index)
    }

    /// Whether element `index` exists, reading only the elements before it.
    pub(super) fn exists(&mut self, index: usize) -> bool {
        if index < self.read.len() {
            return true;
        }
        if index > 0 && self.get(index - 1).is_none() {
            return false;
        }
        self.iter.has_next()
    }

    /// Where element `index` starts, reading only the elements before it.
    pub(super) fn start(&mut self, index: usize) -> Option<usize> {
        if let Some(d) = self.read.get(index) {
            return Some(d.start);
        }
        if index > 0 {
            self.get(index - 1)?;
        }
        self.iter.peek_start()
    }

    /// The first byte of element `index`, reading only the elements before it.
    pub(super) fn first_byte(&mut self, index: usize) -> Option<u8> {
        self.start(index).and_then(|at| self.b.get(at).copied())
    }

    /// The whole list, folded (for `in-package`).
    pub(super) fn read_whole(&self) -> String {
        fold(self.b, self.list.0, self.list.1)
    }
}

/// Classifies a form with the grammar: its operator, name, definer and children. Its text
/// is made on first use ([`form_text`]).
pub(super) fn classify<'a>(
    form: &mut Form<'a>,
    grammar: &'a Grammar,
    start_line: usize,
    depth: usize,
    scratch: &mut Scratch,
) {
    let b = form.bytes;
    if !form.datum.core_is_list || form.datum.quoted {
        return;
    }
    let mut parts = Parts::new(b, &form.datum, scratch);
    if let Some(operator) = operator(&mut parts) {
        let definer = match grammar.lookup(&operator) {
            Lookup::Definer(d) => Some((d, d.operator.as_str())),
            Lookup::GenericDefiner => Some((grammar.generic(), "def")),
            Lookup::Plain => None,
        };
        if let Some((d, definer)) = definer {
            form.definer = Some(definer);
            form.entry = Some(d);
            form.name = defined_name(&mut parts, d);
            if let (Some(n), false) = (d.container, d.whole) {
                let at = (form.datum.start, start_line);
                (form.children, form.children_cut_at) =
                    children(&mut parts, n, grammar, at, depth, scratch);
            }
        }
        form.operator = Some(operator);
    }
    parts.finish(scratch);
}

/// The operator of a list: its first element, when that is a symbol.
pub(super) fn operator<'a>(parts: &mut Parts<'a>) -> Option<Cow<'a, str>> {
    let b = parts.b;
    let op = parts.get(0)?;
    let token = &b[op.start..op.end];
    if !is_symbol_start(b, op.start) || op.quoted || is_number(token) {
        return None;
    }
    if is_key(token) {
        // SAFETY: key bytes are ASCII.
        return Some(Cow::Borrowed(unsafe {
            std::str::from_utf8_unchecked(token)
        }));
    }
    Some(fold_cow(b, op.start, op.end))
}

/// The name a definition defines, as written; `(point (:conc-name p-))` names `point`.
pub(super) fn defined_name<'a>(parts: &mut Parts<'a>, d: &Definer) -> Option<Cow<'a, str>> {
    let b = parts.b;
    let e = parts.get(d.name?)?;
    if let Some(kind) = d.foreign_name {
        if let Some(name) = foreign_lisp_name(b, &e.clone(), kind) {
            return Some(Cow::Owned(name));
        }
    }
    if d.inferred && e.core_is_list && !e.quoted {
        let e = e.clone();
        return Some(match inferred_name(b, &e) {
            Some(name) => Cow::Owned(name),
            None => fold_cow(b, e.start, e.end),
        });
    }
    if d.name_in_list && e.core_is_list && !d.whole {
        let e = e.clone();
        Some(first_element_text(b, &e).map_or_else(|| fold_cow(b, e.start, e.end), Cow::Owned))
    } else {
        Some(fold_cow(b, e.start, e.end))
    }
}

/// The Lisp name of a CFFI-style definition (`defcfun`, `defcvar`), as CFFI's
/// `parse-name-and-options` makes it: `"SSL_CTX_new"` names `ssl-ctx-new` (`*errno*`
/// for a variable's `"errno"`); `("close" close-socket)` and `(close-socket "close")`
/// name `close-socket`. `None` when the element is neither (the name is then read as
/// any definer's).
fn foreign_lisp_name(b: &[u8], e: &Datum, kind: crate::grammar::ForeignName) -> Option<String> {
    let is_lisp_symbol = |d: &Datum| {
        is_symbol_start(b, d.start) && !is_number(&b[d.start..d.end]) && b[d.start] != b':'
    };
    if !e.core_is_list {
        return translated_c_name(b, e, kind);
    }
    // The C name's variants for other platforms (`(#-windows "close" #+windows
    // "closesocket" close-socket)`) are left out: the Lisp name is the same under any
    // features.
    let mut elements = Elements::new(b, e.core, e.end)
        .filter(|d| d.conditionals.is_empty() || b.get(d.core) != Some(&b'"'));
    let first = elements.next()?;
    if is_lisp_symbol(&first) {
        return Some(fold(b, first.start, first.end));
    }
    match elements.next() {
        Some(second) if is_lisp_symbol(&second) => Some(fold(b, second.start, second.end)),
        _ => translated_c_name(b, &first, kind),
    }
}

/// A C name's Lisp name by CFFI's default rule: `_` as `-`, in the reader's case (folded
/// here); a variable's between `*`s. Only a string of C identifier characters is taken.
fn translated_c_name(b: &[u8], e: &Datum, kind: crate::grammar::ForeignName) -> Option<String> {
    let text = &b[e.start..e.end];
    let inner = text.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    let identifier = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$');
    if inner.is_empty() || inner.len() > 256 || !inner.iter().all(identifier) {
        return None;
    }
    let name: String = inner
        .iter()
        .map(|&c| {
            if c == b'_' {
                '-'
            } else {
                c.to_ascii_lowercase() as char
            }
        })
        .collect();
    Some(match kind {
        crate::grammar::ForeignName::Function => name,
        crate::grammar::ForeignName::Variable => format!("*{name}*"),
    })
}

/// The name inside a list in the name's place of a generic definer: its first element
/// when that is a symbol other than `setf` and not a keyword
/// (`(define-easy-handler (hello :uri "/") ...)` names `hello`); `None` when the list
/// itself is the name (`(setf foo)`, `(:get "/")`).
pub(super) fn inferred_name(b: &[u8], list: &Datum) -> Option<String> {
    let first = Elements::new(b, list.core, list.end).next()?;
    let token = &b[first.start..first.end];
    let symbol = is_symbol_start(b, first.start) && !is_number(token) && token[0] != b':';
    (symbol && !symbol_key_is(token, "setf")).then(|| fold(b, first.start, first.end))
}

/// The child forms of a container, from element `n` on: lists, not declarations; at
/// most [`MAX_CHILDREN`], with the line of the first one not listed.
pub(super) fn children<'a>(
    parts: &mut Parts<'a>,
    n: usize,
    grammar: &'a Grammar,
    (form_start, form_line): (usize, usize),
    depth: usize,
    scratch: &mut Scratch,
) -> (Vec<OutlineItem<'a>>, Option<usize>) {
    let b = parts.b;
    let mut children = Vec::new();
    if depth >= MAX_CONTAINER_DEPTH {
        return (children, None);
    }
    let mut i = n;
    let mut lines = LineCounter::starting_at(form_start, form_line);
    while let Some(child) = parts.get(i).cloned() {
        i += 1;
        // Children are the forms inside: not atoms, not declarations.
        if !child.core_is_list || first_element_is(b, &child, "declare") {
            continue;
        }
        let start_line = lines.line_of(b, child.start);
        if children.len() == MAX_CHILDREN {
            return (children, Some(start_line));
        }
        let end_line = lines.line_of(b, child.end - 1);
        children.push(OutlineItem {
            kind: ItemKind::Form,
            start: child.start,
            end: child.end,
            start_line,
            end_line,
            form: None,
        });
        let slot = &mut children.last_mut().expect("just pushed").form;
        let form = slot.insert(Form::unclassified(b, child));
        classify(form, grammar, start_line, depth + 1, scratch);
    }
    (children, None)
}
