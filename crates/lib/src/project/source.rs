//! Where a search over a directory's files gets their bytes: read through the guard each
//! time ([`Disk`]), or kept by a long-lived surface between calls (the index's
//! [`crate::index::files::FileCache`]), which hands back what it read before while the
//! walk's [`crate::guard::Stamp`] of the file is the same, with what was worked out of
//! those bytes before ([`Memo`]).

use super::par_map;
use crate::cancel::CancelToken;
use crate::error::ToolError;
use crate::guard::{Guard, LoadedFile, WalkedFile};
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A file as a source gives it.
pub struct Sourced {
    pub file: LoadedFile,
    /// `Some` when the source keeps the file: what a search works out of these bytes
    /// alone can be kept with them.
    pub memo: Option<Memo>,
}

/// Values worked out of one file's bytes alone, one per type (each use wraps its value in
/// a type of its own), made at the first question and kept as long as the bytes.
#[derive(Default)]
pub struct Memo(Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>);

impl Memo {
    /// The value of type `T`, made by `make` the first time (outside the lock: two
    /// threads asking at once may both make it; one is kept).
    pub fn get<T: Any + Send + Sync>(&self, make: impl FnOnce() -> T) -> Arc<T> {
        let found = |memo: &HashMap<TypeId, Arc<dyn Any + Send + Sync>>| {
            memo.get(&TypeId::of::<T>())
                .and_then(|v| v.clone().downcast::<T>().ok())
        };
        if let Some(v) = self.0.lock().ok().and_then(|m| found(&m)) {
            return v;
        }
        let made = Arc::new(make());
        if let Ok(mut memo) = self.0.lock() {
            let kept = memo
                .entry(TypeId::of::<T>())
                .or_insert_with(|| made.clone());
            if let Ok(v) = kept.clone().downcast::<T>() {
                return v;
            }
        }
        made
    }
}

/// The bytes of walked files, as [`Guard::read_walked`] reads them.
pub trait FileSource: Send + Sync {
    /// Whether the walk should stat each file ([`Guard::walk_stamped`]): a source that
    /// keeps files compares the stamps.
    fn wants_stamps(&self) -> bool;

    /// The file as [`Guard::read_walked`] would read it now.
    ///
    /// # Errors
    /// The guard's refusal.
    fn read(&self, guard: &Guard, file: &WalkedFile) -> Result<Arc<Sourced>, ToolError>;
}

/// Every file read through the guard at each call: nothing kept.
pub struct Disk;

impl FileSource for Disk {
    fn wants_stamps(&self) -> bool {
        false
    }

    fn read(&self, guard: &Guard, file: &WalkedFile) -> Result<Arc<Sourced>, ToolError> {
        let file = guard.read_walked(file)?;
        Ok(Arc::new(Sourced { file, memo: None }))
    }
}

/// [`super::map_files`] with the files from `source`.
pub fn map_files_from<R, F>(
    source: &dyn FileSource,
    guard: &Guard,
    files: &[WalkedFile],
    cancel: &CancelToken,
    work: F,
) -> Vec<Result<R, ToolError>>
where
    R: Send,
    F: Fn(&Sourced) -> R + Sync,
{
    map_indexed_from(source, guard, files, cancel, |_, sourced| work(sourced))
}

/// [`map_files_from`] with each file's index in `files` given to `work`.
pub fn map_indexed_from<R, F>(
    source: &dyn FileSource,
    guard: &Guard,
    files: &[WalkedFile],
    cancel: &CancelToken,
    work: F,
) -> Vec<Result<R, ToolError>>
where
    R: Send,
    F: Fn(usize, &Sourced) -> R + Sync,
{
    let indices: Vec<usize> = (0..files.len()).collect();
    let answers = par_map(&indices, cancel, |&i| {
        source
            .read(guard, &files[i])
            .map(|sourced| work(i, &sourced))
    });
    answers
        .into_iter()
        .zip(files)
        .map(|(answer, file)| answer.unwrap_or_else(|| Err(super::cancelled(&file.display_path))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memo_makes_each_value_once_and_keeps_types_apart() {
        struct A(usize);
        struct B(usize);
        let memo = Memo::default();
        let made = std::cell::Cell::new(0);
        let make = |n| {
            made.set(made.get() + 1);
            n
        };
        assert_eq!(memo.get(|| A(make(1))).0, 1);
        assert_eq!(memo.get(|| A(make(2))).0, 1);
        assert_eq!(memo.get(|| B(make(3))).0, 3);
        assert_eq!(made.get(), 2);
    }
}
