//! Derived definitions (docs/find.md#derived-definitions): the names a form makes without
//! spelling them as its name, each with its kind and the slot or option that makes it.
//!
//! Which rule applies is data: the `:derives` key of the form's definer table entry
//! (`grammar/definers.lisp`). The rules read the form's elements as the Lisp macro would
//! read its arguments, from the source text; nothing is evaluated:
//!
//! - `:structure` (`defstruct`): constructors (the default `make-NAME`, every
//!   `(:constructor NAME [BOA-LIST])`, none for `(:constructor nil)`), the copier, the
//!   predicate (none for a `:type` structure that is not `:named`), each slot's accessor
//!   `CONC-NAME` + slot (`:conc-name` as given, `nil` for none, `NAME-` by default) and its
//!   `(setf ...)` unless `:read-only`; the slots of an `:include`d structure come from
//!   [`included`], which sees every structure of the scope.
//! - `:class-slots` (`defclass`, `define-condition`): each slot's `:accessor` (and its
//!   `(setf ...)`), `:reader`, `:writer`.
//! - `:brief-slots` (metatilities' `defclass*`): the same, and the brief slot syntax
//!   `(NAME [INITFORM] [FLAGS] [DOC] OPTION...)` read as its `parse-brief-slot` reads it:
//!   a flag symbol holding `A` makes the accessor `NAME` and `(setf NAME)`, else `R` the
//!   reader `NAME` and `W` the writer `(setf NAME)`; the class option
//!   `:automatic-accessors` gives every slot without one an accessor.
//! - `:methods` (`defgeneric`): each `(:method ...)` option, with its method key.
//! - `:setf-expander` (`defsetf`, `define-setf-expander`): `(setf NAME)`.
//! - `:package` (`defpackage`, `define-package`): each `:nicknames` name, and the name
//!   itself when it is written as a string.
//!
//! Work is linear in the form: each element is read once; [`included`] follows at most
//! [`MAX_INCLUDE_DEPTH`] parents per structure. No recursion.

use crate::grammar::{Definer, Derives};
use crate::outline::{fold, is_number, Form};
use crate::scan::{Datum, Elements};
use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;

/// `:include` chains are followed this far (a cycle or a hostile chain stops here).
pub(crate) const MAX_INCLUDE_DEPTH: usize = 16;

/// One name a form makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Derived {
    /// `constructor`, `copier`, `predicate`, `accessor`, `setf-accessor`, `reader`,
    /// `writer`, `method`, `setf-expander`, `package`, `nickname`.
    pub kind: &'static str,
    /// The name: `make-point`, `(setf point-x)`, `pkg::offset`.
    pub name: String,
    /// Methods: `NAME QUALIFIERS (SPECIALIZERS)`, as the outline prints a `defmethod`.
    pub key: Option<String>,
    /// The bytes of the slot or option that makes it (the form's name for a default).
    pub start: usize,
    pub end: usize,
}

/// A structure as [`included`] needs it: its name, accessor prefix, own slots, parent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Structure {
    /// The name, folded (lowercase, no package, no escapes).
    pub name: String,
    /// The accessor prefix, folded (`""` for `(:conc-name nil)`).
    pub conc: String,
    /// Its own slots: folded name, read-only.
    pub slots: Vec<(String, bool)>,
    /// `(:include PARENT ...)`: the parent's folded name and the option's bytes.
    pub include: Option<(String, usize, usize)>,
    /// The included slots the `:include` option redescribes (`(:include p (slot 0))`):
    /// folded name, read-only.
    pub redescribed: Vec<(String, bool)>,
}

/// What one form makes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Derivation {
    pub derived: Vec<Derived>,
    /// For a structure: what an including structure needs of it.
    pub structure: Option<Structure>,
}

/// The derived definitions of `form` (none unless its definer names a `:derives` rule).
pub(crate) fn derive(form: &Form) -> Derivation {
    derive_read(form, &|_, _| true)
}

/// [`derive`], reading the form as the reader would: an element under `#+expression`
/// (`plus`) or `#-expression` is left out when `reads(plus, expression)` is false (the
/// `features` of a search: a slot only another implementation reads makes nothing).
pub(crate) fn derive_read(form: &Form, reads: &dyn Fn(bool, &[u8]) -> bool) -> Derivation {
    let mut out = Derivation::default();
    let Some(entry) = form.entry() else {
        return out;
    };
    let Some(rule) = entry.derives else {
        return out;
    };
    let (b, datum) = (form.bytes(), form.datum());
    if !datum.core_is_list || datum.quoted {
        return out;
    }
    let keep = |d: &Datum| {
        d.conditionals.iter().all(|c| {
            let text = &b[c.start..c.end];
            text.len() > 2 && reads(text[1] == b'+', &text[2..])
        })
    };
    let elements: Vec<Datum> = Elements::new(b, datum.core, datum.end)
        .filter(|d| keep(d))
        .collect();
    let form = Parsed {
        b,
        elements,
        entry,
        keep: &keep,
    };
    match rule {
        Derives::Structure => form.structure(&mut out),
        Derives::ClassSlots => form.class_slots(&mut out.derived),
        Derives::BriefSlots => form.brief_slots(&mut out.derived),
        Derives::Methods => form.methods(&mut out.derived),
        Derives::SetfExpander => form.setf_expander(&mut out.derived),
        Derives::Package => form.package(&mut out.derived),
    }
    out
}

/// The accessors a structure gets from the structures it includes, for every structure
/// of `structures` that has an `:include`, handed to `f` with the structure's index (until
/// it breaks). A parent is found by name among `structures` (the first of that name); one
/// not there gives nothing.
///
/// Work is bounded by [`MAX_INCLUDE_DEPTH`] times the slots and structures given: many
/// structures including one large parent would otherwise make work quadratic in the
/// input. Returns false when that bound stopped the walk (not every accessor was made).
pub(crate) fn included(
    structures: &[Structure],
    f: &mut dyn FnMut(usize, Derived) -> ControlFlow<()>,
) -> bool {
    let mut by_name: HashMap<&str, usize> = HashMap::new();
    for (i, s) in structures.iter().enumerate() {
        by_name.entry(s.name.as_str()).or_insert(i);
    }
    let slots: usize = structures
        .iter()
        .map(|s| s.slots.len() + s.redescribed.len())
        .sum();
    let mut budget = MAX_INCLUDE_DEPTH.saturating_mul(slots + structures.len());
    for (i, s) in structures.iter().enumerate() {
        let Some((parent, start, end)) = &s.include else {
            continue;
        };
        let mut next = by_name.get(parent.as_str()).copied();
        if next.is_none() {
            // A parent outside the scope (kmrcl's `(:include sb-sys:fd-stream (bout
            // #'byte-array-bout))`): of its slots, those the option names are known.
            for (slot, read_only) in &s.redescribed {
                let name = format!("{}{slot}", s.conc);
                for d in accessor_pair(name, *read_only, *start, *end) {
                    if f(i, d).is_break() {
                        return true;
                    }
                }
            }
            continue;
        }
        // A slot made once (the structure's own, one of a nearer ancestor) is not made
        // again from a farther ancestor; a redescription's `:read-only` is the slot's.
        let mut made: HashSet<&str> = s.slots.iter().map(|(n, _)| n.as_str()).collect();
        let mut read_only_as: HashMap<&str, bool> = s
            .redescribed
            .iter()
            .map(|(n, r)| (n.as_str(), *r))
            .collect();
        // A cycle (`a` includes `b` includes `a`) ends at the first structure seen again.
        let mut seen = vec![i];
        while let Some(p) = next.filter(|p| seen.len() <= MAX_INCLUDE_DEPTH && !seen.contains(p)) {
            seen.push(p);
            let ancestor = &structures[p];
            for (slot, read_only) in &ancestor.slots {
                if budget == 0 {
                    return false;
                }
                budget -= 1;
                if !made.insert(slot.as_str()) {
                    continue;
                }
                let name = format!("{}{slot}", s.conc);
                // The parent's own accessor of the same name is the parent's definition.
                if s.conc == ancestor.conc {
                    continue;
                }
                let read_only = read_only_as.get(slot.as_str()).unwrap_or(read_only);
                for d in accessor_pair(name, *read_only, *start, *end) {
                    if f(i, d).is_break() {
                        return true;
                    }
                }
            }
            for (n, r) in &ancestor.redescribed {
                if budget == 0 {
                    return false;
                }
                budget -= 1;
                read_only_as.entry(n.as_str()).or_insert(*r);
            }
            next = ancestor
                .include
                .as_ref()
                .and_then(|(grandparent, _, _)| by_name.get(grandparent.as_str()).copied());
        }
    }
    true
}

/// A form's elements, read once, and which elements the reader reads.
struct Parsed<'a> {
    b: &'a [u8],
    elements: Vec<Datum>,
    entry: &'a Definer,
    keep: Keep<'a>,
}

/// Whether the reader reads an element (its `#+`/`#-` prefixes).
type Keep<'k> = &'k dyn Fn(&Datum) -> bool;

impl Parsed<'_> {
    fn structure(&self, out: &mut Derivation) {
        let (b, keep) = (self.b, self.keep);
        let Some(head) = self.elements.get(self.entry.name.unwrap_or(1)) else {
            return;
        };
        let (name_datum, options) = if head.core_is_list {
            let mut parts = list(b, head, keep);
            if parts.is_empty() {
                return;
            }
            let first = parts.remove(0);
            (first, parts)
        } else {
            (head.clone(), Vec::new())
        };
        let Some(name) = symbol_text(b, &name_datum).map(fold_symbol) else {
            return;
        };
        let options = StructOptions::read(b, &options, keep);
        let at = (name_datum.start, name_datum.end);
        let conc = options.conc.clone().unwrap_or_else(|| format!("{name}-"));
        let derived = &mut out.derived;
        if options.default_constructor {
            derived.push(derived_at("constructor", format!("make-{name}"), at));
        }
        derived.extend(
            options
                .constructors
                .iter()
                .map(|(n, s, e)| derived_at("constructor", n.clone(), (*s, *e))),
        );
        push_named(
            derived,
            "copier",
            &options.copier,
            format!("copy-{name}"),
            at,
        );
        if !options.typed || options.named {
            push_named(
                derived,
                "predicate",
                &options.predicate,
                format!("{name}-p"),
                at,
            );
        }
        let mut slots = Vec::new();
        let from = self.entry.slots_from.unwrap_or(2);
        for (k, slot) in self.elements.iter().enumerate().skip(from) {
            // A leading string is the docstring.
            if k == from && b.get(slot.core) == Some(&b'"') {
                continue;
            }
            let Some((slot_name, read_only)) = struct_slot(b, slot, keep) else {
                continue;
            };
            let accessor = format!("{conc}{slot_name}");
            derived.extend(accessor_pair(accessor, read_only, slot.start, slot.end));
            slots.push((slot_name, read_only));
        }
        out.structure = Some(Structure {
            name,
            conc,
            slots,
            include: options.include,
            redescribed: options.include_slots,
        });
    }

    fn class_slots(&self, out: &mut Vec<Derived>) {
        let (b, keep) = (self.b, self.keep);
        let Some(slots) = self.entry.slots.and_then(|n| self.elements.get(n)) else {
            return;
        };
        if !slots.core_is_list || slots.quoted {
            return;
        }
        for slot in list(b, slots, keep).iter().filter(|s| s.core_is_list) {
            let parts = list(b, slot, keep);
            for (key, value) in slot_options(b, parts.get(1..).unwrap_or_default()) {
                let kind = match symbol_text(b, key).map(fold_symbol).as_deref() {
                    Some("accessor") => "accessor",
                    Some("reader") => "reader",
                    Some("writer") => "writer",
                    _ => continue,
                };
                let name = fold(b, value.core, value.end);
                if name.is_empty() || symbol_text(b, value).is_none() && kind != "writer" {
                    continue;
                }
                let at = (slot.start, slot.end);
                if kind == "accessor" {
                    let setf = format!("(setf {name})");
                    out.push(derived_at("accessor", name, at));
                    out.push(derived_at("setf-accessor", setf, at));
                } else {
                    out.push(derived_at(kind, name, at));
                }
            }
        }
    }

    /// metatilities' `defclass*` (`parse-brief-slot` in its `defclass-star.lisp`), for
    /// the names it makes. A docstring in the slots' place moves them one element on, as
    /// the macro reads it.
    fn brief_slots(&self, out: &mut Vec<Derived>) {
        let (b, keep) = (self.b, self.keep);
        let Some(mut at) = self.entry.slots else {
            return;
        };
        if self
            .elements
            .get(at)
            .is_some_and(|d| b.get(d.core) == Some(&b'"'))
        {
            at += 1;
        }
        let Some(slots) = self.elements.get(at) else {
            return;
        };
        if !slots.core_is_list || slots.quoted {
            return;
        }
        let automatic = self.elements[at + 1..].iter().any(|option| {
            let key = if option.core_is_list {
                list(b, option, keep).into_iter().next()
            } else {
                Some(option.clone())
            };
            key.is_some_and(|k| is_keyword(b, &k) && symbol_is(b, &k, "automatic-accessors"))
        });
        for slot in list(b, slots, keep) {
            let place = (slot.start, slot.end);
            let (name, made) = if slot.core_is_list {
                let parts = list(b, &slot, keep);
                let Some(name) = parts.first().filter(|d| symbol_text(b, d).is_some()) else {
                    continue;
                };
                let name = fold(b, name.core, name.end);
                let made = brief_slot(b, &name, &parts[1..], place, out);
                (name, made)
            } else if symbol_text(b, &slot).is_some() {
                (fold(b, slot.core, slot.end), false)
            } else {
                continue;
            };
            if automatic && !made && !name.is_empty() {
                out.extend(accessor_pair(name, false, place.0, place.1));
            }
        }
    }

    fn methods(&self, out: &mut Vec<Derived>) {
        let (b, keep) = (self.b, self.keep);
        let Some(name) = self
            .entry
            .name
            .and_then(|n| self.elements.get(n))
            .map(|d| fold(b, d.start, d.end))
        else {
            return;
        };
        let from = self.entry.options.unwrap_or(3);
        for option in self.elements.iter().skip(from).filter(|o| o.core_is_list) {
            let parts = list(b, option, keep);
            let is_method = parts
                .first()
                .is_some_and(|k| is_keyword(b, k) && symbol_is(b, k, "method"));
            if !is_method {
                continue;
            }
            let mut key = name.clone();
            let mut specializers = None;
            for part in &parts[1..] {
                if part.core_is_list {
                    specializers = Some(method_specializers(b, part, keep));
                    break;
                }
                key.push(' ');
                key.push_str(&fold(b, part.start, part.end));
            }
            let Some(specializers) = specializers else {
                continue;
            };
            key.push_str(&format!(" ({})", specializers.join(" ")));
            out.push(Derived {
                kind: "method",
                name: name.clone(),
                key: Some(key),
                start: option.start,
                end: option.end,
            });
        }
    }

    fn setf_expander(&self, out: &mut Vec<Derived>) {
        let b = self.b;
        let Some(name) = self.entry.name.and_then(|n| self.elements.get(n)) else {
            return;
        };
        if symbol_text(b, name).is_some() {
            let text = fold(b, name.core, name.end);
            let at = (name.start, name.end);
            out.push(derived_at("setf-expander", format!("(setf {text})"), at));
        }
    }

    fn package(&self, out: &mut Vec<Derived>) {
        let (b, keep) = (self.b, self.keep);
        if let Some(name) = self.entry.name.and_then(|n| self.elements.get(n)) {
            if b.get(name.core) == Some(&b'"') {
                let at = (name.start, name.end);
                out.push(derived_at("package", string_designator(b, name), at));
            }
        }
        let from = self.entry.options.unwrap_or(2);
        for option in self.elements.iter().skip(from).filter(|o| o.core_is_list) {
            let parts = list(b, option, keep);
            let nicknames = parts
                .first()
                .is_some_and(|k| is_keyword(b, k) && symbol_is(b, k, "nicknames"));
            if nicknames {
                for nickname in &parts[1..] {
                    let at = (nickname.start, nickname.end);
                    out.push(derived_at("nickname", string_designator(b, nickname), at));
                }
            }
        }
    }
}

/// The options of a `defstruct` name list, as they decide the derived names.
#[derive(Default)]
struct StructOptions {
    /// `None`: the default `NAME-`.
    conc: Option<String>,
    default_constructor: bool,
    constructors: Vec<(String, usize, usize)>,
    /// `None`: the default name; `Some(None)`: none; `Some(Some(..))`: this one.
    copier: Option<Option<(String, usize, usize)>>,
    predicate: Option<Option<(String, usize, usize)>>,
    include: Option<(String, usize, usize)>,
    /// The included slots the `:include` option redescribes: name, read-only.
    include_slots: Vec<(String, bool)>,
    typed: bool,
    named: bool,
}

impl StructOptions {
    fn read(b: &[u8], options: &[Datum], keep: Keep) -> StructOptions {
        let mut o = StructOptions {
            default_constructor: true,
            ..StructOptions::default()
        };
        let mut constructor_given = false;
        let mut bare_constructor = false;
        for option in options {
            // `:named` or `(:conc-name p-)`: a keyword alone is the option without arguments.
            let parts = if option.core_is_list {
                list(b, option, keep)
            } else {
                vec![option.clone()]
            };
            let Some(key) = parts.first().filter(|k| is_keyword(b, k)) else {
                continue;
            };
            let Some(key) = symbol_text(b, key).map(fold_symbol) else {
                continue;
            };
            let at = (option.start, option.end);
            let argument = parts.get(1);
            let named = |d: &Datum| -> Option<(String, usize, usize)> {
                let text = symbol_text(b, d)?;
                (fold_symbol(text) != "nil").then(|| (fold(b, d.core, d.end), at.0, at.1))
            };
            match key.as_str() {
                "conc-name" => {
                    o.conc = Some(match argument {
                        None => String::new(),
                        Some(d) if b.get(d.core) == Some(&b'"') => string_designator(b, d),
                        Some(d) => symbol_text(b, d)
                            .map(fold_symbol)
                            .filter(|n| n != "nil")
                            .unwrap_or_default(),
                    })
                }
                "constructor" => {
                    constructor_given = true;
                    match argument {
                        None => bare_constructor = true,
                        Some(d) => {
                            if let Some(c) = named(d) {
                                o.constructors.push(c);
                            }
                        }
                    }
                }
                // `(:copier)`: the default name; `(:copier nil)`: none.
                "copier" => o.copier = argument.map(named),
                "predicate" => o.predicate = argument.map(named),
                "include" => {
                    o.include = argument
                        .and_then(|d| symbol_text(b, d))
                        .map(|t| (fold_symbol(t), at.0, at.1));
                    // `(:include parent (slot default) ...)`: slots the form itself names.
                    // Only lists: a bare symbol there may be another `#+` branch's parent.
                    o.include_slots = parts
                        .iter()
                        .skip(2)
                        .filter(|d| d.core_is_list)
                        .filter_map(|d| struct_slot(b, d, keep))
                        .collect();
                }
                "type" => o.typed = true,
                "named" => o.named = true,
                _ => {}
            }
        }
        o.default_constructor = !constructor_given || bare_constructor;
        o
    }
}

/// Pushes the default `name` (at the structure's name) or the option's own name.
fn push_named(
    out: &mut Vec<Derived>,
    kind: &'static str,
    option: &Option<Option<(String, usize, usize)>>,
    default: String,
    at: (usize, usize),
) {
    match option {
        None => out.push(derived_at(kind, default, at)),
        Some(None) => {}
        Some(Some((name, start, end))) => out.push(derived_at(kind, name.clone(), (*start, *end))),
    }
}

/// `NAME` and, unless read-only, `(setf NAME)`: a structure slot's accessors.
fn accessor_pair(name: String, read_only: bool, start: usize, end: usize) -> Vec<Derived> {
    let setf = (!read_only).then(|| format!("(setf {name})"));
    let mut pair = vec![derived_at("accessor", name, (start, end))];
    pair.extend(setf.map(|s| derived_at("setf-accessor", s, (start, end))));
    pair
}

fn derived_at(kind: &'static str, name: String, (start, end): (usize, usize)) -> Derived {
    Derived {
        kind,
        name,
        key: None,
        start,
        end,
    }
}

/// A `defstruct` slot: `name` or `(name [default] [:read-only x] [:type t])`.
fn struct_slot(b: &[u8], slot: &Datum, keep: Keep) -> Option<(String, bool)> {
    if !slot.core_is_list {
        return symbol_text(b, slot).map(|t| (fold_symbol(t), false));
    }
    let parts = list(b, slot, keep);
    let name = fold_symbol(symbol_text(b, parts.first()?)?);
    let mut read_only = false;
    for (key, value) in slot_options(b, parts.get(2..).unwrap_or_default()) {
        if symbol_is(b, key, "read-only") {
            read_only = !symbol_is(b, value, "nil");
        }
    }
    Some((name, read_only))
}

/// The `(keyword value)` pairs of a slot's options. A value written twice under
/// `#+`/`#-` (`:initform #-lispworks 'character #+lispworks 'base-char`) is one value to
/// the reader: an element in a keyword's place that is not a keyword is stepped over.
fn slot_options<'d>(b: &[u8], options: &'d [Datum]) -> Vec<(&'d Datum, &'d Datum)> {
    let mut pairs = Vec::new();
    let mut i = 0;
    while i < options.len() {
        if !is_keyword(b, &options[i]) {
            i += 1;
            continue;
        }
        let Some(value) = options.get(i + 1) else {
            break;
        };
        pairs.push((&options[i], value));
        i += 2;
    }
    pairs
}

/// The slot options `parse-brief-slot` accepts as options; anything else first in a
/// slot is its initform.
const CLOS_SLOT_OPTIONS: [&str; 8] = [
    "initform",
    "initarg",
    "reader",
    "writer",
    "accessor",
    "documentation",
    "type",
    "allocation",
];

/// One brief slot's names, pushed to `out`, its items after the name read in
/// `parse-brief-slot`'s order: an initform (unless the first item is an option or
/// `:initform` is given), one flag symbol, one docstring, then option and value pairs
/// (`:accessor x` and the like make their names as in `defclass`). Returns whether an
/// accessor, reader or writer was made (no automatic accessor then).
fn brief_slot(
    b: &[u8],
    name: &str,
    items: &[Datum],
    at: (usize, usize),
    out: &mut Vec<Derived>,
) -> bool {
    let option = |d: &Datum| {
        is_keyword(b, d)
            && symbol_text(b, d)
                .is_some_and(|t| CLOS_SLOT_OPTIONS.contains(&fold_symbol(t).as_str()))
    };
    let given = |key: &str| {
        items
            .iter()
            .any(|d| is_keyword(b, d) && symbol_is(b, d, key))
    };
    let mut accessor = given("accessor");
    // The automatic accessor is left out for an accessor or a flag letter only.
    let mut made = accessor;
    let mut i = 0;
    if !given("initform") && items.first().is_some_and(|d| !option(d)) {
        i = 1;
    }
    let (mut flags_done, mut doc_done) = (false, false);
    while let Some(item) = items.get(i) {
        i += 1;
        let symbol = symbol_text(b, item).filter(|_| !is_keyword(b, item));
        if let (Some(flags), false) = (symbol, flags_done) {
            flags_done = true;
            let flags = fold_symbol(flags);
            if flags.contains('a') {
                accessor = true;
                out.extend(accessor_pair(name.to_string(), false, at.0, at.1));
            }
            if !accessor && flags.contains('r') {
                out.push(derived_at("reader", name.to_string(), at));
            }
            if !accessor && flags.contains('w') {
                out.push(derived_at("writer", format!("(setf {name})"), at));
            }
            made |= ["a", "r", "w"].iter().any(|l| flags.contains(l));
            continue;
        }
        if !doc_done && b.get(item.core) == Some(&b'"') {
            doc_done = true;
            continue;
        }
        // An option and its value.
        let Some(value) = items.get(i) else {
            break;
        };
        i += 1;
        let kind = match symbol_text(b, item)
            .filter(|_| is_keyword(b, item))
            .map(fold_symbol)
        {
            Some(k) if k == "accessor" => "accessor",
            Some(k) if k == "reader" => "reader",
            Some(k) if k == "writer" => "writer",
            _ => continue,
        };
        let made_name = fold(b, value.core, value.end);
        if made_name.is_empty() || symbol_text(b, value).is_none() && kind != "writer" {
            continue;
        }
        if kind == "accessor" {
            out.extend(accessor_pair(made_name, false, at.0, at.1));
        } else {
            out.push(derived_at(kind, made_name, at));
        }
    }
    made
}

/// The specializer of each required parameter of a specialized lambda list (`t` when
/// unspecialized), as the outline shows a method's.
fn method_specializers(b: &[u8], lambda_list: &Datum, keep: Keep) -> Vec<String> {
    let mut out = Vec::new();
    for parameter in list(b, lambda_list, keep) {
        if !parameter.core_is_list {
            if b.get(parameter.core) == Some(&b'&') {
                break;
            }
            out.push("t".to_string());
            continue;
        }
        let parts = list(b, &parameter, keep);
        out.push(
            parts
                .get(1)
                .map_or_else(|| "t".to_string(), |s| fold(b, s.start, s.end)),
        );
    }
    out
}

/// The elements of a list datum.
fn list(b: &[u8], datum: &Datum, keep: Keep) -> Vec<Datum> {
    if !datum.core_is_list {
        return Vec::new();
    }
    Elements::new(b, datum.core, datum.end)
        .filter(|d| keep(d))
        .collect()
}

/// The text of an element that is a symbol (not a list, string, number or `#` object
/// other than `#:`).
fn symbol_text<'b>(b: &'b [u8], d: &Datum) -> Option<&'b str> {
    if d.core_is_list || d.quoted {
        return None;
    }
    let text = std::str::from_utf8(b.get(d.core..d.end)?).ok()?;
    let first = *text.as_bytes().first()?;
    let symbol =
        first != b'"' && (first != b'#' || text.starts_with("#:")) && !is_number(text.as_bytes());
    symbol.then_some(text)
}

fn is_keyword(b: &[u8], d: &Datum) -> bool {
    !d.core_is_list && b.get(d.core) == Some(&b':')
}

fn symbol_is(b: &[u8], d: &Datum, name: &str) -> bool {
    symbol_text(b, d).is_some_and(|t| fold_symbol(t) == name)
}

/// A symbol's name without its package, escapes removed, lowercase (the reader upcases
/// what a name builder such as `defstruct` concatenates; the search folds case).
pub(crate) fn fold_symbol(text: &str) -> String {
    let text = text.strip_prefix("#:").unwrap_or(text);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    let mut in_bars = false;
    while let Some(c) = chars.next() {
        match c {
            '|' => in_bars = !in_bars,
            '\\' => out.extend(chars.next().into_iter().flat_map(char::to_lowercase)),
            ':' if !in_bars => out.clear(),
            _ => out.extend(c.to_lowercase()),
        }
    }
    out
}

/// A string designator's name, lowercase: `"CL-PPCRE"`, `:cl-ppcre`, `#:cl-ppcre`.
fn string_designator(b: &[u8], d: &Datum) -> String {
    let text = String::from_utf8_lossy(b.get(d.core..d.end).unwrap_or_default());
    match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        Some(inner) => inner.replace('\\', "").to_lowercase(),
        None => fold_symbol(&text),
    }
}

#[cfg(test)]
mod tests;
