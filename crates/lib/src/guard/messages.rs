//! The guard's refusals: one constructor per kind, each naming the path as the user should
//! see it and saying what to do next. A path from a user is shown with control characters
//! escaped and cut to a bound, so that no refusal echoes megabytes or writes raw control
//! bytes into a log or a terminal.

use super::RootDir;
use crate::error::{ErrorCode, ToolError};
use crate::shown::shown_os_path;
use rustix::fs::FileType;
use std::io;
use std::path::Path;

/// Longest path shown in a message, in characters: every path the guard accepts fits.
pub const SHOWN_PATH_CHARS: usize = super::MAX_PATH_BYTES;

/// How much of a path refused for its length is shown.
const SHOWN_PREFIX_CHARS: usize = 80;

/// A path from a user as shown in messages: by the one rule ([`crate::shown::shown_path`]), cut to
/// [`SHOWN_PATH_CHARS`] characters of the path.
#[must_use]
pub fn printable(text: &str) -> String {
    printable_prefix(text, SHOWN_PATH_CHARS)
}

/// The first `max_chars` characters of `text`, shown, and `…` when cut.
fn printable_prefix(text: &str, max_chars: usize) -> String {
    crate::shown::shortened(text, max_chars)
}

/// The path as the user gave it, except that an absolute path spelled below the first root
/// is shown relative to it (a log need not carry the root). Lexical: only for messages.
pub(super) fn shown_user(roots: &[RootDir], user_path: &str) -> String {
    let given = Path::new(user_path);
    if let Some(first) = roots.first() {
        if let Ok(rel) = given.strip_prefix(&first.path) {
            if rel.as_os_str().is_empty() {
                return ".".to_string();
            }
            return shown_os_path(rel.as_os_str());
        }
    }
    printable(user_path)
}

pub(super) fn access_outside(shown: &str) -> ToolError {
    ToolError::new(
        ErrorCode::AccessDenied,
        shown,
        format!(
            "outside the allowed roots: {shown}; pass a path relative to the root, \
             or an absolute path inside a root"
        ),
    )
}

pub(super) fn not_found(shown: &str, symlink_loop: bool) -> ToolError {
    let message = if symlink_loop {
        format!(
            "too many levels of symbolic links: {shown}; the path runs into a symlink loop, \
             check the links"
        )
    } else {
        format!(
            "no such file: {shown}; check the path (relative to the root) or list the directory"
        )
    };
    ToolError::new(ErrorCode::NotFound, shown, message)
}

pub(super) fn not_searchable(shown: &str) -> ToolError {
    ToolError::new(
        ErrorCode::AccessDenied,
        shown,
        format!(
            "not readable: {shown}; a directory on the way cannot be searched, \
             check its permissions"
        ),
    )
}

/// Directories are `IS_DIRECTORY`; FIFOs, sockets, devices and anything else that is not a
/// regular file are `NOT_FILE`.
pub(super) fn refuse_kind(shown: &str, kind: FileType) -> ToolError {
    let name = match kind {
        FileType::Directory => {
            return ToolError::new(
                ErrorCode::IsDirectory,
                shown,
                format!("is a directory: {shown}; list the directory, or pass a file inside it"),
            )
        }
        FileType::Fifo => "FIFO",
        FileType::Socket => "socket",
        FileType::CharacterDevice => "character device",
        FileType::BlockDevice => "block device",
        FileType::Symlink => "symbolic link",
        _ => "special file",
    };
    not_file(shown, name)
}

pub(super) fn not_file(shown: &str, kind: &str) -> ToolError {
    ToolError::new(
        ErrorCode::NotFile,
        shown,
        format!("not a regular file ({kind}): {shown}; only regular files can be read"),
    )
}

pub(super) fn invalid_path(user_path: &str, why: &str) -> ToolError {
    let shown = if user_path.len() > super::MAX_PATH_BYTES {
        printable_prefix(user_path, SHOWN_PREFIX_CHARS)
    } else {
        printable(user_path)
    };
    ToolError::new(
        ErrorCode::InvalidArgument,
        shown.clone(),
        format!("invalid path {shown}: it {why}; pass the path of a file"),
    )
}

/// Why `open` of a file failed. `unconfined`: the path was opened as given (no walk).
pub(super) fn open_error(shown: &str, e: &io::Error, unconfined: bool) -> ToolError {
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
                format!("no such file: {shown}; check the path (relative to {base}) or list the directory"),
            )
        }
        io::ErrorKind::InvalidInput => invalid_path(shown, "contains a NUL byte"),
        _ => match e.raw_os_error() {
            // A component of the path is a file, or a symlink loop.
            Some(libc::ENOTDIR | libc::ELOOP) => ToolError::new(
                ErrorCode::NotFound,
                shown,
                format!(
                    "no such file: {shown}; a part of the path is a file or a symlink \
                     loop, check the path"
                ),
            ),
            // A socket, or a device with nothing or no driver behind it.
            Some(libc::ENXIO | libc::ENODEV) => not_file(shown, "special file"),
            Some(libc::ENAMETOOLONG) => invalid_path(shown, "is too long"),
            _ => internal(shown, e),
        },
    }
}

/// Why reading an opened regular file failed. Pseudo-files (`/proc/self/mem`, some files
/// of `/sys`) look regular but refuse to be read; that is the file's nature, not a bug.
pub(super) fn read_error(shown: &str, e: &io::Error) -> ToolError {
    match e.kind() {
        io::ErrorKind::PermissionDenied => open_error(shown, e, false),
        _ if e.raw_os_error() == Some(libc::EISDIR) => refuse_kind(shown, FileType::Directory),
        _ => ToolError::new(
            ErrorCode::NotFile,
            shown,
            format!(
                "cannot be read as a regular file ({}): {shown}; it is probably a \
                 pseudo-file or a device, only ordinary files can be read",
                os_words(e)
            ),
        ),
    }
}

/// Anything unexpected is a bug: say so, with the system's words.
pub(super) fn internal(shown: &str, e: &io::Error) -> ToolError {
    ToolError::new(
        ErrorCode::Internal,
        shown,
        format!(
            "unexpected error reading {shown}: {}; this is a bug, please report it",
            os_words(e)
        ),
    )
}

/// The system's description of `e`, without Rust's "(os error N)" suffix.
fn os_words(e: &io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}
