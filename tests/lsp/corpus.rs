//! No false positive: the problems the server publishes, over every Lisp file of SBCL's
//! sources and of the Debian Common Lisp libraries that SBCL's standard reader reads
//! (the oracle, tests/oracle/form-ends.lisp, says which), hold no error or warning. `#.`
//! notes (information) are expected there: SBCL uses read-time evaluation. Files that
//! need their own readtable (cxml's `#/` characters) are not files SBCL reads.

use lisp_read_file::index::analysis::{problems, Severity};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const ORACLE_SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oracle/form-ends.lisp");

/// The files of `files` that SBCL's reader reads whole.
fn read_by_sbcl(files: &[PathBuf]) -> Vec<PathBuf> {
    let mut child = Command::new("sbcl")
        .args(["--script", ORACLE_SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run sbcl");
    let mut stdin = child.stdin.take().expect("stdin");
    let input: String = files.iter().map(|p| format!("{}\n", p.display())).collect();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let ok: Vec<PathBuf> = BufReader::new(child.stdout.take().expect("stdout"))
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| {
            l.strip_prefix("OK\t")
                .and_then(|r| r.split('\t').next())
                .map(PathBuf::from)
        })
        .collect();
    let _ = writer.join();
    let _ = child.wait();
    ok
}

fn lisp_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.path());
    for e in entries {
        let path = e.path();
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            lisp_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "lisp") {
            out.push(path);
        }
    }
}

#[test]
fn sbcl_and_debian_sources_give_no_error_diagnostics() {
    let mut files = Vec::new();
    lisp_files(Path::new("/usr/share/sbcl-source/src"), &mut files);
    let sbcl = files.len();
    lisp_files(Path::new("/usr/share/common-lisp/source"), &mut files);
    let have_sbcl = Command::new("sbcl")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !crate::common::tool_available(
        sbcl > 0 && have_sbcl,
        "SBCL and its sources (/usr/share/sbcl-source)",
        "apt-get install sbcl sbcl-source",
    ) {
        return;
    }
    let all = files.len();
    let files = read_by_sbcl(&files);
    let mut bad = Vec::new();
    for path in &files {
        let bytes = std::fs::read(path).expect("read");
        for p in problems(&bytes) {
            if p.severity != Severity::Information {
                bad.push(format!("{}: {}", path.display(), p.message));
            }
        }
    }
    assert!(
        files.len() > 1000 && files.len() * 10 > all * 9,
        "SBCL read {} of {all} files",
        files.len()
    );
    assert!(
        bad.is_empty(),
        "{} of {} files:\n{}",
        bad.len(),
        files.len(),
        bad.join("\n")
    );
    println!(
        "{} files SBCL reads (of {all}): no error or warning",
        files.len()
    );
}
