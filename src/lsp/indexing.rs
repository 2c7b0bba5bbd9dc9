//! Keeping the index true and full: after `initialized`, the files of the roots are read
//! in the background (with `$/progress` work-done reports when the client takes them),
//! the client is asked to watch Lisp files (when it can register that dynamically), and
//! `workspace/didChangeWatchedFiles` makes the index forget what changed. Then a thread
//! re-checks every file by size and time at a bounded rate
//! ([`lisp_read_file::index::recheck`]), for the changes no client reports.

use super::convert::path_of;
use super::Server;
use lisp_read_file::cancel::CancelToken;
use lsp_server::{Notification, Request, RequestId, Response};
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// The id of the server's `window/workDoneProgress/create` request, and the token.
const PROGRESS_ID: &str = "lisp-read-file/index-progress";
/// The id of the server's `client/registerCapability` request.
const WATCH_ID: &str = "lisp-read-file/watch-files";
/// How long the background fill waits for the client to accept the progress token.
const PROGRESS_WAIT: Duration = Duration::from_secs(5);

/// Whether the client answered the progress token's creation (`Some(true)`: accepted).
pub(super) type Created = Arc<(Mutex<Option<bool>>, Condvar)>;

/// On `initialized`: the watcher's registration and the background fill.
pub(super) fn initialized(server: &mut Server) {
    let caps = &server.client;
    let dynamic_watch = caps
        .workspace
        .as_ref()
        .and_then(|w| w.did_change_watched_files.as_ref())
        .and_then(|w| w.dynamic_registration)
        .unwrap_or(false);
    if dynamic_watch {
        server.out.send(Request::new(
            RequestId::from(WATCH_ID.to_string()),
            "client/registerCapability".into(),
            json!({"registrations": [{
                "id": WATCH_ID,
                "method": "workspace/didChangeWatchedFiles",
                "registerOptions": {"watchers": [
                    {"globPattern": "**/*.{lisp,lsp,cl,asd,ros}"},
                    {"globPattern": "**/.lisp-read-file.lisp"},
                ]},
            }]}),
        ));
    }
    let progress = caps
        .window
        .as_ref()
        .and_then(|w| w.work_done_progress)
        .unwrap_or(false);
    let created: Created = Arc::default();
    if progress {
        server.out.send(Request::new(
            RequestId::from(PROGRESS_ID.to_string()),
            "window/workDoneProgress/create".into(),
            json!({"token": PROGRESS_ID}),
        ));
        server.progress_created = Some(created.clone());
    }
    let (index, guard, grammar, out) = (
        server.index.clone(),
        server.guard.clone(),
        server.grammar.clone(),
        server.out.clone(),
    );
    // The grammar given to the fill is the index's until a definer table changes (which
    // clears the index): a fill that starts after that must not cache files read with it.
    let clears = index.lock().map_or(0, |i| i.clears());
    std::thread::spawn(move || {
        let accepted = progress && wait_accepted(&created);
        let reporter = Reporter {
            out,
            state: Mutex::new(None),
            on: accepted,
        };
        {
            let Ok(mut cache) = index.lock() else { return };
            // A definer table changed since the fill was asked (the index was cleared):
            // the next request reads every file with the new grammar instead.
            let files = if cache.clears() == clears {
                cache
                    .files_reporting(
                        &guard,
                        &grammar,
                        &HashMap::new(),
                        &CancelToken::new(),
                        &|done, total| reporter.report(done, total),
                    )
                    .len()
            } else {
                0
            };
            reporter.end(files);
        }
        lisp_read_file::index::recheck::recheck_forever(&index, &guard);
    });
}

/// Waits (a bounded time) for the client's answer to the token's creation.
fn wait_accepted(created: &Created) -> bool {
    let (answer, changed) = &**created;
    let Ok(guard) = answer.lock() else {
        return false;
    };
    let Ok((guard, _)) = changed.wait_timeout_while(guard, PROGRESS_WAIT, |a| a.is_none()) else {
        return false;
    };
    *guard == Some(true)
}

/// A response from the client to one of the server's requests.
pub(super) fn response(server: &mut Server, response: Response) {
    if response.id == RequestId::from(PROGRESS_ID.to_string()) {
        if let Some(created) = server.progress_created.take() {
            let (answer, changed) = &*created;
            if let Ok(mut answer) = answer.lock() {
                *answer = Some(response.response_result.is_ok());
            }
            changed.notify_all();
        }
    }
}

/// The work-done reports of one fill: `begin`, a `report` each 5 percent, `end`.
struct Reporter {
    out: super::transport::Output,
    /// The last percentage reported, once begun.
    state: Mutex<Option<u32>>,
    on: bool,
}

impl Reporter {
    fn send(&self, value: serde_json::Value) {
        self.out.send(Notification::new(
            "$/progress".into(),
            json!({"token": PROGRESS_ID, "value": value}),
        ));
    }

    fn report(&self, done: usize, total: usize) {
        if !self.on {
            return;
        }
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        let percent = (done * 100 / total.max(1)) as u32;
        match *state {
            None => {
                self.send(json!({"kind": "begin", "title": "Indexing Lisp files",
                                 "cancellable": false, "percentage": percent,
                                 "message": format!("{done}/{total} files")}));
                *state = Some(percent);
            }
            Some(last) if percent >= last + 5 => {
                self.send(json!({"kind": "report", "percentage": percent,
                                 "message": format!("{done}/{total} files")}));
                *state = Some(percent);
            }
            Some(_) => {}
        }
    }

    fn end(&self, files: usize) {
        if !self.on {
            return;
        }
        if let Ok(state) = self.state.lock() {
            if state.is_none() {
                self.send(json!({"kind": "begin", "title": "Indexing Lisp files",
                                 "cancellable": false, "percentage": 100}));
            }
        }
        self.send(json!({"kind": "end", "message": format!("{files} Lisp files indexed")}));
    }
}

/// `workspace/didChangeWatchedFiles`: each file named is read again at the next request
/// (created, changed or deleted alike); a definer table changed is read again, and every
/// file with it.
pub(super) fn watched(
    server: &mut Server,
    params: lsp_types::DidChangeWatchedFilesParams,
) -> Result<(), String> {
    let mut definers = false;
    {
        let Ok(mut index) = server.index.lock() else {
            return Err("the index is unusable after an internal error; restart the server".into());
        };
        for change in &params.changes {
            if let Some(path) = path_of(&change.uri) {
                definers |= path.ends_with("/.lisp-read-file.lisp");
                index.forget(&path);
            }
        }
    }
    if definers {
        return reload_definers(server);
    }
    Ok(())
}

/// The grammar made again from the definer tables; the index and the open buffers read
/// with it. A table that cannot be read leaves the grammar as it was, and says why.
fn reload_definers(server: &mut Server) -> Result<(), String> {
    let (grammar, warnings) = lisp_read_file::definers::project_grammar(
        &server.guard,
        server.definers.as_deref(),
        server.max_file_bytes,
    )
    .map_err(|e| format!("the definer table was not reloaded: {e}"))?;
    server.grammar = grammar;
    if let Ok(mut index) = server.index.lock() {
        index.clear();
    }
    server.documents.reread(&server.grammar);
    match warnings.is_empty() {
        true => Ok(()),
        false => Err(warnings.join("; ")),
    }
}
