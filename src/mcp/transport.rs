//! Newline-delimited JSON-RPC on stdio, as the MCP stdio transport says, with one thing
//! rmcp's own stdio transport leaves out on purpose: a line that is not JSON gets the
//! JSON-RPC "Parse error" (-32700) that docs/mcp.md asks for, and a JSON value that is not
//! a message gets "Invalid Request" (-32600). Everything else is rmcp's message types.
//!
//! A line longer than [`MAX_LINE_BYTES`] is answered with -32600 and skipped without
//! being held in memory, so a flood cannot grow the process.
//!
//! Backpressure: each `tools/call` holds one of [`MAX_IN_FLIGHT`] slots from the moment
//! it is admitted until its answer is written (or it is cancelled). While all slots are
//! taken, requests read are held (at most [`MAX_HELD_BYTES`]), so that cancellations and
//! the end of input are still seen; past that no new line is read. A client that sends
//! requests and never reads stdout thus stops the server reading, instead of making it
//! hold every answer in memory. The server also keeps a computation's slot until its
//! answer is written ([`AnswerHolds`]), so answers computed and not yet written are at
//! most as many as the computations that may run at once.
//!
//! Protocol housekeeping (every request but `tools/call`: `ping`, `initialize`,
//! `tools/list`, ...) is answered at once, without computing: it takes one of
//! [`MAX_HOUSEKEEPING_IN_FLIGHT`] slots of its own, so that it never waits behind tool
//! calls (a `ping` under a full load of slow calls is answered in milliseconds).
//!
//! Two checks rmcp does not make: a request whose id is already in flight gets -32600
//! ("duplicate request id") instead of one of the two answers being lost, and a
//! `tools/call` whose params are malformed gets -32602 naming what is wrong (rmcp would
//! take it for an unknown method).
//!
//! `receive` is polled inside a `select!` and may be dropped at any await point, so all
//! its progress (the partial line, the slot it holds) lives in `self`, and its error
//! replies are written by spawned tasks that finish even if `receive` is dropped.

mod held;

use held::Held;
use rmcp::model::{ErrorData, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::io;
use std::sync::{Arc, Mutex as SyncMutex};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Mutex, Notify, OwnedSemaphorePermit, Semaphore};

/// Longest request line accepted (rmcp's own default).
pub(super) const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Requests read but not yet answered (computing, waiting, or answer not yet written).
pub(super) const MAX_IN_FLIGHT: usize = 32;

/// The slots each unanswered request holds, by id: its transport slot and, once its
/// answer is computed, the server's compute slot ([`AnswerHolds`]).
type InFlight = Arc<SyncMutex<HashMap<RequestId, Vec<OwnedSemaphorePermit>>>>;

/// Housekeeping requests (every method but `tools/call`) read but not yet answered. Their
/// answers are small and immediate; the bound only matters for a client that never reads.
pub(super) const MAX_HOUSEKEEPING_IN_FLIGHT: usize = 32;

/// Lets the server keep a computation's slot until the transport has written its answer
/// (or the request is cancelled): a client that never reads stdout then leaves at most as
/// many computed answers in memory as computations may run at once, not one per request
/// in flight.
#[derive(Clone)]
pub(crate) struct AnswerHolds(InFlight);

impl AnswerHolds {
    /// Keeps `slot` until the answer to `id` is written; drops it at once when `id` is no
    /// longer in flight (cancelled, or never admitted).
    pub(crate) fn until_written(&self, id: &RequestId, slot: OwnedSemaphorePermit) {
        if let Some(slots) = lock(&self.0).get_mut(id) {
            slots.push(slot);
        }
    }
}

/// Ids of requests cancelled while in flight, remembered (the last
/// [`MAX_CANCELLED_IDS`]) so that an answer the cancelled computation still produces is
/// never written, and a new request reusing the id (which MCP forbids within a session)
/// is refused instead of getting the cancelled request's answer.
type Cancelled = Arc<SyncMutex<VecDeque<RequestId>>>;

/// How many cancelled ids are remembered.
pub(super) const MAX_CANCELLED_IDS: usize = 1024;

/// Requests read while every slot is taken are held, up to this many bytes, so that the
/// reading goes on: cancellations and the end of input are seen at once even when the
/// client keeps more than [`MAX_IN_FLIGHT`] requests unanswered. Past it nothing more is
/// read until a slot frees.
pub(super) const MAX_HELD_BYTES: usize = 1 << 20;

enum LineRead {
    Line,
    Oversized,
    End,
}

pub(crate) struct LineTransport<R, W> {
    reader: R,
    writer: Arc<Mutex<W>>,
    /// The line being read, kept across a dropped `receive`.
    line: Vec<u8>,
    oversized: bool,
    slots: Arc<Semaphore>,
    /// The slot taken for the next message, kept across a dropped `receive`.
    slot: Option<OwnedSemaphorePermit>,
    /// The housekeeping requests' own slots.
    housekeeping_slots: Arc<Semaphore>,
    /// Housekeeping requests read while their slots were all taken, with their lengths.
    held_housekeeping: Held,
    in_flight: InFlight,
    cancelled: Cancelled,
    /// Requests read while every slot was taken, in order, with their line lengths.
    held: Held,
    held_bytes: usize,
    /// Told when stdin ends, so that the server can stop without waiting for computations.
    input_ended: Arc<Notify>,
}

/// What the server needs to stop promptly once stdin ends (see [`LineTransport::stopper`]).
pub(crate) struct Stopper<W> {
    pub input_ended: Arc<Notify>,
    writer: Arc<Mutex<W>>,
}

impl<W: Send + 'static> Stopper<W> {
    /// Waits (at most `within`) for the line being written to be complete, then keeps
    /// stdout locked for good, so that the process can exit without a half-written line.
    pub(crate) async fn silence(&self, within: std::time::Duration) {
        if let Ok(guard) = tokio::time::timeout(within, self.writer.clone().lock_owned()).await {
            std::mem::forget(guard);
        }
    }
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncBufRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    pub(crate) fn new(reader: R, writer: W) -> Self {
        LineTransport {
            reader,
            writer: Arc::new(Mutex::new(writer)),
            line: Vec::new(),
            oversized: false,
            slots: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
            slot: None,
            housekeeping_slots: Arc::new(Semaphore::new(MAX_HOUSEKEEPING_IN_FLIGHT)),
            held_housekeeping: Held::default(),
            in_flight: InFlight::default(),
            cancelled: Cancelled::default(),
            held: Held::default(),
            held_bytes: 0,
            input_ended: Arc::new(Notify::new()),
        }
    }

    /// What the server needs to keep a computation's slot until its answer is written.
    pub(crate) fn answer_holds(&self) -> AnswerHolds {
        AnswerHolds(self.in_flight.clone())
    }

    pub(crate) fn stopper(&self) -> Stopper<W> {
        Stopper {
            input_ended: self.input_ended.clone(),
            writer: self.writer.clone(),
        }
    }

    /// Reads one line into `self.line` (without its `\n`); the caller clears it after use.
    /// Cancel-safe: bytes consumed before a dropped call stay in `self.line`.
    async fn read_line(&mut self) -> io::Result<LineRead> {
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                let oversized = std::mem::take(&mut self.oversized);
                // End of input: a last line without `\n` is still a message.
                return Ok(match (oversized, self.line.is_empty()) {
                    (true, _) => LineRead::Oversized,
                    (false, false) => LineRead::Line,
                    (false, true) => LineRead::End,
                });
            }
            let newline = memchr::memchr(b'\n', available);
            let take = newline.map_or(available.len(), |i| i + 1);
            if !self.oversized && self.line.len() + take > MAX_LINE_BYTES {
                self.oversized = true;
                self.line = Vec::new();
            }
            if !self.oversized {
                self.line
                    .extend_from_slice(&available[..newline.unwrap_or(take)]);
            }
            self.reader.consume(take);
            if newline.is_some() {
                return Ok(if std::mem::take(&mut self.oversized) {
                    LineRead::Oversized
                } else {
                    LineRead::Line
                });
            }
        }
    }

    /// Answers a line that is not passed on to rmcp. The write runs on its own task, with
    /// this line's slot, so that it completes even if `receive` is dropped meanwhile.
    fn reply_error(&mut self, error: ErrorData, id: Option<RequestId>) {
        let writer = self.writer.clone();
        let slot = self.slot.take();
        tokio::spawn(async move {
            let message = TxJsonRpcMessage::<RoleServer>::error(error, id);
            if let Err(e) = write_message(&writer, &message).await {
                tracing::debug!("cannot write an error reply: {e}");
            }
            drop(slot);
        });
    }

    /// A cancellation of a request still held: it is dropped, never answered, and its id
    /// stays taken as a cancelled one's.
    fn drop_held_if_cancelled(&mut self, value: &Value) {
        if value.get("method").and_then(Value::as_str) != Some("notifications/cancelled") {
            return;
        }
        let Some(id) = value.pointer("/params/requestId") else {
            return;
        };
        let Some(bytes) = self
            .held
            .cancel(id)
            .or_else(|| self.held_housekeeping.cancel(id))
        else {
            return;
        };
        self.held_bytes -= bytes;
        if let Ok(id) = serde_json::from_value::<RequestId>(id.clone()) {
            self.remember_cancelled(id);
        }
    }

    /// Keeps a cancelled request's id taken (the last [`MAX_CANCELLED_IDS`]).
    fn remember_cancelled(&self, id: RequestId) {
        let mut cancelled = lock(&self.cancelled);
        if cancelled.len() == MAX_CANCELLED_IDS {
            cancelled.pop_front();
        }
        cancelled.push_back(id);
    }

    /// Takes the line's slot for a request; `false` when its id is already in flight or
    /// was cancelled.
    fn start_request(&mut self, id: &RequestId) -> bool {
        if lock(&self.cancelled).contains(id) {
            return false;
        }
        let mut in_flight = lock(&self.in_flight);
        if in_flight.contains_key(id) {
            return false;
        }
        if let Some(slot) = self.slot.take() {
            in_flight.insert(id.clone(), vec![slot]);
        }
        true
    }

    /// [`Self::admit`] with a housekeeping slot in place of the next message's slot.
    fn admit_housekeeping(
        &mut self,
        value: Value,
        slot: OwnedSemaphorePermit,
    ) -> Option<RxJsonRpcMessage<RoleServer>> {
        let general = self.slot.replace(slot);
        let message = self.admit(value);
        // The housekeeping slot, if the message did not take it, is given back here.
        drop(std::mem::replace(&mut self.slot, general));
        message
    }

    /// Checks a line that parsed as JSON; answers it and returns `None` when it is not
    /// passed on.
    fn admit(&mut self, value: Value) -> Option<RxJsonRpcMessage<RoleServer>> {
        let id = value
            .get("id")
            .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
        let is_notification = value.get("method").is_some() && value.get("id").is_none();
        if let (Some(id), Some(why)) = (&id, malformed_tool_call(&value)) {
            let error = ErrorData::invalid_params(format!("Invalid params: {why}"), None);
            self.reply_error(error, Some(id.clone()));
            return None;
        }
        let message = match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value) {
            Ok(message) => message,
            // A notification is never answered, even when it is not understood.
            Err(e) if is_notification => {
                tracing::debug!("ignored notification: {e}");
                return None;
            }
            Err(e) => {
                tracing::debug!("invalid request: {e}");
                let error = ErrorData::invalid_request(format!("Invalid Request: {e}"), None);
                self.reply_error(error, None);
                return None;
            }
        };
        match &message {
            JsonRpcMessage::Request(request) if !self.start_request(&request.id) => {
                let error = ErrorData::invalid_request(
                    format!(
                        "duplicate request id: {} is already in flight or was cancelled; use a new id for each request",
                        request.id
                    ),
                    None,
                );
                self.reply_error(error, Some(request.id.clone()));
                return None;
            }
            JsonRpcMessage::Notification(notification) => {
                if let Some(id) = cancelled_request(&notification.notification) {
                    // rmcp writes no answer for a cancelled request: free its slot now,
                    // and keep its id from being answered or reused.
                    if lock(&self.in_flight).remove(&id).is_some() {
                        self.remember_cancelled(id);
                    }
                }
            }
            _ => {}
        }
        Some(message)
    }
}

/// A request answered without computing: every method but `tools/call`.
fn is_housekeeping(value: &Value) -> bool {
    value.get("method").and_then(Value::as_str) != Some("tools/call")
}

/// What is wrong with the params of a `tools/call` request, if anything.
fn malformed_tool_call(value: &Value) -> Option<&'static str> {
    if value.get("method").and_then(Value::as_str) != Some("tools/call") {
        return None;
    }
    let Some(params) = value.get("params") else {
        return Some("tools/call needs params {\"name\": TOOL, \"arguments\": {...}}");
    };
    let Some(params) = params.as_object() else {
        return Some("tools/call params must be an object");
    };
    if !params.get("name").is_some_and(Value::is_string) {
        return Some("tools/call params need \"name\", the tool's name as a string");
    }
    match params.get("arguments") {
        None | Some(Value::Object(_)) => None,
        Some(_) => Some("tools/call \"arguments\" must be an object"),
    }
}

fn cancelled_request(notification: &rmcp::model::ClientNotification) -> Option<RequestId> {
    match notification {
        rmcp::model::ClientNotification::CancelledNotification(cancelled) => {
            cancelled.params.request_id.clone()
        }
        _ => None,
    }
}

fn lock<T>(mutex: &SyncMutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

async fn write_message<W: AsyncWrite + Unpin>(
    writer: &Mutex<W>,
    message: &TxJsonRpcMessage<RoleServer>,
) -> io::Result<()> {
    let mut bytes = serde_json::to_vec(message).map_err(io::Error::other)?;
    bytes.push(b'\n');
    // One lock per message: concurrent responses never interleave within a line.
    let mut writer = writer.lock().await;
    writer.write_all(&bytes).await?;
    writer.flush().await
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncBufRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        let answered = match &item {
            JsonRpcMessage::Response(response) => Some(response.id.clone()),
            JsonRpcMessage::Error(error) => error.id.clone(),
            _ => None,
        };
        // The id is free again before the answer goes out (a client may reuse it as soon
        // as it reads the answer), but the slot is held until the answer is written.
        let was_cancelled = answered
            .as_ref()
            .is_some_and(|id| lock(&self.cancelled).contains(id));
        let slot = answered.and_then(|id| lock(&self.in_flight).remove(&id));
        async move {
            if was_cancelled {
                return Ok(()); // the client gave up on it: never answered
            }
            let written = write_message(&writer, &item).await;
            drop(slot);
            written
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if self.slot.is_none() {
                self.slot = self.slots.clone().try_acquire_owned().ok();
            }
            if !self.held_housekeeping.is_empty() {
                if let Ok(slot) = self.housekeeping_slots.clone().try_acquire_owned() {
                    if let Some((value, bytes)) = self.held_housekeeping.pop_front() {
                        self.held_bytes -= bytes;
                        if let Some(message) = self.admit_housekeeping(value, slot) {
                            return Some(message);
                        }
                    }
                    continue;
                }
            }
            // A request held while every slot was taken goes first once one frees.
            if self.slot.is_some() {
                if let Some((value, bytes)) = self.held.pop_front() {
                    self.held_bytes -= bytes;
                    if let Some(message) = self.admit(value) {
                        return Some(message);
                    }
                    continue;
                }
            }
            if self.held_bytes >= MAX_HELD_BYTES {
                // The read-ahead full: read nothing until a slot for a held request frees.
                // (Held tool calls with a slot free were admitted above, so when `slot` is
                // taken, only housekeeping is held.)
                let housekeeping_held = !self.held_housekeeping.is_empty();
                tokio::select! {
                    slot = self.slots.clone().acquire_owned(), if self.slot.is_none() => {
                        self.slot = Some(slot.ok()?);
                    }
                    slot = self.housekeeping_slots.clone().acquire_owned(), if housekeeping_held => {
                        drop(slot.ok()?);
                    }
                    else => {}
                }
                continue;
            }
            match self.read_line().await {
                Ok(LineRead::Line) => {}
                Ok(LineRead::Oversized) => {
                    tracing::warn!("a request line over {MAX_LINE_BYTES} bytes was skipped");
                    let error = ErrorData::invalid_request(
                        format!("Invalid Request: line over {MAX_LINE_BYTES} bytes"),
                        None,
                    );
                    self.reply_error(error, None);
                    continue;
                }
                Ok(LineRead::End) => {
                    self.input_ended.notify_one();
                    return None;
                }
                Err(e) => {
                    tracing::error!("cannot read stdin: {e}");
                    self.input_ended.notify_one();
                    return None;
                }
            }
            let line = std::mem::take(&mut self.line);
            let text = line.strip_suffix(b"\r").unwrap_or(&line);
            let text = text
                .strip_prefix(lisp_read_file::source::BOM)
                .unwrap_or(text);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<Value>(text) {
                Ok(value) => {
                    let is_request = value.get("method").is_some() && value.get("id").is_some();
                    if is_request && is_housekeeping(&value) {
                        match self.housekeeping_slots.clone().try_acquire_owned() {
                            Ok(slot) if self.held_housekeeping.is_empty() => {
                                if let Some(message) = self.admit_housekeeping(value, slot) {
                                    return Some(message);
                                }
                            }
                            _ => {
                                self.held_bytes += text.len();
                                self.held_housekeeping.push_back(value, text.len());
                            }
                        }
                        continue;
                    }
                    if is_request && self.slot.is_none() {
                        self.held_bytes += text.len();
                        self.held.push_back(value, text.len());
                        continue;
                    }
                    self.drop_held_if_cancelled(&value);
                    if let Some(message) = self.admit(value) {
                        return Some(message);
                    }
                }
                Err(e) => {
                    tracing::debug!("unparsable line: {e}");
                    let error = ErrorData::parse_error(format!("Parse error: {e}"), None);
                    self.reply_error(error, None);
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.flush().await
    }
}
