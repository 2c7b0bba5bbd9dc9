//! Shared by the benchmark binaries: the corpus, the command line, medians.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Where Debian's `sbcl-source` installs the SBCL sources.
pub const DEFAULT_CORPUS: &str = "/usr/share/sbcl-source";

/// The options every benchmark binary understands. `cargo bench` passes `--bench` (and
/// a filter, if one is given); anything not recognised is ignored.
pub struct Options {
    pub corpus: PathBuf,
    pub runs: usize,
    pub quick: bool,
    /// `--only NAME`: time just that contender (for a profiler), e.g. `--only ours`.
    pub only: Option<String>,
}

impl Options {
    pub fn from_args(default_runs: usize) -> Options {
        let mut options = Options {
            corpus: std::env::var_os("LISP_READ_FILE_CORPUS")
                .map_or_else(|| PathBuf::from(DEFAULT_CORPUS), PathBuf::from),
            runs: default_runs,
            quick: false,
            only: None,
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--corpus" => options.corpus = args.next().expect("--corpus DIR").into(),
                "--runs" => {
                    options.runs = args
                        .next()
                        .and_then(|n| n.parse().ok())
                        .filter(|&n| n > 0)
                        .expect("--runs N (N >= 1)")
                }
                "--quick" => options.quick = true,
                "--only" => options.only = Some(args.next().expect("--only NAME")),
                _ => {}
            }
        }
        options
    }
}

/// Every `.lisp` file under `dir`, sorted by path, with its bytes.
pub fn load_corpus(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut paths = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() && path.extension().is_some_and(|e| e == "lisp") {
                paths.push(path);
            }
        }
    }
    paths.sort();
    paths
        .into_iter()
        .filter_map(|p| std::fs::read(&p).ok().map(|b| (p, b)))
        .collect()
}

/// The corpus, or a message and `None` when it is not installed.
pub fn corpus_or_explain(options: &Options) -> Option<Vec<(PathBuf, Vec<u8>)>> {
    let files = load_corpus(&options.corpus);
    if files.is_empty() {
        eprintln!(
            "no .lisp files under {}: install Debian's sbcl-source (apt-get install sbcl-source) \
             or pass --corpus DIR / set LISP_READ_FILE_CORPUS",
            options.corpus.display()
        );
        return None;
    }
    Some(files)
}

/// Runs `f` once and returns how long it took.
pub fn time<T>(f: impl FnOnce() -> T) -> Duration {
    let start = Instant::now();
    let out = f();
    let elapsed = start.elapsed();
    std::hint::black_box(out);
    elapsed
}

/// The median of some values (the mean of the middle two for an even count).
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Megabytes (10^6 bytes) per second.
pub fn mb_per_s(bytes: usize, seconds: f64) -> f64 {
    bytes as f64 / 1e6 / seconds
}
