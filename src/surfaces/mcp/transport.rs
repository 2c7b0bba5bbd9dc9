//! Newline-delimited JSON-RPC on stdio, as the MCP stdio transport says, with one thing
//! rmcp's own stdio transport leaves out on purpose: a line that is not JSON gets the
//! JSON-RPC "Parse error" (-32700) that SPEC §8.2 asks for, and a JSON value that is not
//! a message gets "Invalid Request" (-32600). Everything else is rmcp's message types.
//!
//! A line longer than [`MAX_LINE_BYTES`] is answered with -32600 and skipped without
//! being held in memory, so a flood cannot grow the process.

use rmcp::model::ErrorData;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::Value;
use std::future::Future;
use std::io;
use std::sync::Arc;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Mutex;

/// Longest request line accepted (rmcp's own default).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

enum LineRead {
    Line,
    Oversized,
    End,
}

pub struct LineTransport<R, W> {
    reader: R,
    writer: Arc<Mutex<W>>,
    line: Vec<u8>,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncBufRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    pub fn new(reader: R, writer: W) -> Self {
        LineTransport {
            reader,
            writer: Arc::new(Mutex::new(writer)),
            line: Vec::new(),
        }
    }

    /// Reads one line into `self.line` (without its `\n`).
    async fn read_line(&mut self) -> io::Result<LineRead> {
        self.line.clear();
        let mut oversized = false;
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                // End of input: a last line without `\n` is still a message.
                return Ok(match (oversized, self.line.is_empty()) {
                    (true, _) => LineRead::Oversized,
                    (false, false) => LineRead::Line,
                    (false, true) => LineRead::End,
                });
            }
            let newline = memchr::memchr(b'\n', available);
            let take = newline.map_or(available.len(), |i| i + 1);
            if !oversized && self.line.len() + take > MAX_LINE_BYTES {
                oversized = true;
                self.line = Vec::new();
            }
            if !oversized {
                self.line
                    .extend_from_slice(&available[..newline.unwrap_or(take)]);
            }
            self.reader.consume(take);
            if newline.is_some() {
                return Ok(if oversized {
                    LineRead::Oversized
                } else {
                    LineRead::Line
                });
            }
        }
    }

    /// Answers a line whose id cannot be read (so the error has none).
    fn reply_error(
        &self,
        error: ErrorData,
    ) -> impl Future<Output = io::Result<()>> + Send + 'static {
        let writer = self.writer.clone();
        async move { write_message(&writer, &TxJsonRpcMessage::<RoleServer>::error(error, None)).await }
    }
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
        async move { write_message(&writer, &item).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.read_line().await {
                Ok(LineRead::Line) => {}
                Ok(LineRead::Oversized) => {
                    tracing::warn!("a request line over {MAX_LINE_BYTES} bytes was skipped");
                    let error = ErrorData::invalid_request(
                        format!("Invalid Request: line over {MAX_LINE_BYTES} bytes"),
                        None,
                    );
                    self.reply_error(error).await.ok()?;
                    continue;
                }
                Ok(LineRead::End) => return None,
                Err(e) => {
                    tracing::error!("cannot read stdin: {e}");
                    return None;
                }
            }
            let text = self.line.strip_suffix(b"\r").unwrap_or(&self.line);
            let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let value: Value = match serde_json::from_slice(text) {
                Ok(value) => value,
                Err(e) => {
                    tracing::debug!("unparsable line: {e}");
                    let error = ErrorData::parse_error(format!("Parse error: {e}"), None);
                    self.reply_error(error).await.ok()?;
                    continue;
                }
            };
            let is_notification = value.get("method").is_some() && value.get("id").is_none();
            match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value) {
                Ok(message) => return Some(message),
                // A notification is never answered, even when it is not understood.
                Err(e) if is_notification => tracing::debug!("ignored notification: {e}"),
                Err(e) => {
                    tracing::debug!("invalid request: {e}");
                    let error = ErrorData::invalid_request(format!("Invalid Request: {e}"), None);
                    self.reply_error(error).await.ok()?;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.flush().await
    }
}
