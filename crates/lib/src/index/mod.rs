//! What a long-lived surface (the language server) keeps between requests: each Lisp
//! file of the roots with its bytes and definitions, kept while the file's size and
//! modification time stay the same, and the pure per-file answers an editor asks for
//! ([`analysis`]). Files are listed, checked and read through the guard only; the
//! caller's open buffers (text not saved yet) take the place of the files they name.

pub mod analysis;
pub mod lexical;

use crate::cancel::CancelToken;
use crate::grammar::Grammar;
use crate::guard::Guard;
use analysis::Symbol;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// One file's text and definitions.
#[derive(Clone, Debug)]
pub struct FileData {
    pub bytes: Arc<[u8]>,
    pub symbols: Arc<[Symbol]>,
}

impl FileData {
    /// The data of `bytes` (an open buffer, or a file just read).
    pub fn new(bytes: Vec<u8>, grammar: &Grammar) -> FileData {
        let symbols = analysis::symbols(&bytes, grammar);
        FileData {
            bytes: bytes.into(),
            symbols: symbols.into(),
        }
    }
}

/// A file of the workspace as a request sees it.
#[derive(Clone, Debug)]
pub struct WorkspaceFile {
    /// Absolute.
    pub path: String,
    pub data: FileData,
}

struct Cached {
    size: u64,
    mtime_ms: u64,
    data: FileData,
}

/// The files of the roots, cached by path, size and modification time.
#[derive(Default)]
pub struct Index {
    cached: HashMap<String, Cached>,
    /// The roots whose last walk stopped at [`crate::guard::MAX_WALKED_FILES`].
    cut: Vec<String>,
}

/// Open buffers of Lisp files that do not exist on disk yet (a new file, not saved), in a
/// directory inside the roots: files of the workspace too, the editor shows them. In
/// path order, after the walked files.
fn new_buffers(
    guard: &Guard,
    buffers: &HashMap<String, FileData>,
    walked: &std::collections::HashSet<String>,
) -> Vec<String> {
    let mut found: Vec<String> = buffers
        .keys()
        .filter(|path| !walked.contains(*path) && crate::view::is_lisp_path(path))
        .filter(|path| {
            let parent = std::path::Path::new(path.as_str())
                .parent()
                .and_then(std::path::Path::to_str);
            parent.is_some_and(|d| matches!(guard.directory(d), Ok(Some(_))))
                && guard.open(path).is_err()
        })
        .cloned()
        .collect();
    found.sort();
    found
}

impl Index {
    /// Every Lisp file under the roots (walk order, root by root; ignore files honoured;
    /// at most [`crate::guard::MAX_WALKED_FILES`] per root), each from `buffers` when
    /// open there (by absolute path), else from the cache when its size and time are
    /// unchanged, else read through the guard (on up to 8 threads). Files the guard
    /// refuses are left out.
    pub fn files(
        &mut self,
        guard: &Guard,
        grammar: &Grammar,
        buffers: &HashMap<String, FileData>,
        cancel: &CancelToken,
    ) -> Vec<WorkspaceFile> {
        self.files_reporting(guard, grammar, buffers, cancel, &|_, _| {})
    }

    /// [`Index::files`], calling `progress(done, total)` as files are checked (from the
    /// worker threads, in no order).
    pub fn files_reporting(
        &mut self,
        guard: &Guard,
        grammar: &Grammar,
        buffers: &HashMap<String, FileData>,
        cancel: &CancelToken,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Vec<WorkspaceFile> {
        let mut paths: Vec<String> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        self.cut.clear();
        for root in guard.roots() {
            let Some(root_text) = root.to_str() else {
                continue;
            };
            let Ok(Some(directory)) = guard.directory(root_text) else {
                continue;
            };
            let walk = guard.walk(&directory, &crate::view::is_lisp_path);
            if walk.stopped_at_limit {
                self.cut.push(root_text.to_string());
            }
            for file in walk.files {
                // The real path, not the display form (which escapes `\` and controls).
                let Some(path) = file.path().to_str() else {
                    continue;
                };
                let absolute = absolute(guard, path);
                if seen.insert(absolute.clone()) {
                    paths.push(absolute);
                }
            }
        }
        let aliases = aliases(guard, buffers, &paths, &seen, cancel);
        paths.extend(new_buffers(guard, buffers, &seen));
        let done = std::sync::atomic::AtomicUsize::new(0);
        let answers = crate::project::par_map(&paths, cancel, |path| {
            let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            progress(n, paths.len());
            let buffer = aliases.get(path).unwrap_or(path);
            if let Some(data) = buffers.get(buffer) {
                return Some((None, data.clone()));
            }
            let info = guard.open(path).ok()?.info;
            if let Some(c) = self.cached.get(path) {
                if c.size == info.size && c.mtime_ms == info.mtime_ms {
                    return Some((None, c.data.clone()));
                }
            }
            let loaded = guard.read(path).ok()?;
            let (size, mtime) = loaded.info.map_or((0, 0), |i| (i.size, i.mtime_ms));
            Some((Some((size, mtime)), FileData::new(loaded.bytes, grammar)))
        });
        let mut out = Vec::with_capacity(paths.len());
        for (path, answer) in paths.into_iter().zip(answers) {
            let (fresh, data) = match answer {
                Some(Some(found)) => found,
                // Refused by the guard (gone, over the cap): forgotten.
                Some(None) => {
                    self.cached.remove(&path);
                    continue;
                }
                // Not reached (cancelled): what the cache holds stays.
                None => continue,
            };
            if let Some((size, mtime_ms)) = fresh {
                self.cached.insert(
                    path.clone(),
                    Cached {
                        size,
                        mtime_ms,
                        data: data.clone(),
                    },
                );
            }
            out.push(WorkspaceFile { path, data });
        }
        out
    }

    /// Forgets what is cached of `path` (a file changed, created or deleted): the next
    /// request reads it again, whatever its size and time.
    pub fn forget(&mut self, path: &str) {
        self.cached.remove(path);
    }

    /// The roots whose last walk stopped at [`crate::guard::MAX_WALKED_FILES`] files (the
    /// files past it are not in the workspace).
    pub fn cut_roots(&self) -> &[String] {
        &self.cut
    }

    /// Files cached now.
    pub fn len(&self) -> usize {
        self.cached.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cached.is_empty()
    }
}

/// The walked files that open buffers name by another path (a symbolic link, a
/// directory's other name): walked path to buffer path, matched by file identity through
/// the guard (a buffer the guard refuses matches nothing). Identities are asked only when
/// some buffer names no walked path.
fn aliases(
    guard: &Guard,
    buffers: &HashMap<String, FileData>,
    walked: &[String],
    seen: &std::collections::HashSet<String>,
    cancel: &CancelToken,
) -> HashMap<String, String> {
    let identity = |path: &str| guard.identity(&guard.named_file(path));
    let unmatched: HashMap<(u64, u64), &String> = buffers
        .keys()
        .filter(|path| !seen.contains(*path))
        .filter_map(|path| Some((identity(path)?, path)))
        .collect();
    if unmatched.is_empty() {
        return HashMap::new();
    }
    let identities = crate::project::par_map(walked, cancel, |path| identity(path));
    walked
        .iter()
        .zip(identities)
        .filter_map(|(path, id)| {
            let buffer = unmatched.get(&id??)?;
            Some((path.clone(), (*buffer).clone()))
        })
        .collect()
}

/// A walked file's absolute path: a relative one is below the first root.
fn absolute(guard: &Guard, path: &str) -> String {
    if Path::new(path).is_absolute() {
        return path.to_string();
    }
    match guard.roots().first() {
        Some(root) => root.join(path).to_string_lossy().into_owned(),
        None => path.to_string(),
    }
}
