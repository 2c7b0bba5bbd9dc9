//! The symbol properties a search's macros read while they expand
//! (docs/find.md#definitions-made-by-the-projects-own-macros, `model/expand/properties.rs`):
//! when a learned macro or function reads one with `get`, one more pass over the scope's
//! files collects the `(setf (get ...))` forms and the calls of the macros whose
//! templates write one, expanded in each file's order; the files' settings are merged
//! into the store the search's expansions read. Without such a macro nothing is read.

use super::{ScopePart, Search};
use crate::cancel::CancelToken;
use crate::guard::{Guard, LoadedFile};
use crate::model::expand::{properties, Macros};

/// Gives `macros` the scope's symbol properties when one of the macros named `relevant`
/// (whose calls the search may expand), or a function they call, reads one.
pub(crate) fn learn(
    guard: &Guard,
    parts: &[ScopePart],
    search: &Search,
    macros: &mut Macros,
    relevant: &[String],
    cancel: &CancelToken,
) {
    let Some(setters) = properties::setters(macros, relevant) else {
        return;
    };
    let shared: &Macros = macros;
    let work = |file: &LoadedFile| {
        let mut reads = |plus, e: &[u8]| search.reads(plus, e);
        properties::of_file(&file.bytes, shared, &setters, &mut reads)
    };
    let stores = search.map_parts(guard, parts, cancel, work);
    macros.set_properties(properties::Store::merge(stores));
}

#[cfg(test)]
mod tests {
    use crate::cancel::CancelToken;
    use crate::find::{find, FindRequest};
    use crate::grammar::Grammar;
    use crate::guard::Guard;

    /// A macro that stores its slots as a property of its name, and reads an included
    /// name's (clx's `def-clx-class`, reduced), in one file; its calls in two others.
    const FILES: [(&str, &str); 3] = [
        (
            "a-macro.lisp",
            "(defmacro defthing ((name &key include) &rest slots)
  (when include
    (setf slots (append (get include 'defthing) slots)))
  `(progn
     (eval-when (:compile-toplevel :load-toplevel :execute)
       (setf (get ',name 'defthing) ',slots))
     (defstruct ,name ,@slots)))
(defthing (shape) x y)",
        ),
        ("b-circle.lisp", "(defthing (circle :include shape) r)\n"),
        ("c-dot.lisp", "(defthing (dot :include shape))\n"),
    ];

    fn lines_of(dir: &std::path::Path, name: &str) -> Vec<(String, usize)> {
        let guard = Guard::confined(&[dir.to_path_buf()], 1 << 20).unwrap();
        let mut request = FindRequest::new(".");
        request.name = Some(name.to_string());
        let result = find(&guard, &Grammar::builtin(), &request, &CancelToken::new()).unwrap();
        result
            .definitions
            .unwrap_or_default()
            .iter()
            .map(|d| (d.file.clone(), d.line))
            .collect()
    }

    #[test]
    fn a_slot_an_included_names_property_holds_is_found_by_name() {
        let dir = std::env::temp_dir().join(format!("lrf-find-properties-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (path, text) in FILES {
            std::fs::write(dir.join(path), text).unwrap();
        }
        // Stored by the expansion in another file, read by these.
        assert_eq!(lines_of(&dir, "circle-x"), [("b-circle.lisp".into(), 1)]);
        assert_eq!(lines_of(&dir, "dot-y"), [("c-dot.lisp".into(), 1)]);
        assert_eq!(lines_of(&dir, "circle-r"), [("b-circle.lisp".into(), 1)]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
