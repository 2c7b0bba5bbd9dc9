//! Guard: the only stage that touches the file system.
//!
//! It turns a path from a user (an agent, a person, an editor) into bytes, or into a
//! [`ToolError`] that says what to do next. In order:
//!
//! 1. **Resolve and open.** Confined: the path is walked one component at a time through
//!    directory handles, symlinks followed by us, and "inside a root" decided by the device
//!    and inode of the directories on the way, never by comparing path strings
//!    (`resolve.rs`). Unconfined: the path is opened as given.
//! 2. **Check the opened handle** (fstat): only a regular file, at most the size cap. What
//!    we check is what we read. Opening never blocks (`O_NONBLOCK`: a FIFO) and never takes
//!    a terminal (`O_NOCTTY`).
//! 3. **Read** at most `max_file_bytes + 1` bytes: a file that grows after the fstat is
//!    still caught.
//! 4. **Refuse binary files** by the text rule of `content.rs` ([`is_binary`]).
//!
//! Messages name the path as the user gave it, or relative to the first root; a path below
//! another root is shown absolute, the only form that reads back.

mod content;
mod descend;
mod ignore_rules;
mod messages;
mod resolve;
mod stream;
mod walk;
mod window;

use crate::error::{ErrorCode, ToolError};
use messages::{internal, invalid_path, open_error, printable, read_error, refuse_kind};
use resolve::FileId;
use rustix::fs::FileType;
use std::fs::{self, File, OpenOptions};
use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::UNIX_EPOCH;

/// The end of a size refusal, for every surface: the guard does not know whether a person
/// at a command line or a model calling a server's tools reads it, and a model cannot
/// pass the server's flags.
pub const RAISE_CAP: &str =
    "raise the size cap (--max-file-bytes; a server's cap is set by the user who starts it)";

pub use crate::shown::{
    has_escaped_header, quoted_path, quoted_shown, shown_on_terminal, shown_os_path, shown_path,
    unshown_path, ESCAPED_PATH_NOTE,
};
pub use content::{is_binary, BINARY_SNIFF_BYTES};
pub use descend::{Stamp, MAX_WALK_DEPTH, RACY_WINDOW_NS};
pub use ignore_rules::{MAX_IGNORE_FILE_BYTES, MAX_IGNORE_PATTERNS};
pub use messages::{printable as printable_path, SHOWN_PATH_CHARS};
pub use stream::{StreamedFile, StreamedLine};
pub use walk::{Directory, Skipped, Walk, WalkedFile, MAX_WALKED_FILES};
pub use window::{lines_of, ByteWindow, LineQuery, LineWindow, LongLine};

/// Default size cap: one constant shared by code and tests.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1024 * 1024;

/// A document (PDF, DOCX, notebook) may be this many times the size cap: 32 MiB by
/// default. Its text is bounded separately (docs/documents.md#limits).
pub const DOCUMENT_CAP_FACTOR: u64 = 32;

/// Longest path accepted: Linux's `PATH_MAX`.
pub const MAX_PATH_BYTES: usize = 4096;

/// The allowed roots and the size cap: everything needed to decide whether a path may be read.
#[derive(Debug, Clone)]
pub struct Guard {
    /// Canonical roots, in the order given. Empty means unconfined.
    paths: Vec<PathBuf>,
    /// The same roots as open directory handles and identities.
    roots: Arc<[RootDir]>,
    max_file_bytes: u64,
}

/// A root: its canonical path (for messages and display), an open handle on it (where
/// relative walks start) and its identity (what "is this directory a root" compares).
#[derive(Debug)]
struct RootDir {
    index: usize,
    path: PathBuf,
    dir: OwnedFd,
    id: FileId,
}

/// A file that passed every check: its bytes and what the surfaces report about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedFile {
    /// Relative to the first root when below it (forward slashes); absolute below another
    /// root; as the user gave it when unconfined.
    pub display_path: String,
    pub bytes: Vec<u8>,
    /// Modification time in ms since the epoch (0 when unknown, e.g. stdin).
    pub mtime_ms: u64,
    /// What the file system says about the file (`None` for bytes from elsewhere, stdin).
    pub info: Option<FileInfo>,
}

/// What the file system says about a file, from the fstat of the opened handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileInfo {
    /// Size in bytes.
    pub size: u64,
    /// Modification time in ms since the epoch (0 when unknown).
    pub mtime_ms: u64,
    /// Owner's user id.
    pub uid: u32,
    /// Owner's group id.
    pub gid: u32,
    /// Permission bits (`st_mode & 0o7777`).
    pub mode: u32,
}

impl FileInfo {
    fn of(meta: &fs::Metadata) -> FileInfo {
        use std::os::unix::fs::MetadataExt;
        FileInfo {
            size: meta.len(),
            mtime_ms: meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            uid: meta.uid(),
            gid: meta.gid(),
            mode: meta.mode() & 0o7777,
        }
    }
}

/// An opened regular file that passed every check but the size cap and the text rule.
pub(crate) struct Opened {
    file: File,
    shown: String,
    pub(crate) info: FileInfo,
}

impl Guard {
    /// Confined to `roots`, each canonicalized and opened here, so that later checks
    /// compare real directories. A root that does not exist or is not a directory is an
    /// `INVALID_ARGUMENT` naming the root as given.
    ///
    /// An empty `roots` is also refused: a caller that asked for confinement and got
    /// none (say, a client that offered zero MCP roots) must not silently read anything.
    ///
    /// # Errors
    /// `INVALID_ARGUMENT` for an empty `roots`, or a root that is not an existing directory.
    pub fn confined(roots: &[PathBuf], max_file_bytes: u64) -> Result<Guard, ToolError> {
        if roots.is_empty() {
            return Err(ToolError::new(
                ErrorCode::InvalidArgument,
                "",
                "no root directory given; pass at least one existing directory with --root",
            ));
        }
        let mut dirs = Vec::with_capacity(roots.len());
        for (index, root) in roots.iter().enumerate() {
            dirs.push(open_root(index, root)?);
        }
        Ok(Guard {
            paths: dirs.iter().map(|d| d.path.clone()).collect(),
            roots: dirs.into(),
            max_file_bytes,
        })
    }

    /// Not confined: any readable file (the CLI without --root: a person at a shell can
    /// read any file already).
    #[must_use]
    pub fn unconfined(max_file_bytes: u64) -> Guard {
        Guard {
            paths: Vec::new(),
            roots: Arc::new([]),
            max_file_bytes,
        }
    }

    /// The canonical roots, in the order given; empty when unconfined.
    #[must_use]
    pub fn roots(&self) -> &[PathBuf] {
        &self.paths
    }

    /// The file a [`LoadedFile::display_path`] of a confined guard names: the shown text
    /// read back ([`unshown_path`]), a relative one below the first root. Not checked:
    /// reading it goes through the guard as any path does. `None` for text no path is
    /// shown as.
    #[must_use]
    pub fn path_of_display(&self, display_path: &str) -> Option<PathBuf> {
        use std::os::unix::ffi::OsStringExt;
        let name = PathBuf::from(std::ffi::OsString::from_vec(unshown_path(display_path)?));
        match self.paths.first() {
            Some(first) if name.is_relative() => Some(first.join(name)),
            _ => Some(name),
        }
    }

    /// The size cap in bytes.
    #[must_use]
    pub fn max_file_bytes(&self) -> u64 {
        self.max_file_bytes
    }

    /// The same roots under another size cap (a search that reads one large file at a
    /// time, docs/find.md#scope). The roots' handles are shared, not reopened.
    #[must_use]
    pub fn with_max_file_bytes(&self, max_file_bytes: u64) -> Guard {
        Guard {
            max_file_bytes,
            ..self.clone()
        }
    }

    /// Resolve, open, check, read. The only function in the crate that reads files.
    ///
    /// # Errors
    /// The code of the refusal (`ACCESS_DENIED`, `NOT_FOUND`, `NOT_FILE`, ...), or
    /// `INTERNAL` for an unexpected system error.
    pub fn read(&self, user_path: &str) -> Result<LoadedFile, ToolError> {
        self.read_opened(self.open(user_path)?)
    }

    /// The size cap of a document: [`DOCUMENT_CAP_FACTOR`] times the size cap.
    #[must_use]
    pub fn max_document_bytes(&self) -> u64 {
        self.max_file_bytes.saturating_mul(DOCUMENT_CAP_FACTOR)
    }

    /// A document's bytes (docs/documents.md): like [`Guard::read`], but under the
    /// document cap and without the text rule, since a PDF or DOCX file is binary. The
    /// caller decides what it is and hands the bytes to `crate::document`; nothing else is
    /// read.
    ///
    /// # Errors
    /// As [`Guard::read`], with `SIZE_LIMIT_EXCEEDED` over the document cap and no
    /// `BINARY_FILE`.
    pub fn read_document(&self, user_path: &str) -> Result<LoadedFile, ToolError> {
        let Opened { file, shown, info } = self.open(user_path)?;
        let cap = self.max_document_bytes();
        let too_big = |size: String| {
            ToolError::new(
                ErrorCode::SizeLimitExceeded,
                shown.clone(),
                format!(
                    "document is {size}, over the {cap}-byte cap for documents \
                     ({DOCUMENT_CAP_FACTOR} times --max-file-bytes): {shown}; split or \
                     convert it, or {RAISE_CAP}"
                ),
            )
        };
        if info.size > cap {
            return Err(too_big(format!("{} bytes", info.size)));
        }
        let mut bytes = Vec::with_capacity(usize::try_from(info.size).unwrap_or(0));
        file.take(cap.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| read_error(&shown, &e))?;
        if bytes.len() as u64 > cap {
            return Err(too_big("growing while read".into()));
        }
        Ok(LoadedFile {
            display_path: shown,
            bytes,
            mtime_ms: info.mtime_ms,
            info: Some(info),
        })
    }

    /// Resolve, open and fstat: a regular file (any size), not read yet.
    pub(crate) fn open(&self, user_path: &str) -> Result<Opened, ToolError> {
        check_path_text(user_path)?;
        let (file, shown) = if self.roots.is_empty() {
            (open_unconfined(user_path)?, printable(user_path))
        } else {
            let opened = resolve::open_confined(&self.roots, user_path)?;
            (opened.file, opened.display)
        };
        let meta = file.metadata().map_err(|e| internal(&shown, &e))?;
        refuse_non_regular(&shown, meta.file_type())?;
        Ok(Opened {
            info: FileInfo::of(&meta),
            file,
            shown,
        })
    }

    /// The checks that apply to bytes from elsewhere (stdin for the CLI's `-`): size cap,
    /// binary. `name` is shown by the one rule ([`shown_path`]).
    ///
    /// # Errors
    /// `SIZE_LIMIT_EXCEEDED` over the cap, `BINARY_FILE` for binary content.
    pub fn check_bytes(&self, name: &str, bytes: Vec<u8>) -> Result<LoadedFile, ToolError> {
        let display_path = &shown_path(name);
        if bytes.len() as u64 > self.max_file_bytes {
            return Err(self.too_big(display_path, "input", bytes.len() as u64));
        }
        content::check_text(display_path, &bytes)?;
        Ok(LoadedFile {
            display_path: display_path.to_string(),
            bytes,
            mtime_ms: 0,
            info: None,
        })
    }

    /// Only a file under the cap: read it, apply the text rule.
    fn read_opened(&self, opened: Opened) -> Result<LoadedFile, ToolError> {
        let Opened { file, shown, info } = opened;
        let len = info.size;
        if len > self.max_file_bytes {
            return Err(self.too_big(&shown, "file", len));
        }
        // Read one byte past the cap, so a file that grew after the fstat is caught.
        let limit = self.max_file_bytes.saturating_add(1);
        let mut bytes = Vec::with_capacity(usize::try_from(len.min(limit)).unwrap_or(0));
        file.take(limit)
            .read_to_end(&mut bytes)
            .map_err(|e| read_error(&shown, &e))?;
        if bytes.len() as u64 > self.max_file_bytes {
            return Err(ToolError::new(
                ErrorCode::SizeLimitExceeded,
                shown.clone(),
                format!(
                    "file grew past the {cap}-byte cap while being read: {shown}; \
                     read it again when it stops changing, or {RAISE_CAP}",
                    cap = self.max_file_bytes
                ),
            ));
        }
        content::check_text(&shown, &bytes)?;
        Ok(LoadedFile {
            display_path: shown,
            bytes,
            mtime_ms: info.mtime_ms,
            info: Some(info),
        })
    }

    /// `SIZE_LIMIT_EXCEEDED` for `what` (file or input) of `size` bytes.
    fn too_big(&self, shown: &str, what: &str, size: u64) -> ToolError {
        ToolError::new(
            ErrorCode::SizeLimitExceeded,
            shown,
            format!(
                "{what} is {size} bytes, over the {cap}-byte cap: {shown}; {next}{RAISE_CAP}",
                cap = self.max_file_bytes,
                next = if what == "file" {
                    "read a window of it (strategy lineRange or byteRange; on the command \
                     line --lines or --bytes), or "
                } else {
                    "read a smaller input, or "
                }
            ),
        )
    }
}

/// Canonicalizes, opens and identifies one root.
fn open_root(index: usize, root: &Path) -> Result<RootDir, ToolError> {
    let shown = shown_os_path(root.as_os_str());
    let bad = |why: &str| {
        ToolError::new(
            ErrorCode::InvalidArgument,
            shown.clone(),
            format!("root {why}: {shown}; pass an existing directory with --root"),
        )
    };
    let path = fs::canonicalize(root).map_err(|e| match e.raw_os_error() {
        Some(libc::ENOENT | libc::ENOTDIR) => bad("does not exist"),
        _ => bad(&format!("cannot be resolved ({e})")),
    })?;
    let dir = resolve::open_dir(rustix::fs::CWD, path.as_os_str()).map_err(|e| match e {
        rustix::io::Errno::NOTDIR => bad("is not a directory"),
        _ => bad(&format!("cannot be opened ({e})")),
    })?;
    let id = FileId::of(&dir).map_err(|e| bad(&format!("cannot be inspected ({e})")))?;
    Ok(RootDir {
        index,
        path,
        dir,
        id,
    })
}

/// Refusals that need no file system: empty, too long, a NUL byte.
fn check_path_text(user_path: &str) -> Result<(), ToolError> {
    if user_path.is_empty() {
        return Err(ToolError::new(
            ErrorCode::InvalidArgument,
            "",
            "empty path; pass the path of a file (relative to the root, or absolute inside it)",
        ));
    }
    if user_path.len() > MAX_PATH_BYTES {
        // No system opens such a path, and refusing it first keeps its resolution from
        // doing work in proportion to megabytes of components.
        return Err(invalid_path(
            user_path,
            &format!(
                "is too long ({} bytes; at most {MAX_PATH_BYTES})",
                user_path.len()
            ),
        ));
    }
    if user_path.contains('\0') {
        return Err(invalid_path(user_path, "contains a NUL byte"));
    }
    Ok(())
}

/// Unconfined: the path as given. A cheap look first, so that a device is normally refused
/// without being opened (opening some devices has effects); the fstat of the handle after
/// is the check that counts.
fn open_unconfined(user_path: &str) -> Result<File, ToolError> {
    let shown = printable(user_path);
    if let Ok(meta) = fs::metadata(user_path) {
        refuse_non_regular(&shown, meta.file_type())?;
    }
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(user_path)
        .map_err(|e| open_error(&shown, &e, true))
}

/// Refuses anything but a regular file, by the type std reports.
fn refuse_non_regular(shown: &str, file_type: fs::FileType) -> Result<(), ToolError> {
    let kind = if file_type.is_file() {
        return Ok(());
    } else if file_type.is_dir() {
        FileType::Directory
    } else if file_type.is_fifo() {
        FileType::Fifo
    } else if file_type.is_socket() {
        FileType::Socket
    } else if file_type.is_char_device() {
        FileType::CharacterDevice
    } else if file_type.is_block_device() {
        FileType::BlockDevice
    } else {
        FileType::Unknown
    };
    Err(refuse_kind(shown, kind))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;
    use std::process::Command;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("lrf-guard-unit-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn special_files_are_refused_without_blocking() {
        let dir = scratch("special");
        let fifo = dir.join("pipe");
        assert!(Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        // Unconfined and confined alike: refused before any open could wait for a writer.
        let u = Guard::unconfined(DEFAULT_MAX_FILE_BYTES);
        let err = u.read(fifo.to_str().unwrap()).unwrap_err();
        assert_eq!(err.code, ErrorCode::NotFile);
        assert!(err.message.contains("FIFO"), "{err:?}");
        let g = Guard::confined(std::slice::from_ref(&dir), DEFAULT_MAX_FILE_BYTES).unwrap();
        let err = g.read("pipe").unwrap_err();
        assert_eq!(err.code, ErrorCode::NotFile, "{err:?}");
        assert_eq!(err.path, "pipe");
        for (path, code) in [
            ("/dev/null", ErrorCode::NotFile),
            ("/dev/zero", ErrorCode::NotFile),
            ("/", ErrorCode::IsDirectory),
        ] {
            assert_eq!(u.read(path).unwrap_err().code, code, "{path}");
        }
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn open_errors_map_to_codes() {
        let code = |e: io::Error| open_error("x.lisp", &e, true).code;
        assert_eq!(
            code(io::ErrorKind::PermissionDenied.into()),
            ErrorCode::AccessDenied
        );
        assert_eq!(code(io::ErrorKind::NotFound.into()), ErrorCode::NotFound);
        assert_eq!(
            code(io::Error::from_raw_os_error(libc::ENXIO)),
            ErrorCode::NotFile
        );
        assert_eq!(
            code(io::Error::from_raw_os_error(libc::ENOTDIR)),
            ErrorCode::NotFound
        );
        assert_eq!(code(io::Error::other("boom")), ErrorCode::Internal);
        let msg = open_error("x.lisp", &io::ErrorKind::PermissionDenied.into(), true).message;
        assert!(msg.contains("not readable: x.lisp"), "{msg}");
    }

    #[test]
    fn read_errors_are_not_bugs() {
        let e = read_error("f", &io::Error::from_raw_os_error(libc::EIO));
        assert_eq!(e.code, ErrorCode::NotFile);
        assert!(e.message.contains("Input/output error"), "{e:?}");
        assert!(!e.message.contains("bug"), "{e:?}");
    }

    #[test]
    fn path_checks_name_the_path() {
        let g = Guard::unconfined(DEFAULT_MAX_FILE_BYTES);
        let e = g.read("a\0b.lisp").unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert_eq!(e.path, "a\\u{0}b.lisp");
        assert!(
            e.message.contains("a\\u{0}b.lisp") && e.message.contains("NUL"),
            "{e:?}"
        );
        let long = "x".repeat(MAX_PATH_BYTES + 1);
        let e = g.read(&long).unwrap_err();
        assert!(e.message.contains(&"x".repeat(50)), "{e:?}");
        assert!(e.message.len() < 400, "{e:?}");
    }
}
