//! The requests held while every slot is taken, in arrival order, and their cancellation
//! by id. A cancelled request is marked where it is and skipped when it reaches the front;
//! it is found through a map of the held ids, not by a scan of the queue (a client may
//! hold thousands of requests and send thousands of cancellations). The marks are swept
//! once they outnumber the live requests, so the queue stays within twice its live size.

use serde_json::Value;
use std::collections::{HashMap, VecDeque};

/// Marks fewer than this are never swept (a sweep reads the whole queue).
const MIN_SWEPT: usize = 64;

#[derive(Default)]
pub(super) struct Held {
    /// The requests and their line lengths; `None` for one cancelled.
    entries: VecDeque<Option<(Value, usize)>>,
    /// The sequence number of the front entry (each entry's is its place plus this).
    first: u64,
    /// Each held id (its JSON text), with the sequence numbers of the requests holding it.
    by_id: HashMap<String, VecDeque<u64>>,
    live: usize,
}

/// The key of a request's id: its JSON text (`1` and `"1"` are different ids).
fn key(id: &Value) -> String {
    id.to_string()
}

impl Held {
    pub(super) fn is_empty(&self) -> bool {
        self.live == 0
    }

    pub(super) fn push_back(&mut self, value: Value, bytes: usize) {
        let sequence = self.first + self.entries.len() as u64;
        if let Some(id) = value.get("id") {
            self.by_id.entry(key(id)).or_default().push_back(sequence);
        }
        self.entries.push_back(Some((value, bytes)));
        self.live += 1;
    }

    /// The first request not cancelled, with its line length.
    pub(super) fn pop_front(&mut self) -> Option<(Value, usize)> {
        while let Some(entry) = self.entries.pop_front() {
            self.first += 1;
            let Some((value, bytes)) = entry else {
                continue;
            };
            if let Some(id) = value.get("id") {
                self.forget(&key(id));
            }
            self.live -= 1;
            return Some((value, bytes));
        }
        None
    }

    /// Cancels the first held request with id `id`: its line length, or `None` when none
    /// is held.
    pub(super) fn cancel(&mut self, id: &Value) -> Option<usize> {
        let k = key(id);
        let sequence = self.forget(&k)?;
        let place = usize::try_from(sequence - self.first).ok()?;
        let (_, bytes) = self.entries.get_mut(place)?.take()?;
        self.live -= 1;
        if self.entries.len() - self.live > MIN_SWEPT.max(self.live) {
            self.sweep();
        }
        Some(bytes)
    }

    /// Drops the oldest sequence number of the id `k`: the request at the front of those
    /// holding it.
    fn forget(&mut self, k: &str) -> Option<u64> {
        let sequences = self.by_id.get_mut(k)?;
        let sequence = sequences.pop_front();
        if sequences.is_empty() {
            self.by_id.remove(k);
        }
        sequence
    }

    /// Removes the marks of cancelled requests, numbering the rest again.
    fn sweep(&mut self) {
        let live: Vec<(Value, usize)> = self.entries.drain(..).flatten().collect();
        self.first = 0;
        self.by_id.clear();
        self.live = 0;
        for (value, bytes) in live {
            self.push_back(value, bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Held;
    use serde_json::{json, Value};

    fn request(id: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call"})
    }

    fn ids(held: &mut Held) -> Vec<Value> {
        std::iter::from_fn(|| held.pop_front())
            .map(|(v, _)| v["id"].clone())
            .collect()
    }

    #[test]
    fn cancelled_requests_leave_the_queue_and_the_rest_keep_their_order() {
        let mut held = Held::default();
        for (i, id) in [json!(1), json!("1"), json!(2), json!(1), json!(3)]
            .into_iter()
            .enumerate()
        {
            held.push_back(request(id), 10 + i);
        }
        assert_eq!(held.cancel(&json!(1)), Some(10), "the first holding id 1");
        assert_eq!(held.cancel(&json!(7)), None);
        assert_eq!(held.cancel(&json!(2)), Some(12));
        assert!(!held.is_empty());
        assert_eq!(ids(&mut held), vec![json!("1"), json!(1), json!(3)]);
        assert!(held.is_empty());
        assert_eq!(held.cancel(&json!(3)), None, "popped: no longer held");
    }

    #[test]
    fn marks_are_swept_and_the_queue_keeps_working() {
        let mut held = Held::default();
        for i in 0..1000 {
            held.push_back(request(json!(i)), 1);
        }
        for i in (0..1000).filter(|i| i % 10 != 0) {
            assert_eq!(held.cancel(&json!(i)), Some(1));
        }
        assert!(held.entries.len() <= 2 * 100 + super::MIN_SWEPT);
        held.push_back(request(json!("late")), 1);
        let mut expected: Vec<Value> = (0..1000).step_by(10).map(|i| json!(i)).collect();
        expected.push(json!("late"));
        assert_eq!(held.cancel(&json!(999)), None);
        assert_eq!(ids(&mut held), expected);
    }
}
