//! Symbol properties stored by earlier forms and expansions, read by `get` in later ones
//! (clx's `def-clx-class` with `(:include buffer)`, reduced).

use super::datum::Val;
use super::properties::{of_forms, setters, Store};
use super::tests::{macros_and_functions, made_names, val};
use super::{Budget, MAX_EXPANSION_STEPS};
use std::collections::HashSet;

/// Stores its slots as a property of its name; an included name's slots come first.
const DEFTHING: &str = "(defmacro defthing ((name &key include) &rest slots)
  (when include
    (setf slots (append (get include 'defthing) slots)))
  `(progn
     (eval-when (:compile-toplevel :load-toplevel :execute)
       (setf (get ',name 'defthing) ',slots))
     (defstruct ,name ,@slots)))";

/// The scope's store after the forms of each of `files`, in order.
fn store_of(files: &[&str]) -> Store {
    let macros = macros_and_functions(DEFTHING);
    let setters: HashSet<&str> = ["defthing"].into();
    let stores = files.iter().map(|f| {
        let forms = super::datum::read(f.as_bytes(), 0, f.len(), &mut |_, _| true);
        of_forms(forms, &macros, &setters, &mut Budget::for_file(f.len()))
    });
    Store::merge(stores.collect::<Vec<_>>())
}

/// The accessors the definitions `call` makes with the store of `files` (none when
/// the slots are unknown).
fn names_after(files: &[&str], call: &str) -> Vec<String> {
    let mut macros = macros_and_functions(DEFTHING);
    macros.set_properties(store_of(files));
    accessors(made_names(&macros, call))
}

fn accessors(names: Vec<String>) -> Vec<String> {
    names
        .into_iter()
        .filter(|n| n.starts_with("accessor "))
        .collect()
}

#[test]
fn a_property_an_earlier_expansion_stored_is_read_by_a_later_one() {
    let files = [
        "(defthing (shape) x y)",
        "(defthing (circle :include shape) r)",
    ];
    assert_eq!(
        names_after(&files, "(defthing (circle :include shape) r)"),
        [
            "accessor circle-x",
            "accessor circle-y",
            "accessor circle-r"
        ]
    );
    // Within a file, each expansion sees the settings before it: `dot` gets all three.
    let store = store_of(&["(defthing (shape) x y)\n(defthing (circle :include shape) r)"]);
    assert_eq!(
        store.get(&Val::sym("circle"), &Val::sym("defthing"), Val::Unknown),
        val("(x y r)")
    );
}

#[test]
fn without_the_store_or_with_two_values_the_property_is_unknown() {
    let call = "(defthing (circle :include shape) r)";
    // No store (what a scope gets when no macro reads a property): the slots are unknown.
    assert_eq!(
        accessors(made_names(&macros_and_functions(DEFTHING), call)),
        [""; 0]
    );
    // Set to different values by two files: which one holds depends on the load order.
    let files = ["(defthing (shape) x y)", "(defthing (shape) z)"];
    assert!(names_after(&files, call).is_empty());
    // Never set in the scope: the default, `nil`.
    assert_eq!(
        names_after(&["(defthing (other) q)"], call),
        ["accessor circle-r"]
    );
    // A literal top-level setting counts too; a computed value is unknown.
    let literal = "(setf (get 'shape 'defthing) '(w))";
    assert_eq!(
        names_after(&[literal], call),
        ["accessor circle-w", "accessor circle-r"]
    );
    let computed = "(setf (get 'shape 'defthing) (list 'w))";
    assert!(names_after(&[computed], call).is_empty());
}

#[test]
fn the_settings_of_a_file_are_bounded_by_its_budget() {
    // A file of many calls: its budget ends the collection, and what it did not reach is
    // unknown, never a default.
    let many: String = (0..2000)
        .map(|k| format!("(defthing (t{k}) a)\n"))
        .collect();
    let macros = macros_and_functions(DEFTHING);
    let setters: HashSet<&str> = ["defthing"].into();
    let forms = super::datum::read(many.as_bytes(), 0, many.len(), &mut |_, _| true);
    let store = Store::merge([of_forms(forms, &macros, &setters, &mut Budget::new(5_000))]);
    assert_eq!(
        store.get(&Val::sym("t1999"), &Val::sym("defthing"), Val::sym("nil")),
        Val::Unknown
    );
    assert_eq!(
        store.get(&Val::sym("t0"), &Val::sym("defthing"), Val::sym("nil")),
        val("(a)")
    );
    let _ = MAX_EXPANSION_STEPS;
}

#[test]
fn settings_are_looked_for_only_when_a_macro_reads_the_property() {
    // Nothing reads a property: no pass over the scope.
    let writes_only = "(defmacro m (x) `(setf (get ',x 'p) 1))";
    assert!(setters(&macros_and_functions(writes_only), &["m".into()]).is_none());
    assert_eq!(
        setters(&macros_and_functions(DEFTHING), &["defthing".into()])
            .unwrap()
            .names,
        ["defthing"]
    );
    // Only the macros a search may expand are asked.
    assert!(setters(&macros_and_functions(DEFTHING), &[]).is_none());
    // A template setting a property nothing reads makes no setter.
    let other = format!("{DEFTHING}\n{writes_only}");
    assert_eq!(
        setters(&macros_and_functions(&other), &["defthing".into()])
            .unwrap()
            .names,
        ["defthing"]
    );
}

#[test]
fn many_setters_are_found_in_one_pass_in_either_case() {
    // Eight setters: one alternation over the file instead of a pass per name and case.
    let mut source = DEFTHING.to_string();
    for k in 0..8 {
        source.push_str(&format!(
            "\n(defmacro set{k} (x) `(setf (get ',x 'defthing) '(s{k})))"
        ));
    }
    let macros = macros_and_functions(&source);
    let setters = setters(&macros, &["defthing".into()]).unwrap();
    assert_eq!(setters.names.len(), 9);
    let file = "(SET7 shape)\n(defthing (circle :include shape) r)";
    let store = Store::merge([super::properties::of_file(
        file.as_bytes(),
        &macros,
        &setters,
        &mut |_, _| true,
    )]);
    assert_eq!(
        store.get(&Val::sym("shape"), &Val::sym("defthing"), Val::Unknown),
        val("(s7)")
    );
    assert_eq!(
        store.get(&Val::sym("circle"), &Val::sym("defthing"), Val::Unknown),
        val("(s7 r)")
    );
}
