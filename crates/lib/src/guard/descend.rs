//! The descent of a directory walk, by handles: every directory is opened beneath its
//! parent's open handle (`openat` with `O_NOFOLLOW | O_DIRECTORY`), never by a path string,
//! so a directory swapped for a symlink after its parent was listed is not followed, and a
//! listing always lists the directory that was the parent's entry when it was opened.
//!
//! One handle is open at a time: the walk goes back up through `..`, and checks that the
//! parent it reaches is the directory it came from (device and inode). When it is not, a
//! directory was moved while the walk was below it: what was listed below it is dropped
//! and the walk stops there, reported as skipped.
//!
//! Order is path order (names compared byte by byte, a directory as its name and `/`), so
//! the first files found are the first in path order, and the walk can stop at a count.
//! Work per entry is constant but for its own name and the rules of the ignore files
//! above it; the walk keeps no path of a directory but the current one.

use super::ignore_rules::IgnoreRules;
use super::resolve::FileId;
use crate::cancel::CancelToken;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

/// Deepest directory a walk enters, in levels below the walked directory; deeper ones are
/// not listed, and the walk says so.
pub const MAX_WALK_DEPTH: usize = 128;

/// What the caller wants of a walk.
pub(super) struct Want<'a> {
    /// Whether a file, by its path relative to the walked directory, is listed.
    pub file: &'a dyn Fn(&str) -> bool,
    pub max_files: usize,
    /// The size cap: no ignore file is read past it.
    pub size_cap: u64,
    pub cancel: &'a CancelToken,
    /// Stat each listed file beneath its directory's handle ([`Stamp`]).
    pub stamps: bool,
}

/// What the directory entry of a listed regular file says of it, read with `fstatat`
/// beneath the handle of the directory that listed it (never following a symlink): what a
/// long-lived caller compares to know that a file it read before is unchanged. `None` in
/// a listing for an entry that is not a regular file (a symlink: reading it resolves it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stamp {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    /// Modification and status-change times, in nanoseconds since the epoch: a write
    /// changes both, and no one can set the status-change time back.
    pub mtime_ns: i128,
    pub ctime_ns: i128,
}

/// How far back from now a file's times must be for its stamp to tell a later write:
/// the coarsest timestamp step of common file systems (FAT's 2 s; some network file
/// systems keep whole seconds). A file written twice within one step, its size unchanged,
/// can keep the same stamp; a write after a stamp older than the step cannot (its time
/// is later than the step the stamp's times fell in).
pub const RACY_WINDOW_NS: i128 = 2_000_000_000;

impl Stamp {
    /// Whether a write after `now_ns` (nanoseconds since the epoch) would change this
    /// stamp: both its times are more than [`RACY_WINDOW_NS`] before it. A cache keeps
    /// what it read of a file only under a settled stamp, as git does with "racily clean"
    /// entries; an unsettled file is read again at the next use.
    #[must_use]
    pub fn settled(&self, now_ns: i128) -> bool {
        self.mtime_ns.max(self.ctime_ns) < now_ns - RACY_WINDOW_NS
    }

    /// Whether a cache may keep, under this stamp (taken by a walk), what it read of the
    /// file with `loaded`'s info: the read saw the stamp's size and time (a file written
    /// between the walk and the read is read again next time) and the stamp is settled
    /// now ([`Stamp::settled`]).
    #[must_use]
    pub fn keeps(&self, loaded: &super::LoadedFile) -> bool {
        let mtime_ms = u64::try_from(self.mtime_ns / 1_000_000).unwrap_or(0);
        loaded
            .info
            .is_some_and(|i| i.size == self.size && i.mtime_ms == mtime_ms)
            && self.settled_now()
    }

    /// [`Stamp::settled`] at the system clock's now.
    #[must_use]
    pub fn settled_now(&self) -> bool {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX));
        self.settled(now)
    }
}

/// What a walk found; paths are relative to the walked directory, `/`-separated bytes.
#[derive(Default)]
pub(super) struct Listing {
    /// The wanted files, in path order.
    pub files: Vec<Vec<u8>>,
    /// With [`Want::stamps`], each file's stamp (same order as `files`).
    pub stamps: Vec<Option<Stamp>>,
    /// Directories that could not be opened or listed, and why.
    pub unlisted: Vec<(Vec<u8>, Errno)>,
    /// A directory moved while the walk was below it: the walk stopped there.
    pub moved: Option<Vec<u8>>,
    /// The first directories not entered for being deeper than [`MAX_WALK_DEPTH`].
    pub too_deep: Vec<Vec<u8>>,
    pub too_deep_count: usize,
    /// The first ignore files not honoured whole, and how many.
    pub ignore_cut: Vec<Vec<u8>>,
    pub ignore_cut_count: usize,
    /// The walk stopped at the most files.
    pub stopped_at_limit: bool,
}

/// Directories named in a note of a walk.
const NAMED: usize = 10;

/// An entry of a listed directory.
struct Entry {
    name: Vec<u8>,
    is_dir: bool,
}

/// A directory on the way down: what is left of its entries (sorted, last first).
struct Frame {
    id: FileId,
    entries: Vec<Entry>,
    /// Length of the relative path of the directory, with its trailing `/`.
    prefix_len: usize,
    /// Files listed when it was entered: a directory found moved drops those after.
    files_before: usize,
}

/// Walks the directory open at `top` (a handle that may be listed).
pub(super) fn descend(top: OwnedFd, want: &Want<'_>) -> Listing {
    let mut walk = Descent {
        want,
        listing: Listing::default(),
        rules: IgnoreRules::new(want.size_cap),
        path: Vec::new(),
        stack: Vec::new(),
    };
    walk.run(top);
    walk.listing.ignore_cut = std::mem::take(&mut walk.rules.cut);
    walk.listing.ignore_cut_count = walk.rules.cut_count;
    walk.listing
}

struct Descent<'a> {
    want: &'a Want<'a>,
    listing: Listing,
    rules: IgnoreRules,
    /// The relative path being looked at: the current directory's, then an entry's name.
    path: Vec<u8>,
    stack: Vec<Frame>,
}

impl Descent<'_> {
    fn run(&mut self, top: OwnedFd) {
        let Some(mut here) = self.enter(top) else {
            return;
        };
        while let Some(frame) = self.stack.last_mut() {
            if self.want.cancel.is_cancelled() {
                return;
            }
            let Some(entry) = frame.entries.pop() else {
                match self.up(here) {
                    Some(parent) => here = parent,
                    None => return,
                }
                continue;
            };
            let prefix_len = frame.prefix_len;
            self.path.truncate(prefix_len);
            self.path.extend_from_slice(&entry.name);
            if entry.is_dir {
                if let Some(child) = self.down(&here, &entry.name) {
                    here = child;
                }
            } else if self.file(&here, &entry.name) {
                return;
            }
        }
    }

    /// The entry `name` of `here` at `self.path`, a file: listed when wanted and not
    /// ignored. `true` when the walk must stop (the most files were listed).
    fn file(&mut self, here: &OwnedFd, name: &[u8]) -> bool {
        let wanted = (self.want.file)(&String::from_utf8_lossy(&self.path));
        if !wanted || self.rules.ignored(&self.path, false) {
            return false;
        }
        if self.listing.files.len() == self.want.max_files {
            self.listing.stopped_at_limit = true;
            return true;
        }
        self.listing.files.push(self.path.clone());
        if self.want.stamps {
            self.listing.stamps.push(stamp(here, name));
        }
        false
    }

    /// Enters the directory `name` of `here` (its relative path in `self.path`), unless
    /// ignored, too deep, or no longer a directory (then it is not entered: a symlink put
    /// in its place is never followed). Returns its handle when entered.
    fn down(&mut self, here: &OwnedFd, name: &[u8]) -> Option<OwnedFd> {
        if self.rules.ignored(&self.path, true) {
            return None;
        }
        if self.stack.len() > MAX_WALK_DEPTH {
            self.listing.too_deep_count += 1;
            if self.listing.too_deep.len() < NAMED {
                self.listing.too_deep.push(self.path.clone());
            }
            return None;
        }
        let name = std::ffi::OsStr::from_bytes(name);
        match rustix::fs::openat(here, name, list_flags(), Mode::empty()) {
            Ok(child) => {
                self.path.push(b'/');
                self.enter(child)
            }
            Err(Errno::LOOP | Errno::NOTDIR | Errno::NOENT) => None,
            Err(e) => {
                self.listing.unlisted.push((self.path.clone(), e));
                None
            }
        }
    }

    /// Lists the directory open at `dir` (its relative path, with the trailing `/`, in
    /// `self.path`) and pushes it; `None` when it cannot be listed.
    fn enter(&mut self, dir: OwnedFd) -> Option<OwnedFd> {
        let listed = FileId::of(&dir).and_then(|id| Ok((id, entries(&dir)?)));
        let (id, entries) = match listed {
            Ok(listed) => listed,
            Err(e) => {
                let shown = self.path.strip_suffix(b"/").unwrap_or(&self.path).to_vec();
                self.listing.unlisted.push((shown, e));
                return None;
            }
        };
        self.rules.enter(dir.as_fd(), self.stack.len(), &self.path);
        self.stack.push(Frame {
            id,
            entries,
            prefix_len: self.path.len(),
            files_before: self.listing.files.len(),
        });
        Some(dir)
    }

    /// Leaves the directory open at `here` for its parent, checked to be the directory
    /// the walk came from; `None` at the top, or when it is not (the walk then stops).
    fn up(&mut self, here: OwnedFd) -> Option<OwnedFd> {
        let left = self.stack.pop()?;
        self.rules.leave(self.stack.len());
        let parent = self.stack.last()?;
        let back = rustix::fs::openat(&here, "..", list_flags(), Mode::empty());
        match back.and_then(|fd| Ok((FileId::of(&fd)?, fd))) {
            Ok((id, fd)) if id == parent.id => Some(fd),
            _ => {
                self.listing.files.truncate(left.files_before);
                self.listing.stamps.truncate(left.files_before);
                let shown = &self.path[..left.prefix_len.saturating_sub(1)];
                self.listing.moved = Some(shown.to_vec());
                None
            }
        }
    }
}

/// The stamp of the entry `name` of `dir` when it is a regular file.
fn stamp(dir: &OwnedFd, name: &[u8]) -> Option<Stamp> {
    let name = std::ffi::OsStr::from_bytes(name);
    let st = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return None;
    }
    let ns = |sec: i64, nsec: i64| i128::from(sec) * 1_000_000_000 + i128::from(nsec);
    #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
    Some(Stamp {
        dev: st.st_dev as u64,
        ino: st.st_ino as u64,
        size: u64::try_from(st.st_size).unwrap_or(0),
        mtime_ns: ns(st.st_mtime as i64, st.st_mtime_nsec as i64),
        ctime_ns: ns(st.st_ctime as i64, st.st_ctime_nsec as i64),
    })
}

/// The flags of a directory handle that is listed: never through a symlink.
fn list_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// The entries of the directory open at `dir` but hidden ones (a name starting with
/// `.`), sorted in path order, last first.
fn entries(dir: &OwnedFd) -> Result<Vec<Entry>, Errno> {
    let mut listed = Vec::new();
    let mut reader = rustix::fs::Dir::read_from(dir)?;
    while let Some(entry) = reader.read() {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name.first() == Some(&b'.') {
            continue;
        }
        let is_dir = match entry.file_type() {
            FileType::Directory => true,
            FileType::Unknown => {
                let name = std::ffi::OsStr::from_bytes(name);
                rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory)
            }
            _ => false,
        };
        listed.push(Entry {
            name: name.to_vec(),
            is_dir,
        });
    }
    // Last first: the walk pops them.
    listed.sort_by(|a, b| path_order(b, a));
    Ok(listed)
}

/// `a` against `b` as their paths compare: a directory as its name followed by `/`, where
/// its files fall in path order (names in one directory differ, so no two are equal).
fn path_order(a: &Entry, b: &Entry) -> std::cmp::Ordering {
    let slash = |e: &Entry| e.is_dir.then_some(b'/');
    a.name
        .iter()
        .copied()
        .chain(slash(a))
        .cmp(b.name.iter().copied().chain(slash(b)))
}

#[cfg(test)]
mod stamp_tests {
    use super::{Stamp, RACY_WINDOW_NS};

    fn stamp(mtime_ns: i128, ctime_ns: i128) -> Stamp {
        Stamp {
            dev: 1,
            ino: 2,
            size: 3,
            mtime_ns,
            ctime_ns,
        }
    }

    #[test]
    fn a_stamp_settles_once_both_times_are_older_than_the_window() {
        let now = 1_000 * RACY_WINDOW_NS;
        let old = now - RACY_WINDOW_NS - 1;
        assert!(stamp(old, old).settled(now));
        // Written within the window (its status-change time), or at its edge: a write
        // in the same timestamp step could keep the stamp.
        assert!(!stamp(old, now - RACY_WINDOW_NS).settled(now));
        assert!(!stamp(old, now - 1).settled(now));
        // A modification time set back does not settle a file whose status changed now.
        assert!(!stamp(0, now).settled(now));
        // Times in the future (a clock set back) never settle.
        assert!(!stamp(now + 5, old).settled(now));
    }
}
