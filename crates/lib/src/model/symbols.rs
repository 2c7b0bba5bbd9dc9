//! A symbol as written, split as the reader splits it: its package prefix (none, a
//! keyword's, an uninterned `#:`, or a package's name) and its name, both folded as the
//! search folds symbols (lowercase, `|...|` and `\x` escapes removed).

use compact_str::CompactString;

/// The package part of a symbol as written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Prefix {
    /// `foo`: read in the current package.
    None,
    /// `:foo`.
    Keyword,
    /// `#:foo`.
    Uninterned,
    /// `pkg:foo` or `pkg::foo`: the package's name, folded.
    Package(String),
}

/// A symbol as written.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Written {
    pub(crate) prefix: Prefix,
    pub(crate) name: CompactString,
}

impl Written {
    /// Splits `text` (a symbol token, or `(setf SYMBOL)`: its symbol).
    pub(crate) fn parse(text: &str) -> Written {
        let text = setf_inner(text.trim()).unwrap_or(text.trim());
        if let Some(rest) = text.strip_prefix("#:") {
            return Written {
                prefix: Prefix::Uninterned,
                name: Written::parse(rest).name,
            };
        }
        if text.is_ascii() && !text.contains(['|', '\\']) {
            return Written::plain(text);
        }
        Written::escaped(text)
    }

    /// The common token, ASCII without `|` or `\\`, split and folded in place (every
    /// symbol of every form a search reads into a tree is parsed).
    fn plain(text: &str) -> Written {
        let name = text.rsplit(':').next().unwrap_or_default();
        let prefix = match text.find(':') {
            None => Prefix::None,
            Some(0) => Prefix::Keyword,
            Some(i) => Prefix::Package(text[..i].to_ascii_lowercase()),
        };
        Written {
            prefix,
            name: {
                let mut name = CompactString::new(name);
                name.make_ascii_lowercase();
                name
            },
        }
    }

    /// Any token: `|...|` and `\\x` escapes removed, each character folded.
    fn escaped(text: &str) -> Written {
        let mut package: Option<String> = None;
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
        let prefix = match package {
            None => Prefix::None,
            Some(p) if p.is_empty() => Prefix::Keyword,
            Some(p) => Prefix::Package(p),
        };
        Written {
            prefix,
            name: out.into(),
        }
    }
}

/// `SYMBOL` of `(setf SYMBOL)` (any case, any spacing; a method key's qualifiers and
/// specializers after it are not part of it), else `None`.
fn setf_inner(text: &str) -> Option<&str> {
    let inner = text.strip_prefix('(')?;
    let inner = &inner[..inner.find(')')?];
    let mut words = inner.split_whitespace();
    let head = words.next()?;
    let head = head.rsplit(':').next().unwrap_or(head);
    let symbol = words.next()?;
    head.eq_ignore_ascii_case("setf").then_some(symbol)
}

/// The symbol of a definition's name as the outline prints it: `foo`, `pkg::foo`,
/// `(setf foo)`, a method's key `area :around (shape)` (its first word).
pub(crate) fn of_name(shown: &str) -> Written {
    let shown = shown.trim();
    if shown.starts_with('(') {
        return Written::parse(shown);
    }
    Written::parse(first_word(shown))
}

/// The first word of `text`, a `|...|` with spaces kept whole.
fn first_word(text: &str) -> &str {
    let mut in_bars = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '|' => in_bars = !in_bars,
            c if c.is_whitespace() && !in_bars => return &text[..i],
            _ => {}
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_token_splits_as_any_token_does() {
        for token in [
            "foo", "FOO", "Foo-Bar", ":key", "pkg:foo", "PKG::Foo", "a:b:c", "pkg:", ":", "::x",
            "1+", "*x*", "%f.g", "",
        ] {
            assert_eq!(Written::plain(token), Written::escaped(token), "{token}");
        }
    }
}
