//! A method's line in a list of definitions: its qualifiers and required parameters
//! (what tells one method from another), the rest of its lambda list elided
//! (docs/find.md#text-format).
//!
//! `(defmethod scan ((s string) target &key (start 0) end) ...)` becomes
//! `(defmethod scan ((s string) target ...) ...)`: the generic function's line says the
//! rest. One pass over the one-line signature; anything it cannot follow (an unclosed
//! string or list) leaves the signature as it is.

/// The signature with the method's lambda list cut before its first lambda-list keyword
/// (after it when no required parameter comes before: `(&rest ...)`). `operator`: the
/// form's operator as the definition's kind has it (lowercased).
pub(crate) fn shortened(signature: &str, operator: &str) -> String {
    let open = signature.to_ascii_lowercase().find(&format!("({operator}"));
    match open.and_then(|open| cut(signature, open)) {
        Some((keyword, end, resume)) => {
            let before = signature[..keyword].trim_end();
            let keep = if before.ends_with('(') {
                end
            } else {
                before.len()
            };
            format!("{} ...{}", &signature[..keep], &signature[resume..])
        }
        None => signature.to_string(),
    }
}

/// A method's line after another method of the same generic function in the same file:
/// its `#+`/`#-` prefixes (with their space, or empty), then its qualifiers and lambda
/// list without the operator and name the line above says (`:around ((s shape))` for
/// `(defmethod area :around ((s shape)) ...)`). `line`: the method's line as [`shortened`]
/// gives it; `generic`: the generic function's name as the definition's name starts
/// (`area`, `(setf area)`). `None` when the line does not start so.
pub(crate) fn continued<'l>(
    line: &'l str,
    operator: &str,
    generic: &str,
) -> Option<(&'l str, &'l str)> {
    let lower = line.to_ascii_lowercase();
    let open = lower.find(&format!("({operator} "))?;
    let name = open + operator.len() + 2;
    let after = lower
        .get(name..)?
        .strip_prefix(&generic.to_ascii_lowercase())?;
    if !after.starts_with(char::is_whitespace) {
        return None;
    }
    let rest = line[line.len() - after.len()..].trim_start();
    let rest = rest.strip_suffix(" ...)").unwrap_or(rest);
    Some((&line[..open], rest))
}

/// Where to cut: the start and end of the first `&...` element of the lambda list, and
/// the lambda list's closing parenthesis (from which the signature goes on).
fn cut(signature: &str, open: usize) -> Option<(usize, usize, usize)> {
    let b = signature.as_bytes();
    let mut depth = 0usize;
    // The data at depth 1 after the operator: the name, then qualifiers, then the
    // lambda list (the first list after the name).
    let mut datum = 0usize;
    let mut lambda_list: Option<usize> = None;
    let mut cut_at: Option<(usize, usize)> = None;
    let mut k = open;
    while k < b.len() {
        match b[k] {
            b'"' | b'|' => k = closing(b, k)?,
            b'#' if b.get(k + 1) == Some(&b'\\') => k += 2,
            b'\\' => k += 1,
            b'(' => {
                if depth == 1 {
                    datum += 1;
                    if datum > 2 && lambda_list.is_none() {
                        lambda_list = Some(depth + 1);
                    }
                }
                depth += 1;
            }
            b')' => {
                if lambda_list == Some(depth) {
                    return cut_at.map(|(start, end)| (start, end, k));
                }
                depth = depth.checked_sub(1)?;
            }
            c if c.is_ascii_whitespace() => {}
            _ => {
                let end = token_end(b, k);
                if depth == 1 {
                    datum += 1;
                } else if lambda_list == Some(depth) && b[k] == b'&' && cut_at.is_none() {
                    cut_at = Some((k, end));
                }
                k = end - 1;
            }
        }
        k += 1;
    }
    None
}

/// The index of the `"` or `|` that closes the one at `start`.
fn closing(b: &[u8], start: usize) -> Option<usize> {
    let mut k = start + 1;
    while k < b.len() {
        match b[k] {
            b'\\' => k += 1,
            c if c == b[start] => return Some(k),
            _ => {}
        }
        k += 1;
    }
    None
}

/// The end of the atom starting at `start`.
fn token_end(b: &[u8], start: usize) -> usize {
    let mut k = start;
    while k < b.len() && !b[k].is_ascii_whitespace() && !matches!(b[k], b'(' | b')' | b'"') {
        if b[k] == b'\\' {
            k += 1;
        }
        k += 1;
    }
    k.min(b.len())
}

#[cfg(test)]
mod tests {
    use super::{continued, shortened};

    #[test]
    fn a_continued_method_drops_the_operator_and_name() {
        let cases = [
            (
                "(defmethod area :around ((s shape)) ...)",
                "area",
                Some(("", ":around ((s shape))")),
            ),
            (
                "#-x (DEFMETHOD scan ((s string) target ...) ...)",
                "scan",
                Some(("#-x ", "((s string) target ...)")),
            ),
            (
                "(defmethod (setf foo) (new (o bar)) ...)",
                "(setf foo)",
                Some(("", "(new (o bar))")),
            ),
            // Another generic function whose name starts alike is not the same one.
            ("(defmethod area-of ((s shape)) ...)", "area", None),
            ("(defun area (s) ...)", "area", None),
        ];
        for (line, generic, expected) in cases {
            assert_eq!(continued(line, "defmethod", generic), expected, "{line}");
        }
    }

    #[test]
    fn cuts_before_the_first_lambda_list_keyword() {
        assert_eq!(
            shortened(
                "(defmethod scan ((s string) target &key (start 0) end) ...)",
                "defmethod"
            ),
            "(defmethod scan ((s string) target ...) ...)"
        );
        assert_eq!(
            shortened(
                "#+(or a b) (defmethod scan :around ((s string) &optional (x \")\")) ...)",
                "defmethod"
            ),
            "#+(or a b) (defmethod scan :around ((s string) ...) ...)"
        );
        // A (setf name) is the name, not the lambda list.
        assert_eq!(
            shortened(
                "(DEFMETHOD (setf foo) (new (o bar) &key k) ...)",
                "defmethod"
            ),
            "(DEFMETHOD (setf foo) (new (o bar) ...) ...)"
        );
        // Nothing before the keyword: the keyword stays, so that the list is not empty.
        assert_eq!(
            shortened("(defmethod foo (&rest args) ...)", "defmethod"),
            "(defmethod foo (&rest ...) ...)"
        );
    }

    #[test]
    fn leaves_what_has_nothing_to_cut_or_cannot_be_followed() {
        for s in [
            "(defmethod area ((s shape)) ...)",
            "(defmethod area :around ((s shape) (x #\\()) ...)",
            "(defmethod area ((s \"unclosed",
            "(defmethod area",
        ] {
            assert_eq!(shortened(s, "defmethod"), s);
        }
    }
}
