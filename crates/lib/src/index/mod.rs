//! What a long-lived surface (the language server) keeps between requests: each Lisp
//! file of the roots with its bytes and definitions, kept while the file's size and
//! modification time stay the same, and the pure per-file answers an editor asks for
//! ([`analysis`]). Files are listed, checked and read through the guard only; the
//! caller's open buffers (text not saved yet) take the place of the files they name.
//!
//! After a first walk, a request does not walk the roots nor look at each file again:
//! what keeps the cache true is the caller telling it what changed ([`Index::forget`],
//! [`Index::clear`]), a re-check of every file at a bounded rate ([`recheck`]), and a
//! check of the files an answer cites ([`Index::unchanged`]).
//!
//! [`files`] is the MCP server's: the files `lisp-find` read, kept between its calls.

pub mod analysis;
pub mod files;
pub mod incremental;
pub mod lexical;
pub mod names;
pub mod recheck;

use crate::cancel::CancelToken;
use crate::grammar::Grammar;
use crate::guard::Guard;
use analysis::Symbol;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// One file's text and definitions, and the tables of what it may hold.
#[derive(Clone, Debug)]
pub struct FileData {
    pub bytes: Arc<[u8]>,
    pub symbols: Arc<[Symbol]>,
    /// Made at the first question (an open buffer changes at each key; its tables are
    /// made only when a request searches it).
    tables: Arc<std::sync::OnceLock<Tables>>,
}

/// What lets a request skip a file, or read only part of it.
#[derive(Debug)]
struct Tables {
    /// The folded names its symbols define.
    defined: names::NameSet,
    /// The words of its text.
    words: names::NameSet,
    /// Its top-level forms ([`analysis::form_spans`]).
    forms: Box<[crate::scan::Span]>,
}

impl FileData {
    /// The data of `bytes` (an open buffer, or a file just read).
    pub fn new(bytes: Vec<u8>, grammar: &Grammar) -> FileData {
        let symbols = analysis::symbols(&bytes, grammar);
        FileData {
            bytes: bytes.into(),
            symbols: symbols.into(),
            tables: Default::default(),
        }
    }

    /// The data of `bytes` whose definitions are known already (an edited buffer,
    /// [`incremental::reparse`]).
    pub fn with_symbols(bytes: Vec<u8>, symbols: Vec<Symbol>) -> FileData {
        FileData {
            bytes: bytes.into(),
            symbols: symbols.into(),
            tables: Default::default(),
        }
    }

    /// What the index keeps of a file the editor has not opened: its definitions and
    /// tables (every search asks them), made now, and no text (read again when an answer
    /// needs it, [`WorkspaceFile::bytes`]).
    fn without_text(bytes: &[u8], grammar: &Grammar) -> FileData {
        let symbols = analysis::symbols(bytes, grammar);
        let tables = Tables {
            defined: names::defined(&symbols),
            words: names::words(bytes),
            forms: analysis::form_spans(bytes).into(),
        };
        FileData {
            bytes: Arc::from(&[][..]),
            symbols: symbols.into(),
            tables: Arc::new(std::sync::OnceLock::from(tables)),
        }
    }

    fn tables(&self) -> &Tables {
        self.tables.get_or_init(|| Tables {
            defined: names::defined(&self.symbols),
            words: names::words(&self.bytes),
            forms: analysis::form_spans(&self.bytes).into(),
        })
    }

    /// False when no symbol of the file can match `query` by name (a file to skip).
    pub fn may_define(&self, query: &crate::find::SymbolQuery) -> bool {
        self.tables().defined.may_hold(query.name.as_bytes())
    }

    /// False when the text cannot use `query` (a file to skip).
    pub fn may_use(&self, query: &crate::find::SymbolQuery) -> bool {
        !names::words_answer_for(&query.name) || self.tables().words.may_hold(query.name.as_bytes())
    }

    /// The uses of `finder`'s symbol in the file (as [`analysis::uses_read`] finds them).
    pub fn uses(
        &self,
        finder: &analysis::Uses,
        features: Option<&crate::features::Features>,
    ) -> Vec<crate::scan::Span> {
        finder.read_forms(&self.bytes, &self.tables().forms, features)
    }
}

/// A file of the workspace as a request sees it: its definitions and tables, and its
/// text when at hand (an open buffer, a file read for this request), else read again
/// through the guard when asked ([`WorkspaceFile::bytes`]).
#[derive(Clone, Debug)]
pub struct WorkspaceFile {
    /// Absolute.
    pub path: String,
    data: FileData,
    /// What the text the definitions were read from was, when `data` holds none.
    on_disk: Option<Read>,
}

/// A file's text as the index read it: its size and modification time, and a hash of
/// its bytes, which a text read again must have (a file written twice within the same
/// millisecond, its size unchanged, is not taken for the one read).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Read {
    size: u64,
    mtime_ms: u64,
    hash: u64,
}

impl Read {
    fn of(bytes: &[u8], info: Option<&crate::guard::FileInfo>) -> Read {
        Read {
            size: info.map_or(0, |i| i.size),
            mtime_ms: info.map_or(0, |i| i.mtime_ms),
            hash: Read::hash(bytes),
        }
    }

    fn hash(bytes: &[u8]) -> u64 {
        use std::hash::BuildHasher;
        foldhash::quality::FixedState::with_seed(0x006c_7266).hash_one(bytes)
    }

    /// Whether `loaded` is the text read so.
    fn is(&self, loaded: &crate::guard::LoadedFile) -> bool {
        loaded
            .info
            .is_some_and(|i| i.size == self.size && i.mtime_ms == self.mtime_ms)
            && Read::hash(&loaded.bytes) == self.hash
    }
}

/// A file's text: kept (an open buffer, a file read for this request), or read again
/// (taken as read, not copied).
#[derive(Clone, Debug)]
pub enum Text {
    Kept(Arc<[u8]>),
    Read(Vec<u8>),
}

impl std::ops::Deref for Text {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Text::Kept(bytes) => bytes,
            Text::Read(bytes) => bytes,
        }
    }
}

/// A file's text no longer is the one its definitions were read from (changed on disk,
/// gone, refused): the answer must be made again with the file read anew.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Changed;

impl WorkspaceFile {
    pub fn symbols(&self) -> &[Symbol] {
        &self.data.symbols
    }

    /// False when no symbol of the file can match `query` by name (a file to skip).
    pub fn may_define(&self, query: &crate::find::SymbolQuery) -> bool {
        self.data.may_define(query)
    }

    /// False when the text cannot use `query` (a file to skip).
    pub fn may_use(&self, query: &crate::find::SymbolQuery) -> bool {
        self.data.may_use(query)
    }

    /// The file's text, the one its definitions and tables were made from: at hand, or
    /// read again through the guard and taken only while its size and time are the
    /// ones it had when read for the index.
    pub fn bytes(&self, guard: &Guard) -> Result<Text, Changed> {
        let Some(read) = self.on_disk else {
            return Ok(Text::Kept(self.data.bytes.clone()));
        };
        let loaded = large_guard(guard).read(&self.path).map_err(|_| Changed)?;
        if !read.is(&loaded) {
            return Err(Changed);
        }
        Ok(Text::Read(loaded.bytes))
    }

    /// The uses of `finder`'s symbol in `bytes`, the file's text ([`WorkspaceFile::bytes`]).
    pub fn uses(
        &self,
        bytes: &[u8],
        finder: &analysis::Uses,
        features: Option<&crate::features::Features>,
    ) -> Vec<crate::scan::Span> {
        finder.read_forms(bytes, &self.data.tables().forms, features)
    }
}

struct Cached {
    read: Read,
    /// Without its text ([`FileData::without_text`]).
    data: FileData,
}

/// The files of the roots, cached by path, size and modification time.
#[derive(Default)]
pub struct Index {
    cached: HashMap<String, Cached>,
    /// The roots whose last walk stopped at [`crate::guard::MAX_WALKED_FILES`].
    cut: Vec<String>,
    /// The last walk's files (absolute, walk order), trusted with what is cached of
    /// them; `None`: the next request walks the roots and checks every file.
    walked: Option<Vec<String>>,
    /// The same paths as a set, for [`Index::forget`]: an editor may name every file of
    /// the workspace in one notification.
    walked_set: std::collections::HashSet<String>,
    /// Counts what made the cache forget something, so that a [`recheck`] made
    /// meanwhile does not put back what it saw before.
    generation: u64,
    /// Counts [`Index::clear`]s (the grammar changed): a fill started before one must not
    /// put back files read with the grammar it had.
    clears: u64,
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
    /// unchanged, else read through the guard (on up to 8 threads; a file over the size
    /// cap after the others, one at a time, up to [`crate::find::LARGE_FILE_FACTOR`]
    /// times the cap). Files the guard refuses are left out.
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
        // Trusted: the files of the last walk, each as cached (no look at the disk).
        let trusted = self.walked.is_some();
        let paths = match &self.walked {
            Some(paths) => paths.clone(),
            None => {
                let (paths, cut) = walk_roots(guard);
                self.cut = cut;
                paths
            }
        };
        let seen: std::collections::HashSet<String> = paths.iter().cloned().collect();
        let aliases = aliases(guard, buffers, &paths, &seen, cancel);
        let walk_len = paths.len();
        let mut paths = paths;
        paths.extend(new_buffers(guard, buffers, &seen));
        // What is at hand (an open buffer, a trusted cache entry) is taken here; the rest
        // is checked and read on the worker threads.
        let at_hand = |path: &String| {
            let buffer = aliases.get(path).unwrap_or(path);
            if let Some(data) = buffers.get(buffer) {
                return Some((data.clone(), None));
            }
            let c = self.cached.get(path).filter(|_| trusted)?;
            Some((c.data.clone(), Some(c.read)))
        };
        let mut answers: Vec<_> = paths
            .iter()
            .map(|p| at_hand(p).map(|(data, on_disk)| Some((None, data, on_disk))))
            .collect();
        let slow: Vec<usize> = (0..paths.len()).filter(|&n| answers[n].is_none()).collect();
        let done = std::sync::atomic::AtomicUsize::new(0);
        let large = large_guard(guard);
        let read = crate::project::par_map(&slow, cancel, |&n| {
            let path = &paths[n];
            let count = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
            progress(count, slow.len());
            let Ok(opened) = guard.open(path) else {
                return Ok(None);
            };
            let info = opened.info;
            if let Some(c) = self.cached.get(path) {
                if c.read.size == info.size && c.read.mtime_ms == info.mtime_ms {
                    return Ok(Some((None, c.data.clone(), Some(c.read))));
                }
            }
            // Read after the parallel run, one at a time (memory: one large file).
            if info.size > guard.max_file_bytes() {
                return Err(OverCap);
            }
            Ok(index_read(guard, path, grammar))
        });
        for (n, answer) in slow.into_iter().zip(read) {
            answers[n] = match answer {
                None => None,
                Some(Ok(found)) => Some(found),
                Some(Err(OverCap)) if cancel.is_cancelled() => None,
                Some(Err(OverCap)) => Some(index_read(&large, &paths[n], grammar)),
            };
        }
        let mut out = Vec::with_capacity(paths.len());
        let mut complete = !cancel.is_cancelled();
        let mut walked = Vec::with_capacity(walk_len);
        for (n, (path, answer)) in paths.into_iter().zip(answers).enumerate() {
            if n < walk_len && !matches!(answer, Some(None)) {
                walked.push(path.clone());
            }
            let (fresh, data, on_disk) = match answer {
                Some(Some(found)) => found,
                // Refused by the guard (gone, over even the large-file cap): forgotten.
                Some(None) => {
                    self.cached.remove(&path);
                    continue;
                }
                // Not reached (cancelled): what the cache holds stays.
                None => {
                    complete = false;
                    continue;
                }
            };
            if let Some(read) = fresh {
                self.cached.insert(
                    path.clone(),
                    Cached {
                        read,
                        data: data.clone(),
                    },
                );
            }
            out.push(WorkspaceFile {
                path,
                data,
                on_disk,
            });
        }
        // A walk seen through to the end is trusted from now on.
        if complete && (!trusted || walked.len() < walk_len) {
            self.walked_set = walked.iter().cloned().collect();
            self.walked = Some(walked);
        }
        out
    }

    /// Forgets what is cached of `path` (a file changed, created or deleted): the next
    /// request reads it again, whatever its size and time. A path the last walk did not
    /// list (created) makes the next request walk the roots again; one gone is left out
    /// when the next request finds it so.
    pub fn forget(&mut self, path: &str) {
        self.generation += 1;
        self.cached.remove(path);
        let listed = self.walked.is_some() && self.walked_set.contains(path);
        if !listed {
            self.walked = None;
        }
    }

    /// How many times [`Index::clear`] was called: what a fill with a grammar of its own
    /// compares, to know whether that grammar is still the index's.
    pub fn clears(&self) -> u64 {
        self.clears
    }

    /// Forgets everything (the grammar changed): the next request reads every file.
    pub fn clear(&mut self) {
        self.generation += 1;
        self.clears += 1;
        self.cached.clear();
        self.walked = None;
    }

    /// Whether each of `paths` that is cached is unchanged on disk (same size and time
    /// through the guard); each changed or refused one is forgotten. What an answer
    /// cites is checked so, before it is sent.
    pub fn unchanged(&mut self, guard: &Guard, paths: &[&str]) -> bool {
        let mut all = true;
        for path in paths {
            let Some(c) = self.cached.get(*path) else {
                continue;
            };
            let same = guard
                .open(path)
                .is_ok_and(|o| o.info.size == c.read.size && o.info.mtime_ms == c.read.mtime_ms);
            if !same {
                self.forget(path);
                all = false;
            }
        }
        all
    }

    /// The cached data of `path` with its text read again, when its size and time are
    /// unchanged on disk.
    pub fn data_if_unchanged(&self, guard: &Guard, path: &str) -> Option<FileData> {
        let c = self.cached.get(path)?;
        let loaded = large_guard(guard).read(path).ok()?;
        c.read.is(&loaded).then(|| FileData {
            bytes: loaded.bytes.into(),
            ..c.data.clone()
        })
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

/// A file over the size cap, read after the others.
struct OverCap;

/// What the index keeps of the file at `path`, read through `guard`; `None` when the
/// guard refuses it.
type Indexed = (Option<Read>, FileData, Option<Read>);

fn index_read(guard: &Guard, path: &str, grammar: &Grammar) -> Option<Indexed> {
    let loaded = guard.read(path).ok()?;
    let read = Read::of(&loaded.bytes, loaded.info.as_ref());
    Some((
        Some(read),
        FileData::without_text(&loaded.bytes, grammar),
        Some(read),
    ))
}

/// The guard workspace files are read through: a file over the size cap is still
/// indexed and searched, up to [`crate::find::LARGE_FILE_FACTOR`] times the cap, as
/// `lisp-find` searches it (the scan is linear; the cap bounds what an answer returns,
/// and an answer of the index returns places, not text).
fn large_guard(guard: &Guard) -> Guard {
    guard.with_max_file_bytes(
        guard
            .max_file_bytes()
            .saturating_mul(crate::find::LARGE_FILE_FACTOR),
    )
}

/// Every Lisp file under the roots (absolute, walk order, each once), and the roots
/// whose walk stopped at [`crate::guard::MAX_WALKED_FILES`].
fn walk_roots(guard: &Guard) -> (Vec<String>, Vec<String>) {
    let mut paths: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut cut = Vec::new();
    for root in guard.roots() {
        let Some(root_text) = root.to_str() else {
            continue;
        };
        let Ok(Some(directory)) = guard.directory(root_text) else {
            continue;
        };
        let walk = guard.walk(&directory, &crate::view::is_lisp_path);
        if walk.stopped_at_limit {
            cut.push(root_text.to_string());
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
    (paths, cut)
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
