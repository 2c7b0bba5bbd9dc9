//! Directory walks and ASDF plans reveal nothing outside the roots and cannot be made to
//! block: ignore files are read through the guard, identities are taken only of files the
//! guard accepts, relative paths start at the first root; `:if-feature` expressions are
//! decided. (Regression tests from an outside review.)

use lisp_read_file::features::Features;
use lisp_read_file::grammar::Grammar;
use lisp_read_file::guard::Guard;
use lisp_read_file::project::asdf;
use lisp_read_file::tool::{self, ReadRequest, ReadResult};
use std::fs;
use std::path::PathBuf;
use std::time::Duration;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lrf-review-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(dir.join("root")).unwrap();
    fs::create_dir_all(dir.join("outside")).unwrap();
    dir
}

fn map(root: &PathBuf, path: &str) -> ReadResult {
    let guard = Guard::confined(std::slice::from_ref(root), 1 << 20).unwrap();
    tool::read(&guard, &Grammar::builtin(), &ReadRequest::new(path)).unwrap()
}

fn skipped(result: &ReadResult) -> usize {
    result.files_skipped.as_ref().unwrap().len()
}

/// Finding 1: `Guard::identity` stats component and walked paths with `std::fs::metadata`,
/// unconfined; the map (and the read tool's ambiguity check) deduplicate by it, so two
/// spellings of one outside path give one skipped entry when the file exists and two when
/// it does not: an existence oracle for any file outside the roots.
#[test]
fn skipped_components_outside_the_roots_do_not_tell_whether_they_exist() {
    let dir = scratch("oracle");
    let root = dir.join("root");
    fs::write(dir.join("outside/exists.cl"), "(secret)").unwrap();
    let asd = |name: &str| {
        format!(
            "(defsystem \"o\" :components ((:file \"a\" :pathname \"../outside/{name}\") (:file \"b\" :pathname \"../../{}/outside/{name}\")))",
            dir.file_name().unwrap().to_string_lossy()
        )
    };
    fs::write(root.join("o.asd"), asd("exists.cl")).unwrap();
    let existing = skipped(&map(&root, "."));
    fs::write(root.join("o.asd"), asd("missing.cl")).unwrap();
    let missing = skipped(&map(&root, "."));
    assert_eq!(
        existing, missing,
        "the answer differs with the existence of an outside file"
    );
}

/// Finding 2: the walk reads `.gitignore` through the `ignore` crate, following a symlink
/// out of the roots: the content of an outside file decides what the map shows.
#[test]
fn a_gitignore_symlinked_out_of_the_roots_is_not_read() {
    let dir = scratch("gitignore");
    let root = dir.join("root");
    fs::write(root.join("a.lisp"), "(defun a ())").unwrap();
    fs::write(dir.join("outside/ignore"), "*.lisp\n").unwrap();
    std::os::unix::fs::symlink(dir.join("outside/ignore"), root.join(".gitignore")).unwrap();
    let result = map(&root, ".");
    assert!(
        result.content.contains("==> a.lisp <=="),
        "{}",
        result.content
    );
}

/// Finding 3: a FIFO named `.gitignore` (or `.ignore`) anywhere in a walked tree blocks the
/// walk forever (the `ignore` crate opens it blocking), in the map, lisp-find and the read
/// tool; over MCP, cancellation cannot free the thread.
#[test]
fn a_fifo_gitignore_does_not_block_the_walk() {
    let dir = scratch("fifo");
    let root = dir.join("root");
    fs::create_dir_all(root.join("sub")).unwrap();
    fs::write(root.join("a.lisp"), "(defun a ())").unwrap();
    let fifo = root.join("sub/.gitignore");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let (tx, rx) = std::sync::mpsc::channel();
    let r = root.clone();
    std::thread::spawn(move || {
        let _ = tx.send(map(&r, ".").content);
    });
    let answer = rx.recv_timeout(Duration::from_secs(10));
    if answer.is_err() {
        // Unblock the walker before failing, so that the test process can end.
        let _ = fs::OpenOptions::new().write(true).open(&fifo);
    }
    assert!(
        answer.is_ok(),
        "the map of a tree with a FIFO .gitignore did not answer in 10 s"
    );
}

/// Finding 4: `:if-feature` is decided only when it is a symbol; a feature expression
/// (`(:not :sbcl)`, `(:or ...)`) always keeps the component.
#[test]

fn if_feature_expressions_are_decided() {
    let asd = br#"(defsystem "f" :components ((:file "a") (:file "e" :if-feature (:not :sbcl))))"#;
    let features = Features::new(["sbcl"]);
    let systems = asdf::systems(asd, Some(&features));
    let files: Vec<&str> = systems[0]
        .components
        .iter()
        .map(|c| c.file.as_str())
        .collect();
    assert_eq!(files, ["a.lisp"]);
}

/// Finding 5: for an `.asd` path the walked files keep the user's relative path, and
/// `Guard::identity` stats it against the process's working directory, not the root: a
/// component reached through a symlink is shown twice unless the working directory is the
/// root (the MCP server's working directory is usually elsewhere).
#[test]
fn an_asd_map_deduplicates_by_identity_whatever_the_working_directory() {
    let dir = scratch("cwd");
    let root = dir.join("root");
    fs::write(root.join("a.lisp"), "(defun a ())").unwrap();
    std::os::unix::fs::symlink("a.lisp", root.join("alias.lisp")).unwrap();
    fs::write(
        root.join("dup.asd"),
        r#"(defsystem "dup" :components ((:file "a") (:file "alias")))"#,
    )
    .unwrap();
    let result = map(&root, "dup.asd");
    assert_eq!(
        result.files.as_ref().unwrap().len(),
        2,
        "{}",
        result.content
    );
}

/// The binary (maps and finds), run under `root` as an agent's server would be.
const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");

/// Swaps `a` and `b` (`renameat2(RENAME_EXCHANGE)`): atomically, as an attacker would.
fn exchange(a: &std::ffi::CStr, b: &std::ffi::CStr) {
    // SAFETY: two valid NUL-terminated paths; AT_FDCWD for both.
    unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        );
    }
}

/// Finding 6 (issue 22, item 1): a directory inside the root swapped for a symlink out of
/// it (`renameat2(RENAME_EXCHANGE)`, over and over) while a map or `find` walks: the walk
/// listed directories by path string, so a swap after the parent was listed was followed
/// and the outside tree's names came back in `files_skipped`. The walk now descends by
/// handles opened beneath the parent without following symlinks: whatever the timing, no
/// outside name appears. Each run spans many swaps (a swap takes microseconds, a run
/// milliseconds); the test stops at the first leak, else after a bounded count of runs.
#[test]
fn a_directory_swapped_for_a_symlink_during_a_walk_leaks_no_outside_name() {
    use std::os::unix::ffi::OsStrExt;
    let dir = scratch("swap-race");
    let root = dir.join("root");
    let outside = dir.join("outside");
    fs::create_dir_all(outside.join("deeper")).unwrap();
    for i in 0..300 {
        fs::write(outside.join(format!("OUTSIDERACE-NAME-{i}.lisp")), "(x)").unwrap();
    }
    fs::write(outside.join("deeper/OUTSIDERACE-DEEP.lisp"), "(x)").unwrap();
    fs::create_dir_all(root.join("sub/deeper")).unwrap();
    for i in 0..50 {
        fs::write(root.join(format!("sub/inside-{i}.lisp")), "(defun x ())").unwrap();
    }
    fs::write(root.join("sub/deeper/inside-deep.lisp"), "(defun y ())").unwrap();
    fs::write(root.join("a.lisp"), "(defun a ())").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("flip")).unwrap();
    let c = |p: PathBuf| std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    let (sub, flip) = (c(root.join("sub")), c(root.join("flip")));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                exchange(&sub, &flip);
                swaps += 1;
                if swaps.is_multiple_of(64) {
                    std::thread::yield_now();
                }
            }
            swaps
        })
    };
    let root_arg = root.to_str().unwrap();
    let commands: [&[&str]; 2] = [
        &["--root", root_arg, "--json", "."],
        &[
            "find",
            "--root",
            root_arg,
            "--json",
            "--name-pattern",
            "^x$",
            ".",
        ],
    ];
    let started = std::time::Instant::now();
    let mut runs = 0;
    let mut leak = None;
    'runs: while runs < 400 && started.elapsed() < Duration::from_secs(40) {
        for args in commands {
            let out = std::process::Command::new(BIN).args(args).output().unwrap();
            runs += 1;
            let text = String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr);
            if text.contains("OUTSIDERACE") {
                leak = Some((args.join(" "), text));
                break 'runs;
            }
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    if let Some((args, text)) = leak {
        let at = text.find("OUTSIDERACE").unwrap();
        let bytes = &text.as_bytes()[at.saturating_sub(200)..(at + 200).min(text.len())];
        let shown = String::from_utf8_lossy(bytes);
        panic!(
            "run {runs} ({args}) named a file outside the root, after {swaps} swaps: ...{shown}..."
        );
    }
    assert!(runs >= 100 && swaps > 1000, "{runs} runs, {swaps} swaps");
}
