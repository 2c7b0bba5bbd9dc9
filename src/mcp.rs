//! The MCP server (docs/mcp.md): `lisp-read-file mcp` on stdio, built on rmcp.
//!
//! Four tools over the one library: `lisp-read-file` (docs/tool.md, [`tool::read`]),
//! `lisp-find` (docs/find.md, [`find::find`]), `read_file` and `Read` (compatibility tools with published definitions, [`tool::read_file`] and
//! [`tool::read_envelope`]). A tool failure is a result with `isError: true`, including
//! arguments that do not fit the schema (the current MCP protocol asks for that, so that
//! the model can correct itself); unknown tools, unknown methods and malformed messages
//! are JSON-RPC errors. Nothing but protocol messages reaches stdout: logs go to stderr.

mod transport;

use lisp_read_file::cancel::CancelToken;
use lisp_read_file::error::{ErrorCode, ToolError};
use lisp_read_file::find::{self, FindRequest};
use lisp_read_file::grammar::Grammar;
use lisp_read_file::guard::Guard;
use lisp_read_file::hint::HintStyle;
use lisp_read_file::tool::{self, read_by_name, read_envelope, read_file, ReadRequest};
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServiceExt};
use serde_json::{Map, Value};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::{Arc, Mutex as SyncMutex};
use std::time::{Duration, Instant};
pub(crate) use transport::{AnswerHolds, LineTransport};

/// The tools the server can offer (`--tools`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolName {
    LispReadFile,
    LispFind,
    ReadFile,
    Read,
    /// `read`: the whole text of a file, by path or ASDF component name (docs/mcp.md#read-tool).
    ReadTool,
}

impl ToolName {
    pub(crate) const ALL: [ToolName; 5] = [
        ToolName::LispReadFile,
        ToolName::LispFind,
        ToolName::ReadFile,
        ToolName::Read,
        ToolName::ReadTool,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ToolName::LispReadFile => "lisp-read-file",
            ToolName::LispFind => "lisp-find",
            ToolName::ReadFile => read_file::NAME,
            ToolName::Read => read_envelope::NAME,
            ToolName::ReadTool => read_by_name::NAME,
        }
    }

    pub(crate) fn parse(name: &str) -> Option<ToolName> {
        ToolName::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

/// What `lisp-read-file mcp` was started with.
#[derive(Debug, Clone)]
pub(crate) struct ServerOptions {
    /// `--root`: fixed roots. Empty: the client's MCP roots, else the working directory.
    pub roots: Vec<PathBuf>,
    pub tools: Vec<ToolName>,
    pub max_file_bytes: u64,
    /// `--definers FILE`: an extra definer table.
    pub definers: Option<String>,
}

/// The guard and grammar every call reads through, and the files `lisp-find` read
/// (kept while unchanged, docs/mcp.md); replaced when the client's roots change.
struct Reader {
    guard: Guard,
    grammar: Grammar,
    files: Arc<lisp_read_file::index::files::FileCache>,
    /// What each file taught `lisp-find` (its macros), kept while it is unchanged.
    learned: Arc<find::learned::LearnedCache>,
}

/// Where the roots come from when `--root` was not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RootsSource {
    /// `--root`: never changes.
    Fixed,
    /// Not asked yet, or the client said its roots changed.
    AskClient,
    /// The client's roots (or the working directory when it has none) are current.
    Current,
    /// The client failed to list usable roots: calls are refused until `retry_at`, then it
    /// is asked again; `wait` doubles after each failure, up to [`ROOTS_RETRY_MAX`].
    Failed { retry_at: Instant, wait: Duration },
}

impl RootsSource {
    fn must_ask(self) -> bool {
        match self {
            RootsSource::AskClient => true,
            RootsSource::Failed { retry_at, .. } => Instant::now() >= retry_at,
            RootsSource::Fixed | RootsSource::Current => false,
        }
    }
}

pub(crate) struct Server {
    options: ServerOptions,
    tools: Vec<Tool>,
    /// The roots in force, or why there are none (a client that offered unusable roots).
    reader: SyncMutex<Arc<Result<Reader, ToolError>>>,
    roots: SyncMutex<RootsSource>,
    /// Serializes `roots/list` requests to the client.
    asking: tokio::sync::Mutex<()>,
    /// Tool computations running at once (each on a blocking thread, see `call_tool`).
    computations: Arc<tokio::sync::Semaphore>,
    /// Where a finished computation's slot is kept until its answer is written (set by
    /// the stdio transport; without it the slot is freed when the computation ends).
    answer_holds: std::sync::OnceLock<AnswerHolds>,
}

/// How long to wait for the client's `roots/list` answer before using the working directory.
const ROOTS_TIMEOUT: Duration = Duration::from_secs(5);
/// First and longest wait before asking again a client whose `roots/list` failed.
const ROOTS_RETRY_FIRST: Duration = Duration::from_secs(1);
const ROOTS_RETRY_MAX: Duration = Duration::from_secs(60);

/// After stdin ends, how long answers still being computed or written are waited for.
const EXIT_GRACE: Duration = Duration::from_millis(300);

/// Tool computations that may run at once; more wait (cancellable) for a free slot. An
/// abandoned computation (cancelled request, closed stdin) keeps its slot until it ends,
/// so a client cannot pile up threads by cancelling.
const MAX_COMPUTATIONS: usize = 4;

impl Server {
    pub(crate) fn new(options: ServerOptions) -> Result<Server, ToolError> {
        let roots = if options.roots.is_empty() {
            vec![current_dir()?]
        } else {
            options.roots.clone()
        };
        let reader = load_reader(&roots, &options)?;
        let tools = options.tools.iter().map(|&t| definition(t)).collect();
        Ok(Server {
            roots: SyncMutex::new(if options.roots.is_empty() {
                RootsSource::AskClient
            } else {
                RootsSource::Fixed
            }),
            options,
            tools,
            reader: SyncMutex::new(Arc::new(Ok(reader))),
            asking: tokio::sync::Mutex::new(()),
            computations: Arc::new(tokio::sync::Semaphore::new(MAX_COMPUTATIONS)),
            answer_holds: std::sync::OnceLock::new(),
        })
    }

    /// Keep each computation's slot until the transport has written its answer: a client
    /// that does not read its answers then stops the computing, instead of piling up
    /// answers (at most [`MAX_COMPUTATIONS`] computed answers wait to be written).
    pub(crate) fn hold_slots_until_written(&self, holds: AnswerHolds) {
        let _ = self.answer_holds.set(holds);
    }

    /// The reader for a call: first asks the client for its roots when it offers them
    /// and they are not known yet.
    async fn current_reader(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Arc<Result<Reader, ToolError>> {
        if lock(&self.roots).must_ask() {
            let _asking = self.asking.lock().await;
            if lock(&self.roots).must_ask() {
                self.ask_client_roots(context).await;
            }
        }
        lock(&self.reader).clone()
    }

    /// Asks the client for its roots when it offers them. Like the official filesystem
    /// server, a client that offers roots but names none usable (or does not answer) gets
    /// refusals, not the working directory, which it never allowed.
    #[allow(deprecated)] // Roots are deprecated in the newest protocol, not in older ones.
    async fn ask_client_roots(&self, context: &RequestContext<RoleServer>) {
        let offers_roots = context
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        let mut failed = false;
        let reader = if offers_roots {
            let answer = tokio::time::timeout(ROOTS_TIMEOUT, context.peer.list_roots()).await;
            let mut refuse = |why: String| {
                tracing::warn!("{why}");
                failed = true;
                Err(ToolError::new(
                    ErrorCode::AccessDenied,
                    "",
                    format!(
                        "{why}; add a folder to the client's roots, or start the server with --root DIR"
                    ),
                ))
            };
            match answer {
                Ok(Ok(list)) => {
                    // Each root on its own: one that is gone must not hide the others.
                    let usable: Vec<PathBuf> = list
                        .roots
                        .iter()
                        .filter_map(|root| {
                            let path = file_uri_path(&root.uri)
                                .filter(|p| Guard::confined(std::slice::from_ref(p), 0).is_ok());
                            if path.is_none() {
                                tracing::warn!(
                                    "ignored client root {:?}: not a file:// URI of a directory",
                                    root.uri
                                );
                            }
                            path
                        })
                        .collect();
                    if usable.is_empty() {
                        refuse(
                            "the client's MCP roots name no directory this server can read".into(),
                        )
                    } else {
                        tracing::info!("roots from the client: {usable:?}");
                        load_reader(&usable, &self.options)
                    }
                }
                Ok(Err(e)) => refuse(format!("the client did not list its MCP roots ({e})")),
                Err(_) => refuse("the client did not list its MCP roots within 5 s".into()),
            }
        } else {
            current_dir().and_then(|cwd| load_reader(&[cwd], &self.options))
        };
        *lock(&self.reader) = Arc::new(reader);
        let mut roots = lock(&self.roots);
        *roots = match (failed, *roots) {
            (false, _) => RootsSource::Current,
            // Asked again later, not on every call of a client that keeps failing.
            (true, RootsSource::Failed { wait, .. }) => {
                let wait = (wait * 2).min(ROOTS_RETRY_MAX);
                RootsSource::Failed {
                    retry_at: Instant::now() + wait,
                    wait,
                }
            }
            (true, _) => RootsSource::Failed {
                retry_at: Instant::now() + ROOTS_RETRY_FIRST,
                wait: ROOTS_RETRY_FIRST,
            },
        };
    }
}

/// Runs one tool; panics become `INTERNAL` results, so the server keeps serving.
fn run_tool(
    tool: ToolName,
    reader: &Reader,
    arguments: &JsonObject,
    cancel: &CancelToken,
) -> CallToolResult {
    let started = Instant::now();
    let outcome = catch_unwind(AssertUnwindSafe(|| match tool {
        ToolName::LispReadFile => call_lisp_read_file(reader, arguments, cancel),
        ToolName::LispFind => call_lisp_find(reader, arguments, cancel),
        ToolName::ReadFile => call_read_file(reader, arguments, cancel),
        ToolName::Read => call_read(reader, arguments, cancel),
        ToolName::ReadTool => {
            read_tool_result(&read_by_name::read(&reader.guard, arguments, cancel))
        }
    }));
    let result = outcome.unwrap_or_else(|_| {
        let path = arguments.get("path").and_then(Value::as_str).unwrap_or("");
        let path = lisp_read_file::guard::printable_path(path);
        error_result(&ToolError::new(
            ErrorCode::Internal,
            path,
            "the server hit a bug reading this file; please report it with the file",
        ))
    });
    tracing::debug!(
        tool = tool.as_str(),
        micros = started.elapsed().as_micros() as u64,
        is_error = result.is_error.unwrap_or(false),
        "tools/call"
    );
    result
}

impl Server {
    /// Runs a tool on a blocking thread, never on the async runtime's threads, so that a
    /// slow computation cannot delay `ping`, cancellations or the end of input. When the
    /// request is cancelled (or the server stops), the answer is abandoned and the
    /// computation's [`CancelToken`] is set for code that polls it.
    async fn compute(
        &self,
        tool: ToolName,
        reader: Arc<Result<Reader, ToolError>>,
        arguments: JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let cancelled = || McpError::invalid_request("request cancelled", None);
        let permit = tokio::select! {
            permit = self.computations.clone().acquire_owned() => permit,
            _ = context.ct.cancelled() => return Err(cancelled()),
        };
        let token = CancelToken::new();
        let _cancel_on_drop = CancelOnDrop(token.clone());
        let work_cancel = token.clone();
        // The slot comes back with the answer (or is dropped with the task when the
        // request is abandoned).
        let work = tokio::task::spawn_blocking(move || {
            let result = match reader.as_ref() {
                Ok(reader) => run_tool(tool, reader, &arguments, &work_cancel),
                Err(e) => error_result(e),
            };
            (result, permit)
        });
        tokio::select! {
            done = work => done.map(|(result, permit)| {
                if let (Some(holds), Ok(permit)) = (self.answer_holds.get(), permit) {
                    holds.until_written(&context.id, permit);
                }
                result
            }).map_err(|e| {
                McpError::internal_error(format!("the tool computation failed: {e}"), None)
            }),
            _ = context.ct.cancelled() => Err(cancelled()),
        }
    }
}

/// Sets the token when the handler ends early (cancelled, or dropped at shutdown).
struct CancelOnDrop(CancelToken);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

fn lock<T>(mutex: &SyncMutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn current_dir() -> Result<PathBuf, ToolError> {
    std::env::current_dir().map_err(|e| {
        ToolError::new(
            ErrorCode::InvalidArgument,
            ".",
            format!("cannot use the working directory as the root ({e}); pass --root DIR"),
        )
    })
}

fn load_reader(roots: &[PathBuf], options: &ServerOptions) -> Result<Reader, ToolError> {
    let guard = Guard::confined(roots, options.max_file_bytes)?;
    let (grammar, warnings) = lisp_read_file::definers::project_grammar(
        &guard,
        options.definers.as_deref(),
        options.max_file_bytes,
    )?;
    for warning in warnings {
        tracing::warn!("{warning}");
    }
    Ok(Reader {
        guard,
        grammar,
        files: Arc::default(),
        learned: Arc::default(),
    })
}

/// The path of a `file://` URI (`file:///p`, `file://localhost/p`), percent-decoded.
fn file_uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                decoded.push((hex(h)? * 16 + hex(l)?) as u8);
                i += 3;
            }
            (b, _, _) => {
                decoded.push(b);
                i += 1;
            }
        }
    }
    use std::os::unix::ffi::OsStringExt;
    Some(PathBuf::from(std::ffi::OsString::from_vec(decoded)))
}

// ---- the three tools: arguments in, a CallToolResult out ----

/// The tool's request from its arguments, or the `INVALID_ARGUMENT` result naming the
/// `path` given (`default_path` when none).
fn request_of<T: serde::de::DeserializeOwned>(
    arguments: &JsonObject,
    default_path: &str,
) -> Result<T, CallToolResult> {
    serde_json::from_value(Value::Object(arguments.clone())).map_err(|e| {
        let path = arguments
            .get("path")
            .and_then(Value::as_str)
            .unwrap_or(default_path);
        let message = match quoted_scalar(arguments, &e.to_string()) {
            Some((name, text)) => format!(
                "invalid arguments: {name} must be a JSON {}, not the string \"{text}\": pass \"{name}\": {text}; see the tool's inputSchema",
                if text == "true" || text == "false" { "boolean" } else { "number" }
            ),
            None => format!("invalid arguments: {e}; see the tool's inputSchema"),
        };
        error_result(&ToolError::new(ErrorCode::InvalidArgument, path, message))
    })
}

/// The arguments without `hint_style`, and the style it names (docs/mcp.md#hint-style):
/// how the answer spells its hints is the caller's surface, not a parameter of the
/// request, so it is taken out before the request is read.
fn hint_style_of(
    arguments: &JsonObject,
    default_path: &str,
) -> Result<(JsonObject, HintStyle), CallToolResult> {
    let mut rest = arguments.clone();
    let style = match rest.remove(HINT_STYLE) {
        None => Some(HintStyle::default()),
        Some(Value::String(name)) => HintStyle::named(&name),
        Some(_) => None,
    };
    match style {
        Some(style) => Ok((rest, style)),
        None => {
            let path = arguments
                .get("path")
                .and_then(Value::as_str)
                .unwrap_or(default_path);
            let message = format!(
                "invalid arguments: {HINT_STYLE} must be \"arguments\" or \"lisp\"; see the tool's inputSchema"
            );
            Err(error_result(&ToolError::new(
                ErrorCode::InvalidArgument,
                path,
                message,
            )))
        }
    }
}

/// The argument that chooses how hints are spelled, in `lisp-read-file` and `lisp-find`.
const HINT_STYLE: &str = "hint_style";

/// A number or boolean given as a string (`"limit": "20"`), when serde refused a string
/// where it expected one: the argument's name and text, so that the message says what to
/// write instead of `expected usize`.
fn quoted_scalar(arguments: &JsonObject, why: &str) -> Option<(String, String)> {
    if !why.starts_with("invalid type: string") {
        return None;
    }
    arguments.iter().find_map(|(name, value)| {
        let text = value.as_str()?;
        let scalar = text.parse::<f64>().is_ok() || text == "true" || text == "false";
        (scalar && why.contains(&format!("string {value}")))
            .then(|| (name.clone(), text.to_string()))
    })
}

fn call_lisp_read_file(
    reader: &Reader,
    arguments: &JsonObject,
    cancel: &CancelToken,
) -> CallToolResult {
    let request = match hint_style_of(arguments, "").and_then(|(arguments, hints)| {
        request_of(&arguments, "").map(|request: ReadRequest| ReadRequest { hints, ..request })
    }) {
        Ok(request) => request,
        Err(refused) => return refused,
    };
    match tool::read_cancellable(&reader.guard, &reader.grammar, &request, cancel) {
        Ok(mut result) => {
            // A byte window's text is the bytes verbatim: its cut is said beside it.
            let note = tool::byte_window_note(&request, &result);
            let view = std::mem::take(&mut result.content);
            let mut answer = said_once(view, &result);
            if let Some(note) = note {
                answer.content.push(ContentBlock::text(note));
            }
            answer
        }
        Err(e) => error_result(&e),
    }
}

fn call_lisp_find(reader: &Reader, arguments: &JsonObject, cancel: &CancelToken) -> CallToolResult {
    let request = match hint_style_of(arguments, ".").and_then(|(arguments, hints)| {
        request_of(&arguments, ".").map(|request: FindRequest| FindRequest { hints, ..request })
    }) {
        Ok(request) => request,
        Err(refused) => return refused,
    };
    let scope = std::slice::from_ref(&request.path);
    let files = reader.files.clone();
    let learned = Some(reader.learned.clone());
    match find::find_kept(
        &reader.guard,
        &reader.grammar,
        scope,
        &request,
        cancel,
        files,
        learned,
    ) {
        Ok(mut result) => said_once(std::mem::take(&mut result.content), &result),
        Err(e) => error_result(&e),
    }
}

fn call_read_file(reader: &Reader, arguments: &JsonObject, cancel: &CancelToken) -> CallToolResult {
    let outcome = read_file::ReadFileRequest::from_arguments(arguments)
        .and_then(|request| read_file::read_file(&reader.guard, &request, cancel));
    match outcome {
        Ok(output) => {
            let mut text = vec![ContentBlock::text(output.content.clone())];
            if let Some(cut) = output.cut_line {
                // Whole lines up to the size cap; a longer line alone is cut (docs/mcp.md#read_file).
                text.push(ContentBlock::text(tool::compat::cut_line_note(cut)));
            }
            if let Some(next) = output.next_start_line {
                text.push(ContentBlock::text(format!(
                    "[Truncated: {} of {} lines returned. Use start_line={next} to continue.]",
                    output.meta.returned_line_count, output.meta.line_count
                )));
            }
            success(text, &output)
        }
        Err(e) => failure(format!("{}: {}", e.code, e.message), &e),
    }
}

fn call_read(reader: &Reader, arguments: &JsonObject, cancel: &CancelToken) -> CallToolResult {
    envelope_result(&read_envelope::read(&reader.guard, arguments, cancel))
}

/// `read` answers with its envelope whether it failed or not; a failure is `isError`.
fn read_tool_result(output: &read_by_name::Output) -> CallToolResult {
    match (&output.data, &output.error) {
        (Some(data), _) => success(vec![ContentBlock::text(data.content.clone())], output),
        (None, error) => failure(error.clone().unwrap_or_default(), output),
    }
}

/// `Read` answers with its envelope whether it failed or not.
fn envelope_result(envelope: &read_envelope::Envelope) -> CallToolResult {
    if envelope.is_error() {
        failure(envelope.view_text(), envelope)
    } else {
        success(vec![ContentBlock::text(envelope.view_text())], envelope)
    }
}

/// The view once (docs/decisions.md#results-said-once): the text block is the view, the
/// structured content the facts about it (path, mode, meta, the entries of a search)
/// without a second copy of the view.
fn said_once(view: String, structured: &impl serde::Serialize) -> CallToolResult {
    // `structured` comes with its `content` taken out (empty): the view is not copied
    // into the JSON only to be removed again (a 50 KB view cost two copies a call).
    let mut facts = to_value(structured);
    if let Some(object) = facts.as_object_mut() {
        object.remove("content");
    }
    let mut result = CallToolResult::structured(facts);
    result.content = vec![ContentBlock::text(view)];
    result
}

fn success(content: Vec<ContentBlock>, structured: &impl serde::Serialize) -> CallToolResult {
    let mut result = CallToolResult::structured(to_value(structured));
    result.content = content;
    result
}

/// A tool error: the error object as structured content, `CODE: message` as text.
fn error_result(e: &ToolError) -> CallToolResult {
    failure(format!("{}: {}", e.code, e.message), e)
}

/// A tool failure (`isError: true`): `text` for the model, `structured` as the object.
fn failure(text: String, structured: &impl serde::Serialize) -> CallToolResult {
    let mut result = CallToolResult::structured_error(to_value(structured));
    result.content = vec![ContentBlock::text(text)];
    result
}

fn to_value(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap_or_else(|e| {
        serde_json::json!({"code": "INTERNAL", "path": "", "message": format!("cannot encode the result: {e}")})
    })
}

// ---- tool definitions ----

/// Told to the client at initialization: how to use the tools.
const INSTRUCTIONS: &str = "Read a file before you edit it. For Common Lisp files call lisp-read-file first: it shows one line per definition (detail: \"names\" for only their names and lines, the cheapest outline); then read the definitions you will change with name_pattern (a regex or literal text on definition names) and matches_only: true: only the matching forms, verbatim with their line numbers and the file's in-package (without matches_only the whole outline comes back around them). content_pattern finds forms by their text, literal text included ((handler-case), and shows them whole. To find your way in a project, call it on a directory or an .asd file: the outline of every file in ASDF load order; lisp-find finds definitions (name, with include_body for the source), the uses of a symbol (symbol; with detail: \"names\" only the definitions that use it, one line each: the cheap answer to who uses it), who calls a function (callers, methods one by one, also through the project's macros), what a definition calls (callees) and the forms that mention a text (text: only their first lines and the lines holding it) across it. On a text file (a log) content_pattern greps as rg -n does; max_count (as grep -m) with before_context/after_context returns only the lines you need (the first timeout and what came before it: max_count 1, before_context 5). Paths are relative to the first root.";

fn schema(text: &str) -> Arc<JsonObject> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => Arc::new(object),
        // The schemas are constants checked by the tests; an empty object cannot happen.
        _ => Arc::new(Map::new()),
    }
}

/// `{"required": names, "properties": {name: its schema, ...}}`.
fn required_branch(names: &[&str], properties: &Map<String, Value>) -> Value {
    let defined: Map<String, Value> = names
        .iter()
        .filter_map(|&name| Some((name.to_string(), properties.get(name)?.clone())))
        .collect();
    serde_json::json!({"required": names, "properties": defined})
}

/// `hint_style`, an argument of the server rather than of the library's requests.
fn hint_style_schema() -> Value {
    serde_json::json!({
        "type": "string",
        "enum": ["arguments", "lisp"],
        "default": "arguments",
        "description": "How the answer's hints (what to pass next: an offset, a window, kinds) are written: `arguments`, as this tool's JSON arguments (`offset=15`); `lisp`, as keyword arguments of the Common Lisp client's functions (`:offset 15`)."
    })
}

/// What a tool's definition is made of.
struct ToolSpec {
    title: &'static str,
    description: &'static str,
    input: &'static str,
    output: &'static str,
    /// The error object a tool error carries as structured content, when it has one of
    /// its own (`Read` and `read` have one envelope for both).
    errors: Option<ErrorObject>,
}

/// A tool's error object: its codes, and a member every result has and no error has.
struct ErrorObject {
    codes: Vec<&'static str>,
    result_marker: &'static str,
}

fn spec(tool: ToolName) -> ToolSpec {
    let reported = || ErrorCode::reported().map(ErrorCode::as_str).collect();
    let (title, description, input, output, errors) = match tool {
        ToolName::LispReadFile => (
            "Lisp outline reader",
            tool::read::schema::DESCRIPTION,
            tool::read::schema::INPUT_SCHEMA,
            tool::read::schema::OUTPUT_SCHEMA,
            Some((reported(), "meta")),
        ),
        ToolName::LispFind => (
            "Lisp definitions and references",
            find::schema::DESCRIPTION,
            find::schema::INPUT_SCHEMA,
            find::schema::OUTPUT_SCHEMA,
            Some((reported(), "mode")),
        ),
        ToolName::ReadFile => (
            "Read file window",
            read_file::DESCRIPTION,
            read_file::INPUT_SCHEMA,
            read_file::OUTPUT_SCHEMA,
            Some((read_file::ERROR_CODES.to_vec(), "meta")),
        ),
        ToolName::Read => (
            "Read with line numbers",
            read_envelope::DESCRIPTION,
            read_envelope::INPUT_SCHEMA,
            read_envelope::OUTPUT_SCHEMA,
            None,
        ),
        ToolName::ReadTool => (
            "Read a file or ASDF component",
            read_by_name::DESCRIPTION,
            read_by_name::INPUT_SCHEMA,
            read_by_name::OUTPUT_SCHEMA,
            None,
        ),
    };
    ToolSpec {
        title,
        description,
        input,
        output,
        errors: errors.map(|(codes, result_marker)| ErrorObject {
            codes,
            result_marker,
        }),
    }
}

/// The input schema of `tool`. The `lisp-read-file` defaults are those of the request
/// type ([`ReadRequest::new`]), `lisp-find`'s limit is the library's constant: one source
/// for each default.
fn input_schema(tool: ToolName, text: &str) -> Arc<JsonObject> {
    let mut input = (*schema(text)).clone();
    let defaults: Vec<(String, Value)> = match tool {
        ToolName::LispReadFile => match serde_json::to_value(ReadRequest::new("")) {
            Ok(Value::Object(fields)) => fields.into_iter().filter(|(k, _)| k != "path").collect(),
            _ => Vec::new(),
        },
        ToolName::LispFind => vec![("limit".into(), lisp_read_file::find::DEFAULT_LIMIT.into())],
        _ => Vec::new(),
    };
    if let Some(Value::Object(properties)) = input.get_mut("properties") {
        if matches!(tool, ToolName::LispReadFile | ToolName::LispFind) {
            properties.insert(HINT_STYLE.into(), hint_style_schema());
        }
        for (name, value) in defaults {
            if let Some(Value::Object(property)) = properties.get_mut(&name) {
                property.insert("default".into(), value);
            }
        }
    }
    Arc::new(input)
}

/// Makes the output schema accept the error object too: one object schema for both
/// shapes (clients read `properties` at the top), the error's members joining the
/// result's, and `anyOf` saying which set is required.
fn add_error_object(object: &mut JsonObject, errors: &ErrorObject) {
    let result_required: Vec<String> = object
        .remove("required")
        .and_then(|r| serde_json::from_value(r).ok())
        .unwrap_or_default();
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        properties.insert(
            "code".into(),
            serde_json::json!({"type": "string", "enum": errors.codes,
                "description": "Only in a tool error (isError: true)."}),
        );
        properties.insert(
            "message".into(),
            serde_json::json!({"type": "string",
                "description": "Only in a tool error: what failed and what to do next."}),
        );
    }
    object.insert("required".into(), serde_json::json!(["path"]));
    let properties = match object.get("properties") {
        Some(Value::Object(properties)) => properties.clone(),
        _ => Map::new(),
    };
    // Each branch names its own `properties`: strict validators (Ajv's strictRequired)
    // refuse a `required` name that its schema object does not define.
    let branch = |required: &[&str]| required_branch(required, &properties);
    let result_required: Vec<&str> = result_required.iter().map(String::as_str).collect();
    let mut error_branch = branch(&["code", "path", "message"]);
    // A result's own members are never in an error object (`content` only where the
    // result still has it: not in the tools that say the view once).
    let mut result_only = vec![branch(&[errors.result_marker])];
    if properties.contains_key("content") {
        result_only.insert(0, branch(&["content"]));
    }
    error_branch["not"] = serde_json::json!({ "anyOf": result_only });
    object.insert(
        "anyOf".into(),
        Value::Array(vec![branch(&result_required), error_branch]),
    );
}

/// The definition `tools/list` gives for `tool`.
pub(crate) fn definition(tool: ToolName) -> Tool {
    let spec = spec(tool);
    let mut output = (*schema(spec.output)).clone();
    // A tool error's structured content is the error object (docs/mcp.md); the schema says
    // so, so that every structuredContent validates.
    if let Some(errors) = &spec.errors {
        add_error_object(&mut output, errors);
    }
    let mut definition = Tool::new(
        tool.as_str(),
        spec.description,
        input_schema(tool, spec.input),
    );
    definition.title = Some(spec.title.to_string());
    definition.output_schema = Some(Arc::new(output));
    definition.annotations = Some(
        ToolAnnotations::with_title(spec.title)
            .read_only(true)
            .destructive(false)
            .idempotent(true)
            .open_world(false),
    );
    definition
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "lisp-read-file",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }

    /// Up to 2025-11-25, the newest protocol with `initialize`: 2026-07-28 forbids the
    /// server-to-client `roots/list` request that docs/mcp.md's client roots rest on, so a
    /// client that prefers it falls back to the `initialize` handshake.
    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let tool = ToolName::parse(&request.name).filter(|t| self.options.tools.contains(t));
        let Some(tool) = tool else {
            let offered: Vec<&str> = self.options.tools.iter().map(|t| t.as_str()).collect();
            return Err(McpError::invalid_params(
                format!(
                    "Unknown tool: {}; this server offers {}",
                    request.name,
                    offered.join(", ")
                ),
                None,
            ));
        };
        let reader = self.current_reader(&context).await;
        let arguments = request.arguments.unwrap_or_default();
        let result = match reader.as_ref() {
            Ok(_) => {
                self.compute(tool, reader.clone(), arguments, &context)
                    .await?
            }
            Err(refusal) if tool == ToolName::ReadTool => read_tool_result(&read_by_name::Output {
                success: false,
                data: None,
                error: Some(format!("{}: {}", refusal.code, refusal.message)),
            }),
            Err(refusal) if tool == ToolName::Read => envelope_result(&read_envelope::refused(
                &arguments,
                refusal.code,
                refusal.message.clone(),
            )),
            Err(refusal) => {
                let path = arguments.get("path").and_then(Value::as_str).unwrap_or("");
                let path = lisp_read_file::guard::printable_path(path);
                error_result(&ToolError::new(refusal.code, path, refusal.message.clone()))
            }
        };
        Ok(result.into())
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        let mut roots = lock(&self.roots);
        if matches!(*roots, RootsSource::Current | RootsSource::Failed { .. }) {
            *roots = RootsSource::AskClient;
        }
    }
}

/// Serves MCP on stdin/stdout until the client closes stdin. Returns an error message
/// for a start-up failure (bad roots or definers).
pub(crate) fn serve_stdio(options: ServerOptions) -> Result<(), String> {
    let server = Server::new(options).map_err(|e| format!("{}: {}", e.code, e.message))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("INTERNAL: cannot start the async runtime: {e}"))?;
    let served = runtime.block_on(async move {
        // rmcp's non-blocking pipes when stdin and stdout are pipes (as MCP clients start
        // servers): no hand-off to the blocking thread pool per read and write.
        let (stdin, stdout) = rmcp::transport::stdio_pipes();
        let transport =
            LineTransport::new(tokio::io::BufReader::with_capacity(1 << 16, stdin), stdout);
        let stopper = transport.stopper();
        server.hold_slots_until_written(transport.answer_holds());
        let service = server
            .serve(transport)
            .await
            .map_err(|e| format!("MCP initialization failed: {e}"))?;
        // rmcp waits up to 5 s for running handlers after stdin ends; a client that
        // closed stdin is shutting the server down, so answers not ready soon are dropped.
        let abandon = async {
            stopper.input_ended.notified().await;
            tokio::time::sleep(EXIT_GRACE).await;
        };
        tokio::select! {
            quit = service.waiting() => tracing::info!("stopped: {quit:?}"),
            _ = abandon => tracing::info!("stdin closed: calls still computing are abandoned"),
        }
        stopper.silence(EXIT_GRACE).await;
        Ok(())
    });
    // Computations still running (a cancelled or abandoned request) must not delay the
    // exit once stdin is closed: the runtime is not waited for; the process ends with them.
    runtime.shutdown_background();
    served
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_are_json_objects() {
        for text in [
            tool::read::schema::INPUT_SCHEMA,
            tool::read::schema::OUTPUT_SCHEMA,
        ] {
            assert!(matches!(
                serde_json::from_str::<Value>(text),
                Ok(Value::Object(_))
            ));
        }
        for tool in ToolName::ALL {
            let d = definition(tool);
            assert!(!d.input_schema.is_empty() && !d.output_schema.unwrap().is_empty());
        }
    }

    #[test]
    fn the_input_schema_names_every_request_field_with_its_default() {
        // The defaults are not written in the schema text: they come from the type.
        assert!(!tool::read::schema::INPUT_SCHEMA.contains("\"default\":"));
        let schema = Value::Object((*definition(ToolName::LispReadFile).input_schema).clone());
        let defaults = serde_json::to_value(ReadRequest::new("p")).unwrap();
        let properties = schema["properties"].as_object().unwrap();
        for (field, value) in defaults.as_object().unwrap() {
            let property = &properties[field];
            if field != "path" {
                assert_eq!(&property["default"], value, "{field}");
            }
        }
        // The optional fields without a default (absent from a default request).
        let optional = [
            "name_pattern",
            "content_pattern",
            "kinds",
            "features",
            "detail",
            "before_context",
            "after_context",
            "max_count",
            HINT_STYLE,
        ];
        for field in optional {
            assert!(properties.contains_key(field), "{field}");
        }
        assert_eq!(
            properties.len(),
            defaults.as_object().unwrap().len() + optional.len()
        );
    }

    /// Every `required` name is defined in the `properties` of the same schema object,
    /// as strict validators (Ajv's strictRequired) demand; returns the offenders.
    fn undefined_required(schema: &Value, at: &str, out: &mut Vec<String>) {
        match schema {
            Value::Object(object) => {
                if let Some(Value::Array(required)) = object.get("required") {
                    let properties = object.get("properties").and_then(Value::as_object);
                    for name in required.iter().filter_map(Value::as_str) {
                        if !properties.is_some_and(|p| p.contains_key(name)) {
                            out.push(format!("{at}: {name}"));
                        }
                    }
                }
                for (key, value) in object {
                    undefined_required(value, &format!("{at}/{key}"), out);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    undefined_required(item, &format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn schemas_define_every_required_name_where_it_is_required() {
        for tool in ToolName::ALL {
            let d = definition(tool);
            let mut offenders = Vec::new();
            let input = Value::Object((*d.input_schema).clone());
            undefined_required(&input, "input", &mut offenders);
            let output = Value::Object((*d.output_schema.unwrap()).clone());
            undefined_required(&output, "output", &mut offenders);
            assert!(offenders.is_empty(), "{}: {offenders:?}", tool.as_str());
        }
    }

    #[test]
    fn file_uris() {
        assert_eq!(
            file_uri_path("file:///a/b%20c"),
            Some(PathBuf::from("/a/b c"))
        );
        assert_eq!(
            file_uri_path("file://localhost/a"),
            Some(PathBuf::from("/a"))
        );
        assert_eq!(file_uri_path("https://x/a"), None);
        assert_eq!(file_uri_path("file://host/a"), None);
        assert_eq!(file_uri_path("file:///a%2"), Some(PathBuf::from("/a%2")));
    }

    #[test]
    fn a_number_as_a_string_is_named_with_what_to_write() {
        let refusal = |json: &str| {
            let arguments: JsonObject = serde_json::from_str(json).unwrap();
            let refused = request_of::<ReadRequest>(&arguments, "").unwrap_err();
            let content = serde_json::to_value(&refused.content).unwrap();
            content[0]["text"].as_str().unwrap().to_string()
        };
        let text = refusal(r#"{"path": "a.lisp", "limit": "20"}"#);
        assert!(
            text.contains(r#"limit must be a JSON number, not the string "20": pass "limit": 20"#),
            "{text}"
        );
        let text = refusal(r#"{"path": "a.lisp", "collapsed": "false"}"#);
        assert!(text.contains("collapsed must be a JSON boolean"), "{text}");
        // Other refusals keep serde's words.
        let text = refusal(r#"{"path": "a.lisp", "limit": -1}"#);
        assert!(text.contains("invalid arguments: invalid value"), "{text}");
    }
}
