//! A cancellation token a long computation can poll: the MCP server sets it when the
//! client cancels a request (or goes away), and code that loops over a file's bytes or
//! lines can check [`CancelToken::is_cancelled`] now and then and stop early.
//!
//! Setting it is one atomic store; polling is one relaxed load, cheap enough to do once
//! per line or per few kilobytes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Shared flag: clones see the same state; once cancelled it stays cancelled.
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    pub fn new() -> CancelToken {
        CancelToken::default()
    }

    /// Asks every holder of a clone to stop.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_flag() {
        let token = CancelToken::new();
        let seen_by_worker = token.clone();
        assert!(!seen_by_worker.is_cancelled());
        token.cancel();
        assert!(seen_by_worker.is_cancelled() && token.is_cancelled());
    }
}
