//! The names level of the text view (`detail: names`, docs/find.md#names): each entry
//! as its line, `#+`/`#-` prefixes, kind and name, as the map's names step prints a
//! definition (`24: defun disjoin`, `51: #-:sbcl defmethod area :around (shape)`). The
//! answer to "which definitions use X" is their list; the lines of the uses are the
//! default level. The JSON is the same at both levels.

use super::{Caller, Definition, Reference};

/// A definition: `12: defun foo`, `14: accessor point-x` (a derived one by its kind).
pub(crate) fn definition_line(d: &Definition) -> String {
    let source = if d.form.is_some() { "" } else { &d.signature };
    format!("{}: {}\n", d.line, named(source, &d.kind, Some(&d.name)))
}

/// A form using the symbol (or holding the text): `24: defun disjoin`, its uses left
/// out; `  [definition]` when it defines the symbol. Its heading without the parentheses
/// (`(defoptimizer (truncate derive-type) ...)`: `defoptimizer (truncate derive-type)`);
/// a form without a name keeps its heading (`(let* (...) ...)`).
pub(crate) fn reference_line(r: &Reference) -> String {
    let heading = if r.heading.is_empty() {
        &r.signature
    } else {
        &r.heading
    };
    let marker = if r.definition { "  [definition]" } else { "" };
    let shown = unwrapped(heading, &r.kind, r.name.is_some());
    format!("{}: {shown}{marker}\n", r.line)
}

/// A caller: `58: defun compose`, its calls left out.
pub(crate) fn caller_line(c: &Caller) -> String {
    let heading = if c.heading.is_empty() {
        &c.signature
    } else {
        &c.heading
    };
    let shown = unwrapped(heading, &c.kind, c.name.is_some());
    format!("{}: {shown}\n", c.line)
}

/// A named form's heading, `PREFIXES(KIND NAME ...)`, as `PREFIXES KIND NAME`; any other
/// heading as it is.
fn unwrapped(heading: &str, kind: &str, named: bool) -> String {
    let open = heading.to_ascii_lowercase().find(&format!("({kind} "));
    match (open, heading.strip_suffix(" ...)")) {
        (Some(open), Some(inner)) if named && !kind.is_empty() => {
            format!("{}{}", &inner[..open], &inner[open + 1..])
        }
        _ => heading.to_string(),
    }
}

/// `PREFIXES KIND NAME` of a form whose `source` line (`#-x (defun foo ...)`) starts
/// with `(KIND` after its `#+`/`#-` prefixes; the source line itself for a form that
/// names nothing; `KIND NAME` for a form not shown by its own line (a derived
/// definition).
fn named(source: &str, kind: &str, name: Option<&str>) -> String {
    let Some(name) = name.filter(|n| !n.is_empty() && !kind.is_empty()) else {
        return source.to_string();
    };
    let open = source
        .to_ascii_lowercase()
        .find(&format!("({kind}"))
        .unwrap_or(0);
    let prefixes = source.get(..open).unwrap_or_default();
    format!("{prefixes}{kind} {name}")
}

#[cfg(test)]
mod tests {
    use super::{named, unwrapped};

    #[test]
    fn a_named_heading_loses_its_parentheses() {
        assert_eq!(
            unwrapped(
                "#-x (defoptimizer (truncate derive-type) ...)",
                "defoptimizer",
                true
            ),
            "#-x defoptimizer (truncate derive-type)"
        );
        assert_eq!(unwrapped("(DEFUN foo ...)", "defun", true), "DEFUN foo");
        assert_eq!(
            unwrapped("(let* (...) ...)", "let*", false),
            "(let* (...) ...)"
        );
        assert_eq!(
            unwrapped("(declaim ...)", "declaim", false),
            "(declaim ...)"
        );
    }

    #[test]
    fn a_named_form_is_its_prefixes_kind_and_name() {
        assert_eq!(
            named(
                "#-:x (defmethod scan (t t) ...)",
                "defmethod",
                Some("scan (t t)")
            ),
            "#-:x defmethod scan (t t)"
        );
        assert_eq!(named("(DEFUN foo ...)", "defun", Some("foo")), "defun foo");
        // Derived: no line of its own.
        assert_eq!(named("", "accessor", Some("point-x")), "accessor point-x");
        // Unnamed: the heading as it is.
        assert_eq!(named("(let* (...) ...)", "let*", None), "(let* (...) ...)");
    }
}
