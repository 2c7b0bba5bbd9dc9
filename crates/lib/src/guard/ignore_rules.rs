//! The ignore files of one walk (`.gitignore`, `.ignore`), read by handle from the directory
//! being listed and bounded in what they may cost.
//!
//! Each is opened beneath the directory's handle without following a symlink, never
//! blocking (a FIFO), and only a regular file is read. A file is read up to
//! [`MAX_IGNORE_FILE_BYTES`] (or the size cap, if smaller), whole lines only, and one walk
//! compiles at most [`MAX_IGNORE_PATTERNS`] patterns in all: compiled globs cost memory and
//! time far beyond their text (34,000 globs took over a gigabyte). What is past a bound is
//! not honoured, and the walk names the files cut.
//! A directory's rules are dropped when the walk leaves it.

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use rustix::fs::{FileType, Mode, OFlags};
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Most bytes read of one ignore file.
pub const MAX_IGNORE_FILE_BYTES: u64 = 64 * 1024;
/// Most patterns compiled in one walk, all ignore files together.
pub const MAX_IGNORE_PATTERNS: usize = 2_000;

/// Ignore files named in the note of a walk that cut some.
const NAMED_CUTS: usize = 10;

/// The rules of the directories on the walk's stack, deepest last.
pub(super) struct IgnoreRules {
    /// Per directory with rules: its depth, the length of its relative path prefix (with
    /// the trailing `/`, 0 for the walked directory) and its matcher.
    stack: Vec<(usize, usize, Gitignore)>,
    patterns_left: usize,
    max_file_bytes: u64,
    /// Relative paths of the first ignore files not honoured whole.
    pub cut: Vec<Vec<u8>>,
    /// How many were not honoured whole.
    pub cut_count: usize,
}

impl IgnoreRules {
    pub(super) fn new(size_cap: u64) -> IgnoreRules {
        IgnoreRules {
            stack: Vec::new(),
            patterns_left: MAX_IGNORE_PATTERNS,
            max_file_bytes: size_cap.min(MAX_IGNORE_FILE_BYTES),
            cut: Vec::new(),
            cut_count: 0,
        }
    }

    /// Reads the ignore files of the directory just entered (`dir`, at `depth`, whose
    /// relative path with its trailing `/` is `prefix`).
    pub(super) fn enter(&mut self, dir: BorrowedFd<'_>, depth: usize, prefix: &[u8]) {
        let mut builder = GitignoreBuilder::new(".");
        let mut any = false;
        for name in [".gitignore", ".ignore"] {
            let Some((text, mut cut)) = self.read(dir, name) else {
                continue;
            };
            for line in String::from_utf8_lossy(&text).lines() {
                let pattern = line.trim();
                if pattern.is_empty() || pattern.starts_with('#') {
                    continue;
                }
                if self.patterns_left == 0 {
                    cut = true;
                    break;
                }
                self.patterns_left -= 1;
                // A line the glob syntax refuses is skipped, as git skips it.
                any |= builder.add_line(None, line).is_ok();
            }
            if cut {
                self.note_cut(prefix, name);
            }
        }
        if any {
            if let Ok(matcher) = builder.build() {
                self.stack.push((depth, prefix.len(), matcher));
            }
        }
    }

    /// Drops the rules of the directories at `depth` and below.
    pub(super) fn leave(&mut self, depth: usize) {
        while self.stack.last().is_some_and(|(d, _, _)| *d >= depth) {
            self.stack.pop();
        }
    }

    /// Whether the rules ignore `path` (relative to the walked directory): the deepest
    /// directory whose rules say anything decides, as git does.
    pub(super) fn ignored(&self, path: &[u8], is_dir: bool) -> bool {
        for (_, prefix_len, matcher) in self.stack.iter().rev() {
            let below = Path::new(std::ffi::OsStr::from_bytes(&path[*prefix_len..]));
            match matcher.matched(below, is_dir) {
                ignore::Match::Ignore(_) => return true,
                ignore::Match::Whitelist(_) => return false,
                ignore::Match::None => {}
            }
        }
        false
    }

    /// The text of the ignore file `name` in `dir`, whole lines up to the bound, and
    /// whether it was cut; `None` when there is none, or it is not a regular file (a FIFO,
    /// a symlink, a directory).
    fn read(&self, dir: BorrowedFd<'_>, name: &str) -> Option<(Vec<u8>, bool)> {
        let flags =
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(dir, name, flags, Mode::empty()).ok()?;
        let st = rustix::fs::fstat(fd.as_fd()).ok()?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return None;
        }
        if self.patterns_left == 0 {
            // Nothing more would be compiled: only say the file was cut.
            return Some((Vec::new(), true));
        }
        let mut text = Vec::new();
        File::from(fd)
            .take(self.max_file_bytes + 1)
            .read_to_end(&mut text)
            .ok()?;
        let cut = text.len() as u64 > self.max_file_bytes;
        if cut {
            text.truncate(text.iter().rposition(|&b| b == b'\n').unwrap_or(0));
        }
        Some((text, cut))
    }

    fn note_cut(&mut self, prefix: &[u8], name: &str) {
        self.cut_count += 1;
        if self.cut.len() < NAMED_CUTS {
            let mut path = prefix.to_vec();
            path.extend_from_slice(name.as_bytes());
            self.cut.push(path);
        }
    }
}
