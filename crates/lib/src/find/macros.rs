//! Definitions made by the project's own definer macros in a search
//! (docs/find.md#definitions-made-by-the-projects-own-macros): the macros of every file of
//! the scope learned first ([`learn`]), then each call of one instantiated
//! ([`crate::model::expand`]) and the definitions of its expansion reported at the call,
//! `via` the macro.

use super::derived::FileStructure;
use super::learned::Learned;
use super::{cursor::Cursor, ScopePart};
use super::{derived, DefiningForm, Definition, Search, Target};
use crate::cancel::CancelToken;
use crate::grammar::{symbol_key, Grammar, Lookup as GrammarLookup};
use crate::guard::{Guard, LoadedFile};
use crate::model::expand::{self, Budget, Locals, Lookup, Macros};
use crate::outline::{Form, OutlineItem};

/// Learns the macros of every file of `parts` into `search.macros`, and widens the
/// prefilter of a name or pattern with the names of those whose calls may define names
/// their text does not spell (`make-foo` from `(defthing foo)`), and with `macrolet`.
pub(crate) fn learn(
    guard: &Guard,
    parts: &[ScopePart],
    grammar: &Grammar,
    search: &mut Search,
    cancel: &CancelToken,
) {
    let mut macros = Macros::default();
    // Per part, per file: the names its `(defun NAME` forms spell, and its
    // `(defvar NAME` (`defparameter`, `defconstant`) forms.
    let mut defuns: Vec<Vec<Vec<String>>> = Vec::with_capacity(parts.len());
    let mut globals: Vec<Vec<Vec<String>>> = Vec::with_capacity(parts.len());
    // What top-level `#.` forms and `macrolet`s need (docs/find.md).
    let mut needs = expand::read_time::Needs::default();
    for part in lessons(guard, parts, search, cancel) {
        let mut names_of = Vec::with_capacity(part.len());
        let mut globals_of = Vec::with_capacity(part.len());
        for learned in part {
            let Some(learned) = learned else {
                names_of.push(Vec::new());
                globals_of.push(Vec::new());
                continue;
            };
            learned.teach(&mut macros);
            needs.defines |= learned.read_time_defines;
            needs.calls.extend(learned.calls.iter().cloned());
            needs
                .variables
                .extend(learned.read_variables.iter().cloned());
            names_of.push(learned.defuns.clone());
            globals_of.push(learned.globals.clone());
        }
        defuns.push(names_of);
        globals.push(globals_of);
    }
    let calls = std::mem::take(&mut needs.calls);
    learn_functions(guard, parts, &defuns, search, &mut macros, calls, cancel);
    search.read_time = needs.defines;
    macros.forget(|n| matches!(grammar.lookup(n), GrammarLookup::Definer(_)));
    macros.finish();
    let read = ReadGlobals {
        variables: &needs.variables,
        defined: &globals,
    };
    learn_read_globals(guard, parts, search, &mut macros, read, cancel);
    // The definer table's entries stay what they are.
    let names: Vec<String> = macros
        .definer_names()
        .into_iter()
        .filter(|n| !matches!(grammar.lookup(n), GrammarLookup::Definer(_)))
        // A search by name needs the calls of the macros that may build it only.
        .filter(|n| macros.get(n).is_some_and(|m| could_make(m, search)))
        .collect();
    super::properties::learn(guard, parts, search, &mut macros, &names, cancel);
    if let Some(literals) = &search.literals {
        search.spelled = Some(super::literal::Finder::any(literals));
        let mut literals = literals.clone();
        literals.extend(names);
        literals.push("macrolet".to_string());
        if search.read_time {
            literals.push("#.(".to_string());
        }
        search.widened = Some(super::literal::Finder::any_in_forms(&literals));
    }
    macros.features = search.features.as_ref().and_then(expand::features_value);
    search.macros = macros;
}

/// What each file of `parts` teaches (per part, per file; `None`: it could not be read),
/// within the scope's bound ([`super::learn_cap`]): the files after the one where it is
/// reached teach nothing, and that one only its macros within what is left.
fn lessons(
    guard: &Guard,
    parts: &[ScopePart],
    search: &Search,
    cancel: &CancelToken,
) -> Vec<Vec<Option<std::sync::Arc<Learned>>>> {
    let reads = |plus, e: &[u8]| search.reads(plus, e);
    let macrolets = matches!(search.target, Target::Pattern(_));
    let cap = &search.learn_cap;
    let work = |index: usize, file: &LoadedFile| {
        if cap.excludes(index) {
            return Learned::past_cap();
        }
        let names = expand::functions::defined_names(&file.bytes);
        let needs = expand::read_time::needs(&file.bytes, macrolets, &reads);
        let (macros, stopped) = expand::learn_within(&file.bytes, &reads, cap.limit());
        let mut learned = Learned::new(macros, names, needs);
        learned.stopped = stopped;
        // A file that reached the bound on its own ends learning: the files after it wait.
        let cost = if stopped { usize::MAX } else { learned.nodes() };
        if !cap.finish(index, cost) {
            return Learned::past_cap();
        }
        learned
    };
    let mut out = Vec::with_capacity(parts.len());
    let mut shown = Vec::new();
    for part in parts {
        let first = shown.len();
        match part {
            ScopePart::Single(file) => {
                shown.push(file.display_path.as_str());
                out.push(vec![Some(std::sync::Arc::new(work(first, file)))]);
            }
            ScopePart::Walked(files) => {
                shown.extend(files.iter().map(|f| f.display_path.as_str()));
                let work = |i: usize, file: &LoadedFile| work(first + i, file);
                let answers = super::learned::map_files(search, guard, files, cancel, &work);
                out.push(answers.into_iter().map(Result::ok).collect());
            }
        }
    }
    // In the scope's order: the first file past the bound, or stopped in, ends learning.
    let costs = out.iter().flatten().map(|l| match l {
        Some(l) if l.stopped || l.past_cap => usize::MAX,
        Some(l) => l.nodes(),
        None => 0,
    });
    let Some((cut, left)) = super::learn_cap::first_over(costs, cap.limit()) else {
        return out;
    };
    cap.stop_at(&super::shown_file(shown[cut]));
    for (index, learned) in out.iter_mut().flatten().enumerate() {
        if index == cut {
            *learned = learned
                .as_ref()
                .map(|l| std::sync::Arc::new(l.cut_to(left)));
        } else if index > cut {
            *learned = None;
        }
    }
    out
}

/// Learns the values of the global variables that read-time forms in calls of the
/// scope's learned definer macros may read (`variables`: each with the operator of the
/// list its form is in): the files are read again only when such a form names one
/// ([`expand::read_eval`]). In a search by name, a macro that builds no name the search
/// wants writes only names its call's data spell: a variable's value spells one only
/// when the file defining it holds the name, so for its calls only those files are read.
fn learn_read_globals(
    guard: &Guard,
    parts: &[ScopePart],
    search: &Search,
    macros: &mut Macros,
    read: ReadGlobals,
    cancel: &CancelToken,
) {
    let mut built = std::collections::HashSet::new();
    let mut spelled = std::collections::HashSet::new();
    for (operator, name) in read.variables {
        match macros.get(operator) {
            // An enum's keywords are wanted for any call (a `macrolet`'s too): few, cheap.
            _ if expand::enums::is_key(name) => built.insert(name.clone()),
            Some(m) if m.defines && m.builds && could_make(m, search) => built.insert(name.clone()),
            Some(m) if m.defines => spelled.insert(name.clone()),
            _ => false,
        };
    }
    if built.is_empty() && spelled.is_empty() {
        return;
    }
    let spells = match (&search.target, &search.literals) {
        (Target::Name(_), Some(literals)) => Some(super::literal::Finder::any(literals)),
        _ => None,
    };
    // Only the files whose `(defvar NAME` forms spell a wanted name are read again; all
    // when a foreign enum is wanted (rare: no pass looks for enums before one is).
    let enums = built.iter().any(|n| expand::enums::is_key(n));
    let defines = |names: &Vec<String>| {
        enums
            || names
                .iter()
                .any(|n| built.contains(n) || spelled.contains(n))
    };
    let work = |file: &LoadedFile| {
        let mut reads = |plus, e: &[u8]| search.reads(plus, e);
        let wanted =
            if spelled.is_empty() || spells.as_ref().is_some_and(|f| !f.is_match(&file.bytes)) {
                std::borrow::Cow::Borrowed(&built)
            } else {
                std::borrow::Cow::Owned(built.union(&spelled).cloned().collect())
            };
        expand::read_eval::definitions(&file.bytes, &wanted, &mut reads)
    };
    let per_file = search.map_chosen_parts(guard, parts, read.defined, defines, cancel, work);
    macros.read_globals = std::sync::Arc::new(expand::read_eval::known_globals(per_file));
}

/// What [`learn_read_globals`] looks for: the variables read-time forms name, each with
/// the operator of the list its form is in, and per part, per file, the global
/// variables its `(defvar NAME` forms spell.
struct ReadGlobals<'a> {
    variables: &'a std::collections::HashSet<(String, String)>,
    defined: &'a [Vec<Vec<String>>],
}

/// Learns the project functions the macros call (docs/find.md#definitions-made-by-the-projects-own-macros):
/// the files whose `(defun NAME` spells a wanted name are read again, for at most
/// [`expand::functions::MAX_ROUNDS`] rounds of helpers calling helpers.
fn learn_functions(
    guard: &Guard,
    parts: &[ScopePart],
    defuns: &[Vec<Vec<String>>],
    search: &Search,
    macros: &mut Macros,
    calls: std::collections::HashSet<String>,
    cancel: &CancelToken,
) {
    if macros.is_empty() && calls.is_empty() {
        return;
    }
    let defined: std::collections::HashSet<&str> = defuns
        .iter()
        .flatten()
        .flatten()
        .map(String::as_str)
        .collect();
    let reads = |plus, e: &[u8]| search.reads(plus, e);
    // Names looked for already (a function not learned is not looked for again).
    let mut tried = std::collections::HashSet::new();
    let mut wanted = macros.wanted_functions();
    wanted.extend(
        calls
            .into_iter()
            .filter(|n| expand::functions::may_be_project(n)),
    );
    for _ in 0..expand::functions::MAX_ROUNDS {
        wanted.retain(|n| defined.contains(n.as_str()) && !tried.contains(n));
        if wanted.is_empty() {
            return;
        }
        tried.extend(wanted.iter().cloned());
        let defines = |names: &Vec<String>| names.iter().any(|n| wanted.contains(n));
        let work = |file: &LoadedFile| expand::functions::learn(&file.bytes, &wanted, &reads);
        let found: Vec<_> = search
            .map_chosen_parts(guard, parts, defuns, defines, cancel, work)
            .into_iter()
            .flatten()
            .collect();
        wanted = macros.add_functions(found);
    }
}

/// The learned macro `form` calls, if any (a local one first).
fn macro_called(
    form: &Form,
    grammar: &Grammar,
    search: &Search,
    locals: &Locals,
) -> Option<std::sync::Arc<expand::Macro>> {
    let operator = form.operator.as_deref()?;
    if matches!(grammar.lookup(operator), GrammarLookup::Definer(_)) {
        return None;
    }
    let lookup = Lookup {
        global: &search.macros,
        locals,
    };
    lookup.get(&symbol_key(operator))
}

/// The macros a `macrolet` item binds for its body (`locals`: those around it), when
/// their calls there can make a wanted name (its text with the values its read-time forms
/// read, as a call's: `of_call`, charged to the file's `budget`).
pub(crate) fn locals_of(
    file: &LoadedFile,
    item: &OutlineItem,
    form: &Form,
    search: &Search,
    locals: &Locals,
    budget: &mut Budget,
) -> Locals {
    if form.operator.as_deref().map(symbol_key).as_deref() != Some("macrolet") {
        return Vec::new();
    }
    let lookup = Lookup {
        global: &search.macros,
        locals,
    };
    let text = &file.bytes[item.start..item.end];
    let Some(text) = expand::read_eval::with_values(text, &search.macros, budget) else {
        return Vec::new();
    };
    if !search
        .gate
        .as_ref()
        .is_none_or(|g| g.call_may_make(&text, None, &lookup))
    {
        return Vec::new();
    }
    expand::read_form(&file.bytes, item.start, item.end, &|p, e| {
        search.reads(p, e)
    })
    .map(|v| expand::local_macros(&v))
    .unwrap_or_default()
}

/// What a call of a learned macro gave.
pub(crate) enum Outcome {
    /// Not a call of a learned macro, or not instantiable: the generic rule stays.
    NotMade,
    /// The expansion made definitions (those wanted are in `found`).
    Made,
    /// The collection budget is spent.
    Over,
}

/// Adds to `found` the wanted definitions that the call `form` (of a learned macro) makes.
#[allow(clippy::too_many_arguments)]
pub(crate) fn of_call(
    file: &LoadedFile,
    cursor: &mut Cursor,
    item: &OutlineItem,
    form: &Form,
    grammar: &Grammar,
    search: &Search,
    locals: &Locals,
    budget: &mut Budget,
    found: &mut Vec<Definition>,
    structures: &mut Vec<FileStructure>,
) -> Outcome {
    let Some(m) = macro_called(form, grammar, search, locals) else {
        return Outcome::NotMade;
    };
    // A call makes the searched name only by spelling it or, for a macro that builds
    // names, by building it: a call that can do neither keeps the generic rule (which
    // cannot match). A macro that builds some names may still write others its call
    // spells (osicat's `define-designator`: `(defun ,name ...)` beside `NAME-designator`).
    let text = &file.bytes[item.start..item.end];
    // The call as far as the names it can make go: its text, and the printed values of
    // the scope's global variables its read-time forms name (`expand::read_eval`).
    let Some(text) = expand::read_eval::with_values(text, &search.macros, budget) else {
        return Outcome::NotMade;
    };
    let spells = search.spelled.as_ref().is_none_or(|f| f.is_match(&text));
    let may_make = spells || (m.builds && could_make(&m, search));
    if !may_make {
        return Outcome::NotMade;
    }
    let lookup = Lookup {
        global: &search.macros,
        locals,
    };
    if m.builds
        && !search
            .gate
            .as_ref()
            .is_none_or(|g| g.call_may_make(&text, Some(&m), &lookup))
    {
        return Outcome::NotMade;
    }
    // Reading a call makes at least a node per byte of it: a call larger than an
    // expansion's budget is not read.
    if item.end - item.start > budget.part().steps {
        budget.refuse();
        return Outcome::NotMade;
    }
    let reads = |p, e: &[u8]| search.reads(p, e);
    // A read-time form of the call is computed: the reader gives the macro its value.
    let call = if expand::read_eval::holds_read_time(&file.bytes[item.start..item.end]) {
        let mut part = budget.part();
        let call = expand::read_eval::read_call(
            &file.bytes,
            item.start,
            item.end,
            &reads,
            &search.macros,
            &mut part,
        );
        budget.charge(&part);
        call
    } else {
        expand::read_form(&file.bytes, item.start, item.end, &reads)
    };
    let Some(call) = call else {
        return Outcome::NotMade;
    };
    let Some(expansion) = expand::expand_charged(&m, &call, &lookup, budget) else {
        return Outcome::NotMade;
    };
    report(
        file, cursor, item, form, grammar, search, &expansion, budget, found, structures,
    )
}

/// Adds to `found` the wanted definitions that the top-level read-time form `item`
/// (`#.(loop ...)`) makes, computed as a macro without parameters
/// ([`expand::read_time`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn of_read_time(
    file: &LoadedFile,
    cursor: &mut Cursor,
    item: &OutlineItem,
    form: &Form,
    grammar: &Grammar,
    search: &Search,
    budget: &mut Budget,
    found: &mut Vec<Definition>,
    structures: &mut Vec<FileStructure>,
) -> Outcome {
    if !search.read_time || !expand::read_time::is_read_time(&file.bytes, item.start) {
        return Outcome::NotMade;
    }
    if item.end - item.start > budget.part().steps {
        budget.refuse();
        return Outcome::NotMade;
    }
    let reads = |p, e: &[u8]| search.reads(p, e);
    let Some(m) = expand::read_time::as_macro(&file.bytes, item.start, item.end, &reads) else {
        return Outcome::NotMade;
    };
    if !could_make(&m, search) {
        return Outcome::NotMade;
    }
    let lookup = Lookup {
        global: &search.macros,
        locals: &[],
    };
    let call = expand::datum::Val::List(vec![expand::datum::Val::sym("#.")]);
    match expand::expand_charged(&m, &call, &lookup, budget) {
        Some(expansion) => report(
            file, cursor, item, form, grammar, search, &expansion, budget, found, structures,
        ),
        None => Outcome::NotMade,
    }
}

/// Adds the wanted definitions of `expansion` (of the form `item`) to `found`.
#[allow(clippy::too_many_arguments)]
fn report(
    file: &LoadedFile,
    cursor: &mut Cursor,
    item: &OutlineItem,
    form: &Form,
    grammar: &Grammar,
    search: &Search,
    expansion: &expand::datum::Val,
    budget: &mut Budget,
    found: &mut Vec<Definition>,
    structures: &mut Vec<FileStructure>,
) -> Outcome {
    let (made, made_structures) = expand::made_and_structures(expansion, grammar, budget);
    if made.is_empty() {
        return Outcome::NotMade;
    }
    let operator = match form.operator.as_deref() {
        Some(op) => op.to_lowercase(),
        None => "#.".to_string(),
    };
    let mut position = None;
    for d in made {
        let kind_ok = search.kinds.as_ref().is_none_or(|kinds| {
            kinds.contains(&symbol_key(&d.kind)) || search.kind_wanted(Some(&operator))
        });
        if !kind_ok || !derived::name_wanted(&d.name, d.key.as_deref(), search) {
            continue;
        }
        if !search.collect(1) {
            return Outcome::Over;
        }
        let (line, column) =
            *position.get_or_insert_with(|| cursor.position(item.start, Some(item.start_line)));
        let mut entry = call_entry(file, item, form, search, &operator, line, column);
        entry.kind = d.kind;
        entry.name = d.key.unwrap_or(d.name);
        found.push(entry);
    }
    // The structures it writes, for the accessors of those that include them, or that
    // they include (`find/derived.rs`): each made at the call, like its own names.
    for mut structure in made_structures {
        let include_entry = structure.include.as_mut().map(|(_, start, end)| {
            (*start, *end) = (item.start, item.end);
            let (line, column) =
                *position.get_or_insert_with(|| cursor.position(item.start, Some(item.start_line)));
            call_entry(file, item, form, search, &operator, line, column)
        });
        structures.push(FileStructure {
            structure,
            include_entry,
        });
    }
    Outcome::Made
}

/// A definition the call `item` of the macro `operator` makes, at `line` and `column`:
/// its kind and name to be set.
fn call_entry(
    file: &LoadedFile,
    item: &OutlineItem,
    form: &Form,
    search: &Search,
    operator: &str,
    line: usize,
    column: usize,
) -> Definition {
    Definition {
        file: super::shown_file(&file.display_path),
        line,
        end_line: item.end_line,
        column,
        kind: String::new(),
        name: String::new(),
        signature: super::signature(form),
        body: search
            .include_body
            .then(|| String::from_utf8_lossy(&file.bytes[item.start..item.end]).into_owned()),
        form: Some(DefiningForm {
            line: item.start_line,
            end_line: item.end_line,
            kind: operator.to_string(),
            name: form.name.as_deref().unwrap_or_default().to_string(),
        }),
        via: Some(operator.to_string()),
        package: None,
        package_unresolved: false,
        exports: None,
        site: super::Site {
            at: item.start,
            ..super::Site::default()
        },
    }
}

/// Whether the search is one `macros` serves: definitions by name or pattern.
pub(crate) fn wanted(search: &Search) -> bool {
    matches!(search.target, Target::Name(_) | Target::Pattern(_))
}

/// Whether a call of `m` (a macro that builds names) could make the name searched for:
/// its names contain the literal parts of its templates' name expressions
/// ([`crate::model::expand::shape`]). Always for a pattern.
fn could_make(m: &expand::Macro, search: &Search) -> bool {
    match &search.target {
        Target::Name(query) => m.shape.may_build(&query.name),
        _ => true,
    }
}
