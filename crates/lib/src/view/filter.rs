//! Which forms the collapsed view shows under `kinds` and `features`
//! (docs/views.md#kinds-and-features).
//!
//! A top-level form is decided once, with its container children, when the view comes
//! to it: the starts of the forms shown are kept until the next top-level form, so the
//! view's walk over children only looks them up (one pass, no rescans).

use crate::features::{reads, Features};
use crate::grammar::symbol_key;
use crate::outline::{Form, OutlineItem};
use std::cell::RefCell;
use std::collections::HashSet;

/// The operators to show (`kinds`), compared case-insensitively without package prefix.
#[derive(Clone, Debug)]
pub struct Kinds {
    /// As given, for the note.
    pub names: Vec<String>,
    keys: HashSet<String>,
}

impl Kinds {
    pub fn new<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> Kinds {
        let names: Vec<String> = names.into_iter().map(|n| n.as_ref().to_string()).collect();
        let keys = names.iter().map(|n| symbol_key(n)).collect();
        Kinds { names, keys }
    }

    fn contains(&self, form: &Form) -> bool {
        form.operator
            .as_deref()
            .is_some_and(|op| self.keys.contains(&symbol_key(op)))
    }
}

/// The features present (`features`): forms that `#+`/`#-` excludes under them are hidden.
#[derive(Clone, Debug)]
pub struct FeatureList {
    /// As given, for the note.
    pub names: Vec<String>,
    set: Features,
}

impl FeatureList {
    pub fn new<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> FeatureList {
        let names: Vec<String> = names.into_iter().map(|n| n.as_ref().to_string()).collect();
        let set = Features::new(&names);
        FeatureList { names, set }
    }

    /// Whether a conditional of the form says the reader skips it (an undecided one
    /// keeps it).
    fn excludes(&self, form: &Form) -> bool {
        form.conditionals().iter().any(|c| {
            let plus = c.starts_with("#+");
            let expr = c.get(2..).unwrap_or_default();
            reads(plus, expr.as_bytes(), &self.set) == Some(false)
        })
    }
}

/// Forms hidden so far: by `features`, and (not excluded by features) by `kinds`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Hidden {
    pub features: usize,
    pub kinds: usize,
}

impl Hidden {
    pub(super) fn add(&mut self, other: Hidden) {
        self.features += other.features;
        self.kinds += other.kinds;
    }
}

/// The filter of one view: its options and the forms shown of the current top-level form.
#[derive(Default)]
pub(crate) struct Filter<'o> {
    kinds: Option<&'o Kinds>,
    features: Option<&'o FeatureList>,
    /// Starts of the children shown of the current top-level form.
    shown: RefCell<HashSet<usize>>,
}

impl<'o> Filter<'o> {
    pub(super) fn new(kinds: Option<&'o Kinds>, features: Option<&'o FeatureList>) -> Self {
        Filter {
            kinds,
            features,
            shown: RefCell::default(),
        }
    }

    pub(super) fn active(&self) -> bool {
        self.kinds.is_some() || self.features.is_some()
    }

    /// Decides a top-level form and its children: whether it is shown, and the forms
    /// hidden (the form itself, or children of a shown container).
    pub(super) fn top_level(&self, item: &OutlineItem) -> (bool, Hidden) {
        self.shown.borrow_mut().clear();
        if !self.active() {
            return (true, Hidden::default());
        }
        let mut hidden = Hidden::default();
        let mut children = Hidden::default();
        let shown = self.decide(item, false, &mut hidden, &mut children);
        if shown {
            (true, children)
        } else {
            (false, hidden)
        }
    }

    /// Whether a child of a shown container is shown (decided by [`Filter::top_level`]).
    pub(super) fn child_shown(&self, child: &OutlineItem) -> bool {
        !self.active() || self.shown.borrow().contains(&child.start)
    }

    /// Whether `item` is shown; `within`: inside a form of a kind shown. `hidden` gets the
    /// item when it is hidden, `children` the children hidden inside it when it is shown.
    fn decide(
        &self,
        item: &OutlineItem,
        within: bool,
        hidden: &mut Hidden,
        children: &mut Hidden,
    ) -> bool {
        let Some(form) = &item.form else {
            // Not a form the outline knows (an atom): only kinds can hide it.
            if within || self.kinds.is_none() {
                return true;
            }
            hidden.kinds += 1;
            return false;
        };
        if self.features.is_some_and(|f| f.excludes(form)) {
            hidden.features += 1;
            return false;
        }
        let kind = within || self.kinds.is_none_or(|k| k.contains(form));
        let mut inner = Hidden::default();
        let mut any_child = false;
        for child in &form.children {
            let mut child_hidden = Hidden::default();
            if self.decide(child, kind, &mut child_hidden, &mut inner) {
                any_child = true;
                self.shown.borrow_mut().insert(child.start);
            }
            inner.add(child_hidden);
        }
        if kind || any_child {
            children.add(inner);
            true
        } else {
            hidden.kinds += 1;
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::Grammar;
    use crate::outline::outline_bytes;
    use crate::scan::ItemKind;

    /// Whether each top-level form is shown, and the forms hidden in all.
    fn decide(src: &str, filter: &Filter) -> (Vec<bool>, Hidden) {
        let grammar = Grammar::builtin();
        let outline = outline_bytes(src.as_bytes(), &grammar);
        let mut total = Hidden::default();
        let shown = outline
            .items
            .iter()
            .filter(|i| i.kind == ItemKind::Form)
            .map(|i| {
                let (shown, hidden) = filter.top_level(i);
                total.add(hidden);
                shown
            })
            .collect();
        (shown, total)
    }

    #[test]
    fn kinds_compare_without_case_or_package() {
        let k = Kinds::new(["CL:DEFUN"]);
        let f = Filter::new(Some(&k), None);
        let (shown, hidden) = decide("(defun a ()) (cl-user::DEFUN b ()) (defvar c) 1", &f);
        assert_eq!(shown, [true, true, false, false]);
        assert_eq!(
            hidden,
            Hidden {
                features: 0,
                kinds: 2
            }
        );
    }

    #[test]
    fn containers_keep_matching_children_only() {
        let k = Kinds::new(["defun"]);
        let f = Filter::new(Some(&k), None);
        let src = "(progn (defun a ()) (defvar b))";
        let (shown, hidden) = decide(src, &f);
        assert_eq!(
            (shown, hidden),
            (
                vec![true],
                Hidden {
                    features: 0,
                    kinds: 1
                }
            )
        );
        let grammar = Grammar::builtin();
        let outline = outline_bytes(src.as_bytes(), &grammar);
        let item = &outline.items[0];
        f.top_level(item);
        let children = &item.form.as_ref().unwrap().children;
        assert!(f.child_shown(&children[0]) && !f.child_shown(&children[1]));
    }

    #[test]
    fn every_conditional_must_read() {
        let fl = FeatureList::new(["sbcl"]);
        let f = Filter::new(None, Some(&fl));
        let (shown, hidden) = decide(
            "#+sbcl (a) #-sbcl (b) #+sbcl #+ccl (c) #+(or) (d) #+#.(x) (e) (f)",
            &f,
        );
        assert_eq!(shown, [true, false, false, false, true, true]);
        assert_eq!(
            hidden,
            Hidden {
                features: 3,
                kinds: 0
            }
        );
        // No filter: everything shown.
        let (shown, _) = decide("#-sbcl (a)", &Filter::default());
        assert_eq!(shown, [true]);
    }
}
