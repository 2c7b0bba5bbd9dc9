//! The packages of a scope and the home package of a symbol token, as the Lisp reader
//! would intern it (docs/find.md#packages).
//!
//! The table holds COMMON-LISP (its external symbols are data: `common-lisp-symbols.txt`,
//! made once with SBCL 2.2.9 by
//! `sbcl --script <(echo '(let (l) (do-external-symbols (s :cl) (push (string-downcase (symbol-name s)) l)) (format t "~{~a~%~}" (sort l (function string<))))')`:
//! its 978 external symbols, one a line), COMMON-LISP-USER (which uses it), KEYWORD, and
//! every `defpackage` of the scope (the first definition of a name wins). A token is
//! resolved by the reader's rules: `pkg:x` and `pkg::x` through the current package's local
//! nicknames, then the packages' names and nicknames; `x` in the current package through
//! its shadowing imports, its shadows, its imports, then the external symbols of the
//! packages it uses (in `:use` order); otherwise `x` is the package's own. A symbol found
//! in another package is followed there (an import of an import, a re-export), at most
//! once per package.
//!
//! A package the scope does not define is *unresolved*: a token naming it keeps its
//! name; an unqualified token of a package that uses one may be that package's symbol,
//! so the answer is the current package, marked unresolved, with the unknown packages as
//! alternatives (unless the package exports it: then it is the package's own); a current package the scope does not define is taken to use
//! COMMON-LISP.
//!
//! Work: each (package, name) is resolved once (memoized, the whole chain it followed),
//! with one look-up per package used: linear in the table for a given name.

use super::packages::PackageDef;
use super::symbols::{Prefix, Written};
// The keys are a scope's symbol and package names (hostile input): foldhash with a
// per-process random seed, several times cheaper than SipHash on these short strings
// (a third of the table's cost on SBCL's sources), still seeded against crafted collisions.
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
type HashSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

/// The external symbols of COMMON-LISP, one a line, lowercase (see the module's comment).
const COMMON_LISP_SYMBOLS: &str = include_str!("common-lisp-symbols.txt");

/// COMMON-LISP's external symbols, folded, as a set (made once).
pub(crate) fn common_lisp_symbols() -> &'static std::collections::HashSet<&'static str> {
    static SYMBOLS: std::sync::OnceLock<std::collections::HashSet<&'static str>> =
        std::sync::OnceLock::new();
    SYMBOLS.get_or_init(|| COMMON_LISP_SYMBOLS.lines().collect())
}

/// The current package of a form before any `in-package`.
pub(crate) const DEFAULT_PACKAGE: &str = "common-lisp-user";

/// Where a symbol lives.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Resolved {
    /// The home package's name, folded (`cl-ppcre`, `common-lisp`, `keyword`); `None` for
    /// an uninterned symbol.
    pub(crate) package: Option<String>,
    /// A package on the way is not defined in the scope (see the module's comment).
    pub(crate) unresolved: bool,
    /// When unresolved: the packages the symbol may be of (the one named first).
    pub(crate) alternatives: Vec<String>,
}

impl Resolved {
    fn known(package: &str) -> Resolved {
        Resolved {
            package: Some(package.to_string()),
            unresolved: false,
            alternatives: Vec::new(),
        }
    }

    fn unknown(alternatives: Vec<String>) -> Resolved {
        Resolved {
            package: alternatives.first().cloned(),
            unresolved: true,
            alternatives,
        }
    }

    /// Whether this may be the symbol of home package `package`: the same package, or an
    /// unresolved one that may be it.
    pub(crate) fn may_be(&self, package: &Resolved) -> bool {
        if self.package == package.package {
            return true;
        }
        // Compared in place: this is asked of every use (cloning both sides' names for
        // each of this side's cost a use of a package of many alternatives hundreds of
        // copies).
        (self.unresolved || package.unresolved)
            && self.names().any(|n| package.names().any(|m| m == n))
    }

    /// The packages this may be: the alternatives, then the package.
    fn names(&self) -> impl Iterator<Item = &String> {
        self.alternatives.iter().chain(self.package.iter())
    }
}

/// Unknown packages an unresolved symbol names as alternatives at most (a package that
/// uses more packages defined outside the scope is matched by its first ones).
pub(crate) const MAX_ALTERNATIVES: usize = 16;

/// External symbols copied into re-exporting packages at most, per table: this many, or
/// [`REEXPORTED_PER_EXPORT`] times the exports the scope's packages declare, whichever is
/// more. Bounded by the text, so that a hostile scope of many packages re-exporting a
/// large one costs time and memory linear in it (each copy would otherwise cost the
/// product of the two).
pub(crate) const MIN_REEXPORTED: usize = 65_536;
/// See [`MIN_REEXPORTED`].
pub(crate) const REEXPORTED_PER_EXPORT: usize = 4;

struct Package {
    name: String,
    uses: Vec<String>,
    /// The used packages of the table, in `:use` order, and each one's place there.
    known_uses: Vec<usize>,
    use_rank: HashMap<usize, usize>,
    /// The package's name, then the used packages not in the table (at most
    /// [`MAX_ALTERNATIVES`]).
    unknown_uses: Vec<String>,
    shadows: HashSet<String>,
    shadowing_imports: HashMap<String, String>,
    imports: HashMap<String, String>,
    exports: HashSet<String>,
    local_nicknames: HashMap<String, String>,
    reexports: Vec<String>,
}

/// What one step of a resolution found.
#[derive(Clone)]
enum Home {
    /// The package's own symbol.
    Own(usize),
    /// A package not in the table (its name), or the current package and the unknown
    /// packages it uses.
    Unknown(Vec<String>),
}

/// The packages of a scope.
pub(crate) struct PackageTable {
    packages: Vec<Package>,
    /// Names and nicknames, folded.
    by_name: HashMap<String, usize>,
    /// The packages exporting each name, in table order.
    exporters: HashMap<String, Vec<usize>>,
    memo: HashMap<(usize, String), Home>,
}

impl Default for PackageTable {
    fn default() -> Self {
        PackageTable::new(std::iter::empty())
    }
}

impl PackageTable {
    /// The standard packages and `definitions` (the first of a name wins).
    pub(crate) fn new<'a>(definitions: impl IntoIterator<Item = &'a PackageDef>) -> PackageTable {
        let mut table = PackageTable {
            packages: Vec::new(),
            by_name: HashMap::default(),
            exporters: HashMap::default(),
            memo: HashMap::default(),
        };
        let cl = PackageDef {
            name: "common-lisp".into(),
            nicknames: vec!["cl".into()],
            exports: COMMON_LISP_SYMBOLS.lines().map(str::to_string).collect(),
            ..PackageDef::default()
        };
        let cl_user = PackageDef {
            name: DEFAULT_PACKAGE.into(),
            nicknames: vec!["cl-user".into()],
            uses: vec!["common-lisp".into()],
            ..PackageDef::default()
        };
        let keyword = PackageDef {
            name: "keyword".into(),
            ..PackageDef::default()
        };
        for def in [&cl, &cl_user, &keyword] {
            table.add(def);
        }
        for def in definitions {
            table.add(def);
        }
        table.link();
        table
    }

    /// Once every package is in: re-exports (in table order: a package re-exports what the
    /// packages before it export, as they are made in that order), the used packages by
    /// index, the exporters of each name.
    fn link(&mut self) {
        let declared: usize = self.packages.iter().map(|p| p.exports.len()).sum();
        let cap = MIN_REEXPORTED.max(REEXPORTED_PER_EXPORT.saturating_mul(declared));
        let mut copied = 0usize;
        // Past the cap nothing more is copied: counted before a copy, it ends them all.
        'packages: for p in 0..self.packages.len() {
            let sources: Vec<usize> = self.packages[p]
                .reexports
                .iter()
                .filter_map(|name| self.by_name.get(name).copied())
                .filter(|&q| q != p)
                .collect();
            for q in sources {
                copied += self.packages[q].exports.len();
                if copied > cap {
                    break 'packages;
                }
                let names: Vec<String> = self.packages[q].exports.iter().cloned().collect();
                self.packages[p].exports.extend(names);
            }
        }
        for p in 0..self.packages.len() {
            let (mut known, mut unknown) = (Vec::new(), vec![self.packages[p].name.clone()]);
            for used in &self.packages[p].uses {
                match self.by_name.get(used) {
                    Some(&q) if q != p => known.push(q),
                    Some(_) => {}
                    None if unknown.len() <= MAX_ALTERNATIVES => unknown.push(used.clone()),
                    None => {}
                }
            }
            let package = &mut self.packages[p];
            package.use_rank = known.iter().enumerate().map(|(k, &q)| (q, k)).collect();
            package.known_uses = known;
            package.unknown_uses = unknown;
            for name in &package.exports {
                self.exporters.entry(name.clone()).or_default().push(p);
            }
        }
    }

    fn add(&mut self, def: &PackageDef) {
        if self.by_name.contains_key(&def.name) {
            return;
        }
        let index = self.packages.len();
        for name in std::iter::once(&def.name).chain(&def.nicknames) {
            self.by_name.entry(name.clone()).or_insert(index);
        }
        let pairs = |v: &[(String, String)]| -> HashMap<String, String> {
            let mut map = HashMap::default();
            for (package, name) in v {
                map.entry(name.clone()).or_insert_with(|| package.clone());
            }
            map
        };
        self.packages.push(Package {
            name: def.name.clone(),
            uses: def.uses.clone(),
            known_uses: Vec::new(),
            use_rank: HashMap::default(),
            unknown_uses: Vec::new(),
            shadows: def.shadows.iter().cloned().collect(),
            shadowing_imports: pairs(&def.shadowing_imports),
            imports: pairs(&def.imports),
            exports: def.exports.iter().cloned().collect(),
            reexports: def.reexports.clone(),
            local_nicknames: def
                .local_nicknames
                .iter()
                .map(|(nick, package)| (nick.clone(), package.clone()))
                .collect(),
        });
    }

    /// The home package of `written` read with `current` as the current package
    /// (`None`: [`DEFAULT_PACKAGE`]).
    pub(crate) fn resolve(&mut self, current: Option<&str>, written: &Written) -> Resolved {
        let current = current.unwrap_or(DEFAULT_PACKAGE);
        match &written.prefix {
            Prefix::Uninterned => Resolved {
                package: None,
                unresolved: false,
                alternatives: Vec::new(),
            },
            Prefix::Keyword => Resolved::known("keyword"),
            Prefix::Package(name) => {
                let local = self
                    .by_name
                    .get(current)
                    .and_then(|&c| self.packages[c].local_nicknames.get(name))
                    .cloned();
                let name = local.as_deref().unwrap_or(name);
                match self.by_name.get(name) {
                    Some(&p) => self.home_of(p, &written.name),
                    None => Resolved::unknown(vec![name.to_string()]),
                }
            }
            Prefix::None => match self.by_name.get(current) {
                Some(&p) => self.home_of(p, &written.name),
                // A package defined elsewhere: taken to use COMMON-LISP.
                None if self.packages[0].exports.contains(written.name.as_str()) => {
                    Resolved::unknown(vec!["common-lisp".into(), current.to_string()])
                }
                None => Resolved::unknown(vec![current.to_string()]),
            },
        }
    }

    /// The home of `name` read in package `start`: follows imports and inherited
    /// externals, each package at most once; memoized for every package on the way.
    fn home_of(&mut self, start: usize, name: &str) -> Resolved {
        let mut path = Vec::new();
        let mut seen = HashSet::default();
        let mut p = start;
        let home = loop {
            if let Some(home) = self.memo.get(&(p, name.to_string())) {
                break home.clone();
            }
            // A cycle of imports or uses (no image could load it): the symbol stays here.
            if !seen.insert(p) {
                break Home::Own(p);
            }
            path.push(p);
            match self.step(p, name) {
                Ok(next) => p = next,
                Err(home) => break home,
            }
        };
        for q in path {
            self.memo.insert((q, name.to_string()), home.clone());
        }
        match home {
            Home::Own(p) => Resolved::known(&self.packages[p].name),
            Home::Unknown(names) => Resolved::unknown(names),
        }
    }

    /// One step: `Ok(q)` when `name` in package `p` is package `q`'s symbol (to be
    /// followed there), else where it ends.
    fn step(&self, p: usize, name: &str) -> Result<usize, Home> {
        let package = &self.packages[p];
        let follow = |from: &String| match self.by_name.get(from) {
            Some(&q) if q != p => Ok(q),
            Some(_) => Err(Home::Own(p)),
            None => Err(Home::Unknown(vec![from.clone()])),
        };
        if let Some(from) = package.shadowing_imports.get(name) {
            return follow(from);
        }
        if package.shadows.contains(name) {
            return Err(Home::Own(p));
        }
        if let Some(from) = package.imports.get(name) {
            return follow(from);
        }
        // The first used package exporting it: through the shorter of the package's uses
        // and the name's exporters (each (package, name) is resolved once).
        let exporters = self.exporters.get(name).map_or(&[][..], Vec::as_slice);
        let inherited = if package.known_uses.len() <= exporters.len() {
            package
                .known_uses
                .iter()
                .copied()
                .find(|&q| self.packages[q].exports.contains(name))
        } else {
            exporters
                .iter()
                .filter_map(|q| package.use_rank.get(q).map(|&rank| (rank, *q)))
                .min()
                .map(|(_, q)| q)
        };
        if let Some(q) = inherited {
            return Ok(q);
        }
        // Exported and found in no package it uses that the scope defines: its own (a
        // re-export of an unknown package's symbol is taken for the package's own).
        if package.unknown_uses.len() == 1 || package.exports.contains(name) {
            Err(Home::Own(p))
        } else {
            Err(Home::Unknown(package.unknown_uses.clone()))
        }
    }
}

#[cfg(test)]
mod tests;
