//! Projects: the files under a directory, read through the guard and worked on in
//! parallel, the answers kept in walk order so that output is deterministic.
//!
//! This module does not touch the file system itself (the guard lists and reads), and
//! does not render: it hands each file's bytes to the caller's function.

use crate::cancel::CancelToken;
use crate::error::ToolError;
use crate::guard::{Guard, LoadedFile, WalkedFile};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Most threads one request uses.
pub const MAX_THREADS: usize = 8;

pub mod asdf;
pub mod map;
pub mod plan;
pub mod source;
pub mod words;

/// Reads every file through the guard and applies `work` to it, on up to [`MAX_THREADS`]
/// threads; the answers come back in the order of `files`. A file the guard refuses gives
/// its refusal; a cancelled request stops taking files (those not started give
/// `CANCELLED`).
pub fn map_files<R, F>(
    guard: &Guard,
    files: &[WalkedFile],
    cancel: &CancelToken,
    work: F,
) -> Vec<Result<R, ToolError>>
where
    R: Send,
    F: Fn(&LoadedFile) -> R + Sync,
{
    source::map_files_from(&source::Disk, guard, files, cancel, |sourced| {
        work(&sourced.file)
    })
}

/// Applies `work` to every item on up to [`MAX_THREADS`] threads; the answers come back
/// in the order of `items`, `None` for the items a cancelled request did not start.
pub fn par_map<T, R, F>(items: &[T], cancel: &CancelToken, work: F) -> Vec<Option<R>>
where
    T: Sync,
    R: Send,
    F: Fn(&T) -> R + Sync,
{
    let answers: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    run_indexed(items.len(), cancel, &|i| {
        let answer = work(&items[i]);
        // A poisoned lock means another worker panicked: its panic is re-raised by the
        // scope in `run_indexed`, so the answers no longer matter.
        if let Ok(mut answers) = answers.lock() {
            answers[i] = Some(answer);
        }
    });
    answers.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// Calls `one(i)` for every `i < len` on up to [`MAX_THREADS`] threads, until cancelled.
/// Not generic, so that the threads' code is compiled once, not once per use of
/// [`par_map`] (20 uses; a dynamic call per file costs nothing beside reading it).
fn run_indexed(len: usize, cancel: &CancelToken, one: &(dyn Fn(usize) + Sync)) {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, MAX_THREADS)
        .min(len.max(1));
    let next = AtomicUsize::new(0);
    let run = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= len || cancel.is_cancelled() {
            break;
        }
        one(i);
    };
    std::thread::scope(|scope| {
        for _ in 1..threads {
            scope.spawn(run);
        }
        run();
    });
}

/// `CANCELLED` for a file a cancelled request did not read.
pub(crate) fn cancelled(display_path: &str) -> ToolError {
    ToolError::new(
        crate::error::ErrorCode::Cancelled,
        display_path,
        format!("the request was cancelled before {display_path} was read"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn answers_come_back_in_walk_order_with_refusals() {
        let dir = std::env::temp_dir().join(format!("lrf-project-unit-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        for i in 0..50 {
            fs::write(
                dir.join(format!("f{i:02}.lisp")),
                format!("(defun f{i} ())"),
            )
            .unwrap();
        }
        fs::write(dir.join("f50.lisp"), "x".repeat(100)).unwrap();
        let guard = Guard::confined(std::slice::from_ref(&dir), 64).unwrap();
        let walk = guard.walk(&guard.directory(".").unwrap().unwrap(), &|_| true);
        let answers = map_files(&guard, &walk.files, &CancelToken::new(), |f| f.bytes.len());
        assert_eq!(answers.len(), 51);
        for (i, answer) in answers.iter().take(50).enumerate() {
            assert_eq!(*answer.as_ref().unwrap(), format!("(defun f{i} ())").len());
        }
        let over = answers[50].as_ref().unwrap_err();
        assert_eq!(over.code, crate::error::ErrorCode::SizeLimitExceeded);
        let cancel = CancelToken::new();
        cancel.cancel();
        let answers = map_files(&guard, &walk.files, &cancel, |f| f.bytes.len());
        assert!(answers
            .iter()
            .all(|a| a.as_ref().unwrap_err().code == crate::error::ErrorCode::Cancelled));
    }
}
