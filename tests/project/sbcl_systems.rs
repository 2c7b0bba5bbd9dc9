//! What SBCL itself records of Debian systems loaded with ASDF: the one run of
//! `tests/oracle/sbcl-systems.lisp` that both oracles read (`model_oracle`: where names
//! are defined; `callers_oracle`: who calls them).
//!
//! The script loads each system of [`SYSTEMS`] once, in one SBCL, and writes its
//! definitions and its callers. That takes 90 s of CPU (every file is compiled),
//! so the output is cached under `target/tmp/sbcl-systems/`, keyed by the versions of SBCL
//! and the Debian packages, the script and the systems; within one test binary the run
//! is shared, so two oracles running at once wait for the same SBCL.
//! `LRF_SBCL_SYSTEMS=FILE` gives the script's output made elsewhere instead (waited for
//! while a run started beforehand writes it). `LRF_SBCL_HELD_OUT=FILE` gives the output
//! for other systems than [`SYSTEMS`] (`scripts/sbcl-held-out.sh`): the oracles measure
//! those, print their tables and check no floor (the floors are [`SYSTEMS`]' figures).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{LazyLock, OnceLock};

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/oracle/sbcl-systems.lisp"
);
const RUNNER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/sbcl-systems.sh");

/// Debian systems that load in SBCL without a network or a foreign library, in the
/// order loaded (`tests/oracle/systems.txt`, which `scripts/sbcl-systems.sh` reads too).
pub static SYSTEMS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    include_str!("../oracle/systems.txt")
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .collect()
});

/// A definition SBCL records (a `DEF` line of the script).
#[derive(Debug, Clone)]
pub struct SbclDef {
    /// What made a function (`struct-accessor`, `slot-reader`, ...), else `-`.
    pub category: String,
    pub kind: String,
    /// SBCL's `symbol-package` of the name, lowercase.
    pub package: String,
    pub name: String,
    pub file: String,
    /// The 0-based top-level form, or -1 when not recorded.
    pub form: i64,
    /// The 1-based line of the recorded character offset, or 0.
    pub line: usize,
}

/// A caller SBCL records (a `CALL` line of the script).
#[derive(Debug, Clone)]
pub struct SbclCall {
    /// The callee's name, lowercase.
    pub callee: String,
    pub file: String,
    /// The 0-based top-level form, or -1 when not recorded.
    pub form: i64,
    /// The 1-based line of the recorded character offset, or 0.
    pub line: usize,
}

/// One system as SBCL loaded it.
#[derive(Debug, Default)]
pub struct SbclSystem {
    pub name: String,
    pub directory: String,
    /// The files the system compiles.
    pub files: HashSet<String>,
    /// `*features*` once the system was loaded.
    pub features: Vec<String>,
    pub defs: Vec<SbclDef>,
    pub calls: Vec<SbclCall>,
    /// Each package's nicknames once the system was loaded (lowercase; none in an output
    /// written before the script printed them).
    pub nicknames: HashMap<String, Vec<String>>,
}

/// The script's output, read.
#[derive(Debug, Default)]
pub struct Oracle {
    pub systems: Vec<SbclSystem>,
    /// `name: reason` of each system that did not load.
    pub failed: Vec<String>,
}

pub fn sbcl_present() -> bool {
    Command::new("sbcl")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The script's output for [`SYSTEMS`]: run once per test binary, cached across runs;
/// or the held-out systems' output ([`held_out`]), read as given.
pub fn oracle() -> &'static Oracle {
    static ORACLE: OnceLock<Oracle> = OnceLock::new();
    ORACLE.get_or_init(|| match held_out() {
        Some(file) => parse(
            &std::fs::read_to_string(&file)
                .unwrap_or_else(|e| panic!("LRF_SBCL_HELD_OUT={}: {e}", file.display())),
        ),
        None => parse(&output()),
    })
}

/// `LRF_SBCL_HELD_OUT`: the script's output for systems the floors were not measured
/// on, when the oracles measure those (no floor is checked then).
pub fn held_out() -> Option<PathBuf> {
    std::env::var_os("LRF_SBCL_HELD_OUT").map(PathBuf::from)
}

/// What identifies the output: SBCL's and the Debian packages' versions, the script and
/// its runner, the systems.
fn cache_key() -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let stdout = |command: &mut Command| command.output().map(|o| o.stdout).unwrap_or_default();
    stdout(Command::new("dpkg-query").args([
        "-W",
        "-f",
        "${Package} ${Version}\n",
        "sbcl",
        "cl-*",
    ]))
    .hash(&mut h);
    stdout(Command::new("sbcl").arg("--version")).hash(&mut h);
    std::fs::read(SCRIPT).unwrap_or_default().hash(&mut h);
    std::fs::read(RUNNER).unwrap_or_default().hash(&mut h);
    SYSTEMS.hash(&mut h);
    format!("{:016x}", h.finish())
}

fn output() -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sbcl-systems");
    std::fs::create_dir_all(&dir).unwrap();
    let cached = dir.join(format!("sbcl-systems-{}.txt", cache_key()));
    if let Ok(given) = std::env::var("LRF_SBCL_SYSTEMS") {
        wait_for(Path::new(&given));
        std::fs::copy(&given, &cached).unwrap();
    }
    if let Ok(text) = std::fs::read_to_string(&cached) {
        eprintln!("SBCL's definitions and callers from {}", cached.display());
        return text;
    }
    eprintln!(
        "loading {} systems in SBCL (90 s of CPU; cached after)",
        SYSTEMS.len()
    );
    // Per process, so that two test binaries at once do not write one file.
    let partial = dir.join(format!("partial-{}.txt", std::process::id()));
    run_sbcl(&dir, &partial);
    std::fs::rename(&partial, &cached).unwrap();
    std::fs::read_to_string(&cached).unwrap()
}

/// Waits for `given`, the output of `scripts/sbcl-systems.sh` started beforehand (as
/// `.ci/run` starts it beside the first test binaries): it appears whole, or
/// `given.failed` does.
fn wait_for(given: &Path) {
    let failed = PathBuf::from(format!("{}.failed", given.display()));
    let started = std::time::Instant::now();
    while !given.exists() {
        assert!(
            !failed.exists(),
            "the SBCL run that writes {} failed (its log is beside it, or in target/ci/)",
            given.display()
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(1800),
            "{} did not appear in 30 minutes: is scripts/sbcl-systems.sh running?",
            given.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

/// Runs the script into `partial` through `scripts/sbcl-systems.sh` (the one place that
/// says how SBCL runs it: with a fasl cache of its own, so that every file is compiled;
/// what SBCL records differs between compiling a file and loading its fasl).
fn run_sbcl(dir: &Path, partial: &Path) {
    let log = dir.join("sbcl.log");
    let status = Command::new("bash")
        .arg(RUNNER)
        .arg(partial)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .status()
        .expect("bash runs");
    assert!(
        status.success(),
        "the oracle script failed: {status} (its output: {})",
        log.display()
    );
}

fn parse(text: &str) -> Oracle {
    let mut oracle = Oracle::default();
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let system = oracle.systems.last_mut();
        match (f[0], system) {
            ("SYSTEM", _) => oracle.systems.push(SbclSystem {
                name: f[1].into(),
                directory: f[2].into(),
                ..SbclSystem::default()
            }),
            ("FAIL", _) => oracle
                .failed
                .push(format!("{}: {}", f[1], f.get(2).unwrap_or(&""))),
            ("FEATURES", Some(system)) => {
                system.features = f[1..].iter().map(|s| s.to_string()).collect();
            }
            ("NICKNAMES", Some(system)) if f.len() > 2 => {
                let nicknames = f[2..].iter().map(|n| n.to_lowercase()).collect();
                system.nicknames.insert(f[1].to_lowercase(), nicknames);
            }
            ("FILE", Some(system)) => {
                system.files.insert(f[1].into());
            }
            ("DEF", Some(system)) if f.len() == 8 => system.defs.push(SbclDef {
                // What made a function: only for the function types (a class may share
                // the name of a reader).
                category: if matches!(f[2], "function" | "generic-function" | "method") {
                    f[1].into()
                } else {
                    "-".into()
                },
                kind: f[2].into(),
                package: f[3].to_lowercase(),
                name: f[4].into(),
                file: f[5].into(),
                form: f[6].parse().unwrap(),
                line: f[7].parse().unwrap(),
            }),
            ("CALL", Some(system)) if f.len() == 8 => system.calls.push(SbclCall {
                callee: f[3].into(),
                file: f[5].into(),
                form: f[6].parse().unwrap(),
                line: f[7].parse().unwrap(),
            }),
            _ => {}
        }
    }
    oracle
}
