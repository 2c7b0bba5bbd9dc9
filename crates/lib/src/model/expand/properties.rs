//! Symbol properties a macro reads while it expands (clx's `def-clx-class` reading
//! `(get include 'def-clx-class)`, the slots an earlier `def-clx-class` expansion stored
//! with `(setf (get ',name 'def-clx-class) ',slots)`): a store of the scope's
//! `(setf (get 'SYMBOL 'PROPERTY) VALUE)` forms, those the source writes at top level
//! (inside `progn`/`eval-when` too) and those the expansions of its macros' calls write,
//! read by `(get SYMBOL 'PROPERTY [DEFAULT])` in later expansions. Nothing is evaluated:
//! VALUE is a quoted datum or a self-evaluating atom, anything else is unknown.
//!
//! A file's settings are collected in its order, each expansion seeing the settings
//! before it in the file ([`Store::partial`]: a property not set there yet may be set by
//! another file, so it is unknown). The files' stores are then merged
//! ([`Store::merge`]): a property set to one value in the scope has it; set to different
//! values (another file's, a branch's) it is unknown, as the load order would decide; a
//! property the scope never sets is the default (`nil`), what a scope that is the whole
//! program gives.

use super::datum::Val;
use super::{any_node, Budget, Env, Macro, Macros, MAX_MACRO_DEPTH};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Property settings kept per file at most (each a value the evaluator may copy): past
/// it, the file's further settings are not kept, and the properties they set unknown.
pub(crate) const MAX_SETTINGS_PER_FILE: usize = 4096;

/// A store of symbol properties: (folded symbol name, folded property name) -> value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Store {
    values: HashMap<(String, String), Val>,
    /// Whether every setting of the scope is in it: a property it lacks is the default.
    complete: bool,
    /// Whether some settings were not kept (past [`MAX_SETTINGS_PER_FILE`]): a property
    /// it lacks is unknown.
    overflowed: bool,
}

impl Store {
    /// The store of one file's settings, while they are collected: a property it lacks
    /// may be another file's, unknown.
    pub(crate) fn partial() -> Store {
        Store::default()
    }

    /// The scope's store made of its files' (`parts`, each complete for its file): a
    /// property set to different values is unknown.
    pub(crate) fn merge(parts: impl IntoIterator<Item = Store>) -> Store {
        let mut out = Store {
            complete: true,
            ..Store::default()
        };
        for part in parts {
            out.overflowed |= part.overflowed;
            for (key, value) in part.values {
                match out.values.get_mut(&key) {
                    Some(old) if *old != value => *old = Val::Unknown,
                    Some(_) => {}
                    None => {
                        out.values.insert(key, value);
                    }
                }
            }
        }
        out
    }

    /// The values stored (the pieces of the names a reader of them may build).
    pub(crate) fn values(&self) -> impl Iterator<Item = &Val> {
        self.values.values()
    }

    /// The value of `(get symbol property default)`.
    pub(crate) fn get(&self, symbol: &Val, property: &Val, default: Val) -> Val {
        let (Some(symbol), Some(property)) = (symbol.symbol_name(), property.symbol_name()) else {
            return Val::Unknown;
        };
        match self.values.get(&(symbol.to_string(), property.to_string())) {
            Some(v) => v.clone(),
            None if self.complete && !self.overflowed => default,
            None => Val::Unknown,
        }
    }

    /// Records `(setf (get 'symbol 'property) value ...)` (`form`); a place or value
    /// that is not a literal makes nothing known (a computed symbol could be any).
    fn set(&mut self, form: &Val) {
        let Some(items) = form.items() else { return };
        for pair in items.get(1..).unwrap_or_default().chunks(2) {
            let [place, value] = pair else { return };
            let Some(place) = place.items().filter(|_| place.head() == Some("get")) else {
                continue;
            };
            let (Some(symbol), Some(property)) = (
                place.get(1).and_then(quoted_symbol),
                place.get(2).and_then(quoted_symbol),
            ) else {
                continue;
            };
            if self.values.len() >= MAX_SETTINGS_PER_FILE {
                self.overflowed = true;
                return;
            }
            self.values
                .insert((symbol.to_string(), property.to_string()), literal(value));
        }
    }
}

/// The name of `'symbol`.
fn quoted_symbol(v: &Val) -> Option<&str> {
    match v {
        Val::Quote(q) => q.symbol_name(),
        _ => None,
    }
}

/// The value of a literal form ([`Val::literal_value`]); anything else unknown.
fn literal(v: &Val) -> Val {
    v.literal_value().unwrap_or(Val::Unknown)
}

/// Whether `form` is `(setf (get ...) ...)`.
fn is_setting(form: &Val) -> bool {
    form.head() == Some("setf")
        && form
            .items()
            .and_then(|i| i.get(1))
            .is_some_and(|p| p.head() == Some("get"))
}

/// The properties code reads: their folded names, or any (one read by a computed name).
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Read {
    names: HashSet<String>,
    any: bool,
}

impl Read {
    fn wants(&self, property: &Val) -> bool {
        self.any || quoted_symbol(property).is_some_and(|p| self.names.contains(p))
    }

    fn is_empty(&self) -> bool {
        !self.any && self.names.is_empty()
    }
}

/// Adds to `read` the properties that `body` reads with `get` outside its templates
/// (computing code), and to `calls` the names of `functions` it calls there (an
/// operator or `#'name`). One walk, nothing allocated but its stack.
fn add_read<'a>(
    body: &[Val],
    functions: &'a super::functions::Functions,
    read: &mut Read,
    calls: &mut Vec<&'a str>,
) {
    let mut call = |name: &str| {
        if let Some((k, _)) = functions.get_key_value(name) {
            calls.push(k.as_str());
        }
    };
    // (value, inside a template's literal part)
    let mut stack: Vec<(&Val, bool)> = body.iter().map(|v| (v, false)).collect();
    while let Some((v, literal)) = stack.pop() {
        match v {
            Val::Backquote(t) => stack.push((t, true)),
            Val::Comma(x) | Val::Splice(x) => stack.push((x, false)),
            Val::List(items) => {
                match v.head() {
                    Some("get") if !literal => match items.get(2).and_then(quoted_symbol) {
                        Some(p) => {
                            read.names.insert(p.to_string());
                        }
                        None => read.any = true,
                    },
                    Some(h) if !literal && !functions.is_empty() => call(h),
                    _ => {}
                }
                stack.extend(items.iter().map(|i| (i, literal)));
            }
            Val::Dotted(items, tail) => {
                stack.extend(items.iter().map(|i| (i, literal)));
                stack.push((tail, literal));
            }
            Val::Function(x) => {
                if let (false, Some(name)) = (literal, x.symbol_name()) {
                    call(name);
                }
                stack.push((x, literal));
            }
            Val::Quote(x) if literal => stack.push((x, true)),
            _ => {}
        }
    }
}

/// Whether a macro's body writes `(setf (get ...) ...)` of a property of `read` (or of a
/// computed one): its calls may set a property read. One walk; a setting its computing
/// code makes for itself counts too (a call expanded for nothing costs only its steps).
fn sets_read(m: &Macro, read: &Read) -> bool {
    let sets = |x: &Val| {
        is_setting(x)
            && x.items().and_then(|i| i[1].items()).is_some_and(|place| {
                place
                    .get(2)
                    .is_some_and(|p| !matches!(p, Val::Quote(_)) || read.wants(p))
            })
    };
    m.body.iter().any(|b| any_node(b, &mut |x| sets(x)))
}

/// What a scope's settings are looked for with: the names of the macros whose calls may
/// set a property a macro or function reads, and where a setting may be written.
pub(crate) struct Setters {
    pub(crate) names: Vec<String>,
    /// `(setf (get ` and `(` followed by each setter's name, in either case.
    search: Needles,
    /// The properties read (folded), `None` for any.
    read: Option<Vec<String>>,
}

/// Up to this many texts are searched one `memmem` pass each; more, in one pass of their
/// alternation (so that the pass over a file stays linear whatever the setters).
const SEPARATE_PASSES: usize = 6;

enum Needles {
    Each(Vec<memchr::memmem::Finder<'static>>),
    All(crate::alternation::Alternation),
}

/// What a literal setting starts with.
const SETTING: &[u8] = b"(setf (get ";

/// Bytes after `(setf (get ` in which a literal setting names its property.
const SETTING_WINDOW: usize = 256;

impl Setters {
    /// Where in `b` a setting may be: `(setf (get` (either case) with a property read
    /// written shortly after, or a setter's call.
    fn hits(&self, b: &[u8]) -> Vec<usize> {
        let mut out: Vec<usize> = match &self.search {
            Needles::Each(finders) => finders.iter().flat_map(|f| f.find_iter(b)).collect(),
            Needles::All(search) => search.starts(b),
        };
        out.retain(|&h| {
            let literal = b[h..].len() >= SETTING.len()
                && b[h..h + SETTING.len()].eq_ignore_ascii_case(SETTING);
            !literal || self.names_read(&b[h..b.len().min(h + SETTING_WINDOW)])
        });
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether `text` may name a property read.
    fn names_read(&self, text: &[u8]) -> bool {
        let Some(read) = &self.read else { return true };
        let lower = text.to_ascii_lowercase();
        read.iter()
            .any(|p| memchr::memmem::find(&lower, p.as_bytes()).is_some())
    }
}

/// The setters of `macros` when one of the macros named `relevant` (those whose calls a
/// search may expand), or a project function they call, reads a property with `get`;
/// `None` when none does (nothing asks for the store). Only those bodies are walked.
pub(crate) fn setters(macros: &Macros, relevant: &[String]) -> Option<Setters> {
    let mut read = Read::default();
    let mut functions: Vec<&str> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for m in relevant.iter().filter_map(|n| macros.map.get(n)) {
        add_read(&m.body, &macros.functions, &mut read, &mut functions);
    }
    // The project functions they call, and those these call, each once.
    while let Some(name) = functions.pop() {
        if !seen.insert(name) {
            continue;
        }
        if let Some(f) = macros.functions.get(name) {
            add_read(&f.body, &macros.functions, &mut read, &mut functions);
        }
    }
    if read.is_empty() {
        return None;
    }
    let mut names: Vec<String> = macros
        .map
        .iter()
        .filter(|(_, m)| sets_read(m, &read))
        .map(|(n, _)| n.clone())
        .collect();
    names.sort();
    let search = if 2 + 2 * names.len() <= SEPARATE_PASSES {
        let mut texts = vec!["(setf (get ".to_string(), "(SETF (GET ".to_string()];
        for name in &names {
            texts.push(format!("({name}"));
            texts.push(format!("({}", name.to_uppercase()));
        }
        Needles::Each(
            texts
                .iter()
                .map(|t| memchr::memmem::Finder::new(t.as_bytes()).into_owned())
                .collect(),
        )
    } else {
        let texts: Vec<String> = std::iter::once("(setf (get ".to_string())
            .chain(names.iter().map(|n| format!("({n}")))
            .collect();
        Needles::All(crate::alternation::Alternation::new(&texts, true))
    };
    let read = (!read.any).then(|| read.names.into_iter().collect());
    Some(Setters {
        names,
        search,
        read,
    })
}

/// The settings of the file `b` (see [`of_forms`]): only its top-level forms holding a
/// setting's or a setter call's text are read.
pub(crate) fn of_file(
    b: &[u8],
    macros: &Macros,
    setters: &Setters,
    reads: &mut dyn FnMut(bool, &[u8]) -> bool,
) -> Store {
    let hits = setters.hits(b);
    let mut forms = Vec::new();
    super::each_form_holding(b, &hits, &mut |start, end| {
        forms.extend(super::datum::read(b, start, end, reads));
    });
    let names: HashSet<&str> = setters.names.iter().map(String::as_str).collect();
    of_forms(forms, macros, &names, &mut Budget::for_file(b.len()))
}

/// The settings of one file, `forms` its top-level forms in order: each
/// `(setf (get ...))` at top level (inside `progn`, `eval-when`, `locally` too), and
/// those the expansion of a call of a macro among `setters` writes there, each call
/// expanded with the settings before it. Within `budget` (the file's); past it, the rest
/// of the file sets nothing known, and its store says so.
pub(crate) fn of_forms(
    forms: impl IntoIterator<Item = Val>,
    macros: &Macros,
    setters: &HashSet<&str>,
    budget: &mut Budget,
) -> Store {
    let mut store = Arc::new(Store::partial());
    // (form, macros expanded to get there)
    let mut pending: Vec<(Val, usize)> = Vec::new();
    for form in forms {
        pending.push((form, 0));
        while let Some((v, depth)) = pending.pop() {
            if is_setting(&v) {
                Arc::make_mut(&mut store).set(&v);
                continue;
            }
            let first = match v.head() {
                Some("progn" | "locally") => 1,
                Some("eval-when") => 2,
                // A call of a setter, or inside an expansion any learned macro's (clx's
                // `define-accessor` writes its settings inside `within-definition`).
                Some(h) if setters.contains(h) || depth > 0 => {
                    let Some(m) = macros.get(h) else { continue };
                    if depth >= MAX_MACRO_DEPTH {
                        continue;
                    }
                    let mut part = budget.part();
                    let expansion = super::instantiate(m, &v, macros, Some(&store), &mut part);
                    budget.charge(&part);
                    if budget.steps == 0 {
                        Arc::make_mut(&mut store).overflowed = true;
                        return Arc::unwrap_or_clone(store);
                    }
                    pending.extend(expansion.map(|e| (e, depth + 1)));
                    continue;
                }
                _ => continue,
            };
            if let Val::List(items) = v {
                pending.extend(items.into_iter().skip(first).rev().map(|i| (i, depth)));
            }
        }
    }
    Arc::unwrap_or_clone(store)
}

/// The value of `(get symbol property [default])` on evaluated arguments, from the
/// store of `env`; unknown without one. `None` once the budget is spent.
pub(crate) fn get(env: &Env, args: &[Val], budget: &mut Budget) -> Option<Val> {
    let Some(store) = &env.properties else {
        return Some(Val::Unknown);
    };
    let value = match args {
        [symbol, property] => store.get(symbol, property, Val::sym("nil")),
        [symbol, property, default] => store.get(symbol, property, default.clone()),
        _ => Val::Unknown,
    };
    budget.spend(value.size())?;
    Some(value)
}
