//! What lets `$/cancelRequest` reach a request while it computes: the reader thread sees
//! each message as it is read, before the main loop takes it, and sets the token of the
//! request named (the one being answered, or one still queued, which is then answered
//! `RequestCancelled` without being computed). The queue between the two threads is
//! bounded by bytes ([`Queue`]): small messages (a cancellation, a keystroke's
//! `didChange`) pass a long computation; a large one waits until the queue is empty.

use lisp_read_file::cancel::CancelToken;
use lsp_server::{Message, RequestId};
use std::collections::HashSet;
use std::sync::{Condvar, Mutex};

/// Bytes of messages read ahead of the main loop at most (one message of any size when
/// the queue is empty).
pub(super) const QUEUE_BYTES: usize = 1024 * 1024;

#[derive(Default)]
struct State {
    /// The request being answered and its token.
    running: Option<(RequestId, CancelToken)>,
    /// Requests read and not yet taken by the main loop.
    queued: HashSet<RequestId>,
    /// Queued requests cancelled before they started.
    cancelled: HashSet<RequestId>,
}

/// The requests in flight, shared by the reader thread and the main loop.
#[derive(Default)]
pub(super) struct Inflight(Mutex<State>);

impl Inflight {
    /// The reader thread's look at each message it read.
    pub(super) fn read(&self, message: &Message) {
        let Ok(mut state) = self.0.lock() else { return };
        match message {
            Message::Request(r) => {
                state.queued.insert(r.id.clone());
            }
            Message::Notification(n) if n.method == "$/cancelRequest" => {
                let Some(id) = n.params.get("id").and_then(request_id) else {
                    return;
                };
                if let Some((running, token)) = &state.running {
                    if *running == id {
                        token.cancel();
                        return;
                    }
                }
                if state.queued.contains(&id) {
                    state.cancelled.insert(id);
                }
            }
            _ => {}
        }
    }

    /// The main loop starts `id`: its token, or `None` when it was cancelled already.
    pub(super) fn start(&self, id: &RequestId) -> Option<CancelToken> {
        let mut state = self.0.lock().ok()?;
        state.queued.remove(id);
        if state.cancelled.remove(id) {
            return None;
        }
        let token = CancelToken::new();
        state.running = Some((id.clone(), token.clone()));
        Some(token)
    }

    /// The main loop has answered the running request.
    pub(super) fn finish(&self) {
        if let Ok(mut state) = self.0.lock() {
            state.running = None;
        }
    }
}

fn request_id(value: &serde_json::Value) -> Option<RequestId> {
    match value {
        serde_json::Value::Number(n) => n
            .as_i64()
            .and_then(|n| i32::try_from(n).ok())
            .map(RequestId::from),
        serde_json::Value::String(s) => Some(RequestId::from(s.clone())),
        _ => None,
    }
}

/// Bytes queued between the reader thread and the main loop.
#[derive(Default)]
pub(super) struct Queue {
    bytes: Mutex<usize>,
    taken: Condvar,
}

impl Queue {
    /// Waits until a message of `n` bytes may be read: the queue is empty, or it fits
    /// under [`QUEUE_BYTES`] with what is queued.
    pub(super) fn reserve(&self, n: usize) {
        let Ok(mut queued) = self.bytes.lock() else {
            return;
        };
        while *queued > 0 && *queued + n > QUEUE_BYTES {
            queued = match self.taken.wait(queued) {
                Ok(q) => q,
                Err(_) => return,
            };
        }
        *queued += n;
    }

    /// The main loop took a message of `n` bytes.
    pub(super) fn release(&self, n: usize) {
        if let Ok(mut queued) = self.bytes.lock() {
            *queued = queued.saturating_sub(n);
        }
        self.taken.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_server::{Notification, Request};

    fn cancel(id: i32) -> Message {
        Message::Notification(Notification::new(
            "$/cancelRequest".into(),
            serde_json::json!({"id": id}),
        ))
    }

    #[test]
    fn a_cancellation_reaches_the_running_request_or_a_queued_one() {
        let inflight = Inflight::default();
        let request = |id: i32| Message::Request(Request::new(id.into(), "x".into(), ()));
        inflight.read(&request(1));
        inflight.read(&request(2));
        let running = inflight.start(&1.into()).expect("not cancelled");
        inflight.read(&cancel(2));
        inflight.read(&cancel(9)); // Never read: ignored.
        assert!(!running.is_cancelled());
        inflight.read(&cancel(1));
        assert!(running.is_cancelled());
        inflight.finish();
        assert!(inflight.start(&2.into()).is_none());
    }

    #[test]
    fn the_queue_takes_small_messages_and_one_large_one_alone() {
        let queue = std::sync::Arc::new(Queue::default());
        queue.reserve(10);
        queue.reserve(QUEUE_BYTES - 10);
        let waiting = queue.clone();
        let large = std::thread::spawn(move || waiting.reserve(5 * QUEUE_BYTES));
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(
            !large.is_finished(),
            "a large message waits for an empty queue"
        );
        queue.release(10);
        queue.release(QUEUE_BYTES - 10);
        large.join().unwrap();
    }
}
