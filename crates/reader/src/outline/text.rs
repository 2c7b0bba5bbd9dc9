//! The text shown for a form: its signature (the parts the definer entry or the generic
//! rule names), its docstring's first line, conditionals, method qualifiers and
//! specializers, all cut from the source.

use super::*;

/// The text of a form: conditionals, signature, docstring, method parts.
/// `head`: the operator and its grammar entry, as [`classify`] found them (none when the
/// form is not a list headed by a symbol).
pub(super) fn form_text(
    b: &[u8],
    datum: &Datum,
    head: Option<(&str, Option<&Definer>)>,
    name: Option<&str>,
) -> FormText {
    let conditionals: Vec<String> = datum
        .conditionals
        .iter()
        .map(|c| fold(b, c.start, c.end))
        .collect();
    // The text after the conditionals: what the signature shows of an unclassified form.
    let shown_start = datum
        .conditionals
        .last()
        .map_or(datum.start, |c| skip_blank(b, c.end));
    let as_written = || {
        let text = fold_short(b, shown_start, datum.end, SHORT_PART_CHARS);
        let mut text = abbreviate_balanced(text.trim_end(), SHORT_PART_CHARS);
        if text.is_empty() {
            text = fold(b, datum.start, datum.end);
        }
        close_open(&mut text);
        text
    };
    let Some((operator, entry)) = head else {
        return FormText {
            conditionals,
            signature: as_written(),
            ..FormText::default()
        };
    };
    thread_local! {
        // The buffers of the last form whose text was made, reused by the next one.
        static SCRATCH: std::cell::RefCell<Scratch> = Default::default();
    }
    let mut text = SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut scratch) => list_text(b, datum, (operator, entry), name, &mut scratch),
        // Not reentrant (no form's text needs another's), but never panic if it were.
        Err(_) => list_text(b, datum, (operator, entry), name, &mut Scratch::default()),
    });
    // SBCL's `sb-impl::(defun ...)`: the package prefix stays in front of the signature.
    if datum.core > shown_start {
        text.signature = format!("{}{}", fold(b, shown_start, datum.core), text.signature);
        text.closed = false;
    }
    if !text.closed {
        close_open(&mut text.signature);
    }
    text.conditionals = conditionals;
    text
}

/// The text of a list form headed by an operator.
pub(super) fn list_text(
    b: &[u8],
    datum: &Datum,
    (operator, entry): (&str, Option<&Definer>),
    name: Option<&str>,
    scratch: &mut Scratch,
) -> FormText {
    let mut parts = Parts::new(b, datum, scratch);
    let text = match entry {
        Some(d) => definition(&mut parts, d, operator, name, scratch),
        None => plain(&mut parts, operator),
    };
    parts.finish(scratch);
    text
}

/// `(OP ...)`, or `(OP ARG ...)` when the first argument is a symbol or a string.
pub(super) fn plain(parts: &mut Parts, operator: &str) -> FormText {
    let b = parts.b;
    let mut signature = String::with_capacity(operator.len() + 32);
    signature.push('(');
    signature.push_str(operator);
    let mut last_shown = 0;
    if parts
        .first_byte(1)
        .is_some_and(|c| c == b'"' || is_symbol_byte(c))
    {
        if let Some(arg) = parts.get(1) {
            if is_symbol_start(b, arg.start) || b[arg.start] == b'"' {
                signature.push(' ');
                push_short(&mut signature, b, arg.start, arg.end);
                last_shown = 1;
            }
        }
    }
    if parts.exists(last_shown + 1) {
        signature.push_str(" ...");
    }
    signature.push(')');
    FormText {
        signature,
        ..FormText::default()
    }
}

/// The text of a definition; `name` is the name [`defined_name`] read.
pub(super) fn definition(
    parts: &mut Parts,
    d: &Definer,
    operator: &str,
    name: Option<&str>,
    scratch: &mut Scratch,
) -> FormText {
    let mut form = FormText::default();
    if d.whole {
        form.signature = parts.read_whole();
        return form;
    }
    // (element index, text) of everything shown, sorted by index at the end.
    let mut shown = scratch.shown.pop().unwrap_or_default();
    name_part(parts, d, name, &mut shown);
    let mut body = d.body;
    if d.inferred {
        body = inferred_parts(parts, d.name.unwrap_or(1) + 1, &mut shown);
    }
    if d.qualifiers {
        body = Some(method_parts(parts, d, &mut shown, &mut form));
    }
    list_parts(parts, d, &mut shown);
    let skipped = slot_parts(parts, d, &mut shown, &mut form) | value_part(parts, d, &mut shown);
    fixed_parts(parts, d, &mut shown);
    keyword_parts(parts, d, &mut shown, &mut form);
    docstring(parts, d, body, &mut form);
    (form.signature, form.closed) = signature(parts, operator, name, &mut shown, skipped);
    shown.clear();
    scratch.shown.push(shown);
    form
}

/// The defined name: as the name, or the list in its place when short.
fn name_part(parts: &mut Parts, d: &Definer, name: Option<&str>, shown: &mut Vec<(usize, Shown)>) {
    let b = parts.b;
    let Some(n) = d.name else { return };
    let Some(e) = parts.get(n).cloned() else {
        return;
    };
    if d.foreign_name.is_some() {
        // The C name stays in sight: `("close" close-socket)`, `"SSL_new"` (folded as
        // any part: comments inside it are not shown).
        let text = fold_short(b, e.start, e.end, SHORT_PART_CHARS);
        let part = if text.chars().count() <= SHORT_PART_CHARS {
            Shown::Text(text)
        } else {
            Shown::Name
        };
        shown.push((n, part));
        return;
    }
    if !((d.name_in_list || d.inferred) && e.core_is_list) {
        shown.push((n, Shown::Name));
        return;
    }
    let text = fold_short(b, e.start, e.end, SHORT_PART_CHARS);
    let name = name.unwrap_or_default();
    let part = if text.chars().count() <= SHORT_PART_CHARS {
        Shown::Text(text)
    } else if name.starts_with('(') {
        // The list is the name (`(setf foo)`): names are shown whole.
        Shown::Name
    } else {
        Shown::Text(format!("({name} ...)"))
    };
    shown.push((n, part));
}

/// A method's qualifiers and specialized lambda list; returns where its body starts.
fn method_parts(
    parts: &mut Parts,
    d: &Definer,
    shown: &mut Vec<(usize, Shown)>,
    form: &mut FormText,
) -> usize {
    let b = parts.b;
    let mut i = d.name.unwrap_or(1) + 1;
    while let Some(e) = parts.get(i).cloned() {
        shown.push((i, Shown::Fold(e.start, e.end)));
        if e.core_is_list && !e.quoted {
            form.specializers = Some(specializers(b, &e));
            break;
        }
        form.qualifiers.push(fold(b, e.start, e.end));
        i += 1;
    }
    i + 1
}

/// The lambda list and the superclasses, folded.
fn list_parts(parts: &mut Parts, d: &Definer, shown: &mut Vec<(usize, Shown)>) {
    for n in [d.lambda_list, d.superclasses].into_iter().flatten() {
        if let Some(e) = parts.get(n) {
            shown.push((n, Shown::Fold(e.start, e.end)));
        }
    }
}

/// Slot names (a slot list, or slots from an element on, after an optional docstring);
/// returns whether a part was left out (that docstring).
fn slot_parts(
    parts: &mut Parts,
    d: &Definer,
    shown: &mut Vec<(usize, Shown)>,
    form: &mut FormText,
) -> bool {
    let b = parts.b;
    if let Some(n) = d.slots {
        if let Some(e) = parts.get(n).cloned() {
            let names = if e.core_is_list {
                let slot_names: Vec<String> = Elements::new(b, e.core, e.end)
                    .map(|slot| slot_name(b, &slot))
                    .collect();
                Shown::Text(format!("({})", slot_names.join(" ")))
            } else {
                Shown::Fold(e.start, e.end)
            };
            shown.push((n, names));
        }
    }
    let mut skipped = false;
    if let Some(n) = d.slots_from {
        let mut i = n;
        if parts.first_byte(i) == Some(b'"') {
            form.doc = parts.get(i).and_then(|e| doc_line(b, e));
            skipped = true;
            i += 1;
        }
        while let Some(slot) = parts.get(i) {
            shown.push((i, Shown::Text(slot_name(b, slot))));
            i += 1;
        }
    }
    skipped
}

/// A variable's or constant's value when it is one short line; returns whether it was
/// left out.
fn value_part(parts: &mut Parts, d: &Definer, shown: &mut Vec<(usize, Shown)>) -> bool {
    let b = parts.b;
    let Some(n) = d.value else { return false };
    let Some(e) = parts.get(n).cloned() else {
        return false;
    };
    let one_line = !b[e.start..e.end].contains(&b'\n');
    let text = if one_line {
        fold_short(b, e.start, e.end, SHORT_PART_CHARS)
    } else {
        String::new()
    };
    if one_line && text.chars().count() <= SHORT_PART_CHARS {
        shown.push((n, Shown::Text(text)));
        false
    } else {
        true
    }
}

/// The elements the entry always shows, shortened.
fn fixed_parts(parts: &mut Parts, d: &Definer, shown: &mut Vec<(usize, Shown)>) {
    let b = parts.b;
    for &n in &d.shown {
        if let Some(e) = parts.get(n).cloned() {
            let text = fold_short(b, e.start, e.end, SHORT_PART_CHARS);
            let text = if text.chars().count() > SHORT_PART_CHARS && e.core_is_list {
                "(...)".to_string()
            } else {
                abbreviated(text, SHORT_PART_CHARS)
            };
            shown.push((n, Shown::Text(text)));
        }
    }
}

/// The keyword arguments the entry shows, and the docstring of its doc keyword.
fn keyword_parts(
    parts: &mut Parts,
    d: &Definer,
    shown: &mut Vec<(usize, Shown)>,
    form: &mut FormText,
) {
    if d.keywords.is_empty() && d.doc_keyword.is_none() {
        return;
    }
    let b = parts.b;
    let mut i = d.name.unwrap_or(0) + 1;
    while let Some(e) = parts.get(i).cloned() {
        i += 1;
        // Only a keyword can match (the table's keys all start with `:`): the other
        // elements, often the whole body, are not folded to find that out.
        if b[e.start] != b':' {
            continue;
        }
        let written = fold(b, e.start, e.end);
        let key = written.to_lowercase();
        if d.keywords.contains(&key) {
            if let Some(value) = parts.get(i).map(|v| fold_short(b, v.start, v.end, 200)) {
                shown.push((i - 1, Shown::Text(written)));
                shown.push((i, Shown::Text(abbreviated(value, 200))));
            }
        }
        if d.doc_keyword.as_deref() == Some(key.as_str()) {
            form.doc = parts.get(i).and_then(|v| doc_line(b, v));
        }
    }
}

/// The docstring: the entry's docstring element, else the body's, else a
/// `(:documentation ...)` option.
fn docstring(parts: &mut Parts, d: &Definer, body: Option<usize>, form: &mut FormText) {
    let b = parts.b;
    if let Some(n) = d.doc {
        if parts.first_byte(n) == Some(b'"') {
            form.doc = parts.get(n).and_then(|e| doc_line(b, e));
        }
    }
    if let Some(n) = body {
        form.doc = form.doc.take().or_else(|| body_docstring(parts, n));
    }
    if let Some(n) = d.options {
        let mut i = n;
        while let Some(e) = parts.get(i) {
            if e.core_is_list && first_element_is(b, e, "documentation") {
                let mut option = Elements::new(b, e.core, e.end);
                form.doc = option.nth(1).and_then(|s| doc_line(b, &s));
            }
            i += 1;
        }
    }
}

/// The most room a signature is given before its parts are written (it grows past it).
const SIGNATURE_ROOM: usize = 512;

/// The signature from the shown parts in element order: `...` where elements were left
/// out or follow, and only the closers the file has; and whether it is known balanced
/// (its parts were, and its `)` closes it).
fn signature(
    parts: &mut Parts,
    operator: &str,
    name: Option<&str>,
    shown: &mut Vec<(usize, Shown)>,
    skipped: bool,
) -> (String, bool) {
    let b = parts.b;
    shown.sort_by_key(|(i, _)| *i);
    shown.dedup_by_key(|(i, _)| *i);
    let last_shown = shown.last().map_or(0, |(i, _)| *i);
    let gaps = shown.iter().enumerate().any(|(k, (i, _))| *i != k + 1);
    // Room for every part and the closing ` ...)`, in one allocation (a fold is never
    // longer than its source, but for U+FFFD); at most a few lines' worth, so that a
    // signature kept in an outline never holds much more than its text.
    let room: usize = shown
        .iter()
        .map(|(_, part)| match part {
            Shown::Name => name.map_or(0, str::len),
            Shown::Fold(start, end) => end.saturating_sub(*start),
            Shown::Short { start, end, max } => end.saturating_sub(*start).min(*max),
            Shown::Text(text) => text.len(),
        })
        .sum();
    let room = operator.len() + room + shown.len() + 6;
    let mut signature = String::with_capacity(room.min(SIGNATURE_ROOM));
    signature.push('(');
    signature.push_str(operator);
    for (_, part) in shown.iter() {
        signature.push(' ');
        match part {
            Shown::Name => signature.push_str(name.unwrap_or_default()),
            Shown::Fold(start, end) => fold_into(&mut signature, b, *start, *end),
            Shown::Short { start, end, max } => {
                push_abbreviated(&mut signature, b, *start, *end, *max)
            }
            Shown::Text(text) => signature.push_str(text),
        }
    }
    let trimmed = signature.trim_end().len();
    signature.truncate(trimmed);
    let state = Balance::of(&signature);
    if state.depth > 1 || state.string || state.bar || state.escape {
        // A part the file leaves open (an unclosed form): `...` and the closers that
        // the file does not have, never a `)` that looks like the file's.
        state.close(&mut signature);
        (signature, false)
    } else {
        if skipped || gaps || parts.exists(last_shown + 1) {
            signature.push_str(" ...");
        }
        signature.push(')');
        (signature, true)
    }
}

/// The parts a generic `def...` form shows after its name, from element `n`: the first
/// list, after at most [`MAX_INFERRED_QUALIFIERS`] keywords (`:around`), with those
/// keywords; nothing when no list follows the name so. Returns where the body starts
/// (after the list) for the docstring.
pub(super) fn inferred_parts(
    parts: &mut Parts,
    n: usize,
    shown: &mut Vec<(usize, Shown)>,
) -> Option<usize> {
    let mut i = n;
    while i < n + MAX_INFERRED_QUALIFIERS && parts.first_byte(i) == Some(b':') {
        i += 1;
    }
    let list = parts.get(i)?;
    if !list.core_is_list || list.quoted {
        return None;
    }
    let (start, end) = (list.start, list.end);
    for k in n..i {
        let e = parts.get(k)?;
        shown.push((k, Shown::Fold(e.start, e.end)));
    }
    let max = INFERRED_LIST_CHARS;
    shown.push((i, Shown::Short { start, end, max }));
    Some(i + 1)
}

/// A docstring at body position `n`: after declarations, a string followed by more forms.
pub(super) fn body_docstring(parts: &mut Parts, mut n: usize) -> Option<String> {
    let b = parts.b;
    loop {
        let at = parts.start(n)?;
        match b[at] {
            b'"' => {
                let e = parts.get(n)?.clone();
                return if parts.exists(n + 1) {
                    doc_line(b, &e)
                } else {
                    None
                };
            }
            // Only a declaration is read whole (to step over it): the first body form is
            // often most of the body.
            b'(' => {
                if !list_head_is(b, at, parts.list.1, "declare") {
                    return None;
                }
                parts.get(n)?;
                n += 1;
            }
            _ => return None,
        }
    }
}

/// The specializer of each required parameter of a specialized lambda list.
pub(super) fn specializers(b: &[u8], lambda_list: &Datum) -> Vec<String> {
    let mut out = Vec::new();
    for param in Elements::new(b, lambda_list.core, lambda_list.end) {
        if param.core_is_list {
            let mut inner = Elements::new(b, param.core, param.end);
            out.push(
                inner
                    .nth(1)
                    .map_or_else(|| "t".into(), |s| fold(b, s.start, s.end)),
            );
        } else if b[param.start] == b'&' {
            break;
        } else {
            out.push("t".into());
        }
    }
    out
}

/// The first line of the docstring `e`, unescaped, at most `DOC_CHARS` characters.
pub(super) fn doc_line(b: &[u8], e: &Datum) -> Option<String> {
    if b.get(e.start) != Some(&b'"') || e.end < e.start + 2 {
        return None;
    }
    let raw = String::from_utf8_lossy(&b[e.start + 1..e.end - 1]);
    let mut text = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => text.extend(chars.next()),

            _ => text.push(c),
        }
    }
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(abbreviate(line, DOC_CHARS))
}

/// A slot specifier's name with any reader conditionals: `size`, `#+sbcl lock`.
pub(super) fn slot_name(b: &[u8], slot: &Datum) -> String {
    let name = first_element_text(b, slot).unwrap_or_else(|| fold(b, slot.core, slot.end));
    let mut text: Vec<String> = slot
        .conditionals
        .iter()
        .map(|c| fold(b, c.start, c.end))
        .collect();
    text.push(name);
    text.join(" ")
}

/// The first element of a list datum, folded (a slot's or structure's name).
pub(super) fn first_element_text(b: &[u8], list: &Datum) -> Option<String> {
    if !list.core_is_list {
        return None;
    }
    Elements::new(b, list.core, list.end)
        .next()
        .map(|e| fold(b, e.start, e.end))
}

/// Whether the first element of a list datum is the symbol `key` (`declare`,
/// `documentation`) in any package or case.
pub(super) fn first_element_is(b: &[u8], list: &Datum, key: &str) -> bool {
    list_head_is(b, list.core, list.end, key)
}

/// Whether the list opened at `open` starts with the symbol `key`; only that first
/// element is read (`limit`: where the list ends, or any end of an enclosing list).
pub(super) fn list_head_is(b: &[u8], open: usize, limit: usize, key: &str) -> bool {
    let mut elements = Elements::new(b, open, limit);
    match elements.peek_start() {
        Some(at) if is_symbol_start(b, at) => elements
            .next()
            .is_some_and(|first| symbol_key_is(&b[first.start..first.end], key)),
        _ => false,
    }
}

/// Whether `symbol_key(token) == key` for a lower-case `key`, without allocating when the
/// token is plain ASCII without escapes (the common case).
pub(super) fn symbol_key_is(token: &[u8], key: &str) -> bool {
    if token.is_ascii() && !token.iter().any(|&c| c == b'|' || c == b'\\') {
        let name = token
            .iter()
            .rposition(|&c| c == b':')
            .map_or(token, |k| &token[k + 1..]);
        name.eq_ignore_ascii_case(key.as_bytes())
    } else {
        symbol_key(&String::from_utf8_lossy(token)) == key
    }
}

/// Whether a token reads as a number (`42`, `-1.5`, `1/2`, `.5`), not a symbol.
pub fn is_number(token: &[u8]) -> bool {
    let digits = token
        .strip_prefix(b"+")
        .or_else(|| token.strip_prefix(b"-"))
        .unwrap_or(token);
    digits
        .first()
        .is_some_and(|c| c.is_ascii_digit() || *c == b'.')
        && digits.iter().any(u8::is_ascii_digit)
        && digits
            .iter()
            .all(|c| c.is_ascii_digit() || b"./eEdDfFsSlL+-".contains(c))
}

pub(super) fn is_symbol_byte(c: u8) -> bool {
    matches!(
        byte_class(c),
        ByteClass::Constituent | ByteClass::Bar | ByteClass::Backslash
    )
}

/// Whether the datum at `at` is a symbol (or number) token: `foo`, `|a b|`, `#:foo`.
pub(super) fn is_symbol_start(b: &[u8], at: usize) -> bool {
    match b.get(at) {
        Some(&c) if is_symbol_byte(c) => true,
        Some(b'#') => b.get(at + 1) == Some(&b':'),
        _ => false,
    }
}
