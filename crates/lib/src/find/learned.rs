//! What a search learns of each file before it searches (`find::macros::learn`: the
//! file's definer macros, the names its `defun`s spell, what its read-time forms need),
//! kept between the searches of a long-lived surface (the language server, the MCP
//! server) by the file's walked path and [`Stamp`] (device, inode, size, modification and
//! status-change times): a file written, replaced or deleted has another stamp, or none,
//! and is learned again. Files without a stamp (a walk that did not stat them, a file
//! named alone) are learned at each search, as without the cache.

use super::Search;
use crate::cancel::CancelToken;
use crate::error::ToolError;
use crate::guard::{Guard, LoadedFile, Stamp, WalkedFile};
use crate::model::expand::{read_time::Needs, Macro, Macros};
use crate::project::par_map;
use crate::project::source::Sourced;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The most files kept: past it the cache is emptied and fills again (a deleted file is
/// never asked again, so a cache that only grew would keep it).
pub const MAX_KEPT_FILES: usize = 4 * crate::guard::MAX_WALKED_FILES;

/// The most value nodes kept over all files (each a few dozen bytes; a long name or
/// string counts one node per 64 bytes): past it the cache is emptied and fills again,
/// and a file that taught more is not kept. Memory stays bounded whatever the project's
/// macros (the file cache's byte cap, `index::files::MAX_KEPT_BYTES`, is the same idea).
pub const MAX_KEPT_NODES: usize = 4 << 20;

/// What one file taught.
#[derive(Default)]
pub(crate) struct Learned {
    pub macros: Vec<(String, Arc<Macro>)>,
    /// The names its `(defun NAME` forms spell.
    pub defuns: Vec<String>,
    /// The names its `(defvar NAME` (`defparameter`, `defconstant`) forms spell.
    pub globals: Vec<String>,
    /// Whether a top-level read-time form of it defines something.
    pub read_time_defines: bool,
    /// The functions its read-time forms and `macrolet`s call.
    pub calls: HashSet<String>,
    /// The global variables its read-time forms may read, with the operator of the list
    /// each form is in.
    pub read_variables: HashSet<(String, String)>,
    /// Learning stopped in it at the scope's bound (`super::learn_cap`): not all of it.
    pub stopped: bool,
    /// Not learned: past the scope's bound (a search's own, never kept).
    pub past_cap: bool,
}

impl Learned {
    /// `names`: the names its `defun`s and its global variables' definitions spell.
    pub(crate) fn new(
        macros: Vec<(String, Macro)>,
        names: (Vec<String>, Vec<String>),
        needs: Needs,
    ) -> Learned {
        let (defuns, globals) = names;
        Learned {
            macros: macros.into_iter().map(|(n, m)| (n, Arc::new(m))).collect(),
            defuns,
            globals,
            read_time_defines: needs.defines,
            calls: needs.calls,
            read_variables: needs.variables,
            stopped: false,
            past_cap: false,
        }
    }

    /// A file past the scope's bound: it teaches nothing.
    pub(crate) fn past_cap() -> Learned {
        Learned {
            past_cap: true,
            ..Learned::default()
        }
    }

    /// This lesson with its macros, in order, as far as they add up to at most `left`
    /// value nodes: the file at which the scope's bound is reached.
    pub(crate) fn cut_to(&self, left: usize) -> Learned {
        let mut spent = 0usize;
        let macros = self
            .macros
            .iter()
            .take_while(|(_, m)| {
                spent = spent.saturating_add(m.nodes());
                spent <= left
            })
            .cloned()
            .collect();
        Learned {
            macros,
            defuns: self.defuns.clone(),
            globals: self.globals.clone(),
            read_time_defines: self.read_time_defines,
            calls: self.calls.clone(),
            read_variables: self.read_variables.clone(),
            stopped: true,
            past_cap: false,
        }
    }

    /// What keeping it costs, in value nodes: its macros' lambda lists, bodies and
    /// global values, its names.
    pub(crate) fn nodes(&self) -> usize {
        let text = |t: &str| 1 + t.len() / crate::model::expand::datum::TEXT_BYTES_PER_NODE;
        let macros: usize = self
            .macros
            .iter()
            .map(|(name, m)| text(name) + m.nodes())
            .sum();
        let names: usize = self
            .defuns
            .iter()
            .chain(&self.globals)
            .chain(&self.calls)
            .chain(self.read_variables.iter().flat_map(|(o, v)| [o, v]))
            .map(|n| text(n))
            .sum();
        macros + names
    }

    /// Adds what the file taught to a search's macros.
    pub(crate) fn teach(&self, macros: &mut Macros) {
        macros.extend_shared(&self.macros);
    }
}

/// Files learned before, by walked path: the stamp they had, what they were learned for
/// (`key`), what they taught.
#[derive(Default)]
pub struct LearnedCache {
    kept: Mutex<Kept>,
}

/// The files kept and the value nodes they hold together.
#[derive(Default)]
struct Kept {
    files: HashMap<PathBuf, Entry>,
    nodes: usize,
}

/// A file's stamp when learned, the [`key`] it was learned for, what it taught and its
/// value nodes.
type Entry = (Stamp, String, Arc<Learned>, usize);

impl LearnedCache {
    fn get(&self, path: &std::path::Path, stamp: &Stamp, key: &str) -> Option<Arc<Learned>> {
        let kept = self.kept.lock().ok()?;
        let (was, for_key, learned, _) = kept.files.get(path)?;
        (was == stamp && for_key == key).then(|| learned.clone())
    }

    fn put(&self, path: PathBuf, stamp: Stamp, key: &str, learned: Arc<Learned>) {
        let nodes = learned.nodes();
        let Ok(mut kept) = self.kept.lock() else {
            return;
        };
        if let Some((_, _, _, old)) = kept.files.remove(&path) {
            kept.nodes -= old;
        }
        if nodes > MAX_KEPT_NODES {
            return;
        }
        if kept.files.len() >= MAX_KEPT_FILES || kept.nodes + nodes > MAX_KEPT_NODES {
            kept.files.clear();
            kept.nodes = 0;
        }
        kept.nodes += nodes;
        kept.files
            .insert(path, (stamp, key.to_string(), learned, nodes));
    }

    /// Files kept now.
    pub fn len(&self) -> usize {
        self.kept.lock().map_or(0, |k| k.files.len())
    }

    /// Value nodes kept now.
    pub fn nodes(&self) -> usize {
        self.kept.lock().map_or(0, |k| k.nodes)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What a search's learning depends on besides the file's bytes: the features it reads
/// under, and whether it reads `macrolet`s (a search by pattern).
pub(crate) fn key(features: Option<&[String]>, macrolets: bool) -> String {
    let mut key = format!("{macrolets}");
    if let Some(features) = features {
        let mut names: Vec<String> = features.iter().map(|f| f.to_lowercase()).collect();
        names.sort();
        names.dedup();
        key.push('+');
        key.push_str(&names.join(" "));
    }
    key
}

/// `learn` of each of `files` (walk order; `learn` is given the file's index in it), from
/// the search's cache when it has one and the file's stamp and key are the ones it was
/// learned with; the rest read through the search's source, on the worker threads, and
/// kept.
pub(crate) fn map_files(
    search: &Search,
    guard: &Guard,
    files: &[WalkedFile],
    cancel: &CancelToken,
    learn: &(dyn Fn(usize, &LoadedFile) -> Learned + Sync),
) -> Vec<Result<Arc<Learned>, ToolError>> {
    let mut out = map_cached(search, guard, files, cancel, learn);
    // A file over the size cap is learned as the search reads it (not kept: its size).
    let large = |n, file: &LoadedFile| Arc::new(learn(n, file));
    super::search_large_files(guard, files, &mut out, cancel, &large);
    out
}

/// [`map_files`] of the files under the size cap.
fn map_cached(
    search: &Search,
    guard: &Guard,
    files: &[WalkedFile],
    cancel: &CancelToken,
    learn: &(dyn Fn(usize, &LoadedFile) -> Learned + Sync),
) -> Vec<Result<Arc<Learned>, ToolError>> {
    let Some((cache, key)) = &search.learned else {
        let work = |n, s: &Sourced| Arc::new(learn(n, &s.file));
        return crate::project::source::map_indexed_from(
            &*search.source,
            guard,
            files,
            cancel,
            work,
        );
    };
    let kept: Vec<Option<Arc<Learned>>> = files
        .iter()
        .map(|f| cache.get(f.path(), f.stamp()?, key))
        .collect();
    let missing: Vec<usize> = (0..files.len()).filter(|&n| kept[n].is_none()).collect();
    let read = par_map(&missing, cancel, |&n| {
        let file = &files[n];
        let sourced = search.source.read(guard, file)?;
        let learned = Arc::new(learn(n, &sourced.file));
        if let Some(stamp) = file.stamp() {
            // What the scope's bound cut depends on the search, not on the file alone.
            if stamp.keeps(&sourced.file) && !learned.stopped && !learned.past_cap {
                cache.put(file.path().to_path_buf(), *stamp, key, learned.clone());
            }
        }
        Ok(learned)
    });
    let mut out: Vec<Option<Result<Arc<Learned>, ToolError>>> =
        kept.into_iter().map(|k| k.map(Ok)).collect();
    for (n, answer) in missing.into_iter().zip(read) {
        out[n] = answer;
    }
    out.into_iter()
        .zip(files)
        .map(|(answer, file)| {
            answer.unwrap_or_else(|| Err(crate::project::cancelled(&file.display_path)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(ino: u64) -> Stamp {
        Stamp {
            dev: 1,
            ino,
            size: 10,
            mtime_ns: 0,
            ctime_ns: 0,
        }
    }

    /// A lesson of about `nodes` value nodes (names of 64 bytes cost two nodes each).
    fn lesson(nodes: usize) -> Arc<Learned> {
        let name = "n".repeat(64);
        Arc::new(Learned {
            defuns: vec![name; nodes / 2],
            ..Learned::default()
        })
    }

    #[test]
    fn kept_lessons_are_bounded_in_nodes_not_only_in_files() {
        let cache = LearnedCache::default();
        let half = MAX_KEPT_NODES / 2 + 2;
        cache.put("a".into(), stamp(1), "k", lesson(half));
        assert_eq!((cache.len(), cache.nodes()), (1, half));
        // A second lesson that would pass the bound empties the cache first.
        cache.put("b".into(), stamp(2), "k", lesson(half));
        assert_eq!((cache.len(), cache.nodes()), (1, half));
        assert!(cache.get("a".as_ref(), &stamp(1), "k").is_none());
        assert!(cache.get("b".as_ref(), &stamp(2), "k").is_some());
        // Learned again, a file replaces its lesson and its count.
        cache.put("b".into(), stamp(3), "k", lesson(4));
        assert_eq!((cache.len(), cache.nodes()), (1, 4));
        // A lesson over the bound alone is not kept at all.
        cache.put("c".into(), stamp(4), "k", lesson(MAX_KEPT_NODES + 2));
        assert!(cache.get("c".as_ref(), &stamp(4), "k").is_none());
        assert_eq!(cache.nodes(), 4);
    }
}
