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

/// What one file taught.
#[derive(Default)]
pub(crate) struct Learned {
    pub macros: Vec<(String, Arc<Macro>)>,
    /// The names its `(defun NAME` forms spell.
    pub defuns: Vec<String>,
    /// Whether a top-level read-time form of it defines something.
    pub read_time_defines: bool,
    /// The functions its read-time forms and `macrolet`s call.
    pub calls: HashSet<String>,
}

impl Learned {
    pub(crate) fn new(macros: Vec<(String, Macro)>, defuns: Vec<String>, needs: Needs) -> Learned {
        Learned {
            macros: macros.into_iter().map(|(n, m)| (n, Arc::new(m))).collect(),
            defuns,
            read_time_defines: needs.defines,
            calls: needs.calls,
        }
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
    kept: Mutex<HashMap<PathBuf, Entry>>,
}

/// A file's stamp when learned, the [`key`] it was learned for, what it taught.
type Entry = (Stamp, String, Arc<Learned>);

impl LearnedCache {
    fn get(&self, path: &std::path::Path, stamp: &Stamp, key: &str) -> Option<Arc<Learned>> {
        let kept = self.kept.lock().ok()?;
        let (was, for_key, learned) = kept.get(path)?;
        (was == stamp && for_key == key).then(|| learned.clone())
    }

    fn put(&self, path: PathBuf, stamp: Stamp, key: &str, learned: Arc<Learned>) {
        let Ok(mut kept) = self.kept.lock() else {
            return;
        };
        if kept.len() >= MAX_KEPT_FILES && !kept.contains_key(&path) {
            kept.clear();
        }
        kept.insert(path, (stamp, key.to_string(), learned));
    }

    /// Files kept now.
    pub fn len(&self) -> usize {
        self.kept.lock().map_or(0, |k| k.len())
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

/// `learn` of each of `files` (walk order), from the search's cache when it has one and
/// the file's stamp and key are the ones it was learned with; the rest read through the
/// search's source, on the worker threads, and kept.
pub(crate) fn map_files(
    search: &Search,
    guard: &Guard,
    files: &[WalkedFile],
    cancel: &CancelToken,
    learn: &(dyn Fn(&LoadedFile) -> Learned + Sync),
) -> Vec<Result<Arc<Learned>, ToolError>> {
    let Some((cache, key)) = &search.learned else {
        let work = |s: &Sourced| Arc::new(learn(&s.file));
        return crate::project::source::map_files_from(&*search.source, guard, files, cancel, work);
    };
    let kept: Vec<Option<Arc<Learned>>> = files
        .iter()
        .map(|f| cache.get(f.path(), f.stamp()?, key))
        .collect();
    let missing: Vec<usize> = (0..files.len()).filter(|&n| kept[n].is_none()).collect();
    let read = par_map(&missing, cancel, |&n| {
        let file = &files[n];
        let sourced = search.source.read(guard, file)?;
        let learned = Arc::new(learn(&sourced.file));
        if let Some(stamp) = file.stamp() {
            if stamp.keeps(&sourced.file) {
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
