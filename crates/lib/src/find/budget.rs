//! The collection budget ([`super::MAX_COLLECTED`]), spent in the scope's file order so
//! that an answer cut by it is the same on every run, whatever the threads did.
//!
//! Each file counts what it collects on its own (a file stops at the budget by itself).
//! The request's answer holds the files, in order, up to the first one at which their
//! costs add up past the budget (that one included); the files after it are left out, as
//! not searched. While the files are searched in parallel, the finished files' costs give
//! a lower bound of every prefix: once the finished files up to some index already add up
//! past the budget, no file after that index can be in the answer, so it is not searched
//! and what it had found is dropped. The files up to the final cut are never cut short
//! this way, so the answer depends on the files alone. Memory: the files kept add up to at
//! most twice the budget, plus one file's budget per thread in flight.

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

thread_local! {
    /// What the file being searched on this thread has collected (`None` outside a file).
    static SPENT_IN_FILE: Cell<Option<usize>> = const { Cell::new(None) };
}

/// Runs `search` as the search of one file: returns its answer and what it collected.
pub(crate) fn in_file<R>(search: impl FnOnce() -> R) -> (R, usize) {
    let outer = SPENT_IN_FILE.replace(Some(0));
    let answer = search();
    let spent = SPENT_IN_FILE.replace(outer).unwrap_or(0);
    (answer, spent)
}

/// Takes `n` from the budget of the file being searched on this thread; `None` outside a
/// file's search (the caller then counts on the request's own total).
pub(crate) fn take_in_file(n: usize, limit: usize) -> Option<bool> {
    SPENT_IN_FILE.with(|spent| {
        let now = spent.get()?.saturating_add(n);
        spent.set(Some(now));
        Some(now <= limit)
    })
}

/// [`take_in_file`] of a form's entry and its `n - 1` uses: how many of the `n` fit in the
/// file's budget (all of them, or what was left). The whole `n` is counted, so that a
/// file cut here is past the budget for [`OrderedBudget`] too.
pub(crate) fn take_part_in_file(n: usize, limit: usize) -> Option<usize> {
    SPENT_IN_FILE.with(|spent| {
        let before = spent.get()?;
        spent.set(Some(before.saturating_add(n)));
        Some(limit.saturating_sub(before).min(n))
    })
}

/// The files' costs, by their index in the scope's order.
pub(crate) struct OrderedBudget {
    limit: usize,
    /// Finished files' costs, as a Fenwick tree (1-based): prefix sums and the first
    /// prefix past the limit in O(log n) each.
    costs: Mutex<Vec<usize>>,
    /// No file after this index is in the answer (`usize::MAX`: none cut yet).
    cut: AtomicUsize,
}

impl OrderedBudget {
    pub(crate) fn new(files: usize, limit: usize) -> OrderedBudget {
        OrderedBudget {
            limit,
            costs: Mutex::new(vec![0; files + 1]),
            cut: AtomicUsize::new(usize::MAX),
        }
    }

    /// Whether the file at `index` is past the cut known so far.
    pub(crate) fn excludes(&self, index: usize) -> bool {
        index > self.cut.load(Ordering::Relaxed)
    }

    /// Records the cost of the finished file at `index`; whether its answer is still
    /// wanted (false: drop it).
    pub(crate) fn finish(&self, index: usize, cost: usize) -> bool {
        if self.excludes(index) {
            return false;
        }
        // A poisoned lock means another worker panicked: that panic is re-raised, so the
        // cut no longer matters.
        let Ok(mut tree) = self.costs.lock() else {
            return true;
        };
        let n = tree.len() - 1;
        let mut i = index + 1;
        while i <= n {
            tree[i] = tree[i].saturating_add(cost);
            i += i & i.wrapping_neg();
        }
        if let Some(first) = first_prefix_over(&tree, self.limit) {
            self.cut.fetch_min(first, Ordering::Relaxed);
        }
        !self.excludes(index)
    }

    /// The index of the last file in the answer, once every file has finished (`None`:
    /// the budget was not spent).
    pub(crate) fn last_kept(&self) -> Option<usize> {
        let cut = self.cut.load(Ordering::Relaxed);
        (cut != usize::MAX).then_some(cut)
    }
}

/// The 0-based index of the first element at which the prefix sums of the Fenwick tree
/// `tree` exceed `limit`.
fn first_prefix_over(tree: &[usize], limit: usize) -> Option<usize> {
    let n = tree.len() - 1;
    let mut step = if n == 0 { 0 } else { 1 << n.ilog2() };
    let (mut at, mut sum) = (0, 0usize);
    while step > 0 {
        let next = at + step;
        if next <= n && sum.saturating_add(tree[next]) <= limit {
            at = next;
            sum = sum.saturating_add(tree[next]);
        }
        step >>= 1;
    }
    // `at` elements add up to at most `limit`; the next one (0-based `at`) passes it.
    (at < n).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cut_is_the_first_file_whose_prefix_passes_the_budget_in_any_finishing_order() {
        let costs = [3, 0, 4, 5, 2, 9];
        for order in [[0, 1, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0], [2, 5, 0, 3, 1, 4]] {
            let budget = OrderedBudget::new(costs.len(), 8);
            for i in order {
                if !budget.excludes(i) {
                    budget.finish(i, costs[i]);
                }
            }
            // 3 + 0 + 4 = 7, + 5 = 12 > 8: file 3 is the last one kept.
            assert_eq!(budget.last_kept(), Some(3), "{order:?}");
        }
        let budget = OrderedBudget::new(2, 8);
        budget.finish(0, 8);
        budget.finish(1, 0);
        assert_eq!(budget.last_kept(), None);
    }

    #[test]
    fn a_file_counts_what_it_takes_on_its_own_thread() {
        assert_eq!(take_in_file(1, 10), None);
        let ((a, b), spent) = in_file(|| (take_in_file(6, 10), take_in_file(6, 10)));
        assert_eq!((a, b, spent), (Some(true), Some(false), 12));
        assert_eq!(take_in_file(1, 10), None);
    }
}
