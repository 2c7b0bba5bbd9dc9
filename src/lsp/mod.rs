//! `lisp-read-file lsp`: a Language Server Protocol server over stdio (docs/lsp.md).
//!
//! One thread reads framed messages ([`transport`]); the main loop answers them in order,
//! synchronously. Open buffers are kept whole (incremental changes applied), and take the
//! place of their files everywhere: definitions, references and symbols of other files
//! see unsaved text. The workspace folders (else `rootUri`, else the working directory)
//! are the guard's roots: a file outside them is never read from disk. Every answer comes
//! from the library (`lisp_read_file::index`, the reader's scan and outline).

mod calls;
mod convert;
mod documents;
mod indexing;
mod inflight;
mod links;
mod lookup;
mod macro_made;
mod requests;
mod transport;

use documents::Documents;
use inflight::Inflight;
use lisp_read_file::cancel::CancelToken;
use lisp_read_file::features::Features;
use lisp_read_file::grammar::Grammar;
use lisp_read_file::guard::Guard;
use lisp_read_file::index::{Index, WorkspaceFile};
use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::InitializeParams;
use std::path::PathBuf;
use transport::{Incoming, Output};

/// What the command line gives the server.
pub(crate) struct Options {
    /// `--root`: overrides the client's workspace folders.
    pub roots: Vec<PathBuf>,
    pub max_file_bytes: u64,
    pub definers: Option<String>,
}

/// The session's state after `initialize`.
pub(crate) struct Server {
    out: Output,
    guard: Guard,
    grammar: Grammar,
    /// Shared with the background fill started at `initialized`.
    index: std::sync::Arc<std::sync::Mutex<Index>>,
    documents: Documents,
    max_file_bytes: u64,
    /// `--definers`: read again with the root's tables when one changes.
    definers: Option<String>,
    /// The `features` initialization option: `#+`/`#-` branches they exclude are left out
    /// of definitions, references and symbols (`None`: every branch).
    features: Option<Features>,
    /// The same, as given (for the find library's requests).
    features_given: Option<Vec<String>>,
    /// Set when the request being answered is cancelled.
    cancel: CancelToken,
    /// What the client said it can do (`initialize`).
    client: lsp_types::ClientCapabilities,
    /// Waiting for the client's answer to the progress token's creation.
    progress_created: Option<indexing::Created>,
    /// The walk's cut (too many files) was said.
    cut_said: bool,
    /// Files whose text, read again for an answer, was not the one the index read
    /// ([`Server::text`]): the answer is made again with them read anew.
    changed: std::sync::Mutex<Vec<String>>,
    /// What each file taught the searches of macro-made definitions (its macros), kept
    /// while it is unchanged ([`macro_made`]).
    learned: std::sync::Arc<lisp_read_file::find::learned::LearnedCache>,
}

/// Serves until `exit` or the end of input.
///
/// # Errors
/// A message when the framing is broken or stdin cannot be read.
pub(crate) fn serve_stdio(options: Options) -> Result<(), String> {
    // A bad `--root` is said at once, not only in the answer to `initialize`.
    if !options.roots.is_empty() {
        Guard::confined(&options.roots, options.max_file_bytes)
            .map_err(|e| format!("lisp-read-file lsp: {e}"))?;
    }
    // The reader reads ahead of the main loop, at most `inflight::QUEUE_BYTES` (or one
    // message of any size), and sees each `$/cancelRequest` as soon as it is read.
    let (sender, receiver) = std::sync::mpsc::channel::<std::io::Result<(Incoming, usize)>>();
    let inflight = std::sync::Arc::new(Inflight::default());
    let queue = std::sync::Arc::new(inflight::Queue::default());
    let (reader_inflight, reader_queue) = (inflight.clone(), queue.clone());
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut input = stdin.lock();
        loop {
            let message = transport::read(&mut input, &|n| reader_queue.reserve(n));
            let stop = !matches!(message, Ok(Some(_)));
            let message = match message {
                Ok(Some(m)) => Ok(m),
                Ok(None) => break,
                Err(e) => Err(e),
            };
            if let Ok((Incoming::Message(m), _)) = &message {
                reader_inflight.read(m);
            }
            if sender.send(message).is_err() || stop {
                break;
            }
        }
    });
    let out = Output::stdout();
    let mut server: Option<Server> = None;
    let mut shutting_down = false;
    for incoming in receiver {
        let incoming = incoming.map(|(incoming, length)| {
            queue.release(length);
            incoming
        });
        let message = match incoming {
            Ok(Incoming::Message(m)) => m,
            Ok(Incoming::Malformed(why)) => {
                let error = serde_json::json!({
                    "id": null,
                    "error": {"code": ErrorCode::ParseError as i32, "message": format!("not a JSON-RPC message: {why}")}
                });
                out.raw(&error.to_string());
                continue;
            }
            Ok(Incoming::InvalidId(method)) => {
                let error = serde_json::json!({
                    "id": null,
                    "error": {"code": ErrorCode::InvalidRequest as i32, "message": format!("{method}: the id is not one integer or string")}
                });
                out.raw(&error.to_string());
                continue;
            }
            Ok(Incoming::TooManyValues(id)) => {
                let message = format!(
                    "the message holds more than {} JSON values, over the limit; it was not read \
                     (send fewer positions or changes per message)",
                    transport::MAX_MESSAGE_VALUES
                );
                let error = serde_json::json!({
                    "id": id,
                    "error": {"code": ErrorCode::InvalidRequest as i32, "message": message}
                });
                out.raw(&error.to_string());
                continue;
            }
            Err(e) => return Err(format!("lisp-read-file lsp: {e}")),
        };
        match message {
            Message::Request(request) => {
                let reply: Reply = if request.method == "initialize" {
                    match &server {
                        Some(_) => error(
                            &request.id,
                            ErrorCode::InvalidRequest,
                            "initialize was already received",
                        )
                        .into(),
                        None => match initialize(&options, &out, request) {
                            Ok((s, reply)) => {
                                server = Some(s);
                                reply.into()
                            }
                            Err(reply) => reply.into(),
                        },
                    }
                } else if request.method == "shutdown" {
                    shutting_down = true;
                    Response::new_ok(request.id.clone(), ()).into()
                } else if shutting_down {
                    error(
                        &request.id,
                        ErrorCode::InvalidRequest,
                        "the server is shutting down",
                    )
                    .into()
                } else {
                    match server.as_mut() {
                        None => error(
                            &request.id,
                            ErrorCode::ServerNotInitialized,
                            "send initialize first",
                        )
                        .into(),
                        Some(server) => server.cancellable(&inflight, request),
                    }
                };
                out.reply(reply);
            }
            Message::Notification(n) if n.method == "exit" => {
                return if shutting_down {
                    Ok(())
                } else {
                    Err("exit before shutdown".into())
                };
            }
            Message::Notification(n) => {
                if let Some(server) = server.as_mut() {
                    server.notification(n);
                }
            }
            Message::Response(r) => {
                if let Some(server) = server.as_mut() {
                    indexing::response(server, r);
                }
            }
        }
    }
    Ok(())
}

/// A request's answer: a response, or a successful one's JSON text (`{"id":..,"result":..}`
/// without `jsonrpc`, [`Output::raw`] adds it).
pub(crate) enum Reply {
    Response(Response),
    Text(String),
}

impl Reply {
    /// The successful answer to `id` whose result is the JSON text `result`.
    fn text(id: &RequestId, result: &str) -> Reply {
        let id = serde_json::to_string(id).unwrap_or_else(|_| "null".into());
        Reply::Text(format!("{{\"id\":{id},\"result\":{result}}}"))
    }
}

impl From<Response> for Reply {
    fn from(response: Response) -> Reply {
        Reply::Response(response)
    }
}

fn cancelled(id: &RequestId) -> Response {
    error(
        id,
        ErrorCode::RequestCanceled,
        "the request was cancelled ($/cancelRequest); nothing was answered",
    )
}

pub(crate) fn error(id: &RequestId, code: ErrorCode, message: &str) -> Response {
    Response::new_err(id.clone(), code as i32, message.to_string())
}

/// The roots, guard and grammar from `initialize`, and the capabilities.
fn initialize(
    options: &Options,
    out: &Output,
    request: Request,
) -> Result<(Server, Response), Response> {
    let params: InitializeParams = serde_json::from_value(request.params).map_err(|e| {
        error(
            &request.id,
            ErrorCode::InvalidParams,
            &format!("initialize: {e}"),
        )
    })?;
    let roots = if options.roots.is_empty() {
        client_roots(&params)
    } else {
        options.roots.clone()
    };
    let roots = if roots.is_empty() {
        vec![std::env::current_dir()
            .map_err(|e| error(&request.id, ErrorCode::InternalError, &e.to_string()))?]
    } else {
        roots
    };
    let guard = Guard::confined(&roots, options.max_file_bytes)
        .map_err(|e| error(&request.id, ErrorCode::InvalidParams, &e.to_string()))?;
    let (grammar, warnings) = lisp_read_file::definers::project_grammar(
        &guard,
        options.definers.as_deref(),
        options.max_file_bytes,
    )
    .map_err(|e| error(&request.id, ErrorCode::InvalidParams, &e.to_string()))?;
    for warning in warnings {
        eprintln!("lisp-read-file lsp: warning: {warning}");
    }
    let features_given = features_option(params.initialization_options.as_ref())
        .map_err(|e| error(&request.id, ErrorCode::InvalidParams, &e))?;
    let result = serde_json::json!({
        "capabilities": requests::capabilities(),
        "serverInfo": {"name": "lisp-read-file", "version": env!("CARGO_PKG_VERSION")},
    });
    let server = Server {
        out: out.clone(),
        guard,
        grammar,
        index: Default::default(),
        documents: Documents::default(),
        max_file_bytes: options.max_file_bytes,
        definers: options.definers.clone(),
        features: features_given.as_ref().map(Features::new),
        features_given,
        cancel: CancelToken::new(),
        client: params.capabilities.clone(),
        progress_created: None,
        cut_said: false,
        changed: Default::default(),
        learned: Default::default(),
    };
    Ok((server, Response::new_ok(request.id.clone(), result)))
}

/// The `features` initialization option: a list of names (`["sbcl", "x86-64"]`) or one
/// comma-separated string (`"sbcl,x86-64"`), as the command line's `--features`; absent
/// or `null`: none (every branch is read).
fn features_option(options: Option<&serde_json::Value>) -> Result<Option<Vec<String>>, String> {
    let Some(value) = options.and_then(|o| o.get("features")) else {
        return Ok(None);
    };
    let names: Vec<String> = match value {
        serde_json::Value::Null => return Ok(None),
        serde_json::Value::String(s) => s.split(',').map(str::to_string).collect(),
        serde_json::Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or("initializationOptions.features: give a list of feature names, e.g. [\"sbcl\", \"x86-64\"]")?,
        _ => return Err("initializationOptions.features: give a list of feature names, e.g. [\"sbcl\", \"x86-64\"]".into()),
    };
    Ok(Some(
        names
            .into_iter()
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty())
            .collect(),
    ))
}

/// The workspace folders, else `rootUri`, else `rootPath`: the `file:` ones.
#[allow(deprecated)]
fn client_roots(params: &InitializeParams) -> Vec<PathBuf> {
    if let Some(folders) = &params.workspace_folders {
        let roots: Vec<PathBuf> = folders
            .iter()
            .filter_map(|f| convert::path_of(&f.uri))
            .map(PathBuf::from)
            .collect();
        if !roots.is_empty() {
            return roots;
        }
    }
    if let Some(uri) = &params.root_uri {
        return convert::path_of(uri)
            .map(PathBuf::from)
            .into_iter()
            .collect();
    }
    params.root_path.iter().map(PathBuf::from).collect()
}

impl Server {
    /// One request's answer, or `RequestCancelled` when `$/cancelRequest` named it before
    /// or while it was computed (what was computed is dropped).
    fn cancellable(&mut self, inflight: &Inflight, request: Request) -> Reply {
        let id = request.id.clone();
        let Some(token) = inflight.start(&id) else {
            return cancelled(&id).into();
        };
        self.cancel = token.clone();
        let reply = self.request(request);
        inflight.finish();
        self.cancel = CancelToken::new();
        if token.is_cancelled() {
            return cancelled(&id).into();
        }
        reply
    }

    /// One request's answer; a panic in a handler becomes an internal error. The answers
    /// that grow with the files are written as JSON text, without a value tree.
    fn request(&mut self, request: Request) -> Reply {
        let id = request.id.clone();
        let internal = || {
            error(
                &id,
                ErrorCode::InternalError,
                "internal error while answering; please report it",
            )
        };
        if requests::answers_as_text(&request.method) {
            let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                requests::answer_text(self, request)
            }));
            return match answer {
                Ok(Ok(text)) => Reply::text(&id, &text),
                Ok(Err((code, message))) => Response::new_err(id, code as i32, message).into(),
                Err(_) => internal().into(),
            };
        }
        let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            requests::answer(self, request)
        }));
        match answer {
            Ok(Ok(value)) => Response::new_ok(id, value).into(),
            Ok(Err((code, message))) => Response::new_err(id, code as i32, message).into(),
            Err(_) => internal().into(),
        }
    }

    fn notification(&mut self, n: Notification) {
        let method = n.method.clone();
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match method.as_str() {
                "initialized" => {
                    indexing::initialized(self);
                    Ok(())
                }
                "workspace/didChangeWatchedFiles" => serde_json::from_value(n.params)
                    .map_err(|e| format!("{method}: invalid parameters: {e}"))
                    .and_then(|p| indexing::watched(self, p)),
                _ => documents::notification(self, n),
            }));
        let message = match outcome {
            Ok(Ok(())) => return,
            Ok(Err(message)) => message,
            Err(_) => format!("internal error in {method}; please report it"),
        };
        self.show_error(&message);
    }

    fn show_error(&self, message: &str) {
        self.out.send(Notification::new(
            "window/showMessage".into(),
            serde_json::json!({"type": 1, "message": format!("lisp-read-file: {message}")}),
        ));
    }

    /// `answer` of the workspace, after the files it cites (`answer`'s indexes into
    /// the files) are checked unchanged on disk; when one changed, the answer is made
    /// again with it read anew.
    fn checked<T>(&mut self, answer: impl Fn(&Server, &[WorkspaceFile]) -> (T, Vec<usize>)) -> T {
        let files = self.workspace();
        let (value, cited) = answer(self, &files);
        let paths: Vec<&str> = cited
            .iter()
            .filter_map(|&n| Some(files.get(n)?.path.as_str()))
            .collect();
        let unchanged = match self.index.lock() {
            Ok(mut index) => index.unchanged(&self.guard, &paths),
            Err(_) => true,
        };
        if unchanged && !self.forget_changed() {
            return value;
        }
        let files = self.workspace();
        let value = answer(self, &files).0;
        self.forget_changed();
        value
    }

    /// The text of `file`, the one its definitions were read from; `None` (and the file
    /// noted, for [`Server::forget_changed`]) when it changed since the index read it.
    fn text(&self, file: &WorkspaceFile) -> Option<lisp_read_file::index::Text> {
        let text = file.bytes(&self.guard).ok();
        if text.is_none() {
            if let Ok(mut changed) = self.changed.lock() {
                changed.push(file.path.clone());
            }
        }
        text
    }

    /// Whether a text read for the answer had changed ([`Server::text`]); the index
    /// forgets each such file, so that the next look at the workspace reads it anew.
    fn forget_changed(&mut self) -> bool {
        let changed = match self.changed.lock() {
            Ok(mut changed) => std::mem::take(&mut *changed),
            Err(_) => return false,
        };
        if let Ok(mut index) = self.index.lock() {
            for path in &changed {
                index.forget(path);
            }
        }
        !changed.is_empty()
    }

    /// Every Lisp file of the roots, open buffers in place of their files. Waits for a
    /// background fill under way (the files it reads are then cached).
    fn workspace(&mut self) -> Vec<WorkspaceFile> {
        let buffers = self.documents.buffers();
        let (files, cut) = {
            // A fill under way holds the index: wait for it, unless cancelled meanwhile.
            let mut index = loop {
                match self.index.try_lock() {
                    Ok(index) => break index,
                    Err(std::sync::TryLockError::WouldBlock) if !self.cancel.is_cancelled() => {
                        std::thread::sleep(std::time::Duration::from_millis(5));
                    }
                    Err(_) => return Vec::new(),
                }
            };
            let files = index.files(&self.guard, &self.grammar, &buffers, &self.cancel);
            (files, index.cut_roots().to_vec())
        };
        if !cut.is_empty() && !self.cut_said {
            self.cut_said = true;
            self.out.send(Notification::new(
                "window/showMessage".into(),
                serde_json::json!({"type": 2, "message": format!(
                    "lisp-read-file: {} holds more than {} Lisp files; only the first {} of \
                     each root are indexed (the files past them are not searched). Open a \
                     narrower folder as the workspace, or list the directories to leave out \
                     in an ignore file (.gitignore, .ignore)",
                    cut.join(", "),
                    lisp_read_file::guard::MAX_WALKED_FILES,
                    lisp_read_file::guard::MAX_WALKED_FILES,
                )}),
            ));
        }
        files
    }
}
