//! A pytest suite of the repository run against this build's binary: the Python is
//! `$LISP_READ_FILE_PYTHON` when set, else `<repo>/.venv/bin/python`. Without it the suite
//! is skipped with a notice, and fails under `CI=true` (`bash .ci/run` creates it).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// pytest normally takes well under a minute; past this the run is stuck.
const PYTEST_TIMEOUT: Duration = Duration::from_secs(900);

/// How to get a Python that has `suite`'s requirements.
fn setup_hint(suite: &str) -> String {
    format!(
        "run `bash .ci/run`, or `python3 -m venv .venv && .venv/bin/pip install -r \
         {suite}/requirements.txt` in the repository root (or point LISP_READ_FILE_PYTHON at \
         a Python that has {suite}/requirements.txt installed)"
    )
}

/// The Python to run the suite with, if there is one (`tests/common`: a notice, or a
/// failure under `CI=true`, when there is not).
fn python(repo: &Path, suite: &str, needs: &str) -> Option<PathBuf> {
    let chosen = match std::env::var_os("LISP_READ_FILE_PYTHON") {
        Some(python) if !python.is_empty() => PathBuf::from(python),
        _ => repo.join(".venv").join("bin").join("python"),
    };
    let what = format!("a Python with {needs} ({})", chosen.display());
    super::tool_available(chosen.exists(), &what, &setup_hint(suite)).then_some(chosen)
}

fn drain(mut pipe: impl Read + Send + 'static) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// Runs `python -m pytest -q SUITE` (a directory of the repository) against this build's
/// binary and fails with pytest's output when pytest fails, runs no test or skips one.
/// `needs` names what the Python must have, for the notice when it is missing.
pub fn run_suite(suite: &str, needs: &str) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(python) = python(repo, suite, needs) else {
        return;
    };
    let setup = setup_hint(suite);
    let mut child = Command::new(&python)
        .args(["-m", "pytest", "-q", suite])
        .current_dir(repo)
        .env("LISP_READ_FILE_BIN", env!("CARGO_BIN_EXE_lisp-read-file"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}; {setup}", python.display()));
    let stdout = drain(child.stdout.take().expect("piped stdout"));
    let stderr = drain(child.stderr.take().expect("piped stderr"));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for pytest") {
            break Some(status);
        }
        if started.elapsed() > PYTEST_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        thread::sleep(Duration::from_millis(100));
    };
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    let output = format!("--- pytest stdout ---\n{stdout}\n--- pytest stderr ---\n{stderr}");
    let Some(status) = status else {
        panic!("pytest did not finish within {PYTEST_TIMEOUT:?}\n{output}");
    };
    if !status.success() {
        let hint = if output.contains("No module named") {
            format!("\nThe Python environment lacks a package: {setup}")
        } else {
            String::new()
        };
        panic!("pytest failed ({status}){hint}\n{output}");
    }
    // The closing line of a passing run, e.g. "62 passed in 14.01s".
    let summary = stdout
        .lines()
        .rev()
        .find(|l| l.contains(" passed"))
        .unwrap_or("");
    assert!(
        !summary.is_empty() && !summary.contains("skipped") && !summary.contains("no tests ran"),
        "pytest ran no test, or skipped some:\n{output}"
    );
    println!("{summary}");
}
