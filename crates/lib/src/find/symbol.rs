//! Symbols as a search compares them: the name without its package prefix, case folded,
//! escapes (`|...|`, `\x`) removed; and the package prefix, if any, folded the same way.
//!
//! The rule (docs/find.md#symbols): names are compared case-insensitively; a package
//! prefix on either side is ignored unless both have one, then the packages must match
//! too. A keyword (`:foo`) has the empty package prefix; an uninterned symbol (`#:foo`)
//! has none. `(setf foo)` names compare their symbols by the same rule.

/// A symbol (or `(setf symbol)`) given in a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolQuery {
    /// The name, folded: lowercase, no escapes, no package.
    pub name: String,
    /// The package prefix, folded; `Some("")` for a keyword.
    pub package: Option<String>,
    /// `(setf name)`.
    pub setf: bool,
}

impl SymbolQuery {
    /// Parses `text`; `None` when it names no symbol (empty, or an empty name).
    pub fn parse(text: &str) -> Option<SymbolQuery> {
        let text = text.trim();
        if let Some(inner) = setf_inner(text) {
            let (package, name) = split_symbol(inner);
            return (!name.is_empty()).then_some(SymbolQuery {
                name,
                package,
                setf: true,
            });
        }
        let (package, name) = split_symbol(text);
        (!name.is_empty()).then_some(SymbolQuery {
            name,
            package,
            setf: false,
        })
    }

    /// Whether the token `token` (as written in the source) is this symbol. A `setf` query
    /// matches the tokens of its symbol.
    pub fn matches_token(&self, token: &[u8]) -> bool {
        // Fast path: plain ASCII without escapes (nearly every token).
        if token
            .iter()
            .all(|&c| c.is_ascii() && c != b'|' && c != b'\\')
        {
            let (package, name) = match token.iter().rposition(|&c| c == b':') {
                Some(last) => {
                    let first = token.iter().position(|&c| c == b':').unwrap_or(last);
                    let package = if token.starts_with(b"#:") {
                        None
                    } else {
                        Some(&token[..first])
                    };
                    (package, &token[last + 1..])
                }
                None => (None, token),
            };
            if !name.eq_ignore_ascii_case(self.name.as_bytes()) {
                return false;
            }
            return match (&self.package, package) {
                (Some(want), Some(have)) => have.eq_ignore_ascii_case(want.as_bytes()),
                _ => true,
            };
        }
        let text = String::from_utf8_lossy(token);
        let (package, name) = split_symbol(&text);
        name == self.name && packages_agree(self.package.as_deref(), package.as_deref())
    }

    /// Whether a definition's name as written (`foo`, `pkg::foo`, `(setf foo)`, `|Foo|`)
    /// is this symbol.
    pub fn matches_name(&self, written: &str) -> bool {
        let written = written.trim();
        let (setf, symbol) = match setf_inner(written) {
            Some(inner) => (true, inner),
            None => (false, written),
        };
        if setf != self.setf {
            return false;
        }
        let (package, name) = split_symbol(symbol);
        name == self.name && packages_agree(self.package.as_deref(), package.as_deref())
    }

    /// Whether a definition's name as written defines this symbol or its `setf` function.
    pub fn defined_by(&self, written: &str) -> bool {
        let written = written.trim();
        let symbol = setf_inner(written).unwrap_or(written);
        let (package, name) = split_symbol(symbol);
        name == self.name && packages_agree(self.package.as_deref(), package.as_deref())
    }
}

fn packages_agree(want: Option<&str>, have: Option<&str>) -> bool {
    match (want, have) {
        (Some(want), Some(have)) => want == have,
        _ => true,
    }
}

/// `SYMBOL` of `(setf SYMBOL)` (any case, any spacing), else `None`.
fn setf_inner(text: &str) -> Option<&str> {
    let inner = text.strip_prefix('(')?.strip_suffix(')')?.trim();
    let (head, rest) = inner.split_once(|c: char| c.is_whitespace())?;
    let head = head.rsplit(':').next().unwrap_or(head);
    (head.eq_ignore_ascii_case("setf") && !rest.trim().is_empty()).then(|| rest.trim())
}

/// `(package, name)` of a symbol as written, both folded (lowercase, escapes removed: the
/// search is case-insensitive, escaped characters included).
/// `#:foo` has no package; `:foo` the empty one.
pub fn split_symbol(text: &str) -> (Option<String>, String) {
    if let Some(rest) = text.strip_prefix("#:") {
        return (None, split_symbol(rest).1);
    }
    let mut package = None;
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    let mut in_bars = false;
    while let Some(c) = chars.next() {
        match c {
            '|' => in_bars = !in_bars,
            '\\' => out.extend(chars.next().into_iter().flat_map(char::to_lowercase)),
            ':' if !in_bars => {
                if package.is_none() {
                    package = Some(std::mem::take(&mut out));
                }
                out.clear();
            }
            _ => out.extend(c.to_lowercase()),
        }
    }
    (package, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(text: &str) -> SymbolQuery {
        SymbolQuery::parse(text).unwrap()
    }

    #[test]
    fn tokens_match_by_name_with_or_without_package() {
        let foo = q("foo");
        for yes in [
            "foo", "FOO", "Foo", "pkg:foo", "pkg::foo", "#:foo", ":foo", "|foo|", "f\\oo",
        ] {
            assert!(foo.matches_token(yes.as_bytes()), "{yes}");
        }
        for no in ["foo-bar", "xfoo", "foo:bar", "|foo |", "fo"] {
            assert!(!foo.matches_token(no.as_bytes()), "{no}");
        }
        let pfoo = q("PKG::foo");
        assert_eq!(pfoo.package.as_deref(), Some("pkg"));
        assert!(pfoo.matches_token(b"foo") && pfoo.matches_token(b"pkg:FOO"));
        assert!(!pfoo.matches_token(b"other:foo") && !pfoo.matches_token(b":foo"));
        assert!(pfoo.matches_token(b"#:foo"));
    }

    #[test]
    fn names_and_setf_names() {
        assert!(q("foo").matches_name("pkg::FOO"));
        assert!(!q("foo").matches_name("(setf foo)"));
        assert!(q("(setf foo)").matches_name("(SETF  pkg:foo)"));
        assert!(q("(setf foo)").matches_name("(cl:setf foo)"));
        assert!(!q("(setf foo)").matches_name("foo"));
        assert!(q("foo").defined_by("(setf foo)"));
        assert!(SymbolQuery::parse("pkg:").is_none());
        assert!(SymbolQuery::parse("  ").is_none());
        assert_eq!(
            split_symbol("|Foo|::|a:B|"),
            (Some("foo".into()), "a:b".into())
        );
    }
}
