//! Directories: what a path names, and the files under a directory.
//!
//! The listing is the `ignore` crate's walk (the one ripgrep uses), names sorted in each
//! directory: hidden files skipped, symlinked directories not entered. A listing is only
//! a list of names: every file is then read by [`Guard::read_walked`], which resolves it
//! again as any user path, by file identity inside the roots. A file the listing gives
//! that the guard refuses (a symlink out of the roots, a FIFO, a file over the cap) is
//! reported as skipped with the guard's reason, never read.
//!
//! The crate reads no ignore file itself: the `.gitignore` and `.ignore` files of the
//! walked directory and of those below it are read through the guard (a FIFO, a symlink
//! out of the roots or a file over the cap counts as absent), and the deepest rule that
//! matches decides, as in git. Ignore files above the walked directory, `.git/info/exclude`
//! and the user's global git ignore file are not read.
//!
//! This module does not read file contents but ignore files, nor decide which files are
//! Lisp (the caller passes a predicate).

use super::messages::printable;
use super::{resolve, Guard, LoadedFile};
use crate::error::{ErrorCode, ToolError};
use crate::shown::{shown_os_path, shown_path};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Most files one walk lists; past it the walk stops and says so.
pub const MAX_WALKED_FILES: usize = 20_000;

/// A directory a path named, inside the roots (or anywhere, unconfined).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directory {
    /// As paths are shown: relative to the first root (`.` for the root itself).
    pub display_path: String,
    path: PathBuf,
}

/// A file the walk listed, not read yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkedFile {
    /// As paths are shown: relative to the first root, forward slashes.
    pub display_path: String,
    /// Relative to the walked directory, forward slashes: the order of a walk.
    pub relative_path: String,
    path: PathBuf,
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
            let path = Path::new(user_path);
            return Ok(path.is_dir().then(|| Directory {
                display_path: printable(user_path),
                path: path.to_path_buf(),
            }));
        }
        match resolve::find_confined(&self.roots, user_path) {
            Ok(resolve::Found::Directory { display, path }) => Ok(Some(Directory {
                display_path: display,
                path,
            })),
            Ok(resolve::Found::File(_)) => Ok(None),
            Err(e) if e.code == ErrorCode::AccessDenied => Err(e),
            Err(_) => Ok(None),
        }
    }

    /// Lists the files under `directory` whose relative path `wanted` accepts, honouring
    /// ignore files; at most [`MAX_WALKED_FILES`], the first in the walk's order (names
    /// sorted in each directory). Nothing is read but directory entries and ignore files,
    /// and the ignore files are read through the guard (see the module documentation).
    pub fn walk(&self, directory: &Directory, wanted: &dyn Fn(&str) -> bool) -> Walk {
        let ignores = IgnoreFiles::new(self.clone(), directory.path.clone());
        let walker = ignore::WalkBuilder::new(&directory.path)
            // The crate reads no ignore file itself: it would open a FIFO, a file of any
            // size or one symlinked out of the roots.
            .standard_filters(false)
            .hidden(true)
            .follow_links(false)
            .sort_by_file_name(|a, b| a.cmp(b))
            .filter_entry(move |entry| !ignores.ignored(entry))
            .build();
        let mut walk = Walk {
            directory: directory.clone(),
            files: Vec::new(),
            skipped: Vec::new(),
            stopped_at_limit: false,
        };
        for entry in walker {
            match entry {
                Ok(entry) => {
                    if entry.file_type().is_some_and(|t| t.is_dir()) {
                        continue;
                    }
                    let Some(file) = self.walked(directory, entry.path()) else {
                        continue;
                    };
                    if !wanted(&file.relative_path) {
                        continue;
                    }
                    if walk.files.len() == MAX_WALKED_FILES {
                        walk.stopped_at_limit = true;
                        break;
                    }
                    walk.files.push(file);
                }
                Err(e) => walk.skipped.push(listing_error(directory, &e)),
            }
        }
        walk.files
            .sort_by(|a, b| a.relative_path.cmp(&b.relative_path));
        walk
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
        }
    }

    /// The file `relative` (forward slashes, no `..` needed) names from the directory of
    /// `base` (a component of an `.asd` file): not checked; reading it is.
    pub fn sibling(&self, base: &WalkedFile, relative: &str) -> WalkedFile {
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

    /// The listed `path` as a [`WalkedFile`]; `None` if it is not below the directory.
    fn walked(&self, directory: &Directory, path: &Path) -> Option<WalkedFile> {
        let relative = path.strip_prefix(&directory.path).ok()?;
        let relative_path = relative.to_string_lossy().replace('\\', "/");
        // The name as it is (a `\` is part of a name here, not a separator), shown once:
        // the directory's part is shown already.
        let shown = shown_os_path(relative.as_os_str());
        let display_path = match directory.display_path.as_str() {
            "." => shown,
            dir => format!("{}/{shown}", dir.trim_end_matches('/')),
        };
        Some(WalkedFile {
            display_path,
            relative_path,
            path: path.to_path_buf(),
        })
    }
}

/// The `.gitignore` and `.ignore` files of the walked directory and the directories
/// below it, read through the guard (inside the roots, regular files, under the size
/// cap; one that is refused counts as absent), each once.
struct IgnoreFiles {
    guard: Guard,
    top: PathBuf,
    matchers: Mutex<HashMap<PathBuf, Arc<Gitignore>>>,
}

impl IgnoreFiles {
    fn new(guard: Guard, top: PathBuf) -> IgnoreFiles {
        IgnoreFiles {
            guard,
            top,
            matchers: Mutex::new(HashMap::new()),
        }
    }

    /// Whether an ignore file of a directory from the walked one down to the entry's own
    /// directory ignores the entry; the deepest that says anything decides, as git does.
    fn ignored(&self, entry: &ignore::DirEntry) -> bool {
        let path = entry.path();
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        let mut dir = path.parent();
        while let Some(d) = dir.filter(|d| d.starts_with(&self.top)) {
            match self.matcher(d).matched(path, is_dir) {
                ignore::Match::Ignore(_) => return true,
                ignore::Match::Whitelist(_) => return false,
                ignore::Match::None => {}
            }
            dir = d.parent();
        }
        false
    }

    fn matcher(&self, dir: &Path) -> Arc<Gitignore> {
        let Ok(mut matchers) = self.matchers.lock() else {
            return Arc::new(Gitignore::empty());
        };
        if let Some(m) = matchers.get(dir) {
            return Arc::clone(m);
        }
        let mut builder = GitignoreBuilder::new(dir);
        for name in [".gitignore", ".ignore"] {
            let Some(path) = dir.join(name).to_str().map(str::to_string) else {
                continue;
            };
            if let Ok(file) = self.guard.read(&path) {
                for line in String::from_utf8_lossy(&file.bytes).lines() {
                    // A line the glob syntax refuses is skipped, as git skips it.
                    let _ = builder.add_line(None, line);
                }
            }
        }
        let matcher = Arc::new(builder.build().unwrap_or_else(|_| Gitignore::empty()));
        matchers.insert(dir.to_path_buf(), Arc::clone(&matcher));
        matcher
    }
}

fn listing_error(directory: &Directory, error: &ignore::Error) -> Skipped {
    let place = error_path(error)
        .and_then(|p| p.strip_prefix(&directory.path).ok().map(Path::to_path_buf))
        .map(|p| shown_os_path(p.as_os_str()));
    let display_path = match place {
        Some(rel) if directory.display_path == "." => rel,
        Some(rel) => format!("{}/{rel}", directory.display_path),
        None => directory.display_path.clone(),
    };
    let message = format!(
        "could not list {display_path}: {}; check its permissions",
        printable(&error.to_string())
    );
    Skipped {
        error: ToolError::new(ErrorCode::AccessDenied, display_path.clone(), message),
        display_path,
    }
}

fn error_path(error: &ignore::Error) -> Option<&Path> {
    match error {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        _ => None,
    }
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
}
