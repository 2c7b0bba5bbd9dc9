//! Component classes, read from an `.asd` file as data: which are Lisp source and of which
//! file type. ASDF's own classes are known (`cl-source-file` is `.lisp`,
//! `cl-source-file.cl` `.cl`, `cl-source-file.lsp` `.lsp`; `static-file` and the other
//! non-Lisp files are not Lisp); a class the file defines with `defclass` is what its
//! superclasses are (htmlgen's `(defclass acl-file (cl-source-file) ())`), with the type a
//! `(type :initform "cl")` slot or a `(defmethod source-file-type ((c acl-file) ...) "cl")`
//! gives it. A class defined elsewhere is not known.

use super::{name_of, plist_get, Datum};
use std::collections::HashMap;

/// What the components of a class are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// Lisp source files of this type (`lisp`, `cl`).
    Lisp(String),
    /// Not Lisp source (`static-file`, `doc-file` ...).
    NotLisp,
}

/// Most classes one walk up the superclasses visits: a chain or a cycle of classes
/// costs at most this much per component.
const MAX_CLASS_STEPS: usize = 64;

/// A class the `.asd` file defines: its direct superclasses, and the file type it sets.
#[derive(Default)]
struct Defined {
    supers: Vec<String>,
    file_type: Option<String>,
}

/// The component classes an `.asd` file defines.
#[derive(Default)]
pub(in crate::project) struct Classes {
    defined: HashMap<String, Defined>,
}

impl Classes {
    /// The classes the top-level `forms` define (`defclass`, and `source-file-type`
    /// methods that return a string).
    pub(super) fn of(forms: &[&[Datum]]) -> Classes {
        let mut classes = Classes::default();
        for items in forms {
            match items.first() {
                Some(Datum::Sym(op)) if op == "defclass" => classes.defclass(items),
                Some(Datum::Sym(op)) if op == "defmethod" => classes.source_file_type(items),
                _ => {}
            }
        }
        classes
    }

    /// `(defclass NAME (SUPER...) (SLOT...) ...)`: a slot `(type :initform "cl")` sets the
    /// type.
    fn defclass(&mut self, items: &[Datum]) {
        let (Some(Datum::Sym(name)), Some(Datum::List(supers))) = (items.get(1), items.get(2))
        else {
            return;
        };
        let class = self.defined.entry(name.clone()).or_default();
        class.supers = supers.iter().filter_map(name_of).collect();
        if let Some(Datum::List(slots)) = items.get(3) {
            for slot in slots {
                if let Datum::List(slot) = slot {
                    if matches!(slot.first(), Some(Datum::Sym(s)) if s == "type") {
                        if let Some(Datum::Str(t)) = plist_get(&slot[1..], "initform") {
                            class.file_type = Some(t.clone());
                        }
                    }
                }
            }
        }
    }

    /// `(defmethod source-file-type ((c NAME) ...) "cl")`.
    fn source_file_type(&mut self, items: &[Datum]) {
        if !matches!(items.get(1), Some(Datum::Sym(s)) if s == "source-file-type") {
            return;
        }
        let Some(Datum::List(params)) = items[2..].iter().find(|d| matches!(d, Datum::List(_)))
        else {
            return;
        };
        let Some(Datum::List(first)) = params.first() else {
            return;
        };
        if let (Some(Datum::Sym(class)), Some(Datum::Str(t))) = (first.get(1), items.last()) {
            self.defined.entry(class.clone()).or_default().file_type = Some(t.clone());
        }
    }

    /// What the components of `class` are: `None` when neither ASDF nor the file says.
    /// The first known class up the superclasses (depth-first, in the order written)
    /// decides; the nearest type a defined class sets is a Lisp class's type.
    pub(super) fn kind(&self, class: &str) -> Option<Kind> {
        let mut file_type: Option<&str> = None;
        let mut stack = vec![class];
        for _ in 0..MAX_CLASS_STEPS {
            let class = stack.pop()?;
            if let Some(kind) = asdf_class(class) {
                return Some(match (kind, file_type) {
                    (Kind::Lisp(_), Some(t)) => Kind::Lisp(t.to_string()),
                    (kind, _) => kind,
                });
            }
            if let Some(defined) = self.defined.get(class) {
                file_type = file_type.or(defined.file_type.as_deref());
                stack.extend(defined.supers.iter().rev().map(String::as_str));
            }
        }
        None
    }

    /// What a `:file` component is under the system or module of `plist`: its
    /// `:default-component-class` when known, else what it is under the parent
    /// (`inherited`), as ASDF looks up the parents.
    pub(super) fn default_of(&self, plist: &[Datum], inherited: &Kind) -> Kind {
        match plist_get(plist, "default-component-class") {
            Some(Datum::Sym(class)) => self.kind(class).unwrap_or_else(|| inherited.clone()),
            _ => inherited.clone(),
        }
    }
}

/// ASDF's own component classes.
fn asdf_class(class: &str) -> Option<Kind> {
    Some(match class {
        "cl-source-file" => Kind::Lisp("lisp".into()),
        "cl-source-file.cl" => Kind::Lisp("cl".into()),
        "cl-source-file.lsp" => Kind::Lisp("lsp".into()),
        "static-file" | "doc-file" | "html-file" | "c-source-file" | "java-source-file"
        | "source-file" | "module" | "system" => Kind::NotLisp,
        _ => return None,
    })
}
