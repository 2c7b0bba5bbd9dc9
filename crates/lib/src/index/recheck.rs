//! The background re-check that keeps the cache true when nobody says what changed (a
//! client that does not watch files, a change made by another program): the roots are
//! walked again and every file's size and time compared with what is cached, outside
//! the index's lock, so that requests meanwhile are answered from the cache. What
//! changed is only forgotten here; the next request reads it (with the grammar of the
//! moment).

use super::Index;
use crate::cancel::CancelToken;
use crate::guard::Guard;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The shortest pause between two re-checks.
pub const MIN_PAUSE: Duration = Duration::from_secs(2);
/// A re-check takes at most this share of one core: the pause after one is at least
/// this many times as long as it took.
pub const PAUSE_PER_WORK: u32 = 20;

/// What one re-check found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// Files cached whose size or time changed, or that are gone or refused now.
    pub changed: usize,
    /// Files walked now that the last walk did not list.
    pub added: usize,
}

/// Walks the roots and checks each cached file by size and time through the guard;
/// forgets what changed and takes the new walk. Nothing is done when the index has no
/// trusted walk yet (the next request makes one), or when it forgot something while
/// the re-check ran (the next re-check sees it).
pub fn recheck(index: &Mutex<Index>, guard: &Guard, cancel: &CancelToken) -> Found {
    let (known, listed, generation) = {
        let Ok(index) = index.lock() else {
            return Found::default();
        };
        let Some(walked) = &index.walked else {
            return Found::default();
        };
        let known: HashMap<String, (u64, u64)> = index
            .cached
            .iter()
            .map(|(path, c)| (path.clone(), (c.read.size, c.read.mtime_ms)))
            .collect();
        let listed: std::collections::HashSet<String> = walked.iter().cloned().collect();
        (known, listed, index.generation)
    };
    let (paths, cut) = super::walk_roots(guard);
    let now = crate::project::par_map(&paths, cancel, |path| {
        let info = guard.open(path).ok()?.info;
        Some((info.size, info.mtime_ms))
    });
    if cancel.is_cancelled() {
        return Found::default();
    }
    let mut found = Found::default();
    let mut stale = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (path, info) in paths.iter().zip(&now) {
        seen.insert(path.as_str());
        match (known.get(path), info) {
            (Some(was), Some(Some(is))) if was == is => {}
            (Some(_), _) => stale.push(path.clone()),
            (None, _) => {}
        }
        found.added += usize::from(!listed.contains(path));
    }
    stale.extend(known.keys().filter(|p| !seen.contains(p.as_str())).cloned());
    found.changed = stale.len();
    let Ok(mut index) = index.lock() else {
        return Found::default();
    };
    if index.generation != generation || index.walked.is_none() {
        return Found::default();
    }
    if found.changed == 0 && found.added == 0 && paths.len() == listed.len() && index.cut == cut {
        return found;
    }
    for path in &stale {
        index.cached.remove(path);
    }
    index.generation += 1;
    index.walked = Some(paths);
    index.cut = cut;
    found
}

/// Re-checks `index` for as long as the process lives: at least [`MIN_PAUSE`] apart, and
/// at most one [`PAUSE_PER_WORK`]th of one core's time.
pub fn recheck_forever(index: &Mutex<Index>, guard: &Guard) -> ! {
    let mut pause = MIN_PAUSE;
    loop {
        std::thread::sleep(pause);
        let start = Instant::now();
        recheck(index, guard, &CancelToken::new());
        pause = MIN_PAUSE.max(start.elapsed() * PAUSE_PER_WORK);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::Grammar;
    use std::fs;

    fn names(index: &Mutex<Index>, guard: &Guard) -> Vec<String> {
        let files = index.lock().unwrap().files(
            guard,
            &Grammar::builtin(),
            &HashMap::new(),
            &CancelToken::new(),
        );
        let mut names: Vec<String> = files
            .iter()
            .flat_map(|f| f.symbols().iter().map(|s| s.name().to_string()))
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_recheck_sees_files_changed_created_and_deleted() {
        let dir = std::env::temp_dir().join(format!("lrf-recheck-unit-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("a.lisp"), "(defun alpha ())").unwrap();
        fs::write(dir.join("b.lisp"), "(defun beta ())").unwrap();
        let guard = Guard::confined(std::slice::from_ref(&dir), 1 << 20).unwrap();
        let index = Mutex::new(Index::default());
        assert_eq!(names(&index, &guard), ["alpha", "beta"]);
        // Trusted now: a change nobody reports is not seen by a request...
        fs::write(dir.join("a.lisp"), "(defun gamma (x))").unwrap();
        fs::write(dir.join("c.lisp"), "(defun delta ())").unwrap();
        fs::remove_file(dir.join("b.lisp")).unwrap();
        assert_eq!(names(&index, &guard), ["alpha", "beta"]);
        // ...until a re-check.
        let found = recheck(&index, &guard, &CancelToken::new());
        assert_eq!(
            found,
            Found {
                changed: 2,
                added: 1
            }
        );
        assert_eq!(names(&index, &guard), ["delta", "gamma"]);
        assert_eq!(
            recheck(&index, &guard, &CancelToken::new()),
            Found::default()
        );
        let _ = fs::remove_dir_all(&dir);
    }
}
