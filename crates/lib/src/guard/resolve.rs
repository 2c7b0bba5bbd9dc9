//! Confined resolution: a path walked one component at a time through directory handles.
//!
//! A path string checked and then opened can be swapped in between (a directory replaced by
//! a symlink, a link retargeted in a loop), and a path read back from the system can be
//! spoofed (a file named `<root> (deleted)`). So nothing here trusts a path string. The walk
//! starts from a handle (the first root's, or `/`'s), opens every directory with
//! `O_NOFOLLOW` relative to the handle before it, follows symlinks itself (reading the link,
//! never letting the system follow it), and decides "inside a root" by comparing the device
//! and inode of the directories on the way with those of the roots, taken when the guard was
//! made. The file is opened, `O_NOFOLLOW`, relative to the last directory's handle only
//! after that decision: what is read is what was checked.
//!
//! This module does not read file contents, apply the size cap or the binary rule: it hands
//! back an open handle (or a refusal) to `guard`.

use super::messages::{access_outside, internal, not_found, not_searchable, refuse_kind};
use super::RootDir;
use crate::error::ToolError;
use crate::shown::shown_os_path;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Symlinks followed in one resolution, as Linux's `MAXSYMLINKS`.
const MAX_SYMLINKS: u32 = 40;
/// Components visited in one resolution (a path has at most 2,048; symlinks add theirs).
/// Past it the path is refused: it keeps changing under us, or is built to make us work.
const MAX_STEPS: u32 = 16 * 1024;

/// The identity of a file: what "is this directory a root" compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    pub(super) fn of(fd: &OwnedFd) -> Result<FileId, Errno> {
        let st = rustix::fs::fstat(fd)?;
        Ok(FileId::from_stat(&st))
    }

    #[allow(clippy::unnecessary_cast)] // The field types differ between platforms.
    fn from_stat(st: &rustix::fs::Stat) -> FileId {
        FileId {
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
        }
    }
}

/// An open handle on a directory (`O_PATH` where the system has it, so that a directory we
/// may search but not list can still be walked through).
pub(super) fn open_dir(at: impl rustix::fd::AsFd, name: &OsStr) -> Result<OwnedFd, Errno> {
    rustix::fs::openat(at, name, dir_flags(), Mode::empty())
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn dir_flags() -> OFlags {
    OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// The file's flags: never block on a FIFO, never take a terminal as controlling terminal,
/// never follow a symlink put in place after we looked.
fn file_flags() -> OFlags {
    OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// A directory on the way, from the start of the walk to where it is now.
struct Dir {
    fd: OwnedFd,
    /// Which root this directory is, by identity.
    root: Option<usize>,
    /// Its name in the directory below it on the stack (`None` for where the walk started
    /// and for parents reached with `..` from there, which lie above every name we show).
    name: Option<OsString>,
}

/// What the walk found: the open file and how to show its path.
pub(super) struct Opened {
    pub file: File,
    pub display: String,
}

/// What a path names: an opened regular file, or a directory inside a root.
pub(super) enum Found {
    File(Opened),
    Directory {
        /// How the directory is shown (`.` for the first root itself).
        display: String,
        /// Its absolute path, made of the root's canonical path and the names on the
        /// walk's stack (each entered by handle and checked), for messages and reading.
        path: PathBuf,
        /// The handle the resolution ended on: where the directory walk starts.
        handle: OwnedFd,
    },
}

/// Resolves `user_path` inside `roots` and opens it.
///
/// A relative path starts at the first root; an absolute one at `/`. The file must lie
/// below a root: some directory on the walk's final stack is a root. Anything that fails
/// while the walk is outside every root is refused as outside, so probing tells nothing
/// about what exists there.
pub(super) fn open_confined(roots: &[RootDir], user_path: &str) -> Result<Opened, ToolError> {
    match find_confined(roots, user_path)? {
        Found::File(opened) => Ok(opened),
        Found::Directory { display, .. } => Err(refuse_kind(&display, FileType::Directory)),
    }
}

/// As [`open_confined`], but a directory inside a root is an answer, not a refusal.
pub(super) fn find_confined(roots: &[RootDir], user_path: &str) -> Result<Found, ToolError> {
    let mut walk = Walk::start(roots, user_path)?;
    walk.run()
}

struct Walk<'a> {
    roots: &'a [RootDir],
    user_path: &'a str,
    stack: Vec<Dir>,
    /// Components still to visit, last first.
    pending: Vec<OsString>,
    symlinks: u32,
    steps: u32,
}

impl<'a> Walk<'a> {
    fn start(roots: &'a [RootDir], user_path: &'a str) -> Result<Walk<'a>, ToolError> {
        let mut walk = Walk {
            roots,
            user_path,
            stack: Vec::new(),
            pending: Vec::new(),
            symlinks: 0,
            steps: 0,
        };
        let path = Path::new(user_path);
        if path.is_absolute() {
            walk.restart_at_slash()?;
        } else {
            let fd = roots[0]
                .dir
                .try_clone()
                .map_err(|e| internal(user_path, &e))?;
            walk.stack.push(Dir {
                fd,
                root: Some(0),
                name: None,
            });
        }
        walk.push_components(path.as_os_str());
        Ok(walk)
    }

    fn run(&mut self) -> Result<Found, ToolError> {
        while let Some(name) = self.pending.pop() {
            self.steps += 1;
            if self.steps > MAX_STEPS {
                return Err(self.changing());
            }
            if name == ".." {
                self.up()?;
                continue;
            }
            let last = self.pending.is_empty();
            let st = match rustix::fs::statat(&self.top().fd, &name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => st,
                Err(e) => return Err(self.failed(&name, e)),
            };
            match FileType::from_raw_mode(st.st_mode) {
                FileType::Symlink => self.follow(&name)?,
                FileType::Directory => self.descend(name)?,
                _ if !last => return Err(self.failed(&name, Errno::NOTDIR)),
                kind => match self.open_file(&name, kind)? {
                    Some(opened) => return Ok(Found::File(opened)),
                    // Swapped for a symlink after we looked: look again.
                    None => self.pending.push(name),
                },
            }
        }
        // The path ended on a directory (`.`, `sub/..`, a trailing `/`).
        let display = self.display(None).ok_or_else(|| self.outside())?;
        let path = self.absolute().ok_or_else(|| self.outside())?;
        let handle = self.stack.pop().ok_or_else(|| self.outside())?.fd;
        Ok(Found::Directory {
            display,
            path,
            handle,
        })
    }

    /// The absolute path of the current directory: the canonical path of the innermost
    /// root on the stack and the names entered below it.
    fn absolute(&self) -> Option<PathBuf> {
        let at = self.stack.iter().rposition(|d| d.root.is_some())?;
        let root = self.stack[at].root?;
        let mut path = self.roots[root].path.clone();
        path.extend(
            self.stack[at + 1..]
                .iter()
                .filter_map(|d| d.name.as_deref()),
        );
        Some(path)
    }

    fn top(&self) -> &Dir {
        // The stack is never empty: `start` and `restart_at_slash` push, `up` replaces.
        &self.stack[self.stack.len() - 1]
    }

    fn push_components(&mut self, path: &OsStr) {
        let parts = path.as_bytes().split(|&b| b == b'/');
        let before = self.pending.len();
        self.pending.extend(
            parts
                .filter(|p| !p.is_empty() && *p != b".")
                .map(|p| OsStr::from_bytes(p).to_os_string()),
        );
        self.pending[before..].reverse();
    }

    fn restart_at_slash(&mut self) -> Result<(), ToolError> {
        let fd = open_dir(rustix::fs::CWD, OsStr::new("/")).map_err(|e| self.os_error(e))?;
        let root = self.root_of(&fd)?;
        self.stack.clear();
        self.stack.push(Dir {
            fd,
            root,
            name: None,
        });
        Ok(())
    }

    /// `..`: back down the stack, or, at its start, to the real parent (`/` stays `/`).
    fn up(&mut self) -> Result<(), ToolError> {
        if self.stack.len() > 1 {
            self.stack.pop();
            return Ok(());
        }
        let parent = open_dir(&self.stack[0].fd, OsStr::new("..")).map_err(|e| {
            if self.inside() {
                self.os_error(e)
            } else {
                self.outside()
            }
        })?;
        let root = self.root_of(&parent)?;
        self.stack[0] = Dir {
            fd: parent,
            root,
            name: None,
        };
        Ok(())
    }

    fn descend(&mut self, name: OsString) -> Result<(), ToolError> {
        match open_dir(&self.top().fd, &name) {
            Ok(fd) => {
                let root = self.root_of(&fd)?;
                self.stack.push(Dir {
                    fd,
                    root,
                    name: Some(name),
                });
                Ok(())
            }
            // Replaced by a symlink or a file since the look: look again.
            Err(Errno::LOOP | Errno::NOTDIR) => {
                self.pending.push(name);
                Ok(())
            }
            Err(e) => Err(self.failed(&name, e)),
        }
    }

    fn follow(&mut self, name: &OsStr) -> Result<(), ToolError> {
        self.symlinks += 1;
        if self.symlinks > MAX_SYMLINKS {
            return Err(self.failed(name, Errno::LOOP));
        }
        let target = match rustix::fs::readlinkat(&self.top().fd, name, Vec::new()) {
            Ok(target) => target,
            // No longer a symlink: look again.
            Err(Errno::INVAL) => {
                self.pending.push(name.to_os_string());
                return Ok(());
            }
            Err(e) => return Err(self.failed(name, e)),
        };
        let target = OsStr::from_bytes(target.as_bytes());
        if target.is_empty() {
            return Err(self.failed(name, Errno::NOENT));
        }
        if target.as_bytes()[0] == b'/' {
            self.restart_at_slash()?;
        }
        self.push_components(target);
        Ok(())
    }

    /// The last component: refused unless inside a root and a regular file; opened without
    /// following a symlink. `None` when it turned into a symlink between look and open.
    fn open_file(&mut self, name: &OsStr, kind: FileType) -> Result<Option<Opened>, ToolError> {
        let display = self.display(Some(name)).ok_or_else(|| self.outside())?;
        // Special files are refused before they are opened: opening some devices has
        // effects. The fstat of the handle, in `guard`, is the check that counts.
        if kind != FileType::RegularFile {
            return Err(refuse_kind(&display, kind));
        }
        match rustix::fs::openat(&self.top().fd, name, file_flags(), Mode::empty()) {
            Ok(fd) => Ok(Some(Opened {
                file: File::from(fd),
                display,
            })),
            Err(Errno::LOOP) => Ok(None),
            Err(e) => Err(super::messages::open_error(&display, &e.into(), false)),
        }
    }

    /// Which root `fd` is, if any.
    fn root_of(&self, fd: &OwnedFd) -> Result<Option<usize>, ToolError> {
        let id = FileId::of(fd).map_err(|e| self.os_error(e))?;
        Ok(self.roots.iter().position(|r| r.id == id))
    }

    fn inside(&self) -> bool {
        self.stack.iter().any(|d| d.root.is_some())
    }

    /// How to show the place `name` (or the current directory) has: relative to the first
    /// root when it is below it, else absolute below another root (the only form that reads
    /// back); `None` outside every root.
    fn display(&self, name: Option<&OsStr>) -> Option<String> {
        let (at, root) = self.showing_root()?;
        let mut parts: Vec<&OsStr> = self.stack[at + 1..]
            .iter()
            .filter_map(|d| d.name.as_deref())
            .collect();
        parts.extend(name);
        Some(show(&self.roots[root], &parts))
    }

    /// The stack position and index of the root the path is shown under.
    fn showing_root(&self) -> Option<(usize, usize)> {
        let on_stack = |r: usize| self.stack.iter().rposition(|d| d.root == Some(r));
        if let Some(at) = on_stack(0) {
            return Some((at, 0));
        }
        (1..self.roots.len()).find_map(|r| on_stack(r).map(|at| (at, r)))
    }

    /// A failure at `name` (`statat`, `openat` or `readlinkat` said `e`), as a refusal.
    /// Outside every root it is always "outside"; inside, missing names are `NOT_FOUND`
    /// where they would be, after the rest of the path is applied by name.
    fn failed(&self, name: &OsStr, e: Errno) -> ToolError {
        if !self.inside() {
            return self.outside();
        }
        match e {
            Errno::NOENT | Errno::NOTDIR | Errno::LOOP => match self.missing_place(name) {
                Some(display) => not_found(&display, e == Errno::LOOP),
                None => self.outside(),
            },
            Errno::ACCESS | Errno::PERM => not_searchable(&self.shown_user()),
            Errno::NAMETOOLONG => super::messages::invalid_path(self.user_path, "is too long"),
            _ => self.os_error(e),
        }
    }

    /// Where a missing `name` and the rest of the path would be; `None` if the rest climbs
    /// out of the root with `..`.
    fn missing_place(&self, name: &OsStr) -> Option<String> {
        let (at, root) = self.showing_root()?;
        let mut parts: Vec<&OsStr> = self.stack[at + 1..]
            .iter()
            .filter_map(|d| d.name.as_deref())
            .collect();
        parts.push(name);
        for part in self.pending.iter().rev() {
            if part == ".." {
                parts.pop()?;
            } else {
                parts.push(part);
            }
        }
        Some(show(&self.roots[root], &parts))
    }

    fn outside(&self) -> ToolError {
        access_outside(&self.shown_user())
    }

    fn changing(&self) -> ToolError {
        let shown = self.shown_user();
        ToolError::new(
            crate::error::ErrorCode::AccessDenied,
            shown.clone(),
            format!(
                "the path has too many components or symlinks, or keeps changing while being \
                 resolved: {shown}; read it again once the directory stops changing"
            ),
        )
    }

    fn os_error(&self, e: Errno) -> ToolError {
        internal(&self.shown_user(), &e.into())
    }

    fn shown_user(&self) -> String {
        super::messages::shown_user(self.roots, self.user_path)
    }
}

/// `parts` below `root`: relative for the first root, absolute for the others; each name
/// shown by the one rule (docs/guard.md#how-paths-are-shown).
fn show(root: &RootDir, parts: &[&OsStr]) -> String {
    let rel: Vec<String> = parts.iter().map(|p| shown_os_path(p)).collect();
    let rel = rel.join("/");
    let root_path = || shown_os_path(root.path.as_os_str());
    match (root.index, rel.is_empty()) {
        (0, true) => ".".to_string(),
        (0, false) => rel,
        (_, true) => root_path(),
        (_, false) => format!("{}/{rel}", root_path().trim_end_matches('/')),
    }
}
