//! Directories: what a path names, and the files under a directory.
//!
//! The walk descends by directory handles (`descend.rs`): each directory is opened beneath
//! its parent's handle, never by a path string, so what it lists was inside the walked
//! directory when listed. Names are in path order; hidden files are skipped, symlinked
//! directories not entered, directories deeper than [`MAX_WALK_DEPTH`] levels not listed.
//! A listing is only a list of names: every file is then read by [`Guard::read_walked`],
//! which resolves it again as any user path, by file identity inside the roots. A file the
//! listing gives that the guard refuses (a symlink out of the roots, a FIFO, a file over
//! the cap) is reported as skipped with the guard's reason, never read.
//!
//! The `.gitignore` and `.ignore` files of the walked directory and of those below it are
//! read by handle, bounded in size and patterns (`ignore_rules.rs`; a FIFO, a symlink or
//! a file that is not regular counts as absent), and the deepest rule that matches
//! decides, as in git. Ignore files above the walked directory, `.git/info/exclude` and the
//! user's global git ignore file are not read.
//!
//! This module does not read file contents but ignore files, nor decide which files are
//! Lisp (the caller passes a predicate).

use super::descend::{self, Stamp, MAX_WALK_DEPTH};
use super::ignore_rules::{MAX_IGNORE_FILE_BYTES, MAX_IGNORE_PATTERNS};
use super::messages::printable;
use super::{resolve, Guard, LoadedFile};
use crate::cancel::CancelToken;
use crate::error::{ErrorCode, ToolError};
use crate::shown::{shown_os_path, shown_path};
use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;
use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Most files one walk lists; past it the walk stops and says so.
pub const MAX_WALKED_FILES: usize = 20_000;

/// A directory a path named, inside the roots (or anywhere, unconfined), and a handle on
/// it: the walk starts from the handle, not from the path.
#[derive(Debug, Clone)]
pub struct Directory {
    /// As paths are shown: relative to the first root (`.` for the root itself).
    pub display_path: String,
    path: PathBuf,
    handle: Arc<OwnedFd>,
}

impl PartialEq for Directory {
    fn eq(&self, other: &Directory) -> bool {
        self.display_path == other.display_path && self.path == other.path
    }
}

impl Eq for Directory {}

/// A file the walk listed, not read yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkedFile {
    /// As paths are shown: relative to the first root, forward slashes.
    pub display_path: String,
    /// Relative to the walked directory, forward slashes: the order of a walk.
    pub relative_path: String,
    path: PathBuf,
    /// From a walk asked for stamps ([`Guard::walk_stamped`]), when a regular file.
    stamp: Option<Stamp>,
}

impl WalkedFile {
    /// What the walk's `fstatat` said of the file ([`Guard::walk_stamped`]): `None` for
    /// an entry that is not a regular file, or a walk that did not stat.
    pub fn stamp(&self) -> Option<&Stamp> {
        self.stamp.as_ref()
    }

    /// The file's real path as the walk found it (never the escaped `display_path`):
    /// to be opened through the guard again, which resolves it inside the roots.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }
}

/// A name the walk could not list or read, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    pub display_path: String,
    pub error: ToolError,
}

/// The files under a directory that the predicate wanted, sorted by relative path.
#[derive(Debug, Clone, PartialEq)]
pub struct Walk {
    pub directory: Directory,
    pub files: Vec<WalkedFile>,
    /// Entries the walk could not list (an unreadable directory, a broken entry).
    pub skipped: Vec<Skipped>,
    /// The walk stopped at [`MAX_WALKED_FILES`].
    pub stopped_at_limit: bool,
    /// What the answer should say of the walk's other bounds (directories too deep,
    /// ignore files cut), one note each.
    pub notes: Vec<String>,
}

impl Guard {
    /// The directory `user_path` names, or `None` when it names anything else or cannot be
    /// resolved (reading it then gives the refusal).
    ///
    /// # Errors
    /// The refusals of a path that cannot be accepted whatever it names (outside the
    /// roots, too long, a NUL byte).
    pub fn directory(&self, user_path: &str) -> Result<Option<Directory>, ToolError> {
        super::check_path_text(user_path)?;
        if self.roots.is_empty() {
            // Unconfined, as a shell would: the path's own symlinks are followed.
            let path = Path::new(user_path);
            let handle = rustix::fs::open(path, top_flags(), Mode::empty()).ok();
            return Ok(handle.map(|handle| Directory {
                display_path: printable(user_path),
                path: path.to_path_buf(),
                handle: Arc::new(handle),
            }));
        }
        match resolve::find_confined(&self.roots, user_path) {
            Ok(resolve::Found::Directory {
                display,
                path,
                handle,
            }) => Ok(Some(Directory {
                display_path: display,
                path,
                handle: Arc::new(handle),
            })),
            Ok(resolve::Found::File(_)) => Ok(None),
            Err(e) if e.code == ErrorCode::AccessDenied => Err(e),
            Err(_) => Ok(None),
        }
    }

    /// Lists the files under `directory` whose relative path `wanted` accepts, honouring
    /// ignore files; at most [`MAX_WALKED_FILES`], the first in path order. Nothing is read
    /// but directory entries and ignore files (see the module documentation).
    pub fn walk(&self, directory: &Directory, wanted: &dyn Fn(&str) -> bool) -> Walk {
        self.walk_cancellable(directory, wanted, &CancelToken::default())
    }

    /// [`Guard::walk`] that stops early, with what it listed so far, once `cancel` is set.
    pub fn walk_cancellable(
        &self,
        directory: &Directory,
        wanted: &dyn Fn(&str) -> bool,
        cancel: &CancelToken,
    ) -> Walk {
        self.walk_with(directory, wanted, cancel, false)
    }

    /// [`Guard::walk_cancellable`] that also stats each regular file beneath its
    /// directory's handle ([`WalkedFile::stamp`]): one `fstatat` a file, no resolution,
    /// for a caller that keeps what it read and must know what changed since.
    pub fn walk_stamped(
        &self,
        directory: &Directory,
        wanted: &dyn Fn(&str) -> bool,
        cancel: &CancelToken,
    ) -> Walk {
        self.walk_with(directory, wanted, cancel, true)
    }

    fn walk_with(
        &self,
        directory: &Directory,
        wanted: &dyn Fn(&str) -> bool,
        cancel: &CancelToken,
        stamps: bool,
    ) -> Walk {
        let mut walk = Walk {
            directory: directory.clone(),
            files: Vec::new(),
            skipped: Vec::new(),
            stopped_at_limit: false,
            notes: Vec::new(),
        };
        let top = rustix::fs::openat(
            &*directory.handle,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        );
        let listing = match top {
            Ok(top) => descend::descend(
                top,
                &descend::Want {
                    file: wanted,
                    max_files: MAX_WALKED_FILES,
                    size_cap: self.max_file_bytes,
                    cancel,
                    stamps,
                },
            ),
            Err(e) => {
                walk.skipped.push(listing_error(directory, b"", e));
                return walk;
            }
        };
        walk.stopped_at_limit = listing.stopped_at_limit;
        walk.files = listing
            .files
            .iter()
            .enumerate()
            .map(|(k, rel)| walked(directory, rel, listing.stamps.get(k).copied().flatten()))
            .collect();
        walk.files
            .sort_by(|a, b| a.relative_path.cmp(&b.relative_path));
        walk.skipped = listing
            .unlisted
            .iter()
            .map(|(rel, e)| listing_error(directory, rel, *e))
            .collect();
        if let Some(rel) = &listing.moved {
            walk.skipped.push(moved(directory, rel));
        }
        walk.notes = notes(directory, &listing);
        if !self.still_there(directory) {
            walk.files.clear();
            walk.skipped.push(moved(directory, b""));
        }
        walk
    }

    /// Whether the walked directory is still the one its path names inside the roots:
    /// the walk checks the directories below it, this checks it and those above it (one
    /// resolution), so that a directory moved out of the roots during the walk lists
    /// nothing.
    fn still_there(&self, directory: &Directory) -> bool {
        let Some(path) = directory.path.to_str().filter(|_| !self.roots.is_empty()) else {
            return true;
        };
        let same = |found: &OwnedFd| {
            let id = resolve::FileId::of;
            matches!((id(found), id(&directory.handle)), (Ok(a), Ok(b)) if a == b)
        };
        matches!(
            resolve::find_confined(&self.roots, path),
            Ok(resolve::Found::Directory { handle, .. }) if same(&handle)
        )
    }

    /// Reads a listed file as any user path: resolved again inside the roots, checked,
    /// read.
    ///
    /// # Errors
    /// As [`Guard::read`].
    pub fn read_walked(&self, file: &WalkedFile) -> Result<LoadedFile, ToolError> {
        match file.path.to_str() {
            Some(path) => self.read(path),
            None => Err(super::messages::invalid_path(
                &file.display_path,
                "is not UTF-8; rename it to read it",
            )),
        }
    }

    /// A file a user named (a path as [`Guard::read`] takes it), to be read with
    /// [`Guard::read_walked`] among walked files (the command line's several paths).
    pub fn named_file(&self, user_path: &str) -> WalkedFile {
        WalkedFile {
            display_path: printable(user_path),
            relative_path: user_path.replace('\\', "/"),
            path: PathBuf::from(user_path),
            stamp: None,
        }
    }

    /// The file `relative` (forward slashes, no `..` needed) names from the directory of
    /// `base` (a component of an `.asd` file), or the absolute path it is: not checked;
    /// reading it is (outside the roots it is refused as any path is).
    pub fn sibling(&self, base: &WalkedFile, relative: &str) -> WalkedFile {
        if relative.starts_with('/') {
            return WalkedFile {
                display_path: shown_path(relative),
                relative_path: relative.to_string(),
                path: PathBuf::from(relative),
                stamp: None,
            };
        }
        let parent = |p: &str| {
            p.rsplit_once('/')
                .map_or(String::new(), |(d, _)| format!("{d}/"))
        };
        WalkedFile {
            // The base is shown already; only the new part is shown here.
            display_path: format!("{}{}", parent(&base.display_path), shown_path(relative)),
            relative_path: format!("{}{relative}", parent(&base.relative_path)),
            path: base
                .path
                .parent()
                .map_or_else(|| PathBuf::from(relative), |d| d.join(relative)),
            stamp: None,
        }
    }

    /// The identity (device, inode) of the file a walked path names, as the guard resolves
    /// it (inside the roots, symlinks followed by the guard, relative paths from the first
    /// root); `None` when the guard refuses it (outside the roots, missing, not a regular
    /// file), so that nothing about a refused path can be learned by comparing identities.
    /// Tells the same file under two names apart from two files; reading it still goes
    /// through [`Guard::read_walked`].
    pub fn identity(&self, file: &WalkedFile) -> Option<(u64, u64)> {
        use std::os::unix::fs::MetadataExt;
        let opened = self.open(file.path.to_str()?).ok()?;
        let meta = opened.file.metadata().ok()?;
        Some((meta.dev(), meta.ino()))
    }

    /// When the walked path's last name is a symbolic link (to a file [`Guard::identity`]
    /// resolved), the link's own identity: a walk lists such a link as a file of its own,
    /// beside its target, so several paths keep it apart too (and one link named twice,
    /// `alias.lisp ./alias.lisp`, is one). Asked only of a path the guard opened already;
    /// what it tells is the kind of a name the caller gave or the walk listed.
    pub fn link_identity(&self, file: &WalkedFile) -> Option<(u64, u64)> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::symlink_metadata(&file.path).ok()?;
        meta.file_type()
            .is_symlink()
            .then(|| (meta.dev(), meta.ino()))
    }
}

/// The flags of the handle on an unconfined directory: one that may be searched but not
/// listed is still a directory (its walk then says it could not be listed).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn top_flags() -> OFlags {
    OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC
}
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn top_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC
}

/// How a walked file is shown, ordered and read, from its path below the directory.
fn walked(directory: &Directory, rel: &[u8], stamp: Option<Stamp>) -> WalkedFile {
    let relative_path = String::from_utf8_lossy(rel).into_owned();
    WalkedFile {
        display_path: shown(directory, rel),
        path: directory.path.join(OsStr::from_bytes(rel)),
        relative_path,
        stamp,
    }
}

/// `rel` below the directory as paths are shown.
/// A path below the directory as answers show it: each name by the one rule (any bytes),
/// after the directory's part, which is shown already and never shown twice.
fn shown(directory: &Directory, rel: &[u8]) -> String {
    let rel = shown_os_path(OsStr::from_bytes(rel));
    match (directory.display_path.as_str(), rel.is_empty()) {
        (dir, true) => dir.to_string(),
        (".", false) => rel,
        (dir, false) => format!("{}/{rel}", dir.trim_end_matches('/')),
    }
}

fn listing_error(directory: &Directory, rel: &[u8], error: Errno) -> Skipped {
    let display_path = shown(directory, rel);
    let message = format!(
        "could not list {display_path}: {}; check its permissions",
        std::io::Error::from(error)
    );
    Skipped {
        error: ToolError::new(ErrorCode::AccessDenied, display_path.clone(), message),
        display_path,
    }
}

fn moved(directory: &Directory, rel: &[u8]) -> Skipped {
    let display_path = shown(directory, rel);
    let message = format!(
        "{display_path} was moved while the walk listed it: nothing below it is shown; \
         read it again once the directory stops changing"
    );
    Skipped {
        error: ToolError::new(ErrorCode::AccessDenied, display_path.clone(), message),
        display_path,
    }
}

/// The notes a walk's answer carries: directories too deep to enter, ignore files cut.
fn notes(directory: &Directory, listing: &descend::Listing) -> Vec<String> {
    let names = |paths: &[Vec<u8>], count: usize| {
        let mut names: Vec<String> = paths.iter().map(|p| shown(directory, p)).collect();
        if count > paths.len() {
            names.push(format!("and {} more", count - paths.len()));
        }
        names.join(", ")
    };
    let mut notes = Vec::new();
    if listing.too_deep_count > 0 {
        notes.push(format!(
            "[Directories deeper than {MAX_WALK_DEPTH} levels were not entered: {}; read them directly]",
            names(&listing.too_deep, listing.too_deep_count)
        ));
    }
    if listing.ignore_cut_count > 0 {
        notes.push(format!(
            "[Ignore files past the walk's bound ({} KiB each, {MAX_IGNORE_PATTERNS} patterns in all) were cut, their other rules not honoured: {}]",
            MAX_IGNORE_FILE_BYTES / 1024,
            names(&listing.ignore_cut, listing.ignore_cut_count)
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("lrf-walk-unit-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn tree(name: &str) -> PathBuf {
        let dir = scratch(name);
        let root = &dir;
        fs::create_dir_all(root.join("src/sub")).unwrap();
        fs::create_dir_all(root.join("build")).unwrap();
        fs::write(root.join("a.lisp"), "(defun a ())").unwrap();
        fs::write(root.join("src/b.lisp"), "(defun b ())").unwrap();
        fs::write(root.join("src/sub/c.lisp"), "(defun c ())").unwrap();
        fs::write(root.join("src/notes.txt"), "text").unwrap();
        fs::write(root.join("build/gen.lisp"), "(defun gen ())").unwrap();
        fs::write(root.join(".gitignore"), "build/\n").unwrap();
        dir
    }

    fn lisp(path: &str) -> bool {
        Path::new(path).extension().is_some_and(|e| e == "lisp")
    }

    fn names(walk: &Walk) -> Vec<&str> {
        walk.files.iter().map(|f| f.display_path.as_str()).collect()
    }

    #[test]
    fn lists_sorted_honours_gitignore_and_the_predicate() {
        let dir = tree("t1");
        let guard = Guard::confined(std::slice::from_ref(&dir), 1 << 20).unwrap();
        let root = guard.directory(".").unwrap().unwrap();
        let walk = guard.walk(&root, &lisp);
        assert_eq!(names(&walk), ["a.lisp", "src/b.lisp", "src/sub/c.lisp"]);
        let src = guard.directory("src").unwrap().unwrap();
        assert_eq!(src.display_path, "src");
        let walk = guard.walk(&src, &lisp);
        assert_eq!(names(&walk), ["src/b.lisp", "src/sub/c.lisp"]);
        assert_eq!(walk.files[1].relative_path, "sub/c.lisp");
        let read = guard.read_walked(&walk.files[1]).unwrap();
        assert_eq!(read.display_path, "src/sub/c.lisp");
        assert_eq!(read.bytes, b"(defun c ())");
    }

    #[test]
    fn ignore_files_are_read_through_the_guard() {
        let dir = tree("ignores");
        let outside = scratch("ignores-outside");
        fs::write(outside.join("rules"), "*.lisp\n").unwrap();
        // A FIFO would block a reader, a symlink out of the root would let an outside
        // file's content change the listing, a file over the cap could be any size.
        assert!(std::process::Command::new("mkfifo")
            .arg(dir.join("src/.gitignore"))
            .status()
            .unwrap()
            .success());
        std::os::unix::fs::symlink(outside.join("rules"), dir.join("src/sub/.ignore")).unwrap();
        fs::write(
            dir.join(".ignore"),
            format!("{}\n*.lisp\n", "#".repeat(200)),
        )
        .unwrap();
        let guard = Guard::confined(std::slice::from_ref(&dir), 100).unwrap();
        let walk = guard.walk(&guard.directory(".").unwrap().unwrap(), &lisp);
        assert_eq!(names(&walk), ["a.lisp", "src/b.lisp", "src/sub/c.lisp"]);
        // Read where allowed: a negation in a deeper directory wins over the root's rule.
        fs::remove_file(dir.join(".ignore")).unwrap();
        fs::write(dir.join(".ignore"), "*.lisp\n").unwrap();
        fs::write(dir.join("src/sub/.gitignore"), "!c.lisp\n").unwrap();
        let walk = guard.walk(&guard.directory(".").unwrap().unwrap(), &lisp);
        assert_eq!(names(&walk), ["src/sub/c.lisp"]);
    }

    #[test]
    fn a_file_names_no_directory_and_outside_is_refused() {
        let dir = tree("t2");
        let guard = Guard::confined(&[dir.join("src")], 1 << 20).unwrap();
        assert_eq!(guard.directory("b.lisp").unwrap(), None);
        assert_eq!(guard.directory("missing").unwrap(), None);
        let err = guard.directory("..").unwrap_err();
        assert_eq!(err.code, ErrorCode::AccessDenied);
    }

    #[test]
    fn a_symlink_out_of_the_root_is_listed_but_refused_when_read() {
        let dir = tree("t3");
        let outside = scratch("outside");
        fs::write(outside.join("secret.lisp"), "(secret)").unwrap();
        std::os::unix::fs::symlink(outside.join("secret.lisp"), dir.join("src/link.lisp")).unwrap();
        std::os::unix::fs::symlink(outside, dir.join("src/out")).unwrap();
        let guard = Guard::confined(&[dir.join("src")], 1 << 20).unwrap();
        let walk = guard.walk(&guard.directory(".").unwrap().unwrap(), &lisp);
        // The symlinked directory is not entered; the symlinked file is refused on reading.
        assert_eq!(names(&walk), ["b.lisp", "link.lisp", "sub/c.lisp"]);
        let err = guard.read_walked(&walk.files[1]).unwrap_err();
        assert_eq!(err.code, ErrorCode::AccessDenied);
    }

    #[test]
    fn path_order_the_depth_cap_and_cancellation() {
        let dir = scratch("order");
        fs::create_dir_all(dir.join("a/b")).unwrap();
        for name in ["a.lisp", "a/b/c.lisp", "a-b.lisp", "a/z.lisp", "b.lisp"] {
            fs::write(dir.join(name), "()").unwrap();
        }
        // `deep` is 1 level down, its last `d` MAX_WALK_DEPTH levels.
        let mut deep = dir.join("deep");
        for _ in 1..MAX_WALK_DEPTH {
            deep.push("d");
        }
        fs::create_dir_all(deep.join("d")).unwrap();
        fs::write(deep.join("at-the-cap.lisp"), "()").unwrap();
        fs::write(deep.join("d/past-the-cap.lisp"), "()").unwrap();
        let guard = Guard::confined(std::slice::from_ref(&dir), 1 << 20).unwrap();
        let top = guard.directory(".").unwrap().unwrap();
        let walk = guard.walk(&top, &lisp);
        let shown = names(&walk);
        assert_eq!(
            shown[..5],
            ["a-b.lisp", "a.lisp", "a/b/c.lisp", "a/z.lisp", "b.lisp"]
        );
        assert!(shown[5].ends_with("/d/at-the-cap.lisp"), "{shown:?}");
        assert_eq!(shown.len(), 6, "{shown:?}");
        assert_eq!(walk.notes.len(), 1, "{:?}", walk.notes);
        assert!(walk.notes[0].starts_with("[Directories deeper than 128 levels"));
        // Only the first files in path order are kept at the cut.
        let one = |path: &str| path == "a/z.lisp" || path == "b.lisp";
        assert_eq!(names(&guard.walk(&top, &one)), ["a/z.lisp", "b.lisp"]);
        let cancel = CancelToken::new();
        cancel.cancel();
        assert!(guard
            .walk_cancellable(&top, &lisp, &cancel)
            .files
            .is_empty());
    }

    #[test]
    fn ignore_files_past_the_bounds_are_cut_and_named() {
        let dir = scratch("ignore-bounds");
        fs::create_dir_all(dir.join("big")).unwrap();
        fs::create_dir_all(dir.join("many")).unwrap();
        // One pattern too far in a file over the size bound: the file is cut.
        let mut text = "*.fasl\n".repeat(MAX_IGNORE_FILE_BYTES as usize / 7);
        text.push_str("*.lisp\n");
        fs::write(dir.join("big/.gitignore"), text).unwrap();
        fs::write(dir.join("big/a.lisp"), "()").unwrap();
        // More patterns than one walk compiles: the rest are cut.
        let rules: String = (0..MAX_IGNORE_PATTERNS)
            .map(|i| format!("*.x{i}\n"))
            .collect();
        fs::write(dir.join("many/.gitignore"), rules + "*.lisp\n").unwrap();
        fs::write(dir.join("many/b.lisp"), "()").unwrap();
        let guard = Guard::confined(std::slice::from_ref(&dir), 1 << 20).unwrap();
        let walk = guard.walk(&guard.directory(".").unwrap().unwrap(), &lisp);
        assert_eq!(names(&walk), ["big/a.lisp", "many/b.lisp"]);
        assert_eq!(walk.notes.len(), 1, "{:?}", walk.notes);
        assert!(
            walk.notes[0].contains("big/.gitignore, many/.gitignore"),
            "{:?}",
            walk.notes
        );
    }

    #[test]
    fn a_directory_moved_out_of_the_root_before_or_during_its_walk_lists_nothing() {
        let dir = scratch("moved");
        let root = dir.join("root");
        fs::create_dir_all(root.join("sub")).unwrap();
        fs::write(root.join("sub/secret.lisp"), "()").unwrap();
        let guard = Guard::confined(std::slice::from_ref(&root), 1 << 20).unwrap();
        let sub = guard.directory("sub").unwrap().unwrap();
        fs::rename(root.join("sub"), dir.join("moved-out")).unwrap();
        let walk = guard.walk(&sub, &lisp);
        assert!(walk.files.is_empty(), "{:?}", names(&walk));
        assert_eq!(walk.skipped.len(), 1);
        assert!(walk.skipped[0].error.message.contains("was moved"));
    }
}
