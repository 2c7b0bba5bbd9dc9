//! Guard: the only stage that touches the file system (SPEC §2, §7).
//!
//! It turns a path from a user (an agent, a person, an editor) into bytes, or into a
//! [`ToolError`] that says what to do next. In order:
//!
//! 1. **Resolve.** Confined: a relative path is joined to the first root, an absolute one is
//!    taken as is; either way it is canonicalized (symlinks and `..` resolved) and must then
//!    lie inside some root, compared component by component. Unconfined: the path is used
//!    as given.
//! 2. **Open** with `O_NONBLOCK`, so a FIFO that slipped past every earlier check still
//!    cannot block us, then **fstat the opened handle**: what we check is what we read.
//! 3. **Refuse** directories, special files, files over the size cap, binary files.
//! 4. **Read** at most `max_file_bytes + 1` bytes: a file that grows after the fstat is
//!    still caught.
//!
//! Messages name the path as the user gave it, or relative to its root; never the absolute
//! path of a root, which an agent does not need and a log should not carry.

use crate::error::{ErrorCode, ToolError};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};
use std::time::UNIX_EPOCH;

/// Default size cap (SPEC §7): one constant shared by code and tests.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Binary sniff window: a NUL byte in the first 8 KiB means binary.
pub const BINARY_SNIFF_BYTES: usize = 8 * 1024;

// `libc` is not a dependency, so the few constants we need are spelled out per platform.
// O_NONBLOCK: opening a FIFO for reading must not wait for a writer.
// O_NOCTTY: opening a terminal device must never make it our controlling terminal.
#[cfg(target_os = "linux")]
mod sys {
    pub const O_NONBLOCK: i32 = 0o4000;
    pub const O_NOCTTY: i32 = 0o400;
    pub const ENOTDIR: i32 = 20;
    pub const ENXIO: i32 = 6;
    pub const ENODEV: i32 = 19;
    pub const ELOOP: i32 = 40;
    pub const ENAMETOOLONG: i32 = 36;
}
#[cfg(not(target_os = "linux"))]
mod sys {
    // The BSD family (macOS included) shares these values.
    pub const O_NONBLOCK: i32 = 0x0004;
    pub const O_NOCTTY: i32 = 0x20000;
    pub const ENOTDIR: i32 = 20;
    pub const ENXIO: i32 = 6;
    pub const ENODEV: i32 = 19;
    pub const ELOOP: i32 = 62;
    pub const ENAMETOOLONG: i32 = 63;
}

/// The allowed roots and the size cap: everything needed to decide whether a path may be read.
#[derive(Debug, Clone)]
pub struct Guard {
    /// Canonical roots. Empty means unconfined (only [`Guard::unconfined`] builds that).
    roots: Vec<PathBuf>,
    max_file_bytes: u64,
}

/// A file that passed every check: its bytes and what the surfaces report about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedFile {
    /// Relative to its root when confined (forward slashes, never absolute); as the user gave it when unconfined.
    pub display_path: String,
    pub bytes: Vec<u8>,
    /// Modification time in ms since the epoch (0 when unknown, e.g. stdin).
    pub mtime_ms: u64,
}

/// Where a path resolved to: the path to open, and the path to show.
struct Target {
    open_path: PathBuf,
    display: String,
}

impl Guard {
    /// Confined to `roots`, each canonicalized here so that later checks compare real
    /// locations. A root that does not exist or is not a directory is an
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
        let mut canonical = Vec::with_capacity(roots.len());
        for root in roots {
            let shown = root.to_string_lossy().into_owned();
            let bad = |why: &str| {
                ToolError::new(
                    ErrorCode::InvalidArgument,
                    shown.clone(),
                    format!("root {why}: {shown}; pass an existing directory with --root"),
                )
            };
            let c = fs::canonicalize(root).map_err(|e| match e.kind() {
                io::ErrorKind::NotFound => bad("does not exist"),
                _ if e.raw_os_error() == Some(sys::ENOTDIR) => bad("does not exist"),
                _ => bad(&format!("cannot be resolved ({e})")),
            })?;
            match fs::metadata(&c) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => return Err(bad("is not a directory")),
                Err(e) => return Err(bad(&format!("cannot be inspected ({e})"))),
            }
            canonical.push(c);
        }
        Ok(Guard {
            roots: canonical,
            max_file_bytes,
        })
    }

    /// Not confined: any readable file (the CLI without --root: a person at a shell can read any file already).
    #[must_use]
    pub fn unconfined(max_file_bytes: u64) -> Guard {
        Guard {
            roots: Vec::new(),
            max_file_bytes,
        }
    }

    /// The canonical roots, in the order given; empty when unconfined.
    #[must_use]
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The size cap in bytes.
    #[must_use]
    pub fn max_file_bytes(&self) -> u64 {
        self.max_file_bytes
    }

    /// Resolve, open, check, read. The only function in the crate that reads files.
    ///
    /// # Errors
    /// The SPEC §7 code of the refusal (`ACCESS_DENIED`, `NOT_FOUND`, `NOT_FILE`, ...),
    /// or `INTERNAL` for an unexpected I/O error.
    pub fn read(&self, user_path: &str) -> Result<LoadedFile, ToolError> {
        if user_path.is_empty() {
            return Err(ToolError::new(
                ErrorCode::InvalidArgument,
                "",
                "empty path; pass the path of a file (relative to the root, or absolute inside it)",
            ));
        }
        if user_path.len() > MAX_PATH_BYTES {
            // No system opens such a path; refusing it first keeps the resolution of a
            // missing path (which walks its ancestors) from taking quadratic time, and the
            // error from echoing megabytes.
            let mut shown: String = user_path.chars().take(80).collect();
            shown.push('…');
            return Err(invalid_path(
                &shown,
                &format!(
                    "is too long ({} bytes; at most {MAX_PATH_BYTES})",
                    user_path.len()
                ),
            ));
        }
        let target = if self.roots.is_empty() {
            Target {
                open_path: PathBuf::from(user_path),
                display: user_path.to_string(),
            }
        } else {
            self.resolve_confined(user_path)?
        };
        self.open_and_read(&target)
    }

    /// The checks that apply to bytes from elsewhere (stdin for the CLI's `-`): size cap, binary.
    ///
    /// # Errors
    /// `SIZE_LIMIT_EXCEEDED` over the cap, `BINARY_FILE` for a NUL in the sniff window.
    pub fn check_bytes(&self, display_path: &str, bytes: Vec<u8>) -> Result<LoadedFile, ToolError> {
        if bytes.len() as u64 > self.max_file_bytes {
            return Err(self.too_big(display_path, "input", bytes.len() as u64));
        }
        check_binary(display_path, &bytes)?;
        Ok(LoadedFile {
            display_path: display_path.to_string(),
            bytes,
            mtime_ms: 0,
        })
    }

    /// Confined resolution: canonicalize, then require the result inside a root.
    fn resolve_confined(&self, user_path: &str) -> Result<Target, ToolError> {
        let given = Path::new(user_path);
        let joined = if given.is_absolute() {
            given.to_path_buf()
        } else {
            self.roots[0].join(given)
        };
        match fs::canonicalize(&joined) {
            Ok(canonical) => match self.relative_to_root(&canonical) {
                Some(display) => Ok(Target {
                    open_path: canonical,
                    display,
                }),
                None => Err(outside(&self.shown_user(user_path))),
            },
            Err(e) => Err(self.resolve_error(user_path, &joined, &e)),
        }
    }

    /// Why canonicalization failed, as a tool error.
    ///
    /// A missing path is `NOT_FOUND` only if it would lie inside a root: its deepest
    /// existing ancestor is canonicalized and the rest applied lexically. Otherwise it
    /// is `ACCESS_DENIED`, so that probing outside the roots tells nothing about what
    /// exists there, and a symlink out of the roots followed by a missing name is refused
    /// like any other escape.
    fn resolve_error(&self, user_path: &str, joined: &Path, e: &io::Error) -> ToolError {
        let missing = e.kind() == io::ErrorKind::NotFound
            || matches!(e.raw_os_error(), Some(sys::ENOTDIR | sys::ELOOP));
        if missing {
            let follow = e.raw_os_error() != Some(sys::ELOOP);
            return match self.locate_missing(joined, follow) {
                Some(display) => {
                    let message = if e.raw_os_error() == Some(sys::ELOOP) {
                        format!(
                            "too many levels of symbolic links: {display}; \
                             the path runs into a symlink loop, check the links"
                        )
                    } else {
                        format!(
                            "no such file: {display}; check the path (relative to the root) \
                             or list the directory"
                        )
                    };
                    ToolError::new(ErrorCode::NotFound, display, message)
                }
                None => outside(&self.shown_user(user_path)),
            };
        }
        let user_path = self.shown_user(user_path);
        let user_path = user_path.as_str();
        match e.kind() {
            io::ErrorKind::PermissionDenied => ToolError::new(
                ErrorCode::AccessDenied,
                user_path,
                format!(
                    "not readable: {user_path}; a directory on the way cannot be searched, \
                     check its permissions"
                ),
            ),
            io::ErrorKind::InvalidInput => invalid_path(user_path, "contains a NUL byte"),
            _ if e.raw_os_error() == Some(sys::ENAMETOOLONG) => {
                invalid_path(user_path, "is too long")
            }
            _ => internal(user_path, e),
        }
    }

    /// The path as the user gave it, except that an absolute path spelled inside a root is
    /// shown relative to that root (the user may know the root, a log need not). Only for
    /// paths that did not resolve inside a root; those show their resolved display path.
    fn shown_user(&self, user_path: &str) -> String {
        let given = Path::new(user_path);
        if given.is_absolute() {
            if let Some(rel) = self.relative_to_root(given) {
                return rel;
            }
        }
        user_path.to_string()
    }

    /// Where a path that does not (fully) exist would be, relative to its root; `None` if
    /// that place is outside every root.
    ///
    /// The deepest ancestor that exists is canonicalized and the rest applied lexically.
    /// With `follow`, a dangling symlink right below that ancestor is followed (up to
    /// `MAX_HOPS` links): where it points decides, so a dangling link out of the roots is
    /// refused like a live one, and its target's existence is not revealed. Without
    /// `follow` (for symlink loops), the link's own place decides.
    fn locate_missing(&self, joined: &Path, follow: bool) -> Option<String> {
        const MAX_HOPS: u32 = 40;
        let mut joined = joined.to_path_buf();
        for _ in 0..=MAX_HOPS {
            let (base, rest) = joined.ancestors().skip(1).find_map(|ancestor| {
                let base = fs::canonicalize(ancestor).ok()?;
                // `ancestor` is a component-wise prefix of `joined`, so this cannot fail.
                let rest = joined.strip_prefix(ancestor).ok()?.to_path_buf();
                Some((base, rest))
            })?;
            let mut components = rest.components();
            if let (true, Some(Component::Normal(first))) = (follow, components.next()) {
                let link = base.join(first);
                let is_link = fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink());
                if is_link {
                    // A relative target is relative to the link's directory, `base`;
                    // an absolute one replaces it (that is what `join` does).
                    let target = fs::read_link(&link).ok()?;
                    joined = base.join(target).join(components.as_path());
                    continue;
                }
            }
            let mut place = base;
            for component in rest.components() {
                match component {
                    Component::Normal(name) => place.push(name),
                    Component::ParentDir => {
                        place.pop();
                    }
                    Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
                }
            }
            return self.relative_to_root(&place);
        }
        None
    }

    /// `path` relative to the first root that contains it, with forward slashes; `"."` for
    /// a root itself. Purely lexical: callers pass canonical paths when it matters.
    /// `Path::strip_prefix` compares whole components, so root `/a/b` does not contain
    /// `/a/bc`.
    fn relative_to_root(&self, path: &Path) -> Option<String> {
        let rel = self
            .roots
            .iter()
            .find_map(|root| path.strip_prefix(root).ok())?;
        let parts: Vec<_> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect();
        Some(if parts.is_empty() {
            ".".to_string()
        } else {
            parts.join("/")
        })
    }

    /// Open, check the opened handle, read.
    fn open_and_read(&self, target: &Target) -> Result<LoadedFile, ToolError> {
        let shown = target.display.as_str();

        // A cheap look before opening, so a device is normally refused without ever being
        // opened (opening some devices has effects: tapes rewind, watchdogs arm). This is
        // only an early exit: the authoritative check is the fstat below, so swapping the
        // file between the two checks gains nothing.
        if let Ok(meta) = fs::metadata(&target.open_path) {
            refuse_non_regular(shown, meta.file_type())?;
        }

        let (file, meta) = self.open_regular(&target.open_path, shown)?;

        let len = meta.len();
        if len > self.max_file_bytes {
            return Err(self.too_big(shown, "file", len));
        }
        // Read one byte past the cap, so a file that grew after the fstat is caught.
        let limit = self.max_file_bytes.saturating_add(1);
        let mut bytes = Vec::with_capacity(usize::try_from(len.min(limit)).unwrap_or(0));
        file.take(limit)
            .read_to_end(&mut bytes)
            .map_err(|e| internal(shown, &e))?;
        if bytes.len() as u64 > self.max_file_bytes {
            return Err(ToolError::new(
                ErrorCode::SizeLimitExceeded,
                shown,
                format!(
                    "file grew past the {cap}-byte cap while being read: {shown}; \
                     read it again when it stops changing, or raise the cap with \
                     --max-file-bytes",
                    cap = self.max_file_bytes
                ),
            ));
        }
        check_binary(shown, &bytes)?;

        let mtime_ms = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        Ok(LoadedFile {
            display_path: target.display.clone(),
            bytes,
            mtime_ms,
        })
    }

    /// Open without blocking, then fstat the handle: only a regular file (inside the roots,
    /// when confined) comes back. Nothing has been read yet.
    fn open_regular(&self, path: &Path, shown: &str) -> Result<(File, fs::Metadata), ToolError> {
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(sys::O_NONBLOCK | sys::O_NOCTTY)
            .open(path)
            .map_err(|e| self.open_error(shown, &e))?;
        let meta = file.metadata().map_err(|e| internal(shown, &e))?;
        refuse_non_regular(shown, meta.file_type())?;
        if !self.roots.is_empty() {
            self.recheck_opened(&file, shown)?;
        }
        Ok((file, meta))
    }

    /// Why `open` failed, as a tool error.
    fn open_error(&self, shown: &str, e: &io::Error) -> ToolError {
        let unconfined = self.roots.is_empty();
        match e.kind() {
            io::ErrorKind::PermissionDenied => ToolError::new(
                ErrorCode::AccessDenied,
                shown,
                format!("not readable: {shown}; check the file's permissions"),
            ),
            io::ErrorKind::NotFound => {
                let base = if unconfined {
                    "the current directory"
                } else {
                    "the root"
                };
                ToolError::new(
                    ErrorCode::NotFound,
                    shown,
                    format!(
                        "no such file: {shown}; check the path (relative to {base}) \
                         or list the directory"
                    ),
                )
            }
            io::ErrorKind::InvalidInput => invalid_path(shown, "contains a NUL byte"),
            _ => match e.raw_os_error() {
                // ENOTDIR: a component of the path is a file. ELOOP: a symlink loop.
                // Mostly reached unconfined; confined paths are canonical by now.
                Some(sys::ENOTDIR | sys::ELOOP) => ToolError::new(
                    ErrorCode::NotFound,
                    shown,
                    format!(
                        "no such file: {shown}; a part of the path is a file or a symlink \
                         loop, check the path"
                    ),
                ),
                // ENXIO: a socket, or a device with nothing behind it. ENODEV: a device
                // without a driver. Either way a special file, not ours to read.
                Some(sys::ENXIO | sys::ENODEV) => not_file(shown, "special file"),
                Some(sys::ENAMETOOLONG) => invalid_path(shown, "is too long"),
                _ => internal(shown, e),
            },
        }
    }

    /// Defence against a race: a directory on the way swapped for a symlink between
    /// canonicalization and open. Linux names the file we actually opened in
    /// `/proc/self/fd`; it must still be inside a root. Where that name is not available
    /// the check is skipped (it is a second line of defence, not the first).
    #[cfg(target_os = "linux")]
    fn recheck_opened(&self, file: &File, shown: &str) -> Result<(), ToolError> {
        use std::os::unix::io::AsRawFd;
        let link = format!("/proc/self/fd/{}", file.as_raw_fd());
        let Ok(actual) = fs::read_link(link) else {
            return Ok(());
        };
        if !actual.is_absolute() || self.relative_to_root(&actual).is_some() {
            return Ok(());
        }
        // A file deleted after the open is shown as "<path> (deleted)".
        let text = actual.to_string_lossy();
        if let Some(stripped) = text.strip_suffix(" (deleted)") {
            if self.relative_to_root(Path::new(stripped)).is_some() {
                return Ok(());
            }
        }
        Err(ToolError::new(
            ErrorCode::AccessDenied,
            shown,
            format!(
                "the path changed while being opened and now leads outside the allowed \
                 roots: {shown}; read it again once the directory stops changing"
            ),
        ))
    }

    #[cfg(not(target_os = "linux"))]
    fn recheck_opened(&self, _file: &File, _shown: &str) -> Result<(), ToolError> {
        Ok(())
    }

    /// `SIZE_LIMIT_EXCEEDED` for `what` (file or input) of `size` bytes.
    fn too_big(&self, shown: &str, what: &str, size: u64) -> ToolError {
        ToolError::new(
            ErrorCode::SizeLimitExceeded,
            shown,
            format!(
                "{what} is {size} bytes, over the {cap}-byte cap: {shown}; \
                 read a smaller file, or raise the cap with --max-file-bytes",
                cap = self.max_file_bytes
            ),
        )
    }
}

/// Directories are `IS_DIRECTORY`; FIFOs, sockets, devices and anything else that is not a
/// regular file are `NOT_FILE`.
fn refuse_non_regular(shown: &str, file_type: fs::FileType) -> Result<(), ToolError> {
    if file_type.is_file() {
        return Ok(());
    }
    if file_type.is_dir() {
        return Err(ToolError::new(
            ErrorCode::IsDirectory,
            shown,
            format!("is a directory: {shown}; list the directory, or pass a file inside it"),
        ));
    }
    let kind = if file_type.is_fifo() {
        "FIFO"
    } else if file_type.is_socket() {
        "socket"
    } else if file_type.is_char_device() {
        "character device"
    } else if file_type.is_block_device() {
        "block device"
    } else {
        "special file"
    };
    Err(not_file(shown, kind))
}

/// `BINARY_FILE` if a NUL byte occurs in the first [`BINARY_SNIFF_BYTES`] bytes.
fn check_binary(shown: &str, bytes: &[u8]) -> Result<(), ToolError> {
    let window = &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)];
    match memchr::memchr(0, window) {
        None => Ok(()),
        Some(at) => Err(ToolError::new(
            ErrorCode::BinaryFile,
            shown,
            format!(
                "binary file (NUL byte at offset {at}): {shown}; this tool reads text only, \
                 use a tool made for binary data"
            ),
        )),
    }
}

fn not_file(shown: &str, kind: &str) -> ToolError {
    ToolError::new(
        ErrorCode::NotFile,
        shown,
        format!("not a regular file ({kind}): {shown}; only regular files can be read"),
    )
}

fn outside(user_path: &str) -> ToolError {
    ToolError::new(
        ErrorCode::AccessDenied,
        user_path,
        format!(
            "outside the allowed roots: {user_path}; pass a path relative to the root, \
             or an absolute path inside a root"
        ),
    )
}

/// Longest path accepted: Linux's `PATH_MAX`.
pub const MAX_PATH_BYTES: usize = 4096;

fn invalid_path(user_path: &str, why: &str) -> ToolError {
    ToolError::new(
        ErrorCode::InvalidArgument,
        user_path,
        format!("invalid path: it {why}; pass the path of a file"),
    )
}

/// Anything unexpected is a bug: say so, with the OS's words (which never include the path).
fn internal(shown: &str, e: &io::Error) -> ToolError {
    ToolError::new(
        ErrorCode::Internal,
        shown,
        format!("unexpected error reading {shown}: {e}; this is a bug, please report it"),
    )
}

#[cfg(test)]
mod tests {
    //! What the public API cannot reach: the pre-open look refuses special files first,
    //! so these check that the open-then-fstat path refuses them on its own.
    use super::*;
    use std::process::Command;

    #[test]
    fn open_regular_refuses_special_files_without_blocking() {
        let g = Guard::unconfined(DEFAULT_MAX_FILE_BYTES);
        for (path, code) in [
            ("/dev/null", ErrorCode::NotFile),
            ("/dev/zero", ErrorCode::NotFile),
            ("/", ErrorCode::IsDirectory),
        ] {
            let err = g.open_regular(Path::new(path), path).unwrap_err();
            assert_eq!(err.code, code, "{path}: {err:?}");
        }
        let dir = std::env::temp_dir().join(format!("lrf-guard-unit-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("pipe");
        let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        // With O_NONBLOCK the open returns at once even with no writer.
        let err = g.open_regular(&fifo, "pipe").unwrap_err();
        assert_eq!(err.code, ErrorCode::NotFile);
        assert!(err.message.contains("FIFO"), "{err:?}");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn open_errors_map_to_codes() {
        let g = Guard::unconfined(DEFAULT_MAX_FILE_BYTES);
        let code = |e: io::Error| g.open_error("x.lisp", &e).code;
        assert_eq!(
            code(io::ErrorKind::PermissionDenied.into()),
            ErrorCode::AccessDenied
        );
        assert_eq!(code(io::ErrorKind::NotFound.into()), ErrorCode::NotFound);
        assert_eq!(
            code(io::Error::from_raw_os_error(sys::ENXIO)),
            ErrorCode::NotFile
        );
        assert_eq!(
            code(io::Error::from_raw_os_error(sys::ENOTDIR)),
            ErrorCode::NotFound
        );
        assert_eq!(code(io::Error::other("boom")), ErrorCode::Internal);
        let msg = g
            .open_error("x.lisp", &io::ErrorKind::PermissionDenied.into())
            .message;
        assert!(msg.contains("not readable: x.lisp"), "{msg}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn recheck_refuses_a_handle_outside_the_roots() {
        let base = std::env::temp_dir().join(format!("lrf-guard-recheck-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        fs::create_dir_all(base.join("root")).unwrap();
        fs::write(base.join("root/in.lisp"), "(in)").unwrap();
        fs::write(base.join("out.lisp"), "(out)").unwrap();
        let g = Guard::confined(&[base.join("root")], DEFAULT_MAX_FILE_BYTES).unwrap();
        // As if `root/in.lisp` had been swapped for a link out between resolve and open.
        let outside = File::open(base.join("out.lisp")).unwrap();
        let err = g.recheck_opened(&outside, "in.lisp").unwrap_err();
        assert_eq!(err.code, ErrorCode::AccessDenied);
        assert_eq!(err.path, "in.lisp");
        let inside = File::open(base.join("root/in.lisp")).unwrap();
        assert!(g.recheck_opened(&inside, "in.lisp").is_ok());
        let _ = fs::remove_dir_all(&base);
    }
}
