//! Guard tests against the real file system (docs/guard.md).
//!
//! Each test gets its own directory under the system temp dir, holding `root/` (the allowed
//! root) and `outside/` (a sibling that must stay unreachable). Every refusal asserts the
//! exact error code and that neither the message nor the path leaks the absolute root.

use lisp_read_file::error::{ErrorCode, ToolError};
use lisp_read_file::guard::{
    Guard, LoadedFile, BINARY_SNIFF_BYTES, DEFAULT_MAX_FILE_BYTES, MAX_PATH_BYTES,
};
use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A fresh test directory with `root/` and `outside/`; removed on drop.
struct Scratch {
    base: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Scratch {
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let base =
            std::env::temp_dir().join(format!("lrf-guard-{}-{}-{}", std::process::id(), n, name));
        let _ = fs::remove_dir_all(&base);
        fs::create_dir_all(base.join("root/sub")).unwrap();
        fs::create_dir_all(base.join("outside")).unwrap();
        fs::write(base.join("root/sub/a.lisp"), "(defun a () 1)\n").unwrap();
        fs::write(base.join("outside/secret.lisp"), "(defvar *secret* 42)\n").unwrap();
        Scratch { base }
    }

    fn root(&self) -> PathBuf {
        self.base.join("root")
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.base.join(rel)
    }

    fn write(&self, rel: &str, bytes: &[u8]) -> PathBuf {
        let p = self.path(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, bytes).unwrap();
        p
    }

    fn guard(&self) -> Guard {
        Guard::confined(&[self.root()], DEFAULT_MAX_FILE_BYTES).unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Restore permissions first so an unreadable file cannot block the cleanup.
        let _ = fs::set_permissions(
            self.base.join("root/locked.lisp"),
            fs::Permissions::from_mode(0o644),
        );
        let _ = fs::remove_dir_all(&self.base);
    }
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

/// The error's code is `code`, and neither its path nor its message mentions the absolute
/// root (as created, or canonical: the temp dir may itself sit behind a symlink).
#[track_caller]
fn assert_err(result: Result<LoadedFile, ToolError>, code: ErrorCode, root: &Path) -> ToolError {
    let err = match result {
        Ok(f) => panic!("expected {code}, got a file: {:?}", f.display_path),
        Err(e) => e,
    };
    assert_eq!(err.code, code, "wrong code: {err:?}");
    let mut forms = vec![s(root)];
    if let Ok(c) = fs::canonicalize(root) {
        forms.push(s(&c));
    }
    for form in forms {
        assert!(!err.message.contains(&form), "message leaks root: {err:?}");
        assert!(!err.path.contains(&form), "path leaks root: {err:?}");
    }
    assert!(!err.message.is_empty());
    err
}

/// Run `f` on another thread and fail (rather than hang) if it takes more than 10 s.
fn within_timeout<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(10))
        .expect("the guard blocked on a special file")
}

#[test]
fn dotdot_escape_is_denied() {
    let t = Scratch::new("dotdot");
    let g = t.guard();
    for p in [
        "../outside/secret.lisp",
        "sub/../../outside/secret.lisp",
        "./../outside/secret.lisp",
        "..",
    ] {
        let e = assert_err(g.read(p), ErrorCode::AccessDenied, &t.root());
        assert_eq!(e.path, p, "the path as the user gave it");
        assert!(e.message.contains("outside the allowed roots"), "{e:?}");
    }
    // A missing path outside the roots is refused, not reported missing: probing outside
    // tells nothing about what exists there.
    assert_err(
        g.read("../outside/nope.lisp"),
        ErrorCode::AccessDenied,
        &t.root(),
    );
    assert_err(
        g.read("nope/../../x.lisp"),
        ErrorCode::AccessDenied,
        &t.root(),
    );
}

#[test]
fn absolute_path_outside_is_denied() {
    let t = Scratch::new("absout");
    let g = t.guard();
    let secret = s(&t.path("outside/secret.lisp"));
    let e = assert_err(g.read(&secret), ErrorCode::AccessDenied, &t.root());
    assert_eq!(e.path, secret);
    assert_err(g.read("/etc/passwd"), ErrorCode::AccessDenied, &t.root());
    // `..` spelled inside an absolute path is resolved before the check.
    let sneaky = format!("{}/../outside/secret.lisp", s(&t.root()));
    let e = g.read(&sneaky).unwrap_err();
    assert_eq!(e.code, ErrorCode::AccessDenied);
}

#[test]
fn root_prefix_is_component_wise() {
    let t = Scratch::new("prefix");
    // Root `.../ro` must not admit `.../root/...`.
    fs::create_dir_all(t.path("ro")).unwrap();
    let g = Guard::confined(&[t.path("ro")], DEFAULT_MAX_FILE_BYTES).unwrap();
    let p = s(&t.path("root/sub/a.lisp"));
    // (No leak check: the user's own path spells `.../ro` as a string prefix.)
    let e = g.read(&p).unwrap_err();
    assert_eq!(e.code, ErrorCode::AccessDenied);
    assert_eq!(e.path, p);
}

#[test]
fn symlink_leaving_root_is_denied() {
    let t = Scratch::new("symout");
    let g = t.guard();
    symlink(t.path("outside/secret.lisp"), t.path("root/link.lisp")).unwrap();
    symlink(t.path("outside"), t.path("root/outdir")).unwrap();
    for p in [
        "link.lisp",
        "outdir/secret.lisp",
        "sub/../outdir/secret.lisp",
    ] {
        let e = assert_err(g.read(p), ErrorCode::AccessDenied, &t.root());
        assert_eq!(e.path, p);
    }
    // Through the symlink to a name that does not exist: still outside, still refused.
    // A dangling link out of the root is refused like a live one (existence not revealed).
    symlink(t.path("outside/nope.lisp"), t.path("root/dangling.lisp")).unwrap();
    symlink(
        "../../outside/nope.lisp",
        t.path("root/sub/dangling-rel.lisp"),
    )
    .unwrap();
    assert_err(g.read("dangling.lisp"), ErrorCode::AccessDenied, &t.root());
    assert_err(
        g.read("sub/dangling-rel.lisp"),
        ErrorCode::AccessDenied,
        &t.root(),
    );
    assert_err(
        g.read("dangling.lisp/x"),
        ErrorCode::AccessDenied,
        &t.root(),
    );
    assert_err(
        g.read("outdir/missing.lisp"),
        ErrorCode::AccessDenied,
        &t.root(),
    );
    // Absolute path spelled through the link: refused, and shown relative to the root
    // (the canonical root; the temp dir itself may sit behind a symlink).
    let croot = fs::canonicalize(t.root()).unwrap();
    let abs = s(&croot.join("outdir/secret.lisp"));
    let e = assert_err(g.read(&abs), ErrorCode::AccessDenied, &t.root());
    assert_eq!(e.path, "outdir/secret.lisp");
    let abs = s(&croot.join("outdir/missing.lisp"));
    let e = assert_err(g.read(&abs), ErrorCode::AccessDenied, &t.root());
    assert_eq!(e.path, "outdir/missing.lisp");
}

#[test]
fn symlink_staying_inside_root_is_ok() {
    let t = Scratch::new("symin");
    let g = t.guard();
    symlink(t.path("root/sub/a.lisp"), t.path("root/link.lisp")).unwrap();
    symlink("sub", t.path("root/alias")).unwrap();
    let f = g.read("link.lisp").unwrap();
    // The display path is the resolved file, relative to the root.
    assert_eq!(f.display_path, "sub/a.lisp");
    assert_eq!(f.bytes, b"(defun a () 1)\n");
    let f = g.read("alias/a.lisp").unwrap();
    assert_eq!(f.display_path, "sub/a.lisp");
    // A dangling link that stays inside: NOT_FOUND, reported where it points.
    symlink("sub/gone.lisp", t.path("root/dangling.lisp")).unwrap();
    let e = assert_err(g.read("dangling.lisp"), ErrorCode::NotFound, &t.root());
    assert_eq!(e.path, "sub/gone.lisp");
}

#[test]
fn symlink_loop_is_not_found() {
    let t = Scratch::new("loop");
    let g = t.guard();
    symlink("loop-b", t.path("root/loop-a")).unwrap();
    symlink("loop-a", t.path("root/loop-b")).unwrap();
    let e = assert_err(g.read("loop-a"), ErrorCode::NotFound, &t.root());
    assert_eq!(e.path, "loop-a");
}

#[test]
fn fifo_is_not_file_and_does_not_block() {
    let t = Scratch::new("fifo");
    let fifo = t.path("root/pipe");
    let status = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(status.success(), "mkfifo failed");
    let g = t.guard();
    let r = within_timeout(move || g.read("pipe"));
    let e = assert_err(r, ErrorCode::NotFile, &t.root());
    assert_eq!(e.path, "pipe");
    assert!(e.message.contains("FIFO"), "{e:?}");
    let abs = s(&fifo);
    let r = within_timeout(move || Guard::unconfined(DEFAULT_MAX_FILE_BYTES).read(&abs));
    assert_eq!(r.unwrap_err().code, ErrorCode::NotFile);
}

#[test]
fn devices_are_not_files() {
    let g = Guard::confined(&[PathBuf::from("/dev")], DEFAULT_MAX_FILE_BYTES).unwrap();
    for p in ["zero", "null", "/dev/zero", "/dev/null"] {
        let g = g.clone();
        let r = within_timeout(move || g.read(p));
        let e = assert_err(r, ErrorCode::NotFile, Path::new("/dev"));
        assert!(!e.path.starts_with('/'), "{e:?}");
        assert!(e.message.contains("character device"), "{e:?}");
    }
    let u = Guard::unconfined(DEFAULT_MAX_FILE_BYTES);
    for p in ["/dev/zero", "/dev/null"] {
        let u = u.clone();
        let e = within_timeout(move || u.read(p)).unwrap_err();
        assert_eq!(e.code, ErrorCode::NotFile);
        assert_eq!(e.path, p);
    }
}

#[test]
fn directory_is_directory() {
    let t = Scratch::new("dir");
    let g = t.guard();
    let e = assert_err(g.read("sub"), ErrorCode::IsDirectory, &t.root());
    assert_eq!(e.path, "sub");
    let e = assert_err(g.read("."), ErrorCode::IsDirectory, &t.root());
    assert_eq!(e.path, ".");
    let e = assert_err(g.read(&s(&t.root())), ErrorCode::IsDirectory, &t.root());
    assert_eq!(e.path, ".");
    let u = Guard::unconfined(DEFAULT_MAX_FILE_BYTES);
    let e = u.read(&s(&t.path("root/sub"))).unwrap_err();
    assert_eq!(e.code, ErrorCode::IsDirectory);
}

#[test]
fn missing_file_is_not_found() {
    let t = Scratch::new("missing");
    let g = t.guard();
    let e = assert_err(g.read("sub/nope.lisp"), ErrorCode::NotFound, &t.root());
    assert_eq!(e.path, "sub/nope.lisp");
    assert!(e.message.contains("no such file: sub/nope.lisp"), "{e:?}");
    assert!(e.message.contains("check the path"), "{e:?}");
    // Absolute, inside the root: reported relative to the root.
    let abs = s(&t.path("root/nodir/nope.lisp"));
    let e = assert_err(g.read(&abs), ErrorCode::NotFound, &t.root());
    assert_eq!(e.path, "nodir/nope.lisp");
    // A file used as a directory.
    let e = assert_err(g.read("sub/a.lisp/x"), ErrorCode::NotFound, &t.root());
    assert_eq!(e.path, "sub/a.lisp/x");
    // Unconfined: the path as given.
    let missing = s(&t.path("root/nope.lisp"));
    let e = Guard::unconfined(DEFAULT_MAX_FILE_BYTES)
        .read(&missing)
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound);
    assert_eq!(e.path, missing);
}

#[test]
fn size_cap_exact_and_one_over() {
    let t = Scratch::new("size");
    let cap = usize::try_from(DEFAULT_MAX_FILE_BYTES).unwrap();
    t.write("root/at-cap.txt", &vec![b'a'; cap]);
    t.write("root/over-cap.txt", &vec![b'a'; cap + 1]);
    let g = t.guard();
    assert_eq!(g.max_file_bytes(), DEFAULT_MAX_FILE_BYTES);
    let f = g.read("at-cap.txt").unwrap();
    assert_eq!(f.bytes.len(), cap);
    let e = assert_err(
        g.read("over-cap.txt"),
        ErrorCode::SizeLimitExceeded,
        &t.root(),
    );
    assert_eq!(e.path, "over-cap.txt");
    assert!(e.message.contains(&(cap + 1).to_string()), "{e:?}");
    assert!(e.message.contains(&cap.to_string()), "{e:?}");
    assert!(e.message.contains("--max-file-bytes"), "{e:?}");

    // A custom cap.
    let small = Guard::confined(&[t.root()], 10).unwrap();
    t.write("root/ten.txt", b"0123456789");
    t.write("root/eleven.txt", b"0123456789X");
    assert_eq!(small.read("ten.txt").unwrap().bytes, b"0123456789");
    assert_err(
        small.read("eleven.txt"),
        ErrorCode::SizeLimitExceeded,
        &t.root(),
    );
}

#[test]
fn binary_sniff_window() {
    let t = Scratch::new("binary");
    let g = t.guard();
    // Not UTF-8, with a NUL early: binary.
    let mut early = vec![b'x'; 20_000];
    early[100] = 0;
    early[200] = 0xff;
    t.write("root/early.bin", &early);
    let e = assert_err(g.read("early.bin"), ErrorCode::BinaryFile, &t.root());
    assert_eq!(e.path, "early.bin");

    let mut edge = vec![b'x'; 20_000];
    edge[BINARY_SNIFF_BYTES - 1] = 0;
    edge[0] = 0xfe;
    t.write("root/edge.bin", &edge);
    assert_err(g.read("edge.bin"), ErrorCode::BinaryFile, &t.root());

    let mut late = vec![b'x'; 20_000];
    late[BINARY_SNIFF_BYTES] = 0;
    late[0] = 0xfe;
    t.write("root/late.txt", &late);
    let f = g.read("late.txt").unwrap();
    assert_eq!(f.bytes, late);

    t.write("root/nul.bin", b"\0");
    assert_err(g.read("nul.bin"), ErrorCode::BinaryFile, &t.root());
}

/// Real Lisp sources hold literal NUL characters in strings (McCLIM's
/// `standard-keys.lisp`, a postmodern test file); SBCL reads them, so do we. Valid UTF-8
/// with NULs everywhere (UTF-16 text) is still binary.
#[test]
fn utf8_sources_with_a_few_nul_characters_are_text() {
    let t = Scratch::new("nul-text");
    let g = t.guard();
    let mut src = b"(in-package :clim-internals)\n(define-keysym \"".to_vec();
    src.push(0);
    src.extend_from_slice("\" :nul) ; \u{2014} \n(defun f () 1)\n".as_bytes());
    t.write("root/keys.lisp", &src);
    assert_eq!(g.read("keys.lisp").unwrap().bytes, src);
    let utf16: Vec<u8> = "(defun f () 1)\n".bytes().flat_map(|b| [b, 0]).collect();
    t.write("root/utf16.lisp", &utf16);
    assert_err(g.read("utf16.lisp"), ErrorCode::BinaryFile, &t.root());
}

#[test]
fn unreadable_file_is_access_denied() {
    let t = Scratch::new("locked");
    let p = t.write("root/locked.lisp", b"(x)");
    fs::set_permissions(&p, fs::Permissions::from_mode(0o000)).unwrap();
    if fs::File::open(&p).is_ok() {
        println!("note: running with privileges that read mode-000 files (root?); skipping the ACCESS_DENIED assertion");
        // Still must not fail in any other way.
        assert!(t.guard().read("locked.lisp").is_ok());
        return;
    }
    let e = assert_err(
        t.guard().read("locked.lisp"),
        ErrorCode::AccessDenied,
        &t.root(),
    );
    assert_eq!(e.path, "locked.lisp");
    assert!(e.message.contains("not readable"), "{e:?}");
}

#[test]
fn empty_file_is_ok() {
    let t = Scratch::new("empty");
    t.write("root/empty.lisp", b"");
    let f = t.guard().read("empty.lisp").unwrap();
    assert!(f.bytes.is_empty());
    assert_eq!(f.display_path, "empty.lisp");
}

#[test]
fn empty_path_is_invalid_argument() {
    let t = Scratch::new("emptypath");
    assert_err(t.guard().read(""), ErrorCode::InvalidArgument, &t.root());
    let e = Guard::unconfined(DEFAULT_MAX_FILE_BYTES)
        .read("")
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
}

#[test]
fn nul_in_path_is_invalid_argument() {
    let t = Scratch::new("nulpath");
    assert_err(
        t.guard().read("sub/a\0.lisp"),
        ErrorCode::InvalidArgument,
        &t.root(),
    );
    let e = Guard::unconfined(DEFAULT_MAX_FILE_BYTES)
        .read("a\0b")
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
}

#[test]
fn display_paths_are_relative_to_the_root() {
    let t = Scratch::new("display");
    let g = t.guard();
    let abs = s(&t.path("root/sub/a.lisp"));
    let dotted = format!("{}/./sub/../sub/a.lisp", s(&t.root()));
    for p in [
        "sub/a.lisp",
        "./sub/a.lisp",
        "sub/../sub/a.lisp",
        "sub//a.lisp",
        &abs,
        &dotted,
    ] {
        let f = g.read(p).unwrap();
        assert_eq!(f.display_path, "sub/a.lisp", "for {p}");
        assert_eq!(f.bytes, b"(defun a () 1)\n");
        assert!(f.mtime_ms > 0);
    }
}

#[test]
fn unconfined_keeps_the_path_as_given() {
    let t = Scratch::new("unconfined");
    let u = Guard::unconfined(DEFAULT_MAX_FILE_BYTES);
    assert!(u.roots().is_empty());
    // Any readable file, even "outside".
    let abs = s(&t.path("outside/secret.lisp"));
    let f = u.read(&abs).unwrap();
    assert_eq!(f.display_path, abs);
    let dotted = format!("{}/../outside/secret.lisp", s(&t.root()));
    assert_eq!(u.read(&dotted).unwrap().display_path, dotted);
    // Relative to the current directory (cargo runs tests in the package root).
    let f = u.read("./Cargo.toml").unwrap();
    assert_eq!(f.display_path, "./Cargo.toml");
    assert!(!f.bytes.is_empty());
}

/// A path below the first root is shown relative to it; below another root it is shown
/// absolute, the only form that reads back (a relative path names the first root).
#[test]
fn multiple_roots() {
    let t = Scratch::new("multi");
    t.write("second/lib/b.lisp", b"(defun b () 2)\n");
    let g = Guard::confined(&[t.root(), t.path("second")], DEFAULT_MAX_FILE_BYTES).unwrap();
    assert_eq!(g.roots().len(), 2);
    let second = fs::canonicalize(t.path("second")).unwrap();
    assert_eq!(g.roots()[1], second);
    let b_abs = s(&second.join("lib/b.lisp"));
    // Absolute inside the second root: allowed, shown absolute, and that reads back.
    let f = g.read(&s(&t.path("second/lib/b.lisp"))).unwrap();
    assert_eq!(f.display_path, b_abs);
    assert_eq!(f.bytes, b"(defun b () 2)\n");
    assert_eq!(g.read(&f.display_path).unwrap().bytes, f.bytes);
    // Relative paths resolve against the first root only.
    let e = assert_err(g.read("lib/b.lisp"), ErrorCode::NotFound, &t.root());
    assert_eq!(e.path, "lib/b.lisp");
    // Relative paths may walk from the first root into the second.
    let f = g.read("../second/lib/b.lisp").unwrap();
    assert_eq!(f.display_path, b_abs);
    // Still nothing outside both.
    assert_err(
        g.read(&s(&t.path("outside/secret.lisp"))),
        ErrorCode::AccessDenied,
        &t.path("second"),
    );
    // Missing, absolute in the second root: NOT_FOUND, shown where it would be.
    let e = g.read(&s(&t.path("second/lib/nope.lisp"))).unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound);
    assert_eq!(e.path, s(&second.join("lib/nope.lisp")));
    // A file below the first root is shown relative even when given absolute.
    let f = g.read(&s(&t.path("root/sub/a.lisp"))).unwrap();
    assert_eq!(f.display_path, "sub/a.lisp");
}

#[test]
fn bad_roots_are_invalid_argument() {
    let t = Scratch::new("badroot");
    let missing = t.path("no-such-dir");
    let e = Guard::confined(std::slice::from_ref(&missing), DEFAULT_MAX_FILE_BYTES).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert_eq!(e.path, s(&missing));
    assert!(e.message.contains("existing directory"), "{e:?}");

    let file = t.path("root/sub/a.lisp");
    let e = Guard::confined(&[t.root(), file.clone()], DEFAULT_MAX_FILE_BYTES).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    assert_eq!(e.path, s(&file));

    let e = Guard::confined(&[], DEFAULT_MAX_FILE_BYTES).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
}

#[test]
fn roots_are_canonical() {
    let t = Scratch::new("canon");
    let dotted = t.root().join("sub/..");
    let g = Guard::confined(&[dotted], 7).unwrap();
    assert_eq!(g.roots(), &[fs::canonicalize(t.root()).unwrap()]);
    assert_eq!(g.max_file_bytes(), 7);
}

#[test]
fn check_bytes_applies_size_and_binary() {
    let g = Guard::unconfined(10);
    let f = g.check_bytes("-", b"(ok)".to_vec()).unwrap();
    assert_eq!(f.display_path, "-");
    assert_eq!(f.bytes, b"(ok)");
    assert_eq!(f.mtime_ms, 0);
    assert!(g.check_bytes("-", Vec::new()).unwrap().bytes.is_empty());
    assert_eq!(g.check_bytes("-", vec![b'a'; 10]).unwrap().bytes.len(), 10);

    let e = g.check_bytes("-", vec![b'a'; 11]).unwrap_err();
    assert_eq!(e.code, ErrorCode::SizeLimitExceeded);
    assert_eq!(e.path, "-");
    assert!(e.message.contains("--max-file-bytes"), "{e:?}");

    let e = g.check_bytes("<stdin>", b"ab\0".to_vec()).unwrap_err();
    assert_eq!(e.code, ErrorCode::BinaryFile);
    assert_eq!(e.path, "<stdin>");

    let big = Guard::unconfined(DEFAULT_MAX_FILE_BYTES);
    let mut late = vec![b'x'; BINARY_SNIFF_BYTES + 1];
    late[BINARY_SNIFF_BYTES] = 0;
    assert!(big.check_bytes("-", late).is_ok());
}

#[test]
fn overlong_paths_are_refused_at_once() {
    let sc = Scratch::new("long");
    let guard = sc.guard();
    // Missing paths walk their ancestors; a megabyte of components must not take long.
    let huge = "a/".repeat(512 * 1024);
    let e = within_timeout(move || guard.read(&huge));
    let e = assert_err(e, ErrorCode::InvalidArgument, &sc.root());
    assert!(e.message.contains("too long"), "{}", e.message);
    assert!(e.path.len() < 100, "the error echoes the whole path");
    // At the limit: resolved like any other path.
    let at_limit = "a/".repeat(MAX_PATH_BYTES / 2);
    let guard = sc.guard();
    let e = within_timeout(move || guard.read(&at_limit));
    assert_err(e, ErrorCode::NotFound, &sc.root());
}
