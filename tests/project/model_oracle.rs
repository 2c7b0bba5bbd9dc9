//! The model oracle: the definitions `find` reports against what SBCL itself records for
//! Debian systems loaded with ASDF (BENCHMARKS.md#definitions-against-sbcl).
//!
//! ```text
//! cargo test --release --test project model_oracle -- --nocapture
//! ```
//!
//! 1. `tests/oracle/sbcl-systems.lisp` loads each system of [`sbcl_systems::SYSTEMS`] in
//!    one SBCL and writes, for every symbol of the packages that appeared while loading
//!    it (and its `setf` function name), what `sb-introspect:find-definition-sources-by-name`
//!    locates in the system's own source directory: type, name, file, top-level form.
//!    One run serves both oracles, cached ([`sbcl_systems`]).
//! 2. `find --name-pattern . --features <SBCL's *features*>` runs over each system's
//!    source directory.
//! 3. **Recall**: of the distinct (file, top-level form, name) SBCL records, those `find`
//!    reports inside that form. **Precision**: of `find`'s definitions in the files the
//!    system compiles, for names SBCL records in that system, those SBCL records there.
//!    Both per category: what made the definition (SBCL's structure and class metadata:
//!    `struct-*`, `slot-*`), else what the top-level form is: `standard` (a CL definer),
//!    `nested` (inside `progn`, `let`, `labels` ...), `method`, `package`, `macro-made`
//!    (a project's own definer macro, docs/find.md#definitions-made-by-the-projects-own-macros).
//! 4. **Packages**: of the definitions found, those whose `package` is SBCL's
//!    `symbol-package`, per system (and how many of the others `find` marks unresolved).
//! 5. Floors: the figures reached when this test was written, never to be lowered.
//!
//! Missing `sbcl` or the Debian sources is a failure under `CI=true`, a skip elsewhere.

use crate::common;
use crate::sbcl_systems::{self, Oracle};

use lisp_read_file::features::{reads, Features};
use lisp_read_file::find::split_symbol;
use lisp_read_file::grammar::Grammar;
use lisp_read_file::outline::outline_bytes;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");
const SOURCES: &str = "/usr/share/common-lisp/source";

/// Least recall per category, in percent: what was reached (BENCHMARKS.md); never lower.
/// `macro-made` and `nested-macro-made` are names a project's own definer macro makes:
/// `find` instantiates the macros whose templates it can fill (docs/find.md); the rest
/// need what the evaluator of pure forms does not compute (global state, another system's
/// macro; metatilities' `defclass*`, another system's too, is read by the definer table).
const RECALL_FLOORS: &[(&str, f64)] = &[
    ("all", 99.3),
    ("standard", 100.0),
    ("method", 100.0),
    ("nested", 100.0),
    ("slot-reader", 100.0),
    ("slot-writer", 100.0),
    ("struct-accessor", 100.0),
    ("struct-constructor", 100.0),
    ("struct-copier", 100.0),
    ("struct-predicate", 100.0),
    ("struct-setf-accessor", 100.0),
    ("macro-made", 94.4),
    ("nested-macro-made", 98.2),
];
/// Least precision per kind reported, in percent (what was reached; never lower).
const PRECISION_FLOORS: &[(&str, f64)] = &[
    ("all", 99.6),
    ("defun", 100.0),
    ("defmethod", 100.0),
    ("defstruct", 100.0),
    ("defclass", 100.0),
    ("accessor", 100.0),
    ("setf-accessor", 100.0),
    ("constructor", 100.0),
    ("copier", 100.0),
    ("predicate", 100.0),
    ("reader", 100.0),
    ("method", 100.0),
];
/// Least agreement of the package `find` reports with SBCL's `symbol-package`, in
/// percent, over the definitions found (what was reached; never lower).
const PACKAGE_FLOOR: f64 = 99.3;
/// At least this many systems must load.
const MIN_SYSTEMS: usize = 20;

/// A top-level form SBCL reads: lines, operator, and the names that standard definers
/// inside it spell (containers' children, at any depth the outline reads).
#[derive(Debug, Clone)]
struct TopForm {
    start_line: usize,
    end_line: usize,
    operator: String,
    nested_names: HashSet<String>,
}

/// The top-level forms SBCL reads in `bytes` under `features`, in order (a form that
/// `#+`/`#-` excludes is not read, so it has no number).
fn top_forms(bytes: &[u8], grammar: &Grammar, features: &Features) -> Vec<TopForm> {
    let outline = outline_bytes(bytes, grammar);
    let mut forms = Vec::new();
    for item in &outline.items {
        let Some(form) = &item.form else { continue };
        let excluded = form.conditionals().iter().any(|c| {
            let expr = c.get(2..).unwrap_or_default();
            reads(c.starts_with("#+"), expr.as_bytes(), features) == Some(false)
        });
        if !excluded {
            let mut nested_names = HashSet::new();
            let mut stack: Vec<_> = form.children.iter().collect();
            while let Some(child) = stack.pop() {
                let Some(f) = &child.form else { continue };
                let operator = f.operator.as_deref().map(|o| split_symbol(o).1);
                if operator.is_some_and(|o| STANDARD.contains(&o.as_str())) {
                    nested_names.extend(f.name.as_deref().map(normalize));
                }
                stack.extend(f.children.iter());
            }
            forms.push(TopForm {
                start_line: item.start_line,
                end_line: item.end_line,
                nested_names,
                operator: form
                    .operator
                    .as_deref()
                    .map(|o| split_symbol(o).1)
                    .unwrap_or_default(),
            });
        }
    }
    forms
}

/// The index in `top` of the top-level form SBCL's definition is in, from its form
/// number `k` and the line of its character offset (`line`, 0: none). The offset is
/// where the reader started: after the form read before and not after the form's own
/// start, so the right form starts on or after that line and the one before it ends on
/// or before it. The number alone can be off when `top_forms` cannot tell which forms
/// SBCL read (a `#+#.(...)` feature, a feature that a form of the file pushes or deletes
/// as it is loaded): then the offset wins, the form that fits it nearest to `k`, else the
/// first form starting on or after the line.
/// Without an offset, `k` is moved by `shift`: how far the number of the definition with
/// an offset nearest to it was off.
fn locate(top: &[TopForm], k: i64, line: usize, shift: &BTreeMap<usize, usize>) -> Option<usize> {
    let Ok(k) = usize::try_from(k) else {
        return top.iter().position(|f| f.start_line >= line);
    };
    if line == 0 {
        let before = shift.range(..=k).next_back();
        let after = shift.range(k..).next();
        let nearest = match (before, after) {
            (Some(b), Some(a)) => Some(if k - b.0 <= a.0 - k { b } else { a }),
            (b, a) => b.or(a),
        };
        let j = match nearest {
            Some((&near, &at)) => (k + at).checked_sub(near)?,
            None => k,
        };
        return (j < top.len()).then_some(j);
    }
    let after_line =
        |j: usize| (j == 0 || top[j - 1].end_line <= line) && line <= top[j].start_line;
    if k < top.len() && after_line(k) {
        return Some(k);
    }
    (0..top.len())
        .filter(|&j| after_line(j))
        .min_by_key(|&j| j.abs_diff(k))
        .or_else(|| top.iter().position(|f| f.start_line >= line))
}

/// Per file, SBCL's form number -> the index in `top_forms` that the definitions with a
/// character offset are at (see `locate`).
fn shifts(
    defs: &[sbcl_systems::SbclDef],
    forms: &mut impl FnMut(&str) -> Vec<TopForm>,
) -> HashMap<String, BTreeMap<usize, usize>> {
    let none = BTreeMap::new();
    let mut out: HashMap<String, BTreeMap<usize, usize>> = HashMap::new();
    for def in defs.iter().filter(|d| d.line > 0) {
        let Ok(k) = usize::try_from(def.form) else {
            continue;
        };
        if let Some(j) = locate(&forms(&def.file), def.form, def.line, &none) {
            out.entry(def.file.clone()).or_default().insert(k, j);
        }
    }
    out
}

const STANDARD: &[&str] = &[
    "defun",
    "defmacro",
    "defgeneric",
    "defmethod",
    "defvar",
    "defparameter",
    "defconstant",
    "defclass",
    "define-condition",
    "defstruct",
    "deftype",
    "define-compiler-macro",
    "define-setf-expander",
    "defsetf",
    "define-modify-macro",
    "define-symbol-macro",
    "define-method-combination",
    "defpackage",
];
const CONTAINERS: &[&str] = &[
    "progn",
    "eval-when",
    "let",
    "let*",
    "flet",
    "labels",
    "macrolet",
    "symbol-macrolet",
    "locally",
];

/// A name as compared: folded, no package; a method's key cut to its name.
fn normalize(name: &str) -> String {
    let name = name.trim();
    if let Some(rest) = name.strip_prefix('(') {
        // (setf foo) [qualifiers (specializers)]
        let inner = rest.split(')').next().unwrap_or_default();
        let mut words = inner.split_whitespace();
        let (head, symbol) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
        return format!("({} {})", split_symbol(head).1, split_symbol(symbol).1);
    }
    let head = name.split_whitespace().next().unwrap_or_default();
    split_symbol(head).1
}

#[derive(Default, Clone, Copy)]
struct Tally {
    found: usize,
    total: usize,
}

impl Tally {
    fn add(&mut self, ok: bool) {
        self.total += 1;
        self.found += usize::from(ok);
    }
    fn percent(self) -> f64 {
        if self.total == 0 {
            100.0
        } else {
            100.0 * self.found as f64 / self.total as f64
        }
    }
}

struct OurDef {
    name: String,
    line: usize,
    kind: String,
    /// The package `find` reports, lowercase (`None`: none).
    package: Option<String>,
    /// `find` says the package is defined outside the scope.
    unresolved: bool,
}

fn run_find(directory: &str, features: &[String]) -> BTreeMap<String, Vec<OurDef>> {
    let out = Command::new(BIN)
        .args([
            "find",
            "--name-pattern",
            ".",
            "--json",
            "--limit",
            "100000000",
        ])
        .arg("--features")
        .arg(features.join(","))
        .args([
            "--max-file-bytes",
            "104857600",
            "--root",
            directory,
            directory,
        ])
        .output()
        .expect("find runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut by_file: BTreeMap<String, Vec<OurDef>> = BTreeMap::new();
    for d in json["definitions"].as_array().unwrap() {
        let file = Path::new(directory).join(d["file"].as_str().unwrap());
        let file = file.canonicalize().unwrap_or(file);
        // A derived definition counts where its form is.
        let line = d["form"]["line"].as_u64().or(d["line"].as_u64()).unwrap() as usize;
        by_file
            .entry(file.display().to_string())
            .or_default()
            .push(OurDef {
                name: normalize(d["name"].as_str().unwrap()),
                line,
                kind: d["kind"].as_str().unwrap().to_string(),
                package: d["package"].as_str().map(str::to_lowercase),
                unresolved: d["package_unresolved"] == Value::Bool(true),
            });
    }
    by_file
}

#[test]
fn definitions_agree_with_sbcl() {
    if !common::tool_available(sbcl_systems::sbcl_present(), "sbcl", "apt-get install sbcl")
        || !common::tool_available(
            Path::new(SOURCES).is_dir(),
            "the Debian cl-* sources",
            "apt-get install cl-ppcre cl-alexandria ...",
        )
    {
        return;
    }
    let Oracle { systems, failed } = sbcl_systems::oracle();
    let grammar = Grammar::builtin();
    let mut recall: BTreeMap<String, Tally> = BTreeMap::new();
    let mut precision: BTreeMap<String, Tally> = BTreeMap::new();
    let mut misses: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut extra: Vec<String> = Vec::new();
    // Per system: of SBCL's definitions `find` finds, those whose package `find` gives as
    // SBCL's `symbol-package`.
    let mut packages: BTreeMap<String, Tally> = BTreeMap::new();
    // Per system: of those that disagree, those `find` marks unresolved (a package defined
    // outside the system's directory, named as the code names it).
    let mut unresolved: BTreeMap<String, usize> = BTreeMap::new();
    for system in systems {
        let ours = run_find(&system.directory, &system.features);
        let feature_set = Features::new(&system.features);
        let mut forms_of: HashMap<String, Vec<TopForm>> = HashMap::new();
        let mut forms = |file: &str| -> Vec<TopForm> {
            forms_of
                .entry(file.to_string())
                .or_insert_with(|| {
                    top_forms(
                        &std::fs::read(file).unwrap_or_default(),
                        &grammar,
                        &feature_set,
                    )
                })
                .clone()
        };
        // SBCL's definitions: (file, form start line, name) -> category.
        let mut theirs: BTreeMap<(String, usize, String), (String, usize, String)> =
            BTreeMap::new();
        let mut names: HashSet<String> = HashSet::new();
        let shift_of = shifts(&system.defs, &mut forms);
        let no_shift = BTreeMap::new();
        for def in &system.defs {
            let top = forms(&def.file);
            let shift = shift_of.get(&def.file).unwrap_or(&no_shift);
            let form = locate(&top, def.form, def.line, shift).map(|j| &top[j]);
            let Some(form) = form else {
                misses.entry("unlocated".into()).or_default().push(format!(
                    "{} {} {}:{}",
                    def.kind, def.name, def.file, def.form
                ));
                continue;
            };
            // What the form at the place is; SBCL says when a structure or a class made
            // the name (a method of an accessor's name elsewhere is a method).
            let operator = form.operator.as_str();
            let name = normalize(&def.name);
            // Inside a container: a standard definer there that spells the name (or a
            // structure or class there that makes it), else a project's macro.
            let category = if CONTAINERS.contains(&operator) {
                if form.nested_names.contains(&name) || def.category != "-" {
                    "nested".to_string()
                } else {
                    "nested-macro-made".to_string()
                }
            } else if !STANDARD.contains(&operator) {
                "macro-made".to_string()
            } else if def.category != "-"
                && ["defstruct", "defclass", "define-condition"].contains(&operator)
            {
                def.category.clone()
            } else if def.kind == "method" {
                "method".to_string()
            } else {
                "standard".to_string()
            };
            names.insert(name.clone());
            theirs
                .entry((def.file.clone(), form.start_line, name))
                .or_insert((category, form.end_line, def.package.clone()));
        }
        let agreement = packages.entry(system.name.clone()).or_default();
        for ((file, start, name), (category, end, package)) in &theirs {
            let matched: Vec<&OurDef> = ours.get(file).map_or(Vec::new(), |defs| {
                defs.iter()
                    .filter(|d| &d.name == name && (*start..=*end).contains(&d.line))
                    .collect()
            });
            let hit = !matched.is_empty();
            if hit {
                // A package named by one of its nicknames is that package.
                let names: Vec<&String> = std::iter::once(package)
                    .chain(system.nicknames.get(package).into_iter().flatten())
                    .collect();
                let agrees = matched
                    .iter()
                    .any(|d| d.package.as_ref().is_some_and(|p| names.contains(&p)));
                agreement.add(agrees);
                if !agrees && matched[0].unresolved {
                    *unresolved.entry(system.name.clone()).or_default() += 1;
                }
                if !agrees {
                    misses.entry("package".into()).or_default().push(format!(
                        "{name} {file}:{start}: SBCL {package}, find {:?}",
                        matched[0].package
                    ));
                }
            }
            recall.entry(category.clone()).or_default().add(hit);
            recall.entry("all".into()).or_default().add(hit);
            if !hit {
                misses
                    .entry(category.clone())
                    .or_default()
                    .push(format!("{name} {file}:{start}"));
            }
        }
        for (file, defs) in &ours {
            if !system.files.contains(file) {
                continue;
            }
            let top = forms(file);
            // SBCL records no package's place (`find-definition-sources-by-name` gives
            // none for :package): packages are not compared.
            let compared = |d: &&OurDef| {
                names.contains(&d.name)
                    && !["defpackage", "define-package", "package", "nickname"]
                        .contains(&split_symbol(&d.kind).1.as_str())
            };
            for d in defs.iter().filter(compared) {
                let Some(form) = top.iter().find(|f| f.end_line >= d.line) else {
                    continue;
                };
                let key = (file.clone(), form.start_line, d.name.clone());
                let ok = theirs.contains_key(&key);
                precision.entry(d.kind.clone()).or_default().add(ok);
                precision.entry("all".into()).or_default().add(ok);
                if !ok {
                    extra.push(format!("{} {} {file}:{}", d.kind, d.name, d.line));
                }
            }
        }
    }
    let mut report = String::new();
    let _ = writeln!(
        report,
        "{} systems loaded ({}); failed: {:?}",
        systems.len(),
        systems
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        failed
    );
    let _ = writeln!(report, "| category | SBCL records | found | recall |");
    let _ = writeln!(report, "| --- | ---: | ---: | ---: |");
    for (c, t) in &recall {
        let _ = writeln!(
            report,
            "| {c} | {} | {} | {:.1}% |",
            t.total,
            t.found,
            t.percent()
        );
    }
    let _ = writeln!(
        report,
        "\n| kind reported | find reports | SBCL records | precision |"
    );
    let _ = writeln!(report, "| --- | ---: | ---: | ---: |");
    for (c, t) in &precision {
        let _ = writeln!(
            report,
            "| {c} | {} | {} | {:.1}% |",
            t.total,
            t.found,
            t.percent()
        );
    }
    let _ = writeln!(
        report,
        "\n| system | definitions found | package as SBCL's | agreement | others marked unresolved |"
    );
    let _ = writeln!(report, "| --- | ---: | ---: | ---: | ---: |");
    let mut all_packages = Tally::default();
    for (system, t) in &packages {
        all_packages.found += t.found;
        all_packages.total += t.total;
        let _ = writeln!(
            report,
            "| {system} | {} | {} | {:.1}% | {} |",
            t.total,
            t.found,
            t.percent(),
            unresolved.get(system).copied().unwrap_or_default()
        );
    }
    let _ = writeln!(
        report,
        "| **all** | **{}** | **{}** | **{:.1}%** | **{}** |",
        all_packages.total,
        all_packages.found,
        all_packages.percent(),
        unresolved.values().sum::<usize>()
    );
    let mut full = report.clone();
    for (c, list) in &misses {
        let _ = writeln!(report, "\nmissed {c} ({}), the first 15:", list.len());
        let _ = writeln!(full, "\nmissed {c} ({}):", list.len());
        for (k, m) in list.iter().enumerate() {
            if k < 15 {
                let _ = writeln!(report, "  {m}");
            }
            let _ = writeln!(full, "  {m}");
        }
    }
    let _ = writeln!(
        report,
        "\nnot recorded by SBCL ({}), the first 30:",
        extra.len()
    );
    let _ = writeln!(full, "\nnot recorded by SBCL ({}):", extra.len());
    for (k, m) in extra.iter().enumerate() {
        if k < 30 {
            let _ = writeln!(report, "  {m}");
        }
        let _ = writeln!(full, "  {m}");
    }
    let held_out = sbcl_systems::held_out().is_some();
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(if held_out {
        "model-oracle-held-out-report.txt"
    } else {
        "model-oracle-report.txt"
    });
    std::fs::write(&path, &full).unwrap();
    eprintln!("{report}\n(every miss: {})", path.display());
    if held_out {
        return;
    }
    assert!(
        systems.len() >= MIN_SYSTEMS,
        "only {} systems loaded: {failed:?}",
        systems.len()
    );
    for (category, floor) in RECALL_FLOORS {
        let got = recall.get(*category).copied().unwrap_or_default().percent();
        assert!(got >= *floor, "recall of {category}: {got:.1}% < {floor}%");
    }
    let got = all_packages.percent();
    assert!(
        got >= PACKAGE_FLOOR,
        "packages as SBCL's: {got:.1}% < {PACKAGE_FLOOR}%"
    );
    for (kind, floor) in PRECISION_FLOORS {
        let got = precision.get(*kind).copied().unwrap_or_default().percent();
        assert!(got >= *floor, "precision of {kind}: {got:.1}% < {floor}%");
    }
}
