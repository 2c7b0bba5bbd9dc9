//! The scope-wide bound on what a search learns of its files' macros
//! (docs/find.md#definitions-made-by-the-projects-own-macros): [`MAX_LEARNED_NODES`]
//! value nodes over the whole scope, spent in the scope's file order so that where
//! learning stops is the same on every run and thread count.
//!
//! Each file is learned on its own, reading at most the bound (a file alone cannot pass
//! it far). The files are then taken in order while their lessons add up to at most the
//! bound; the first file that would pass it is learned again with what is left, and the
//! files after it teach nothing. While the files are learned in parallel, the finished
//! files' costs (`find::budget::OrderedBudget`) tell which files are past the bound already: those are
//! not learned, so memory stays about twice the bound plus a file's lesson per thread.

use super::budget::OrderedBudget;
use super::{ScopePart, Search};
use crate::cancel::CancelToken;
use crate::guard::{Guard, LoadedFile};
use std::sync::Mutex;

/// The most value nodes (each about a hundred bytes with what holds it; an atom's text
/// weighs a node per 64 bytes) the macros learned from one scope hold together:
/// 1,048,576, about nine times what SBCL's source tree teaches a search by name (115,487)
/// and seven times what all of Debian's Common Lisp sources teach (140,274).
pub const MAX_LEARNED_NODES: usize = 1 << 20;

/// Where learning stops in one search.
pub(crate) struct LearnCap {
    limit: usize,
    /// The costs of the files learned so far, by their index in the scope's order.
    budget: OrderedBudget,
    /// The file at which learning stopped, as shown.
    stopped: Mutex<Option<String>>,
}

impl LearnCap {
    /// The bound of a scope of `files` files.
    pub(crate) fn new(files: usize) -> LearnCap {
        LearnCap::with_limit(files, MAX_LEARNED_NODES)
    }

    pub(crate) fn with_limit(files: usize, limit: usize) -> LearnCap {
        LearnCap {
            limit,
            budget: OrderedBudget::new(files, limit),
            stopped: Mutex::new(None),
        }
    }

    /// What a file may read on its own: the whole bound.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Whether the file at `index` (scope order) is past the bound already: not learned.
    pub(crate) fn excludes(&self, index: usize) -> bool {
        self.budget.excludes(index)
    }

    /// Records what the file at `index` taught (`cost` nodes); whether to keep it.
    pub(crate) fn finish(&self, index: usize, cost: usize) -> bool {
        self.budget.finish(index, cost)
    }

    /// Notes that learning stopped at the file shown as `file`.
    pub(crate) fn stop_at(&self, file: &str) {
        if let Ok(mut stopped) = self.stopped.lock() {
            stopped.get_or_insert_with(|| file.to_string());
        }
    }

    /// The file at which learning stopped, if it did.
    pub(crate) fn stopped(&self) -> Option<String> {
        self.stopped.lock().ok().and_then(|s| s.clone())
    }
}

/// `work(index, file)` over every file of the scope, in order (`index` in the scope's
/// order, as [`LearnCap`] counts): each with its name as answers show it, `None` for a
/// file that cannot be read (its refusal is reported by the search itself).
pub(super) fn map_scope<R: Send>(
    search: &Search,
    guard: &Guard,
    parts: &[ScopePart],
    cancel: &CancelToken,
    work: impl Fn(usize, &LoadedFile) -> R + Sync,
) -> Vec<(String, Option<R>)> {
    let mut out = Vec::new();
    for part in parts {
        let first = out.len();
        match part {
            ScopePart::Single(file) => {
                out.push((
                    super::shown_file(&file.display_path),
                    Some(work(first, file)),
                ));
            }
            ScopePart::Walked(files) => {
                let sourced =
                    |i: usize, s: &crate::project::source::Sourced| work(first + i, &s.file);
                let mut answers = crate::project::source::map_indexed_from(
                    &*search.source,
                    guard,
                    files,
                    cancel,
                    sourced,
                );
                // A file over the size cap is learned as the search reads it.
                let large = |i: usize, file: &LoadedFile| work(first + i, file);
                super::search_large_files(guard, files, &mut answers, cancel, &large);
                out.extend(
                    files
                        .iter()
                        .zip(answers)
                        .map(|(f, a)| (super::shown_file(&f.display_path), a.ok())),
                );
            }
        }
    }
    out
}

/// Takes the files' lessons in order (`costs`, in value nodes) while they add up to at
/// most `limit`: the index of the first that would pass it, with what is left for it.
pub(crate) fn first_over(
    costs: impl IntoIterator<Item = usize>,
    limit: usize,
) -> Option<(usize, usize)> {
    let mut spent = 0usize;
    for (index, cost) in costs.into_iter().enumerate() {
        if spent.saturating_add(cost) > limit {
            return Some((index, limit - spent));
        }
        spent += cost;
    }
    None
}

/// Keeps the items the scope's files taught (`per_file`, in the scope's order, each
/// weighing `cost` value nodes) while they add up to at most `limit`: the first file that
/// would pass it keeps its first items within what is left, the files after it nothing.
/// The index of that file, if any.
pub(crate) fn keep_within<T>(
    per_file: &mut [Vec<T>],
    cost: impl Fn(&T) -> usize,
    limit: usize,
) -> Option<usize> {
    let costs = per_file.iter().map(|items| {
        items
            .iter()
            .map(&cost)
            .fold(0usize, |sum, c| sum.saturating_add(c))
    });
    let (cut, left) = first_over(costs, limit)?;
    let mut spent = 0usize;
    per_file[cut].retain(|item| {
        spent = spent.saturating_add(cost(item));
        spent <= left
    });
    per_file[cut + 1..].iter_mut().for_each(Vec::clear);
    Some(cut)
}

/// The note of an answer whose learning stopped at the bound, at `file`.
pub(crate) fn note(file: &str) -> String {
    format!(
        "[learning the scope's macros stopped at its bound ({MAX_LEARNED_NODES} value nodes) in {file}: definitions and calls that macros of this file and later ones make may be missing; search a smaller path]"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_file_that_would_pass_the_bound_gets_what_is_left() {
        assert_eq!(first_over([3, 4, 5, 1], 8), Some((2, 1)));
        assert_eq!(first_over([3, 4, 1], 8), None);
        assert_eq!(first_over([9], 8), Some((0, 8)));
        assert_eq!(first_over([], 8), None);
    }

    #[test]
    fn items_are_kept_in_order_up_to_the_bound() {
        let mut files = vec![vec![2, 3], vec![1, 2, 1], vec![1]];
        assert_eq!(keep_within(&mut files, |&c| c, 7), Some(1));
        assert_eq!(files, vec![vec![2, 3], vec![1], vec![]]);
        let mut files = vec![vec![2, 3], vec![1]];
        assert_eq!(keep_within(&mut files, |&c| c, 7), None);
        assert_eq!(files, vec![vec![2, 3], vec![1]]);
    }
}
