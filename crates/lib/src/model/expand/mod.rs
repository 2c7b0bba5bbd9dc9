//! Definer macros learned from the project itself (docs/find.md#definitions-made-by-the-projects-own-macros):
//! a `defmacro` (or a `macrolet` binding, inside its body) whose value is a backquote
//! template is understood by instantiating the template with a call's arguments, and the
//! definitions are read out of the result as out of source text.
//!
//! `datum.rs`: forms as data ([`datum::Val`]) and back to text; `lambda_list.rs`: a
//! macro lambda list destructured against a call; `template.rs`: the template filled in;
//! `builders.rs`: the pure name builders (`symbolicate`, `format nil` ...) computed.
//! Nothing else is evaluated: a value that needs anything else is unknown, and a
//! definition whose name is unknown is not made.
//!
//! Bounded: each expansion has a step budget ([`MAX_EXPANSION_STEPS`], and what is left
//! of its file's, [`Budget::for_file`]); a macro whose expansion calls a learned macro
//! is expanded at most [`MAX_MACRO_DEPTH`] deep; a result of more than
//! [`MAX_RESULT_NODES`] nodes is not read. No I/O, no recursion deeper than the data's
//! bounded depth.

pub(crate) mod builders;
pub(crate) mod datum;
pub(crate) mod enums;
pub(crate) mod eval;
pub(crate) mod functions;
pub(crate) mod globals;
pub(crate) mod lambda_list;
pub(crate) mod pieces;
pub(crate) mod properties;
pub(crate) mod read_eval;
pub(crate) mod read_time;
pub(crate) mod shape;
pub(crate) mod template;

use crate::grammar::Grammar;
use crate::outline::outline_bytes;
use compact_str::CompactString;
use datum::{print, read, Val, MAX_DEPTH, UNKNOWN};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

/// Steps one expansion may take at most (a step: a node visited, made or copied).
pub(crate) const MAX_EXPANSION_STEPS: usize = 100_000;
/// Macros expanding to calls of learned macros are followed this deep.
pub(crate) const MAX_MACRO_DEPTH: usize = 8;
/// An expansion larger than this (nodes) is not read.
pub(crate) const MAX_RESULT_NODES: usize = 50_000;
/// A made name longer than this is not a definition: the longest name a definition in
/// Debian's Common Lisp sources or SBCL's writes has 68 bytes; a longer one comes from a
/// loop that doubles a string (a few steps per doubling).
pub(crate) const MAX_MADE_NAME_BYTES: usize = 1024;
/// A `macrolet`'s bindings learned at most (local macros are looked up one by one).
pub(crate) const MAX_LOCAL_MACROS: usize = 32;
/// Bytes of an expansion's printed text that cost a step when its definitions are read
/// (printed and outlined again): printing and outlining a byte cost about a quarter of
/// what a step of the evaluator costs (measured: 85 and 300 instructions).
pub(crate) const PRINTED_BYTES_PER_STEP: usize = 4;
/// Steps a file's expansions may take, per byte of the file (plus one expansion's):
/// whatever its macros, the work stays linear in the file.
pub(crate) const STEPS_PER_BYTE: usize = 64;

/// Steps left.
pub(crate) struct Budget {
    pub(crate) steps: usize,
    /// Some work was refused for lack of this budget's steps (for a file's budget: not
    /// only one expansion's bound): what later calls would make may be missing, which the
    /// answer says (`find/definitions.rs`).
    pub(crate) ran_short: bool,
}

impl Budget {
    pub(crate) fn new(steps: usize) -> Budget {
        Budget {
            steps,
            ran_short: false,
        }
    }

    /// Marks the budget short when it cannot give one expansion its whole bound: a call
    /// refused now for its size might have been read with the file's full budget.
    pub(crate) fn refuse(&mut self) {
        if self.steps < MAX_EXPANSION_STEPS {
            self.ran_short = true;
        }
    }

    /// The budget of the expansions of a file of `bytes` bytes.
    pub(crate) fn for_file(bytes: usize) -> Budget {
        Budget::new(bytes.saturating_mul(STEPS_PER_BYTE) + MAX_EXPANSION_STEPS)
    }

    /// The budget of one expansion out of this one's: at most [`MAX_EXPANSION_STEPS`].
    pub(crate) fn part(&self) -> Budget {
        Budget::new(self.steps.min(MAX_EXPANSION_STEPS))
    }

    /// Takes from this budget what `part` (made by [`Budget::part`]) spent.
    pub(crate) fn charge(&mut self, part: &Budget) {
        let given = self.steps.min(MAX_EXPANSION_STEPS);
        self.steps -= given - part.steps.min(given);
        // The part ran short because this budget gave it less than the bound.
        if part.ran_short && given < MAX_EXPANSION_STEPS {
            self.ran_short = true;
        }
    }

    /// Takes `n` steps; `None` once spent.
    pub(crate) fn spend(&mut self, n: usize) -> Option<()> {
        let Some(left) = self.steps.checked_sub(n) else {
            self.ran_short = true;
            return None;
        };
        self.steps = left;
        Some(())
    }
}

/// A map keyed by the names of the macros' code (hostile input): foldhash seeded per
/// process, several times cheaper than SipHash on short names (the evaluator looks up a
/// variable at each reading), still seeded against crafted collisions.
pub(crate) type FoldMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Variables bound while a macro is instantiated. The last binding of a name wins: a
/// body's `let` is the last form it evaluates, so no scope is ever left.
#[derive(Default, Clone)]
pub(crate) struct Env {
    /// Shared, so that copying the environment for a local function's call costs its
    /// number of variables (what is charged), not the size of their values.
    vars: FoldMap<CompactString, Rc<Val>>,
    /// The `flet`/`labels` functions of the macro's body.
    functions: FoldMap<String, Arc<Function>>,
    /// The project's functions its macros call (`functions.rs`).
    globals: Arc<functions::Functions>,
    /// The symbol properties `get` reads (`properties.rs`); none known without.
    properties: Option<Arc<properties::Store>>,
    /// The scope's learned macros, for `macroexpand` (`eval/context.rs`).
    macros: Option<Arc<MacroMap>>,
}

/// A local function of a macro's body: called as the macro's body is evaluated (its
/// value is known when its last form's is).
#[derive(Debug)]
pub(crate) struct Function {
    lambda_list: Val,
    body: Vec<Val>,
    /// A project's `defun`: called with none of its caller's variables.
    global: bool,
}

impl Env {
    pub(crate) fn get(&self, name: &str) -> Option<&Val> {
        self.vars.get(name).map(|v| &**v)
    }

    pub(crate) fn function(&self, name: &str) -> Option<Arc<Function>> {
        self.functions
            .get(name)
            .or_else(|| self.globals.get(name))
            .cloned()
    }

    pub(crate) fn bind(&mut self, name: &str, value: Val) {
        // The key is inline (short names): binding allocates the value's cell only.
        self.vars.insert(CompactString::new(name), Rc::new(value));
    }
}

/// A macro learned: its lambda list and body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Macro {
    pub lambda_list: Val,
    /// Shared, so that a search copies a kept macro to mark it without its body.
    pub body: Arc<Vec<Val>>,
    /// Its templates write a `def...` form.
    pub defines: bool,
    /// Its body computes names (a builder, a local function, a learned macro's call):
    /// its calls may define names their text does not spell, so a search must look at
    /// them. A macro that does not only writes names its call spells.
    pub builds: bool,
    /// The literal parts of the names it builds.
    pub shape: shape::Shape,
    /// The global variables of its file it reads, with their constant values
    /// (`globals.rs`).
    pub globals: Arc<Vec<(String, Val)>>,
}

/// Learned macros by folded name.
pub(crate) type MacroMap = HashMap<String, Arc<Macro>, foldhash::fast::RandomState>;

/// The learned macros of a scope, by folded name.
#[derive(Default, Debug)]
pub(crate) struct Macros {
    /// foldhash: a search looks up every word of the calls it may expand. Shared, so
    /// that an expansion's `macroexpand` reaches it (`eval/context.rs`).
    map: Arc<MacroMap>,
    /// The project functions the macros call (`functions.rs`).
    functions: Arc<functions::Functions>,
    /// The symbol properties of the scope, when a macro reads one (`properties.rs`).
    properties: Option<Arc<properties::Store>>,
    /// The scope's global variables whose values the read-time forms inside calls may
    /// read (`read_eval.rs`).
    pub(crate) read_globals: Arc<HashMap<String, Val>>,
    /// `*features*` as the search's features give it (`None`: not given, unknown).
    pub(crate) features: Option<Arc<Val>>,
    /// The folded name of a global macro whose calls an expansion keeps as written
    /// instead of expanding them: a callers search's own symbol (`find/through.rs`), so
    /// that the call it looks for is still in the code written around it.
    pub(crate) kept: Option<String>,
}

impl Macro {
    /// The value nodes it holds (lambda list, body, global values): what keeping it
    /// costs (`find/learned.rs`).
    pub(crate) fn nodes(&self) -> usize {
        let body: usize = self.body.iter().map(Val::size).sum();
        let globals: usize = self.globals.iter().map(|(_, v)| 1 + v.size()).sum();
        self.lambda_list.size() + body + globals
    }
}

impl Macros {
    /// Adds `found`; a later definition of a name replaces an earlier one, as loading
    /// does.
    pub(crate) fn extend(&mut self, found: Vec<(String, Macro)>) {
        for (name, m) in found {
            Arc::make_mut(&mut self.map).insert(name, Arc::new(m));
        }
    }

    /// [`Macros::extend`] with macros kept from an earlier search (`find/learned.rs`).
    pub(crate) fn extend_shared(&mut self, found: &[(String, Arc<Macro>)]) {
        for (name, m) in found {
            Arc::make_mut(&mut self.map).insert(name.clone(), m.clone());
        }
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Arc<Macro>> {
        self.map.get(name)
    }

    /// Forgets the learned macros whose names `is_table_definer` says the definer table
    /// holds: the table's entries stay what they are inside an expansion as at top level
    /// (SBCL's `#+nil (defmacro sb-xc:defstruct ...)` would otherwise turn every
    /// `def!struct` into a `push`).
    pub(crate) fn forget(&mut self, is_table_definer: impl Fn(&str) -> bool) {
        Arc::make_mut(&mut self.map).retain(|name, _| !is_table_definer(name));
    }

    /// The folded names of the macros.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.map.keys().map(String::as_str)
    }

    /// The names of project functions the macros that may define something call: what
    /// [`functions::learn`] should look for.
    pub(crate) fn wanted_functions(&self) -> std::collections::HashSet<String> {
        let mut wanted = std::collections::HashSet::new();
        for m in self.map.values() {
            if functions::may_define(m.defines, &m.body) {
                wanted.extend(functions::called(&m.body));
            }
        }
        wanted.retain(|n| functions::may_be_project(n) && !self.map.contains_key(n));
        wanted
    }

    /// Adds the project functions `found` (a later definition replaces an earlier one);
    /// the names of the project functions they call in turn.
    pub(crate) fn add_functions(
        &mut self,
        found: Vec<(String, Function)>,
    ) -> std::collections::HashSet<String> {
        let mut wanted = std::collections::HashSet::new();
        for (_, f) in &found {
            wanted.extend(functions::called(&f.body));
        }
        let map = Arc::make_mut(&mut self.functions);
        for (name, f) in found {
            map.insert(name, Arc::new(f));
        }
        wanted.retain(|n| functions::may_be_project(n) && !self.map.contains_key(n));
        wanted
    }

    /// Once every macro and function is learned: a macro whose body calls a learned macro
    /// or function builds names too (that one may: any name, whatever it builds itself);
    /// it defines something if the function writes a definer, or if a macro it calls
    /// defines something, however many macros deep. One pass over the bodies.
    pub(crate) fn finish(&mut self) {
        let names: std::collections::HashSet<String> = self.map.keys().cloned().collect();
        let functions = self.functions.clone();
        // Each macro's callers among the learned macros, for `defines` below.
        let mut callers: HashMap<String, Vec<String>> = HashMap::new();
        // Whether a function writes a definer, walked once per function (by its address),
        // not once per macro calling it: thousands of macros may call one long function.
        let mut writes_definer: HashMap<usize, bool> = HashMap::new();
        for (name, m) in Arc::make_mut(&mut self.map).iter_mut() {
            let helpers: Vec<&Arc<Function>> =
                if functions.is_empty() || !functions::may_define(m.defines, &m.body) {
                    Vec::new()
                } else {
                    functions::called(&m.body)
                        .iter()
                        .filter_map(|n| functions.get(n))
                        .collect()
                };
            let defines = helpers.iter().any(|f| {
                *writes_definer
                    .entry(Arc::as_ptr(f) as usize)
                    .or_insert_with(|| functions::writes_definer(f))
            });
            let mut called: Vec<String> = Vec::new();
            for b in m.body.iter() {
                any_node(b, &mut |n| {
                    if let Some(h) = n.head().filter(|h| h != name && names.contains(*h)) {
                        called.push(h.to_string());
                    }
                    false
                });
            }
            called.sort_unstable();
            called.dedup();
            for c in &called {
                callers.entry(c.clone()).or_default().push(name.clone());
            }
            if helpers.is_empty() && called.is_empty() {
                continue;
            }
            // A macro kept from an earlier search (`find/learned.rs`) is copied first:
            // what it calls is this scope's.
            {
                let m = Arc::make_mut(m);
                m.builds = true;
                m.defines |= defines;
                // The names come from what it calls: any.
                m.shape = shape::Shape::default();
            }
        }
        self.defines_through(&callers);
    }

    /// Marks as defining every macro that calls, directly or through macros, one that
    /// defines something (`callers`: each macro's callers). Linear in the calls.
    fn defines_through(&mut self, callers: &HashMap<String, Vec<String>>) {
        let mut pending: Vec<String> = self
            .map
            .iter()
            .filter(|(_, m)| m.defines)
            .map(|(n, _)| n.clone())
            .collect();
        while let Some(name) = pending.pop() {
            for caller in callers.get(&name).into_iter().flatten() {
                let Some(m) = Arc::make_mut(&mut self.map).get_mut(caller) else {
                    continue;
                };
                if m.defines {
                    continue;
                }
                Arc::make_mut(m).defines = true;
                pending.push(caller.clone());
            }
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The project functions the expansions call from now on (`find/through/computed.rs`).
    pub(crate) fn set_functions(&mut self, found: functions::Functions) {
        self.functions = Arc::new(found);
    }

    /// The symbol properties `get` reads in the expansions from now on.
    pub(crate) fn set_properties(&mut self, store: properties::Store) {
        self.properties = Some(Arc::new(store));
    }

    /// The names of the macros whose calls may define names they do not spell.
    pub(crate) fn definer_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .map
            .iter()
            .filter(|(_, m)| m.defines && m.builds)
            .map(|(n, _)| n.clone())
            .collect();
        names.sort();
        names
    }
}

/// The macros of a `macrolet` (or the local ones around a form), innermost last.
pub(crate) type Locals = Vec<(String, Arc<Macro>)>;

/// Where to look a macro up: local bindings first, then the scope's.
pub(crate) struct Lookup<'a> {
    pub global: &'a Macros,
    pub locals: &'a [(String, Arc<Macro>)],
}

impl Lookup<'_> {
    pub(crate) fn get(&self, name: &str) -> Option<Arc<Macro>> {
        match self.locals.iter().rev().find(|(n, _)| n == name) {
            Some((_, m)) => Some(m.clone()),
            None => self.global.get(name).cloned(),
        }
    }
}

/// The macro `(defmacro NAME LAMBDA-LIST . BODY)` or a `macrolet` binding
/// `(NAME LAMBDA-LIST . BODY)` (`parts` after `defmacro`), when its body may make a
/// template: its name and the macro.
pub(crate) fn macro_of(parts: &[Val]) -> Option<(String, Macro)> {
    // Checked before anything is copied: most macros of a large scope are not templates.
    let name = learnable(parts)?;
    macro_from(name, parts[1].clone(), parts[2..].to_vec())
}

/// [`macro_of`] on parts of its own: the body is moved, not copied.
fn macro_of_owned(mut parts: Vec<Val>) -> Option<(String, Macro)> {
    let name = learnable(&parts)?;
    let body = parts.split_off(2);
    let lambda_list = parts.pop()?;
    macro_from(name, lambda_list, body)
}

/// The name of the macro of `parts` (as [`macro_of`]'s) when it may be learned: a
/// symbol, a lambda list, a body whose value may be a template.
fn learnable(parts: &[Val]) -> Option<String> {
    let name = parts.first()?.symbol_name()?.to_string();
    let lambda_list = parts.get(1)?;
    if !matches!(lambda_list, Val::List(_) | Val::Dotted(..)) && !lambda_list.is_nil() {
        return None;
    }
    ends_in_template(&parts[2..]).then_some(name)
}

/// The macro `name` of `lambda_list` and `body`.
pub(crate) fn macro_from(
    name: String,
    lambda_list: Val,
    body: Vec<Val>,
) -> Option<(String, Macro)> {
    let defines = body.iter().any(writes_definer);
    let builds = body.iter().any(|b| {
        any_node(b, &mut |n| {
            n.head().is_some_and(|h| {
                // An iteration writes forms whose arguments its call does not spell.
                builders::is_builder(h)
                    || matches!(h, "flet" | "labels" | "macrolet")
                    || iterates(h)
            })
        })
    });
    // A structure or class it writes makes names from its slots and options.
    let derives = body.iter().any(|b| {
        any_node(b, &mut |n| {
            matches!(
                n.head(),
                Some(
                    "defstruct"
                        | "defclass"
                        | "define-condition"
                        | "defgeneric"
                        | "defsetf"
                        | "define-setf-expander"
                )
            )
        })
    });
    let builds = builds || derives || spells_a_name(&body);
    // The variables of an iteration are not followed by the shape: any name.
    let iteration = body
        .iter()
        .any(|b| any_node(b, &mut |n| n.head().is_some_and(iterates)));
    let shape = if builds && !derives && !flet_like(&body) && !iteration {
        shape::of_body(&body)
    } else {
        shape::Shape::default()
    };
    Some((
        name,
        Macro {
            lambda_list,
            body: Arc::new(body),
            defines,
            builds,
            shape,
            globals: Arc::default(),
        },
    ))
}

/// Whether `operator` is an iteration of the evaluator (`eval/`).
fn iterates(operator: &str) -> bool {
    matches!(operator, "loop" | "do" | "do*" | "dolist" | "dotimes")
}

/// Whether the body defines local functions or macros (names made there are not read
/// by [`shape::of_body`]).
fn flet_like(body: &[Val]) -> bool {
    body.iter().any(|b| {
        any_node(b, &mut |n| {
            matches!(n.head(), Some("flet" | "labels" | "macrolet"))
        })
    })
}

/// Whether a body's value can be a template: its last form is one, or a form
/// [`form_value`] reads whose last form is one (a `let` around it ...), or a form of the
/// evaluator (`eval/`: `loop`, `cond`, `if` ...) holding a template. A body that ends
/// otherwise (a function's call, a variable) is never instantiable: such a macro is not
/// learned. Walked down at most [`MAX_DEPTH`] forms.
pub(crate) fn ends_in_template(body: &[Val]) -> bool {
    let mut body = body;
    for _ in 0..MAX_DEPTH {
        let Some(last) = body.last() else {
            return false;
        };
        match last {
            Val::Backquote(_) => return true,
            Val::List(items) => {
                let skip = match last.head() {
                    Some("progn" | "locally") => 1,
                    Some(
                        "let" | "let*" | "with-gensyms" | "with-unique-names" | "once-only"
                        | "flet" | "labels",
                    ) => 2,
                    Some("multiple-value-bind") => 3,
                    // anaphora's `(alet form . body)`: `it` bound to the form's value.
                    Some("alet") => 2,
                    // An iteration of the evaluator that holds a template (`(loop ...
                    // finally (return `(progn ,@forms)))`).
                    Some(h) if iterates(h) => {
                        return any_node(last, &mut |n| matches!(n, Val::Backquote(_)))
                    }
                    // A choice between templates (clx's `def-clx-class`: `(if (member
                    // name *def-clx-class-use-defclass*) (let ...) `(defstruct ...))`).
                    Some("if" | "when" | "unless" | "cond") => {
                        return any_node(last, &mut |n| matches!(n, Val::Backquote(_)))
                    }
                    _ => return false,
                };
                body = items.get(skip..).unwrap_or_default();
            }
            _ => return false,
        }
    }
    false
}

/// Whether a template in `v` writes a list headed by a `def...` symbol.
/// Whether a template of `body` writes a `def...` form whose name it spells itself
/// (cl-irc's `(defmethod default-hook ((message ,class)) ...)`): its calls make a name
/// they do not spell, as a macro that builds names does.
fn spells_a_name(body: &[Val]) -> bool {
    let literal_def = |d: &Val| {
        d.head().is_some_and(|h| h.starts_with("def"))
            && d.items()
                .and_then(|i| i.get(1))
                .is_some_and(|n| n.symbol_name().is_some())
    };
    body.iter().any(|b| {
        any_node(
            b,
            &mut |n| matches!(n, Val::Backquote(t) if any_node(t, &mut |d| literal_def(d))),
        )
    })
}

fn writes_definer(v: &Val) -> bool {
    any_node(v, &mut |n| n.head().is_some_and(|h| h.starts_with("def")))
}

pub(crate) fn any_node(v: &Val, f: &mut dyn FnMut(&Val) -> bool) -> bool {
    let mut stack = vec![v];
    while let Some(n) = stack.pop() {
        if f(n) {
            return true;
        }
        stack.extend(n.children());
    }
    false
}

/// Where `defmacro` is written in `b`, in either case, in order.
pub(crate) fn defmacro_hits(b: &[u8]) -> Vec<usize> {
    static DEFMACRO: std::sync::LazyLock<crate::caseless::Caseless> =
        std::sync::LazyLock::new(|| crate::caseless::Caseless::new(b"defmacro"));
    DEFMACRO.lower_or_upper(b).collect()
}

/// Calls `f(start, end)` for each top-level list form of `b` that holds one of `hits`
/// (byte offsets, in order); the scan stops after the last one.
pub(crate) fn each_form_holding(b: &[u8], hits: &[usize], f: &mut dyn FnMut(usize, usize)) {
    if hits.is_empty() {
        return;
    }
    let mut next = 0usize;
    crate::scan::scan_each(b, &mut |item| {
        while next < hits.len() && hits[next] < item.span.start {
            next += 1;
        }
        let Some(&h) = hits.get(next) else {
            return std::ops::ControlFlow::Break(());
        };
        if h < item.span.end && item.kind == crate::scan::ItemKind::Form && item.core_is_list {
            f(item.span.start, item.span.end);
        }
        std::ops::ControlFlow::Continue(())
    });
}

/// The global macros `b` defines: each `(defmacro ...)` at top level or inside a form
/// (`eval-when`, `progn` ...). Cheap on files without one: a `memmem` pass for
/// `defmacro` (either case) first; only the top-level forms holding one and a backquote
/// are read.
#[cfg(test)]
pub(crate) fn learn(b: &[u8], reads: &dyn Fn(bool, &[u8]) -> bool) -> Vec<(String, Macro)> {
    learn_within(b, reads, usize::MAX).0
}

/// [`learn`] reading at most `limit` bytes of forms into data (a bound of the value nodes
/// reading makes: each is written with a byte at least): learning stops at the first form
/// that would pass it, and says so (`true`). The scope-wide bound (`find/learn_cap.rs`).
pub(crate) fn learn_within(
    b: &[u8],
    reads: &dyn Fn(bool, &[u8]) -> bool,
    limit: usize,
) -> (Vec<(String, Macro)>, bool) {
    let mut out = Vec::new();
    let mut reads = |plus, e: &[u8]| reads(plus, e);
    let (mut left, mut stopped) = (limit, false);
    each_form_holding(b, &defmacro_hits(b), &mut |start, end| {
        // A form without a backquote holds no macro whose body ends in a template.
        if stopped || memchr::memchr(b'`', &b[start..end]).is_none() {
            return;
        }
        if end - start > left {
            stopped = true;
            return;
        }
        left -= end - start;
        for form in read(b, start, end, &mut reads) {
            collect_defmacros(form, &mut out);
        }
    });
    globals::attach(b, &mut out, &mut reads);
    let made = learn_made(b, &out, &mut reads);
    out.extend(made);
    (out, stopped)
}

/// The macros that calls in `b` of its macros `learned` define (consfigurator's
/// `(define-property-defining-macro defprop ...)` writing `(defmacro defprop ...)`): each
/// top-level call of a macro whose templates write a `defmacro` is expanded, within the
/// file's budget, and the `defmacro` forms of its expansion are learned as the file's
/// own. Macros of other files are not known here: only a macro of the same file.
fn learn_made(
    b: &[u8],
    learned: &[(String, Macro)],
    reads: &mut dyn FnMut(bool, &[u8]) -> bool,
) -> Vec<(String, Macro)> {
    let writers: Vec<&str> = learned
        .iter()
        .filter(|(_, m)| writes_defmacro(m))
        .map(|(n, _)| n.as_str())
        .collect();
    if writers.is_empty() {
        return Vec::new();
    }
    let mut hits: Vec<usize> = writers
        .iter()
        .flat_map(|w| memchr::memmem::find_iter(b, w.as_bytes()))
        .collect();
    hits.sort_unstable();
    hits.dedup();
    let mut macros = Macros::default();
    macros.extend(learned.to_vec());
    let lookup = Lookup {
        global: &macros,
        locals: &[],
    };
    let mut budget = Budget::for_file(b.len());
    let mut out = Vec::new();
    each_form_holding(b, &hits, &mut |start, end| {
        for form in read(b, start, end, reads) {
            let Some(m) = form
                .head()
                .filter(|h| writers.contains(h))
                .and_then(|h| macros.get(h))
            else {
                continue;
            };
            if let Some(expansion) = expand_charged(m, &form, &lookup, &mut budget) {
                collect_defmacros(expansion, &mut out);
            }
        }
    });
    out
}

/// Whether a template of `m` writes a `defmacro` form.
fn writes_defmacro(m: &Macro) -> bool {
    m.body.iter().any(|b| {
        any_node(b, &mut |n| {
            matches!(n, Val::Backquote(t) if any_node(t, &mut |x| x.head() == Some("defmacro")))
        })
    })
}

/// The `defmacro` forms inside `form`, outside quoted data (taken apart, not copied).
fn collect_defmacros(form: Val, out: &mut Vec<(String, Macro)>) {
    let mut stack = vec![form];
    while let Some(v) = stack.pop() {
        if v.head() == Some("defmacro") {
            let Val::List(mut items) = v else { continue };
            items.remove(0);
            out.extend(macro_of_owned(items));
            continue;
        }
        let Val::List(items) = v else { continue };
        stack.extend(items.into_iter().rev());
    }
}

/// The macros a `macrolet` form binds (none for another form).
pub(crate) fn local_macros(form: &Val) -> Locals {
    let mut out = Vec::new();
    if form.head() != Some("macrolet") {
        return out;
    }
    let Some(bindings) = form.items().and_then(|i| i.get(1)).and_then(Val::items) else {
        return out;
    };
    for binding in bindings.iter().take(MAX_LOCAL_MACROS) {
        if let Some((name, m)) = binding.items().and_then(macro_of) {
            out.push((name, Arc::new(m)));
        }
    }
    out
}

/// The expansion of the call `form` of the macro `m`; `None` when it cannot be
/// instantiated (the call does not fit the lambda list, the body's value is not a
/// template, the budget ran out). Calls of learned macros where the result defines
/// things (`progn`, `eval-when`, `let` bodies ...) are expanded in turn.
pub(crate) fn expand(m: &Macro, form: &Val, lookup: &Lookup, budget: &mut Budget) -> Option<Val> {
    let expansion = instantiate(m, form, lookup.global, None, budget)?;
    let mut locals: Locals = lookup.locals.to_vec();
    let result = expand_inside(expansion, lookup.global, &mut locals, budget, 1)?;
    (result.size() <= MAX_RESULT_NODES).then_some(result)
}

/// [`expand`] within one expansion's part of `budget` ([`Budget::part`]), what it spent
/// charged to `budget`.
pub(crate) fn expand_charged(
    m: &Macro,
    form: &Val,
    lookup: &Lookup,
    budget: &mut Budget,
) -> Option<Val> {
    let mut part = budget.part();
    let expansion = expand(m, form, lookup, &mut part);
    budget.charge(&part);
    expansion
}

/// `*features*` holding `features` (keywords, and symbols of other packages).
pub(crate) fn features_value(features: &crate::features::Features) -> Option<Arc<Val>> {
    use crate::model::symbols::{Prefix, Written};
    // Folded as the expander folds names.
    let symbol = |(package, name): (Option<&str>, &str)| {
        Val::Sym(Written {
            prefix: match package {
                None => Prefix::Keyword,
                Some(p) => Prefix::Package(p.to_lowercase()),
            },
            name: name.to_lowercase().into(),
        })
    };
    let symbols = features.symbols().into_iter().map(symbol).collect();
    Some(Arc::new(Val::List(symbols)))
}

/// The value of the macro's body for the call `form`, with the functions of `macros`
/// and the symbol properties of `properties` (else of `macros`).
pub(crate) fn instantiate(
    m: &Macro,
    form: &Val,
    macros: &Macros,
    properties: Option<&Arc<properties::Store>>,
    budget: &mut Budget,
) -> Option<Val> {
    let items = form.items()?;
    let mut env = Env {
        globals: macros.functions.clone(),
        properties: properties.or(macros.properties.as_ref()).cloned(),
        macros: Some(macros.map.clone()),
        ..Env::default()
    };
    // The features the search gives are those of the image that expands the macro.
    if let Some(features) = &macros.features {
        budget.spend(features.size())?;
        env.bind("*features*", (**features).clone());
    }
    // `&whole` takes the form; the rest the arguments.
    // The global variables it reads, under what the lambda list binds.
    for (name, value) in m.globals.iter() {
        budget.spend(value.size())?;
        env.bind(name, value.clone());
    }
    let ll = &m.lambda_list;
    let args = Val::List(items.get(1..)?.to_vec());
    budget.spend(form.size())?;
    let params = match ll {
        Val::List(p) | Val::Dotted(p, _) => &p[..],
        _ => &[],
    };
    match params.first() {
        Some(first) if first.is_symbol("&whole") => {
            lambda_list::bind(params.get(1)?, form, &mut env, budget, 0)?;
            let rest = match ll {
                Val::Dotted(_, tail) => Val::Dotted(params[2..].to_vec(), tail.clone()),
                _ => Val::List(params[2..].to_vec()),
            };
            lambda_list::bind(&rest, &args, &mut env, budget, 0)?;
        }
        _ => lambda_list::bind(ll, &args, &mut env, budget, 0)?,
    }
    let value = body_value(&m.body, &mut env, budget, 0)?;
    (!matches!(value, Val::Unknown)).then_some(value)
}

/// The value of a body: its last form's (a docstring and declarations first are not
/// forms of it); a variable assigned on the way is unknown after.
fn body_value(body: &[Val], env: &mut Env, budget: &mut Budget, depth: usize) -> Option<Val> {
    if depth > MAX_DEPTH {
        return None;
    }
    let (last, before) = body.split_last()?;
    for form in before {
        // The evaluator's forms run (assignments of local variables are followed).
        if form.head().is_some_and(eval::is_form) {
            eval::exec(form, env, budget, depth)?;
            continue;
        }
        if let Some(
            op @ ("setf" | "setq" | "psetf" | "psetq" | "push" | "incf" | "decf" | "pushnew"),
        ) = form.head()
        {
            let args = form.items().unwrap_or_default();
            let step = if matches!(op, "push" | "pushnew") {
                3
            } else {
                2
            };
            let first = if step == 3 { 2 } else { 1 };
            for var in args.iter().skip(first).step_by(step) {
                if let Some(name) = var.symbol_name() {
                    env.bind(name, Val::Unknown);
                }
            }
        }
    }
    form_value(last, env, budget, depth)
}

/// The value of the form a macro's body ends with: a template, a `let`/`let*` of
/// computed names around one, `with-gensyms`, `once-only`, `progn`; else what
/// [`template::eval`] makes of it.
fn form_value(form: &Val, env: &mut Env, budget: &mut Budget, depth: usize) -> Option<Val> {
    budget.spend(1)?;
    let items = match form {
        Val::Backquote(t) => return template::fill(t, env, budget, depth),
        Val::List(items) => items,
        _ => return template::eval(form, env, budget, depth),
    };
    let rest = items.get(1..).unwrap_or_default();
    match form.head() {
        Some(op @ ("let" | "let*")) => {
            let bindings = rest.first()?.items()?;
            let mut values = Vec::with_capacity(bindings.len());
            for b in bindings {
                let (var, init) = match b {
                    Val::Sym(_) => (b, None),
                    _ => {
                        let pair = b.items()?;
                        (pair.first()?, pair.get(1))
                    }
                };
                let value = init.map_or(Some(Val::sym("nil")), |i| {
                    template::eval(i, env, budget, depth)
                })?;
                if op == "let*" {
                    env.bind(var.symbol_name()?, value);
                } else {
                    values.push((var.symbol_name()?.to_string(), value));
                }
            }
            for (name, value) in values {
                env.bind(&name, value);
            }
            body_value(&rest[1..], env, budget, depth + 1)
        }
        Some("with-gensyms" | "with-unique-names") => {
            for spec in rest.first()?.items()? {
                let name = spec
                    .symbol_name()
                    .or_else(|| spec.items()?.first()?.symbol_name())?;
                env.bind(
                    name,
                    Val::Sym(crate::model::symbols::Written {
                        prefix: crate::model::symbols::Prefix::Uninterned,
                        name: name.into(),
                    }),
                );
            }
            body_value(&rest[1..], env, budget, depth + 1)
        }
        Some("once-only") => {
            for spec in rest.first()?.items()? {
                let name = spec
                    .symbol_name()
                    .or_else(|| spec.items()?.first()?.symbol_name())?;
                env.bind(name, Val::Unknown);
            }
            body_value(&rest[1..], env, budget, depth + 1)
        }
        Some("flet" | "labels") => {
            for binding in rest.first()?.items()? {
                let parts = binding.items()?;
                let function = Function {
                    lambda_list: parts.get(1)?.clone(),
                    body: parts.get(2..).unwrap_or_default().to_vec(),
                    global: false,
                };
                env.functions.insert(
                    parts.first()?.symbol_name()?.to_string(),
                    Arc::new(function),
                );
            }
            body_value(&rest[1..], env, budget, depth + 1)
        }
        Some("progn" | "locally") => body_value(rest, env, budget, depth + 1),
        Some(op @ ("if" | "when" | "unless")) => choice(op, rest, env, budget, depth),
        Some("alet") => {
            let (init, body) = rest.split_first()?;
            let value = template::eval(init, env, budget, depth)?;
            env.bind("it", value);
            body_value(body, env, budget, depth + 1)
        }
        Some("multiple-value-bind") => {
            let [vars, values_form, body @ ..] = rest else {
                return None;
            };
            eval::values::start();
            let value = template::eval(values_form, env, budget, depth)?;
            for (name, value) in eval::values::bindings(vars, value, budget)? {
                env.bind(&name, value);
            }
            body_value(body, env, budget, depth + 1)
        }
        _ => template::eval(form, env, budget, depth),
    }
}

/// The value of `(if test then else)`, `(when test . body)` or `(unless test . body)`
/// ending a macro's body: the branch its test takes, read as a body's end is (a `let`,
/// `flet` ... around a template); unknown when the test is.
fn choice(op: &str, rest: &[Val], env: &mut Env, budget: &mut Budget, depth: usize) -> Option<Val> {
    let (test, branches) = rest.split_first()?;
    let taken = match eval::truth(&template::eval(test, env, budget, depth)?) {
        Some(t) => t,
        None => return Some(Val::Unknown),
    };
    let body: &[Val] = match (op, taken) {
        ("if", true) => branches.get(..1)?,
        ("if", false) => branches.get(1..2).unwrap_or_default(),
        ("when", true) | ("unless", false) => branches,
        _ => &[],
    };
    if body.is_empty() {
        return Some(Val::sym("nil"));
    }
    body_value(body, env, budget, depth + 1)
}

/// The value of the local function `f` called with the values `args` (its variables bound
/// in a copy of `env`, so that they hide nothing of the caller's); unknown past
/// [`MAX_DEPTH`] calls deep.
pub(crate) fn call_function(
    f: &Function,
    args: Vec<Val>,
    env: &Env,
    budget: &mut Budget,
    depth: usize,
) -> Option<Val> {
    if depth > MAX_DEPTH {
        return Some(Val::Unknown);
    }
    budget.spend(env.vars.len() + env.functions.len())?;
    // A project function sees none of its caller's variables; a local one (`flet`, a
    // `lambda`) all of them.
    let mut inner = if f.global {
        Env {
            globals: env.globals.clone(),
            properties: env.properties.clone(),
            macros: env.macros.clone(),
            ..Env::default()
        }
    } else {
        env.clone()
    };
    if lambda_list::bind(&f.lambda_list, &Val::List(args), &mut inner, budget, depth).is_none() {
        return Some(Val::Unknown);
    }
    Some(body_value(&f.body, &mut inner, budget, depth + 1).unwrap_or(Val::Unknown))
}

/// Operators whose forms (after this many elements) are forms at the level of the
/// expansion: definitions inside them are made, calls of learned macros expanded.
fn container_body(operator: &str) -> Option<usize> {
    Some(match operator {
        "progn" | "locally" => 1,
        "eval-when" | "let" | "let*" | "flet" | "labels" | "macrolet" | "symbol-macrolet" => 2,
        _ => return None,
    })
}

/// `v` with the calls of learned macros in its container positions expanded (`depth`:
/// macros expanded to get here).
fn expand_inside(
    v: Val,
    global: &Macros,
    locals: &mut Locals,
    budget: &mut Budget,
    depth: usize,
) -> Option<Val> {
    budget.spend(1)?;
    let Some(head) = v.head().map(str::to_string) else {
        return Some(v);
    };
    if let Some(first) = container_body(&head) {
        let Val::List(mut items) = v else {
            return Some(v);
        };
        let mark = locals.len();
        if head == "macrolet" {
            locals.extend(local_macros(&Val::List(items.clone())));
        }
        for slot in items.iter_mut().skip(first) {
            let item = std::mem::replace(slot, Val::Unknown);
            *slot = expand_inside(item, global, locals, budget, depth)?;
        }
        locals.truncate(mark);
        return Some(Val::List(items));
    }
    let lookup = Lookup { global, locals };
    let Some(m) = lookup.get(&head) else {
        return Some(v);
    };
    let global_kept =
        global.kept.as_deref() == Some(head.as_str()) && !locals.iter().any(|(n, _)| *n == head);
    if depth >= MAX_MACRO_DEPTH || global_kept {
        return Some(v);
    }
    match instantiate(&m, &v, global, None, budget) {
        Some(expansion) => expand_inside(expansion, global, locals, budget, depth + 1),
        None => Some(v),
    }
}

/// A definition an expansion makes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Made {
    /// The definer (`defun`, `defmethod`) or the derived kind (`accessor`).
    pub kind: String,
    /// As the outline prints it.
    pub name: String,
    /// Methods: their key, `NAME QUALIFIERS (SPECIALIZERS)`.
    pub key: Option<String>,
}

/// The definitions in `expansion`, read as the outline reads source text (named forms,
/// containers' children, derived names), without the names that hold something unknown
/// or are longer than [`MAX_MADE_NAME_BYTES`]. The expansion's printed text costs
/// `budget` a step per [`PRINTED_BYTES_PER_STEP`] bytes (it is outlined again), none
/// made when that is more than is left; each name kept costs a step per byte (of its
/// name and method key): the answers keep them, and a step of the evaluator may copy
/// [`datum::TEXT_BYTES_PER_NODE`] bytes of text, so without this a file's names could be
/// thousands of times its size. Once `budget` is spent, the rest is not made.
#[cfg(test)]
pub(crate) fn made(expansion: &Val, grammar: &Grammar, budget: &mut Budget) -> Vec<Made> {
    made_and_structures(expansion, grammar, budget).0
}

/// [`made`], and the structures the expansion defines (what a structure that includes
/// one of them needs: `model::derived::included`).
pub(crate) fn made_and_structures(
    expansion: &Val,
    grammar: &Grammar,
    budget: &mut Budget,
) -> (Vec<Made>, Vec<crate::model::derived::Structure>) {
    let mut structures = Vec::new();
    let mut text = String::new();
    print(expansion, &mut text);
    // Printed and outlined again: charged as the work it is (templates that double per
    // level of macros printed hundreds of bytes per byte of their file, uncharged).
    if budget
        .spend(text.len().div_ceil(PRINTED_BYTES_PER_STEP))
        .is_none()
    {
        return (Vec::new(), structures);
    }
    let outline = outline_bytes(text.as_bytes(), grammar);
    let mut out = Vec::new();
    let mut stack: Vec<_> = outline.items.iter().rev().collect();
    // A string in a name's place names nothing.
    let known = |name: &str| {
        name.len() <= MAX_MADE_NAME_BYTES && !name.contains(UNKNOWN) && !name.starts_with('"')
    };
    // One call's copies of a definition are one answer (a template that doubles per
    // level of macros would list it thousands of times, all at the call's line).
    let mut seen = std::collections::HashSet::new();
    let mut push = |made: Made| {
        if seen.contains(&(made.kind.clone(), made.name.clone(), made.key.clone())) {
            return Some(());
        }
        budget.spend(made.name.len() + made.key.as_ref().map_or(0, String::len))?;
        seen.insert((made.kind.clone(), made.name.clone(), made.key.clone()));
        out.push(made);
        Some(())
    };
    let mut each = |item: &crate::outline::OutlineItem| -> Option<()> {
        let Some(form) = &item.form else {
            return Some(());
        };
        if let Some(name) = form.name.as_deref().filter(|n| known(n)) {
            push(Made {
                kind: form.operator.as_deref().unwrap_or_default().to_lowercase(),
                name: name.to_string(),
                key: form.is_method().then(|| form.method_key()).flatten(),
            })?;
        }
        let derivation = crate::model::derived::derive(form);
        structures.extend(derivation.structure);
        for d in derivation.derived {
            if known(&d.name) {
                push(Made {
                    kind: d.kind.to_string(),
                    name: d.name,
                    key: d.key,
                })?;
            }
        }
        Some(())
    };
    while let Some(item) = stack.pop() {
        if each(item).is_none() {
            break;
        }
        if let Some(form) = &item.form {
            stack.extend(form.children.iter().rev());
        }
    }
    (out, structures)
}

/// The data of the form `b[start..end]` (its first datum).
pub(crate) fn read_form(
    b: &[u8],
    start: usize,
    end: usize,
    reads: &dyn Fn(bool, &[u8]) -> bool,
) -> Option<Val> {
    let mut reads = |plus, e: &[u8]| reads(plus, e);
    read(b, start, end, &mut reads).into_iter().next()
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_code;
#[cfg(test)]
mod tests_forms;
#[cfg(test)]
mod tests_globals;
#[cfg(test)]
mod tests_nested;
#[cfg(test)]
mod tests_properties;
