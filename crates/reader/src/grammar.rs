//! The definer grammar (docs/reader.md#definer-table): how each defining operator is collapsed, as data.
//!
//! `grammar/definers.lisp` is embedded in the binary and read with `lexpr`; users extend
//! it with a file of the same shape (`--definers FILE`, `.lisp-read-file.lisp`).

use lexpr::Value;
// Operators are short keys looked up once per form: FxHash hashes one in a few
// instructions where SipHash (the std default, resistant to flooding that a table of our
// own keys cannot suffer) takes a hundred.
use rustc_hash::FxHashMap;

/// Bytes that `symbol_key` leaves as they are: ASCII but upper case, `:`, `|` and `\\`.
/// A table, because every form's operator is checked byte by byte.
static KEY_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 128 {
        t[c] = !(c as u8).is_ascii_uppercase() && !matches!(c as u8, b':' | b'|' | b'\\');
        c += 1;
    }
    t
};

/// Whether a symbol as written is already its own lookup key (`symbol_key` would return
/// it unchanged): lower-case ASCII without package marker or escapes, as nearly every
/// operator is written.
#[inline]
pub(crate) fn is_key(symbol: &[u8]) -> bool {
    symbol.iter().all(|&c| KEY_BYTE[c as usize])
}

/// The embedded default table.
pub const BUILTIN_DEFINERS: &str = include_str!("../grammar/definers.lisp");

/// A definer table that cannot be read: `origin` names the file, `message` says what is
/// wrong and what an entry must look like. Nothing of the table was added.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrammarError {
    pub origin: String,
    pub message: String,
}

impl std::fmt::Display for GrammarError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for GrammarError {}

/// Where the parts of one defining operator are (see `grammar/definers.lisp`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Definer {
    /// Lower-case symbol name, without package prefix.
    pub operator: String,
    pub name: Option<usize>,
    pub name_in_list: bool,
    pub lambda_list: Option<usize>,
    pub qualifiers: bool,
    pub superclasses: Option<usize>,
    pub slots: Option<usize>,
    pub slots_from: Option<usize>,
    pub value: Option<usize>,
    pub shown: Vec<usize>,
    /// Lower-case keywords, with their colon: `:depends-on`.
    pub keywords: Vec<String>,
    pub body: Option<usize>,
    pub doc: Option<usize>,
    pub options: Option<usize>,
    pub doc_keyword: Option<String>,
    pub whole: bool,
    pub container: Option<usize>,
    /// The names the form makes without spelling them as its name (accessors, a
    /// structure's constructor ...): which rule of `model::derived` reads them.
    pub derives: Option<Derives>,
    /// CFFI's naming (`:foreign-name :function` or `:variable`): a string in the name's
    /// place is a C name whose Lisp name is derived, and a list there holds a C name and
    /// a Lisp name in either order (docs/reader.md#definer-table).
    pub foreign_name: Option<ForeignName>,
    /// The parts after the name are inferred from the form, as for the generic `def...`
    /// entry (docs/reader.md#the-generic-def-rule); `:inferred t` in the table.
    pub inferred: bool,
    /// A defining operator of COMMON-LISP itself (`:standard t`, built-in table only): a
    /// project or user table cannot replace its entry (docs/reader.md#definer-table).
    pub standard: bool,
}

/// The rules that read derived definitions (`:derives` in the definer table,
/// docs/find.md#derived-definitions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Derives {
    /// `defstruct`: constructors, copier, predicate, slot accessors and their `setf`s.
    Structure,
    /// `defclass`, `define-condition`: the slots' `:accessor`, `:reader`, `:writer`.
    ClassSlots,
    /// metatilities' `defclass*`: `:class-slots`, and the brief slot syntax
    /// `(NAME INITFORM FLAGS)` whose flag symbol's letters `A`, `R`, `W` ask for an
    /// accessor, a reader or a `(setf NAME)` writer named as the slot.
    BriefSlots,
    /// `defgeneric`: its `(:method ...)` options.
    Methods,
    /// `defsetf`, `define-setf-expander`: `(setf NAME)`.
    SetfExpander,
    /// `defpackage`, `define-package`: the package's `:nicknames`.
    Package,
}

impl Derives {
    fn parse(keyword: &str) -> Option<Derives> {
        Some(match keyword {
            "structure" => Derives::Structure,
            "class-slots" => Derives::ClassSlots,
            "brief-slots" => Derives::BriefSlots,
            "methods" => Derives::Methods,
            "setf-expander" => Derives::SetfExpander,
            "package" => Derives::Package,
            _ => return None,
        })
    }
}

/// How a definer in CFFI's style names what it defines from a C name (CFFI's
/// `translate-name-from-foreign`): `"SSL_CTX_new"` defines `ssl-ctx-new`, and for a
/// variable `"errno"` defines `*errno*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForeignName {
    Function,
    Variable,
}

impl ForeignName {
    fn parse(keyword: &str) -> Option<ForeignName> {
        match keyword {
            "function" => Some(ForeignName::Function),
            "variable" => Some(ForeignName::Variable),
            _ => None,
        }
    }
}

/// What an operator is, according to the grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup<'g> {
    /// An entry of the table.
    Definer(&'g Definer),
    /// Not in the table, but named `def...`: the name is the second element.
    GenericDefiner,
    /// Anything else.
    Plain,
}

/// The table of definers.
#[derive(Clone, Debug)]
pub struct Grammar {
    definers: FxHashMap<String, Definer>,
    generic: Definer,
    /// What the tables read after the built-in one did, one note each, for every answer
    /// made with them to say.
    notes: Vec<String>,
}

impl Default for Grammar {
    fn default() -> Self {
        Grammar::builtin()
    }
}

impl Grammar {
    /// The embedded table.
    pub fn builtin() -> Grammar {
        let mut g = Grammar {
            definers: FxHashMap::default(),
            generic: Definer {
                name: Some(1),
                inferred: true,
                ..Definer::default()
            },
            notes: Vec::new(),
        };
        let entries = parse_table(BUILTIN_DEFINERS, "grammar/definers.lisp")
            .expect("the embedded grammar/definers.lisp is valid (tested)");
        for definer in entries {
            g.definers.insert(definer.operator.clone(), definer);
        }
        g
    }

    /// Adds (or replaces) the entries of a project's or a user's definers file; `origin`
    /// names it in errors and notes. An entry for a standard operator (`defun`,
    /// `defclass` ...) is ignored: a repository must not decide that its own definitions
    /// vanish from its review. What the table did is one of [`Grammar::notes`].
    pub fn extend_from_str(&mut self, text: &str, origin: &str) -> Result<(), GrammarError> {
        let mut ignored = Vec::new();
        let mut added = 0;
        for definer in parse_table(text, origin)? {
            if self
                .definers
                .get(&definer.operator)
                .is_some_and(|d| d.standard)
            {
                ignored.push(definer.operator);
                continue;
            }
            added += 1;
            let definer = Definer {
                standard: false,
                ..definer
            };
            self.definers.insert(definer.operator.clone(), definer);
        }
        if added > 0 {
            self.notes.push(format!(
                "[definers: {origin} is in force ({added} entries)]"
            ));
        }
        if !ignored.is_empty() {
            ignored.sort_unstable();
            ignored.dedup();
            self.notes.push(format!(
                "[definers: {origin} tries to redefine {}; ignored]",
                ignored.join(", ")
            ));
        }
        Ok(())
    }

    /// What the tables read after the built-in one did (`[definers: ...]`), in the order
    /// read: every answer made with this grammar says them once.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }
}

/// The entries of a definers file, all or nothing; `origin` names it in errors.
fn parse_table(text: &str, origin: &str) -> Result<Vec<Definer>, GrammarError> {
    let bad = |msg: String| {
        GrammarError {
        origin: origin.to_string(),
        message: format!("{origin}: {msg}; each entry must look like (defun :name 1 :lambda-list 2 :body 3), see grammar/definers.lisp"),
    }
    };
    let options = lexpr::parse::Options::new()
        .with_keyword_syntax(lexpr::parse::KeywordSyntax::ColonPrefix)
        .with_nil_symbol(lexpr::parse::NilSymbol::EmptyList)
        .with_t_symbol(lexpr::parse::TSymbol::True);
    let mut parser = lexpr::Parser::from_str_custom(text, options);
    // All or nothing: a table that fails half-way adds none of its entries.
    let mut entries = Vec::new();
    loop {
        let value = match parser.next_value() {
            Ok(Some(v)) => v,
            Ok(None) => break,
            Err(e) => return Err(bad(format!("cannot read the table ({e})"))),
        };
        entries.push(parse_entry(&value).map_err(|m| bad(format!("{m} in entry {value}")))?);
    }
    Ok(entries)
}

impl Grammar {
    /// Looks an operator up by its text as written (`cl:defun`, `DEFUN`, `|defun|`).
    pub fn lookup(&self, operator: &str) -> Lookup<'_> {
        // Most operators are written in lower case without a package: already the key.
        if is_key(operator.as_bytes()) {
            self.lookup_key(operator)
        } else {
            self.lookup_key(&symbol_key(operator))
        }
    }

    /// [`Grammar::lookup`] of a symbol already in key form (see [`is_key`]).
    fn lookup_key(&self, key: &str) -> Lookup<'_> {
        if let Some(d) = self.definers.get(key) {
            Lookup::Definer(d)
        } else if key.starts_with("def") {
            Lookup::GenericDefiner
        } else {
            Lookup::Plain
        }
    }

    /// The entry used for unknown `def...` operators: the name is element 1.
    pub fn generic(&self) -> &Definer {
        &self.generic
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.definers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.definers.is_empty()
    }

    /// The operators in the table, sorted.
    pub fn operators(&self) -> Vec<&str> {
        let mut ops: Vec<&str> = self.definers.keys().map(String::as_str).collect();
        ops.sort_unstable();
        ops
    }
}

/// The lookup key of a symbol as written: escapes removed, package prefix dropped, lower
/// case. `CL:DEFUN` → `defun`, `asdf::defsystem` → `defsystem`, `|defun|` → `defun`.
pub fn symbol_key(symbol: &str) -> String {
    // The common case, plain ASCII without escapes, without a per-character walk.
    if symbol
        .bytes()
        .all(|c| c.is_ascii() && c != b'|' && c != b'\\')
    {
        let name = symbol.rsplit(':').next().unwrap_or_default();
        return name.to_ascii_lowercase();
    }
    let mut out = String::with_capacity(symbol.len());
    let mut chars = symbol.chars();
    let mut in_bars = false;
    while let Some(c) = chars.next() {
        match c {
            '|' => in_bars = !in_bars,
            '\\' => out.extend(chars.next()),
            ':' if !in_bars => out.clear(),
            _ => out.extend(c.to_lowercase()),
        }
    }
    out
}

fn parse_entry(value: &Value) -> Result<Definer, String> {
    let items: Vec<&Value> = value
        .list_iter()
        .ok_or_else(|| "an entry must be a list".to_string())?
        .collect();
    let (head, rest) = items.split_first().ok_or("an entry must not be empty")?;
    let operator = head
        .as_symbol()
        .ok_or("an entry must start with the operator's name")?;
    let mut d = Definer {
        operator: symbol_key(operator),
        name: Some(1),
        ..Definer::default()
    };
    if rest.len() % 2 != 0 {
        return Err("keys and values must come in pairs".into());
    }
    let mut named = false;
    for pair in rest.chunks(2) {
        let key = pair[0]
            .as_keyword()
            .ok_or("expected a keyword such as :name")?;
        let v = pair[1];
        let position = || {
            v.as_u64()
                .map(|n| n as usize)
                .ok_or(format!(":{key} takes an element position (a whole number)"))
        };
        let flag =
            || Ok::<bool, String>(!matches!(v, Value::Nil | Value::Null | Value::Bool(false)));
        match key {
            "name" => {
                d.name = Some(position()?);
                named = true;
            }
            "name-in-list" => d.name_in_list = flag()?,
            "inferred" => d.inferred = flag()?,
            "foreign-name" => {
                d.foreign_name = Some(
                    v.as_keyword()
                        .and_then(|k| ForeignName::parse(&k.to_lowercase()))
                        .ok_or(":foreign-name takes :function or :variable")?,
                )
            }
            "lambda-list" => d.lambda_list = Some(position()?),
            "qualifiers" => d.qualifiers = flag()?,
            "superclasses" => d.superclasses = Some(position()?),
            "slots" => d.slots = Some(position()?),
            "slots-from" => d.slots_from = Some(position()?),
            "value" => d.value = Some(position()?),
            "body" => d.body = Some(position()?),
            "doc" => d.doc = Some(position()?),
            "options" => d.options = Some(position()?),
            "whole" => d.whole = flag()?,
            "standard" => d.standard = flag()?,
            "container" => d.container = Some(position()?),
            "shown" => {
                d.shown = list_of(v, |x| x.as_u64().map(|n| n as usize))
                    .ok_or(":shown takes a list of element positions")?
            }
            "keywords" => {
                d.keywords = list_of(v, |x| {
                    x.as_keyword().map(|k| format!(":{}", k.to_lowercase()))
                })
                .ok_or(":keywords takes a list of keywords")?
            }
            "doc-keyword" => {
                d.doc_keyword = Some(format!(
                    ":{}",
                    v.as_keyword()
                        .ok_or(":doc-keyword takes a keyword")?
                        .to_lowercase()
                ))
            }
            "derives" => {
                d.derives = Some(
                    v.as_keyword()
                        .and_then(|k| Derives::parse(&k.to_lowercase()))
                        .ok_or(":derives takes one of :structure, :class-slots, :brief-slots, :methods, :setf-expander, :package")?,
                )
            }
            other => return Err(format!("unknown key :{other}")),
        }
    }
    // Containers and forms shown whole define nothing, unless the entry says otherwise.
    if !named && (d.container.is_some() || d.whole) {
        d.name = None;
    }
    Ok(d)
}

fn list_of<T>(v: &Value, f: impl Fn(&Value) -> Option<T>) -> Option<Vec<T>> {
    if matches!(v, Value::Nil | Value::Null) {
        return Some(Vec::new());
    }
    v.list_iter()?.map(f).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const REQUIRED: &[&str] = &[
        "defun",
        "defmacro",
        "defgeneric",
        "defmethod",
        "defclass",
        "define-condition",
        "defstruct",
        "deftype",
        "defvar",
        "defparameter",
        "defconstant",
        "define-symbol-macro",
        "define-compiler-macro",
        "define-modify-macro",
        "define-setf-expander",
        "defsetf",
        "define-method-combination",
        "defpackage",
        "define-package",
        "in-package",
        "in-readtable",
        "defsystem",
        "deftest",
        "progn",
        "eval-when",
        "locally",
        "macrolet",
    ];

    #[test]
    fn builtin_table_covers_the_spec() {
        let g = Grammar::builtin();
        for op in REQUIRED {
            assert!(matches!(g.lookup(op), Lookup::Definer(_)), "{op} missing");
        }
        let Lookup::Definer(defun) = g.lookup("CL:DEFUN") else {
            panic!()
        };
        assert_eq!(
            (defun.name, defun.lambda_list, defun.body),
            (Some(1), Some(2), Some(3))
        );
        let Lookup::Definer(sys) = g.lookup("asdf:defsystem") else {
            panic!()
        };
        assert_eq!(sys.keywords, vec![":depends-on"]);
        assert_eq!(sys.doc_keyword.as_deref(), Some(":description"));
        let Lookup::Definer(ew) = g.lookup("eval-when") else {
            panic!()
        };
        assert_eq!((ew.shown.clone(), ew.container), (vec![1], Some(2)));
        assert_eq!(g.lookup("alexandria:define-foo"), Lookup::GenericDefiner);
        assert_eq!(g.lookup("setf"), Lookup::Plain);
    }

    #[test]
    fn builtin_table_covers_the_libraries_measured() {
        let g = Grammar::builtin();
        let entry = |op: &str| match g.lookup(op) {
            Lookup::Definer(d) => d.clone(),
            other => panic!("{op}: {other:?}"),
        };
        let w = entry("uiop:with-upgradability");
        assert_eq!((w.name, w.shown, w.container), (None, vec![1], Some(2)));
        assert_eq!(entry("defun*").lambda_list, Some(2));
        assert_eq!(entry("defgeneric*").options, Some(3));
        assert!(entry("define-presentation-method").qualifiers);
        assert_eq!(entry("define-application-frame").superclasses, Some(2));
        assert!(entry("fiveam:test").name_in_list);
        assert_eq!(entry("defcstruct").slots_from, Some(2));
        for op in [
            "defsubst",
            "defpattern",
            "defun-match",
            "define-command",
            "defimplementation",
        ] {
            assert_eq!(entry(op).lambda_list, Some(2), "{op}");
        }
        assert!(g.generic().inferred);
        assert!(!entry("defun").inferred);
    }

    #[test]
    fn symbol_keys() {
        assert_eq!(symbol_key("CL:DEFUN"), "defun");
        assert_eq!(symbol_key("uiop::define-package"), "define-package");
        assert_eq!(symbol_key("|defun|"), "defun");
        assert_eq!(symbol_key("|a:b|"), "a:b");
    }

    #[test]
    fn user_entries_extend_and_override_but_never_a_standard_operator() {
        let mut g = Grammar::builtin();
        assert!(g.notes().is_empty());
        g.extend_from_str(
            "(define-route :name 1 :lambda-list 2 :body 3)\n(defun* :name 1)\n\
             (defun :name 2 :lambda-list 3 :body 4)\n(CL:DEFCLASS :name 2)",
            "x.lisp",
        )
        .unwrap();
        let Lookup::Definer(r) = g.lookup("define-route") else {
            panic!()
        };
        assert_eq!(r.lambda_list, Some(2));
        let Lookup::Definer(f) = g.lookup("defun*") else {
            panic!()
        };
        assert_eq!(f.lambda_list, None);
        let Lookup::Definer(f) = g.lookup("defun") else {
            panic!()
        };
        assert_eq!((f.name, f.lambda_list), (Some(1), Some(2)));
        let Lookup::Definer(c) = g.lookup("defclass") else {
            panic!()
        };
        assert_eq!(c.name, Some(1));
        assert_eq!(
            g.notes(),
            [
                "[definers: x.lisp is in force (2 entries)]",
                "[definers: x.lisp tries to redefine defclass, defun; ignored]"
            ]
        );
        // The standard entries are marked in the table itself, not by a list in code.
        for standard in [
            "defun",
            "defmacro",
            "defgeneric",
            "defmethod",
            "defclass",
            "defstruct",
            "defvar",
            "defpackage",
            "in-package",
            "progn",
        ] {
            assert!(
                matches!(g.lookup(standard), Lookup::Definer(d) if d.standard),
                "{standard}"
            );
        }
        assert!(matches!(g.lookup("defsystem"), Lookup::Definer(d) if !d.standard));
    }

    #[test]
    fn a_table_that_fails_half_way_adds_nothing() {
        let mut g = Grammar::builtin();
        let before = g.len();
        let text = "(define-route :name 1 :lambda-list 2)\n(defun :bogus 1)";
        assert!(g.extend_from_str(text, "x.lisp").is_err());
        assert_eq!(g.len(), before);
        assert!(
            !matches!(g.lookup("define-route"), Lookup::Definer(d) if d.lambda_list == Some(2))
        );
    }

    #[test]
    fn bad_tables_are_refused_naming_the_file() {
        let mut g = Grammar::builtin();
        for bad in [
            "(defun :name)",
            "(defun :bogus 1)",
            "(\"x\")",
            "(defun :name foo)",
            "(defun",
        ] {
            let e = g.extend_from_str(bad, "my.lisp").unwrap_err();
            assert_eq!(e.origin, "my.lisp", "{bad}");
            assert!(e.message.contains("my.lisp"), "{}", e.message);
        }
    }
}
