//! The bytes of the files a long-lived surface searched, kept between its calls (the MCP
//! server's `lisp-find`, [`crate::find::find_from`]): a search walks the scope again at
//! each call, asking the guard to stat each file beneath its directory's handle
//! ([`crate::guard::Guard::walk_stamped`]), and takes the kept bytes of a file only while
//! that stamp (device, inode, size, modification and status-change times) is the one it
//! had when read. A file changed, replaced or deleted is read again or left out, as a
//! search without the cache would; an entry that is not a regular file (a symlink) is
//! read through the guard each time. The answers are the same as without the cache: only
//! where the bytes come from differs.

use crate::error::ToolError;
use crate::guard::{Guard, LoadedFile, Stamp, WalkedFile};
use crate::project::source::{FileSource, Memo, Sourced};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The most bytes kept: past it the cache is emptied and fills again (files deleted are
/// never looked up again, so a cache that only grew would keep them).
pub const MAX_KEPT_BYTES: usize = 256 << 20;

/// Files read before, by their walked path.
#[derive(Default)]
pub struct FileCache {
    kept: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    files: HashMap<PathBuf, (Stamp, Arc<Sourced>)>,
    bytes: usize,
}

impl FileCache {
    /// The kept file at `path` when it was read with this stamp.
    fn get(&self, path: &std::path::Path, stamp: &Stamp) -> Option<Arc<Sourced>> {
        let kept = self.kept.lock().ok()?;
        let (was, file) = kept.files.get(path)?;
        (was == stamp).then(|| file.clone())
    }

    fn put(&self, path: PathBuf, stamp: Stamp, file: Arc<Sourced>) {
        let Ok(mut kept) = self.kept.lock() else {
            return;
        };
        if kept.bytes + file.file.bytes.len() > MAX_KEPT_BYTES {
            kept.files.clear();
            kept.bytes = 0;
        }
        kept.bytes += file.file.bytes.len();
        if let Some((_, old)) = kept.files.insert(path, (stamp, file)) {
            kept.bytes -= old.file.bytes.len();
        }
    }

    /// Files kept now.
    pub fn len(&self) -> usize {
        self.kept.lock().map_or(0, |k| k.files.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl FileSource for FileCache {
    fn wants_stamps(&self) -> bool {
        true
    }

    fn read(&self, guard: &Guard, file: &WalkedFile) -> Result<Arc<Sourced>, ToolError> {
        let Some(stamp) = file.stamp().copied() else {
            return crate::project::source::Disk.read(guard, file);
        };
        if let Some(kept) = self.get(file.path(), &stamp) {
            return Ok(kept);
        }
        let loaded: LoadedFile = guard.read_walked(file)?;
        if stamp.keeps(&loaded) {
            let kept = Arc::new(Sourced {
                file: loaded,
                memo: Some(Memo::default()),
            });
            self.put(file.path().to_path_buf(), stamp, kept.clone());
            return Ok(kept);
        }
        Ok(Arc::new(Sourced {
            file: loaded,
            memo: None,
        }))
    }
}

/// Files read through the guard at each search, each stat'ed by the walk
/// ([`crate::guard::Guard::walk_stamped`]) so that what a search learns of a file can be
/// kept by its stamp ([`crate::find::learned`]) while its bytes are not (the language
/// server's searches of macro-made definitions: its index keeps no text).
pub struct Stamped;

impl FileSource for Stamped {
    fn wants_stamps(&self) -> bool {
        true
    }

    fn read(&self, guard: &Guard, file: &WalkedFile) -> Result<Arc<Sourced>, ToolError> {
        Ok(Arc::new(Sourced {
            file: guard.read_walked(file)?,
            memo: None,
        }))
    }
}
