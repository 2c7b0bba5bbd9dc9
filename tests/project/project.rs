//! Project maps (docs/project.md): a directory or an `.asd` file read as the outline of
//! every Lisp file under `==> PATH <==` headers, in ASDF load order; the budget steps;
//! `.gitignore`; the guard's refusals inside a walk; patterns, `kinds` and `features`
//! across files; paging. The Debian corpus tests run when `/usr/share/common-lisp/source`
//! is there (under `CI=true` its absence is a failure).

use crate::common;
use lisp_read_file::error::ErrorCode;
use lisp_read_file::grammar::Grammar;
use lisp_read_file::guard::Guard;
use lisp_read_file::project::asdf;
use lisp_read_file::project::map::Step;
use lisp_read_file::tool::{self, ReadRequest, ReadResult};
use std::fs;
use std::path::{Path, PathBuf};

const CORPUS: &str = "/usr/share/common-lisp/source";

struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("lrf-project-{}-{name}", std::process::id()));
        if dir.exists() {
            restore_permissions(&dir);
            let _ = fs::remove_dir_all(&dir);
        }
        fs::create_dir_all(dir.join("root")).unwrap();
        Scratch { dir }
    }

    fn root(&self) -> PathBuf {
        self.dir.join("root")
    }

    fn write(&self, name: &str, text: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root().join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        path
    }

    fn read(&self, path: &str, edit: impl FnOnce(&mut ReadRequest)) -> ReadResult {
        self.try_read(path, 1 << 20, edit).unwrap()
    }

    fn try_read(
        &self,
        path: &str,
        cap: u64,
        edit: impl FnOnce(&mut ReadRequest),
    ) -> Result<ReadResult, lisp_read_file::error::ToolError> {
        let guard = Guard::confined(&[self.root()], cap).unwrap();
        let mut request = ReadRequest::new(path);
        edit(&mut request);
        tool::read(&guard, &Grammar::builtin(), &request)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        restore_permissions(&self.dir);
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn restore_permissions(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(entries) = fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                let _ = fs::set_permissions(&path, fs::Permissions::from_mode(0o755));
                restore_permissions(&path);
            }
        }
    }
}

fn paths(result: &ReadResult) -> Vec<String> {
    result
        .files
        .as_ref()
        .unwrap()
        .iter()
        .map(|f| f.path.clone())
        .collect()
}

fn skipped(result: &ReadResult) -> Vec<(String, String)> {
    result
        .files_skipped
        .as_ref()
        .unwrap()
        .iter()
        .map(|s| (s.path.clone(), s.code.clone()))
        .collect()
}

/// A file of `defs` documented functions and `others` forms without a name.
fn lisp_file(prefix: &str, defs: usize, others: usize) -> String {
    let mut text = String::new();
    for i in 0..defs {
        text.push_str(&format!(
            "(defun {prefix}-function-{i:02} (x)\n  \"Documentation of this function, long enough to cost characters.\"\n  x)\n"
        ));
    }
    for i in 0..others {
        text.push_str(&format!("(print {i})\n"));
    }
    text
}

// ---------------------------------------------------------------------------------------
// The map, its order and its format

#[test]
fn a_directory_map_has_headers_in_asdf_order_then_path_order() {
    let s = Scratch::new("order");
    s.write(
        "app.asd",
        "(defsystem \"app\" :components ((:module \"src\" :components ((:file \"main\" :depends-on (\"util\")) (:file \"util\"))) (:static-file \"README\")))\n",
    );
    s.write("src/main.lisp", "(defun main () (util))\n");
    s.write("src/util.lisp", "(defun util ()\n  1)\n");
    s.write("aaa/early.lisp", "(defvar *early* 1)\n");
    s.write("README", "not lisp\n");
    let map = s.read(".", |_| {});
    assert_eq!(map.mode.as_str(), "project");
    assert_eq!(map.path, ".");
    assert_eq!(
        paths(&map),
        [
            "app.asd",
            "src/util.lisp",
            "src/main.lisp",
            "aaa/early.lisp"
        ]
    );
    assert_eq!(
        map.content,
        "==> app.asd <==\n1: (defsystem \"app\" ...)\n\n==> src/util.lisp <==\n1: (defun util () ...)\n\n==> src/main.lisp <==\n1: (defun main () (util))\n\n==> aaa/early.lisp <==\n1: (defvar *early* 1)\n"
    );
    assert_eq!(map.step, Some(Step::Full));
    assert_eq!(map.meta.total_forms, 4);
    assert_eq!(map.meta.total_lines, Some(11));
    // The .asd file alone: itself, then its systems' files (not the other files).
    let asd = s.read("app.asd", |_| {});
    assert_eq!(paths(&asd), ["app.asd", "src/util.lisp", "src/main.lisp"]);
    // A subdirectory: path order, paths shown relative to the root.
    assert_eq!(
        paths(&s.read("src", |_| {})),
        ["src/main.lisp", "src/util.lisp"]
    );
}

#[test]
fn other_strategies_and_raw_lines_are_refused_on_a_directory() {
    let s = Scratch::new("refused");
    s.write("src/a.lisp", "(defun a ())\n");
    for edit in [
        (|r: &mut ReadRequest| r.collapsed = false) as fn(&mut ReadRequest),
        |r| r.strategy = tool::Strategy::Complete,
        |r| {
            r.strategy = tool::Strategy::LineRange {
                start_line: 1,
                end_line: None,
            }
        },
    ] {
        let e = s.try_read("src", 1 << 20, edit).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(e.message.contains("src is a directory"), "{}", e.message);
    }
}

// ---------------------------------------------------------------------------------------
// The budget: full, no docstrings, names, counts, then pages

#[test]
fn the_map_degrades_by_steps_to_fit_the_budget() {
    let s = Scratch::new("budget");
    for name in ["a", "b", "c"] {
        s.write(&format!("{name}.lisp"), lisp_file(name, 10, 10));
    }
    let at = |limit: usize| s.read(".", |r| r.limit = limit);
    // 3 headers, 60 forms, 2 blank lines.
    let full = at(200);
    assert_eq!(full.step, Some(Step::Full));
    assert_eq!(full.meta.total_lines, Some(65));
    assert!(full.content.contains(
        " 1: (defun a-function-00 (x) ...) ;; Documentation of this function, long enough to cost characters.\n"
    ));
    assert!(!full.meta.truncated);
    // 65 lines fit, but not 65 x 40 characters: docstrings go.
    let no_docs = at(65);
    assert_eq!(no_docs.step, Some(Step::NoDocstrings));
    assert!(no_docs
        .content
        .contains(" 1: (defun a-function-00 (x) ...)\n"));
    assert!(!no_docs.content.contains("Documentation"));
    assert!(no_docs.meta.truncated && no_docs.meta.next_offset.is_none());
    assert!(no_docs
        .content
        .contains("[Map shown at step no-docstrings: the whole outline takes 65 lines and "));
    // Fewer lines than forms: names only, forms without a name left out.
    let names = at(40);
    assert_eq!(names.step, Some(Step::Names));
    assert!(names
        .content
        .starts_with("==> a.lisp <==\n1: defun a-function-00\n4: defun a-function-01\n"));
    assert!(!names.content.contains("print"));
    // Its 60 forms start on 60 lines: the full and no-docstrings steps cannot fit, and
    // are not rendered.
    assert!(names.content.contains(
        "[Map shown at step names: the top-level forms alone take 65 lines, over the budget of 40 lines (limit)."
    ));
    assert!(names
        .content
        .contains("Narrow it: read a subdirectory or one file, pass kinds"));
    // One line per file.
    let counts = at(10);
    assert_eq!(counts.step, Some(Step::Counts));
    assert!(counts
        .content
        .starts_with("10 a.lisp\n10 b.lisp\n10 c.lisp\n[Map shown at step counts"));
    assert!(counts.content.contains(
        "[Map shown at step counts: the names of the definitions alone take 35 lines, over the budget of 10 lines (limit)."
    ));
    // Even counts do not fit: pages of counts.
    let paged = at(2);
    assert_eq!(paged.step, Some(Step::Counts));
    assert_eq!(paged.meta.next_offset, Some(2));
    assert!(paged
        .content
        .contains("10 b.lisp\n[Showing map lines 1 to 2 of 3. Use offset=2 to continue.]\n"));
    // The structured result lists the files the page shows, as the text does.
    let paths = |r: &ReadResult| -> Vec<String> {
        r.files
            .as_ref()
            .unwrap()
            .iter()
            .map(|f| f.path.clone())
            .collect()
    };
    assert_eq!(paths(&paged), ["a.lisp", "b.lisp"]);
    assert_eq!(paths(&full), ["a.lisp", "b.lisp", "c.lisp"]);
    let rest = s.read(".", |r| {
        r.limit = 2;
        r.offset = 2;
    });
    assert!(rest.content.starts_with("10 c.lisp\n[Map shown"));
    assert_eq!(rest.meta.next_offset, None);
    // Kinds already given are not offered again.
    let with_kinds = s.read(".", |r| {
        r.limit = 10;
        r.kinds = Some(vec!["defun".into()]);
    });
    assert!(with_kinds.content.contains(
        "Narrow it: read a subdirectory or one file, pass a name_pattern, or raise limit."
    ));
}

#[test]
fn detail_asks_for_a_step_and_needs_no_note() {
    use lisp_read_file::view::Detail;
    let s = Scratch::new("detail");
    for name in ["a", "b"] {
        s.write(&format!("{name}.lisp"), lisp_file(name, 3, 1));
    }
    // A map starts at the step asked for; the step asked for is not announced.
    let names = s.read(".", |r| r.detail = Some(Detail::Names));
    assert_eq!(names.step, Some(Step::Names));
    assert!(
        names
            .content
            .starts_with("==> a.lisp <==\n1: defun a-function-00\n"),
        "{}",
        names.content
    );
    assert!(!names.content.contains("[Map shown"), "{}", names.content);
    let counts = s.read(".", |r| r.detail = Some(Detail::Counts));
    assert_eq!(counts.step, Some(Step::Counts));
    assert_eq!(counts.content, "3 a.lisp\n3 b.lisp\n");
    // A step after the one asked for, forced by the budget, is announced.
    let forced = s.read(".", |r| {
        r.detail = Some(Detail::Names);
        r.limit = 3;
    });
    assert_eq!(forced.step, Some(Step::Counts));
    assert!(
        forced.content.contains("[Map shown at step counts"),
        "{}",
        forced.content
    );
    // One file: names is its outline, one line per definition; counts is refused.
    let one = s.read("a.lisp", |r| r.detail = Some(Detail::Names));
    assert!(
        one.content.starts_with("1: defun a-function-00\n"),
        "{}",
        one.content
    );
    assert!(!one.content.contains("(x)"), "{}", one.content);
    for edit in [
        (|r: &mut ReadRequest| r.detail = Some(Detail::Counts)) as fn(&mut ReadRequest),
        |r| r.detail = Some(Detail::Matches),
        |r| {
            r.detail = Some(Detail::Names);
            r.name_pattern = Some("a".into());
        },
    ] {
        let e = s.try_read("a.lisp", 1 << 20, edit).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument, "{e:?}");
    }
}

// ---------------------------------------------------------------------------------------
// Patterns, kinds and features across files; paging

#[test]
fn patterns_expand_matches_of_every_file_and_list_files_without_any() {
    let s = Scratch::new("patterns");
    s.write(
        "a.lisp",
        "(defun alpha (x)\n  (beta x))\n(defun gamma ())\n",
    );
    s.write("b.lisp", "(defun beta (y)\n  y)\n");
    s.write("c.lisp", "(defvar *c* 1)\n");
    let map = s.read(".", |r| r.name_pattern = Some("^(alpha|beta)$".into()));
    assert_eq!(map.step, Some(Step::Matches));
    assert_eq!(
        map.content,
        "==> a.lisp <==\n1: (defun alpha (x)\n2:   (beta x))\n\n==> b.lisp <==\n1: (defun beta (y)\n2:   y)\n[No matches in: c.lisp.]\n"
    );
    assert_eq!(map.meta.expanded_forms, 2);
    let by_content = s.read(".", |r| r.content_pattern = Some(r"\(beta".into()));
    assert_eq!(
        by_content.content,
        "==> a.lisp <==\n1: (defun alpha (x)\n2:   (beta x))\n[No matches in: b.lisp, c.lisp.]\n"
    );
}

#[test]
fn pages_across_files_are_exact() {
    let s = Scratch::new("paging");
    for name in ["a", "b", "c", "d"] {
        s.write(&format!("{name}.lisp"), lisp_file(name, 5, 0));
    }
    let whole = s.read(".", |r| r.content_pattern = Some("Documentation".into()));
    let total = whole.meta.total_lines.unwrap();
    assert_eq!(total, 4 * (1 + 15) + 3);
    let mut joined = Vec::new();
    let mut offset = 0;
    loop {
        let page = s.read(".", |r| {
            r.content_pattern = Some("Documentation".into());
            r.limit = 7;
            r.offset = offset;
        });
        for line in page.content.lines() {
            // A page that starts inside a file repeats its header (not a map line).
            if !line.starts_with('[') && !line.ends_with("<== (continued)") {
                joined.push(line.to_string());
            }
        }
        match page.meta.next_offset {
            Some(next) => {
                assert_eq!(next, offset + 7);
                assert!(page
                    .content
                    .contains(&format!("Use offset={next} to continue.]")));
                offset = next;
            }
            None => break,
        }
    }
    let expected: Vec<String> = whole.content.lines().map(String::from).collect();
    assert_eq!(joined, expected);
    let past = s.read(".", |r| r.offset = 1000);
    assert!(past
        .content
        .contains("[Offset 1000 is past the end of the map"));
}

#[test]
fn kinds_and_features_work_on_directories() {
    let s = Scratch::new("filters");
    s.write(
        "a.lisp",
        "(defvar *a* 1)\n(defun a ())\n#+sbcl (defun on-sbcl ())\n#-sbcl (defun elsewhere ())\n",
    );
    s.write("sub/b.lisp", "(defmacro m ())\n(defun b ())\n");
    let kinds = s.read(".", |r| r.kinds = Some(vec!["defun".into()]));
    assert_eq!(
        kinds.content,
        "==> a.lisp <==\n2: (defun a ())\n3: #+sbcl (defun on-sbcl ())\n4: #-sbcl (defun elsewhere ())\n\n==> sub/b.lisp <==\n2: (defun b ())\n[kinds: only the forms with operators defun are shown.]\n"
    );
    // A file with nothing of these kinds is named in one note.
    let macros = s.read(".", |r| r.kinds = Some(vec!["defmacro".into()]));
    assert_eq!(
        macros.content,
        "==> sub/b.lisp <==\n1: (defmacro m ())\n[Nothing shown in: a.lisp.]\n[kinds: only the forms with operators defmacro are shown.]\n"
    );
    let features = s.read(".", |r| r.features = Some(vec!["sbcl".into()]));
    assert!(features.content.contains("#+sbcl (defun on-sbcl ())"));
    assert!(!features.content.contains("elsewhere"));
    assert!(features
        .content
        .ends_with("[features: forms #+/#- exclude under (sbcl) are not shown.]\n"));
    // Features decide the reader conditionals of an .asd file's components too.
    s.write(
        "sys.asd",
        "(defsystem \"sys\" :components (#+sbcl (:file \"a\") #-sbcl (:file \"sub/b\")))\n",
    );
    let sbcl = s.read("sys.asd", |r| r.features = Some(vec!["sbcl".into()]));
    assert_eq!(paths(&sbcl), ["sys.asd", "a.lisp"]);
    assert_eq!(
        paths(&s.read("sys.asd", |_| {})),
        ["sys.asd", "a.lisp", "sub/b.lisp"]
    );
}

// ---------------------------------------------------------------------------------------
// The walk: .gitignore and the guard's refusals

#[test]
fn the_walk_honours_gitignore() {
    let s = Scratch::new("gitignore");
    s.write(".gitignore", "build/\n*.gen.lisp\n");
    s.write("a.lisp", "(defun a ())\n");
    s.write("x.gen.lisp", "(defun generated ())\n");
    s.write("build/out.lisp", "(defun built ())\n");
    s.write(".hidden/h.lisp", "(defun hidden ())\n");
    assert_eq!(paths(&s.read(".", |_| {})), ["a.lisp"]);
}

#[test]
fn every_guard_refusal_inside_a_walk_is_a_skipped_file() {
    use std::os::unix::fs::PermissionsExt;
    let s = Scratch::new("refusals");
    s.write("ok.lisp", "(defun ok ())\n");
    s.write(
        "big.lisp",
        format!("(defvar *big* \"{}\")\n", "x".repeat(300)),
    );
    s.write("bin.lisp", b"(defun f ()\0)\n");
    let outside = s.dir.join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("secret.lisp"), "(defun secret ())\n").unwrap();
    fs::write(outside.join("other.lisp"), "(defun other ())\n").unwrap();
    std::os::unix::fs::symlink(outside.join("secret.lisp"), s.root().join("link.lisp")).unwrap();
    std::os::unix::fs::symlink(&outside, s.root().join("linked-dir")).unwrap();
    let fifo = s.root().join("fifo.lisp");
    let status = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(status.is_ok_and(|s| s.success()), "mkfifo");
    let locked = s.root().join("locked");
    fs::create_dir_all(&locked).unwrap();
    fs::write(locked.join("in.lisp"), "(defun in ())\n").unwrap();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
    let locked_out = fs::read_dir(&locked).is_err();
    // An .asd component outside the root is refused like any path.
    s.write("sys.asd", "(defsystem \"sys\" :components ((:file \"../outside/other\") (:file \"ok\") (:file \"missing\")))\n");
    let map = s.try_read(".", 200, |_| {}).unwrap();
    // Privileges that read a mode-000 directory (root) list it.
    let listed: &[&str] = if locked_out {
        &["sys.asd", "ok.lisp"]
    } else {
        &["sys.asd", "ok.lisp", "locked/in.lisp"]
    };
    assert_eq!(paths(&map), listed);
    assert!(!map.content.contains("secret ()"));
    let mut got = skipped(&map);
    got.sort();
    let mut expected: Vec<(String, String)> = [
        ("../outside/other.lisp", "ACCESS_DENIED"),
        ("missing.lisp", "NOT_FOUND"),
        ("big.lisp", "SIZE_LIMIT_EXCEEDED"),
        ("bin.lisp", "BINARY_FILE"),
        ("fifo.lisp", "NOT_FILE"),
        ("link.lisp", "ACCESS_DENIED"),
    ]
    .iter()
    .map(|(p, c)| (p.to_string(), c.to_string()))
    .collect();
    if locked_out {
        expected.push(("locked".into(), "ACCESS_DENIED".into()));
    }
    expected.sort();
    assert_eq!(got, expected, "{}", map.content);
    let note = map.content.lines().last().unwrap();
    assert!(
        note.starts_with(&format!("[Skipped {} files (", expected.len())),
        "{note}"
    );
    assert!(
        note.contains("2 ACCESS_DENIED") || note.contains("3 ACCESS_DENIED"),
        "{note}"
    );
    assert!(note.contains("fifo.lisp (NOT_FILE)"), "{note}");
}

#[test]
fn an_absolute_pathname_names_the_file_it_spells() {
    // As ASDF merges it: an absolute :pathname is that file, not one under the .asd's
    // directory; outside the root it is refused like any path.
    let s = Scratch::new("absolute");
    s.write("src/real.lisp", "(defun real ())\n");
    let inside = s.root().join("src/real");
    let outside = s.dir.join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("secret.lisp"), "(defun secret ())\n").unwrap();
    s.write(
        "sys.asd",
        format!(
            "(defsystem \"sys\" :pathname \"lib/\" :components ((:file \"a\" :pathname \"{}\") (:file \"b\" :pathname \"{}\")))\n",
            inside.display(),
            outside.join("secret").display()
        ),
    );
    let map = s.read("sys.asd", |_| {});
    // Inside the root it is shown as any file of the root is.
    assert_eq!(paths(&map), ["sys.asd", "src/real.lisp"], "{}", map.content);
    assert!(map.content.contains("(defun real ())"), "{}", map.content);
    assert!(!map.content.contains("secret ()"));
    let outside_shown = format!("{}.lisp", outside.join("secret").display());
    assert_eq!(
        skipped(&map),
        [(outside_shown, "ACCESS_DENIED".to_string())]
    );
}

// ---------------------------------------------------------------------------------------
// Real systems: the Debian corpus

fn corpus() -> Option<&'static Path> {
    let present = Path::new(CORPUS).join("cl-ppcre").is_dir();
    common::tool_available(
        present,
        &format!("Debian's Common Lisp sources ({CORPUS})"),
        "apt-get install the packages in .ci/debian-packages.txt",
    )
    .then(|| Path::new(CORPUS))
}

fn corpus_read(dir: &str, path: &str) -> ReadResult {
    let guard = Guard::confined(&[Path::new(CORPUS).join(dir)], 1 << 20).unwrap();
    tool::read(&guard, &Grammar::builtin(), &ReadRequest::new(path)).unwrap()
}

#[test]
fn cl_ppcre_is_mapped_in_its_serial_order() {
    if corpus().is_none() {
        return;
    }
    let map = corpus_read("cl-ppcre", "cl-ppcre.asd");
    let expected: Vec<String> = [
        "cl-ppcre.asd",
        "packages",
        "specials",
        "util",
        "errors",
        "charset",
        "charmap",
        "chartest",
        "lexer",
        "parser",
        "regex-class",
        "regex-class-util",
        "convert",
        "optimize",
        "closures",
        "repetition-closures",
        "scanner",
        "api",
        "test/packages",
        "test/tests",
        "test/perl-tests",
    ]
    .iter()
    .map(|n| {
        if n.ends_with(".asd") {
            n.to_string()
        } else {
            format!("{n}.lisp")
        }
    })
    .collect();
    assert_eq!(paths(&map), expected);
    assert!(map
        .content
        .starts_with("==> cl-ppcre.asd <==\n32: (defsystem :cl-ppcre ...)"));
    assert!(skipped(&map).is_empty());
}

#[test]
fn alexandria_is_mapped_in_its_depends_on_order() {
    if corpus().is_none() {
        return;
    }
    let map = corpus_read("alexandria", "alexandria.asd");
    let one = "package definitions binding strings conditions symbols macros functions lists types io hash-tables control-flow arrays sequences numbers features";
    let two = "package arrays control-flow sequences lists";
    let mut expected = vec!["alexandria.asd".to_string()];
    expected.extend(one.split(' ').map(|n| format!("alexandria-1/{n}.lisp")));
    expected.extend(two.split(' ').map(|n| format!("alexandria-2/{n}.lisp")));
    assert_eq!(paths(&map), expected);
    // The directory: alexandria-tests depends on alexandria, so comes after it, though
    // its .asd file comes first in path order.
    let dir = corpus_read("alexandria", ".");
    let mut with_tests = expected.clone();
    with_tests.extend(
        [
            "alexandria-tests.asd",
            "alexandria-1/tests.lisp",
            "alexandria-2/tests.lisp",
        ]
        .map(String::from),
    );
    assert_eq!(paths(&dir), with_tests);
}

/// Every system of the corpus: the map of each directory lists every component file of
/// its top-level `.asd` files once, before any file of no system, in the order the pure
/// ASDF reading gives.
#[test]
fn every_corpus_system_maps_its_components_in_load_order() {
    let Some(corpus) = corpus() else {
        return;
    };
    let mut checked = 0;
    let mut dirs: Vec<PathBuf> = fs::read_dir(corpus)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let guard = Guard::confined(std::slice::from_ref(&dir), 1 << 20).unwrap();
        let map = tool::read(&guard, &Grammar::builtin(), &ReadRequest::new(".")).unwrap();
        let files = paths(&map);
        let mut unique = files.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), files.len(), "{}: a file twice", dir.display());
        let mut asds: Vec<PathBuf> = fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "asd"))
            .collect();
        asds.sort();
        // The files of the systems come first; each system's own files in its load order.
        let mut systems = Vec::new();
        for asd in asds {
            let bytes = fs::read(&asd).unwrap();
            systems.extend(asdf::systems(&bytes, None));
        }
        let mut owners: std::collections::HashMap<String, usize> = Default::default();
        for system in &systems {
            for c in &system.components {
                *owners.entry(c.file.clone()).or_default() += 1;
            }
        }
        let at = |file: &str| files.iter().position(|f| f == file);
        let in_systems = files
            .iter()
            .filter(|f| owners.contains_key(*f) || f.ends_with(".asd") && !f.contains('/'))
            .count();
        for (i, f) in files.iter().enumerate().skip(in_systems) {
            assert!(
                !owners.contains_key(f),
                "{}: {f} at {i}, after other files",
                dir.display()
            );
        }
        for system in &systems {
            let positions: Vec<usize> = system
                .components
                .iter()
                .filter(|c| owners[&c.file] == 1)
                .filter_map(|c| at(&c.file))
                .collect();
            checked += positions.len();
            assert!(
                positions.windows(2).all(|w| w[0] < w[1]),
                "{}: system {} out of order: {positions:?}",
                dir.display(),
                system.name
            );
        }
    }
    assert!(checked > 500, "only {checked} components checked");
}
