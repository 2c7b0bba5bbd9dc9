//! Ignore files cost bounded memory: a map and a `find` of a tree whose `.gitignore` files
//! hold tens of thousands of glob patterns peak within a few megabytes of the same map
//! without them. (A `.gitignore` of 34,000 globs, 1 MB, in each of 4 directories once
//! peaked at 1.16 GB; linked into 50 directories it passed 8 GB.) The answer says which
//! ignore files were cut.
//!
//! The peak is the child's own maximum resident set size as reported by `wait4`.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");
const MIB: usize = 1 << 20;
/// What ignore files may add to a walk's peak (the patterns a walk compiles are bounded).
const IGNORE_FILES_MAY_ADD: usize = 48 * MIB;
/// The address space the binary is given: far above what it needs.
const ADDRESS_SPACE: usize = 2048 * MIB;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lrf-walk-mem-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// About 1 MB of glob patterns, none matching the tree's names.
fn globs() -> String {
    (0..34_000)
        .map(|i| format!("*.generated-file-{i}[0-9]x\n"))
        .collect()
}

/// A tree of `dirs` directories, each with a Lisp file and (when `rules`) a hard link to
/// one `.gitignore` of 34,000 globs.
fn tree(name: &str, dirs: usize, rules: bool) -> PathBuf {
    let root = scratch(name);
    fs::write(root.join("rules"), globs()).unwrap();
    for i in 0..dirs {
        let d = root.join(format!("d{i:02}"));
        fs::create_dir_all(&d).unwrap();
        fs::write(d.join("x.lisp"), format!("(defun x{i} ())\n")).unwrap();
        if rules {
            fs::hard_link(root.join("rules"), d.join(".gitignore")).unwrap();
        }
    }
    root
}

/// The peak resident memory (bytes) and the output of the binary run with `args` in `root`.
fn peak(root: &Path, args: &[&str]) -> (usize, String) {
    let out = std::env::temp_dir().join(format!("lrf-walk-mem-{}.out", std::process::id()));
    let mut command = Command::new(BIN);
    // SAFETY: setrlimit is async-signal-safe; the closure touches nothing else.
    unsafe {
        use std::os::unix::process::CommandExt;
        command.pre_exec(|| {
            // Unbounded ignore files took gigabytes: the machine is shared, so a run that
            // would fails here instead (and the test with it).
            let limit = libc::rlimit {
                rlim_cur: ADDRESS_SPACE as libc::rlim_t,
                rlim_max: ADDRESS_SPACE as libc::rlim_t,
            };
            libc::setrlimit(libc::RLIMIT_AS, &limit);
            Ok(())
        });
    }
    // `--root` goes after the subcommand, if any.
    let (command_args, rest) = match args.split_first() {
        Some((&"find", rest)) => (&args[..1], rest),
        _ => (&args[..0], args),
    };
    command
        .args(command_args)
        .arg("--root")
        .arg(root)
        .args(rest);
    let (code, text, peak) = common::peak::run_with_peak(&mut command, &out);
    assert_eq!(code, 0, "{args:?} exited with status {code}: {text}");
    (peak, text)
}

#[test]
fn ignore_files_of_many_patterns_cost_bounded_memory_and_are_noted() {
    let runs: [&[&str]; 2] = [&["."], &["find", "--name-pattern", "^x", "."]];
    for dirs in [4, 50] {
        let plain = tree(&format!("plain-{dirs}"), dirs, false);
        let ruled = tree(&format!("ruled-{dirs}"), dirs, true);
        for args in runs {
            let (without, _) = peak(&plain, args);
            let (with, text) = peak(&ruled, args);
            eprintln!(
                "{dirs} directories, {args:?}: {} MB without ignore files, {} MB with",
                without / MIB,
                with / MIB
            );
            assert!(
                with < without + IGNORE_FILES_MAY_ADD,
                "{dirs} .gitignore files of 34,000 globs: {args:?} peaked at {} MB, {} MB without them",
                with / MIB,
                without / MIB
            );
            assert!(
                text.contains("Ignore files past the walk's bound")
                    && text.contains("d00/.gitignore"),
                "{text}"
            );
            // The rules that were honoured still apply: nothing here matches them.
            assert!(text.contains(&format!("d{:02}/x.lisp", dirs - 1)), "{text}");
        }
        let _ = fs::remove_dir_all(&plain);
        let _ = fs::remove_dir_all(&ruled);
    }
}
