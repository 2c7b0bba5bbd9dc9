//! The LSP's base protocol over stdio: `Content-Length` framed JSON-RPC messages. Written
//! here rather than taken from `lsp-server`'s stdio transport, whose reader allocates
//! whatever length a header claims and stops at the first malformed payload: here a
//! header over [`MAX_MESSAGE_BYTES`] ends the session with an error, and a payload that is
//! not a JSON-RPC message is answered with a parse error and the session goes on.

use lsp_server::Message;
use std::io::{self, BufRead, Write};
use std::sync::{Arc, Mutex};

/// The largest message accepted (a `didOpen` of a file at the size cap, escaped, fits).
pub(super) const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;
/// Most JSON values (scalars, arrays, objects) one message may hold: a parsed value costs
/// tens of bytes whatever its text, so a message of many small values (`[0,0,0,...]`)
/// would cost about 32 times its size. Counted before anything is built.
pub(super) const MAX_MESSAGE_VALUES: usize = 1_000_000;
/// Header lines longer than this are refused.
const MAX_HEADER_BYTES: usize = 4096;
/// More header lines than this in one message are refused (the protocol has two).
const MAX_HEADER_LINES: usize = 64;

/// What the reader hands the main loop.
pub(super) enum Incoming {
    Message(Message),
    /// A payload that is not a JSON-RPC message: the reason.
    Malformed(String),
    /// A message with an `id` that is neither an integer nor a string (JSON-RPC 2.0: an
    /// invalid request, answered with a null id): its method.
    InvalidId(String),
    /// A message over [`MAX_MESSAGE_VALUES`], not parsed: its id (when it has one that
    /// can be read without building the rest).
    TooManyValues(Option<lsp_server::RequestId>),
}

/// The id of a message, its other fields skipped without being built.
#[derive(serde::Deserialize)]
struct IdOnly {
    #[serde(default)]
    id: Option<lsp_server::RequestId>,
}

/// How many JSON values `body` holds, counting up to `limit + 1`: each `[`, `{` and each
/// `,` outside strings starts one more (a miscount on invalid JSON only decides whether
/// it is parsed, and the parse then fails).
fn values(body: &[u8], limit: usize) -> usize {
    let mut count = 1usize;
    let mut in_string = false;
    let mut i = 0;
    while i < body.len() && count <= limit {
        let c = body[i];
        if in_string {
            match c {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match c {
                b'"' => in_string = true,
                b'[' | b'{' | b',' => count += 1,
                _ => {}
            }
        }
        i += 1;
    }
    count
}

/// The `id` of a message, told apart from its absence (`Some(Null)` for `"id": null`).
#[derive(serde::Deserialize)]
struct IdProbe {
    #[serde(default, deserialize_with = "present")]
    id: Option<serde_json::Value>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<serde_json::Value>, D::Error> {
    serde::Deserialize::deserialize(d).map(Some)
}

/// Reads one message and its length in bytes; `Ok(None)` at the end of input. `reserve(n)`
/// is called with the length before the body is read (and may wait). Errors end the
/// session: the framing is lost.
pub(super) fn read<R: BufRead>(
    input: &mut R,
    reserve: &dyn Fn(usize),
) -> io::Result<Option<(Incoming, usize)>> {
    let mut length: Option<usize> = None;
    let mut line = Vec::new();
    let mut lines = 0usize;
    loop {
        line.clear();
        lines += 1;
        if lines > MAX_HEADER_LINES {
            return Err(bad(&format!(
                "more than {MAX_HEADER_LINES} header lines without an empty line"
            )));
        }
        let n = io::Read::take(&mut *input, MAX_HEADER_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            return if lines == 1 {
                Ok(None)
            } else {
                Err(bad("the input ended inside a message's headers"))
            };
        }
        if !line.ends_with(b"\r\n") {
            return Err(bad(
                "a header line does not end with CRLF (or is over 4096 bytes)",
            ));
        }
        let text = &line[..line.len() - 2];
        if text.is_empty() {
            break;
        }
        let text = std::str::from_utf8(text).map_err(|_| bad("a header is not UTF-8"))?;
        let (name, value) = text
            .split_once(':')
            .ok_or_else(|| bad("a header has no ':'"))?;
        if name.trim().eq_ignore_ascii_case("content-length") {
            let n: usize = value
                .trim()
                .parse()
                .map_err(|_| bad("Content-Length is not a number"))?;
            if n > MAX_MESSAGE_BYTES {
                return Err(bad(&format!(
                    "Content-Length {n} is over the limit of {MAX_MESSAGE_BYTES} bytes"
                )));
            }
            length = Some(n);
        }
    }
    let length = length.ok_or_else(|| bad("a message has no Content-Length"))?;
    reserve(length);
    let mut body = Vec::with_capacity(length);
    io::Read::read_to_end(&mut io::Read::take(&mut *input, length as u64), &mut body)?;
    if body.len() < length {
        return Err(bad(&format!(
            "the input ended {} bytes into a message whose Content-Length is {length}",
            body.len()
        )));
    }
    let count = values(&body, MAX_MESSAGE_VALUES);
    if count > MAX_MESSAGE_VALUES {
        let id = serde_json::from_slice::<IdOnly>(&body)
            .ok()
            .and_then(|p| p.id);
        return Ok(Some((Incoming::TooManyValues(id), length)));
    }
    let incoming = match serde_json::from_slice::<Message>(&body) {
        // A notification has no id: one that has an invalid id was meant as a request, and
        // so was one the probe refuses, which can only be one whose `id` is given twice.
        Ok(Message::Notification(n))
            if serde_json::from_slice::<IdProbe>(&body).map_or(true, |p| p.id.is_some()) =>
        {
            Incoming::InvalidId(n.method)
        }
        Ok(message) => Incoming::Message(message),
        Err(e) => Incoming::Malformed(e.to_string()),
    };
    Ok(Some((incoming, length)))
}

/// A framing error: the session cannot go on (where the next message starts is lost).
fn bad(why: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "LSP framing lost: {why}; the session ends (the client must send \
             `Content-Length: N` and an empty line before each N-byte message; restart the server)"
        ),
    )
}

/// Where messages go: stdout, one whole message at a time.
#[derive(Clone)]
pub(super) struct Output {
    out: Arc<Mutex<dyn Write + Send>>,
}

impl Output {
    pub(super) fn stdout() -> Output {
        Output {
            out: Arc::new(Mutex::new(io::stdout())),
        }
    }

    pub(super) fn send(&self, message: impl Into<Message>) {
        let message: Message = message.into();
        match serde_json::to_string(&message) {
            Ok(text) => self.raw(&text),
            Err(e) => eprintln!("lisp-read-file lsp: cannot encode a message: {e}"),
        }
    }

    /// A request's answer, a response or its text.
    pub(super) fn reply(&self, reply: super::Reply) {
        match reply {
            super::Reply::Response(response) => self.send(response),
            super::Reply::Text(text) => self.raw(&text),
        }
    }

    /// `text` with `"jsonrpc": "2.0"` added at the front: `text` is an object.
    pub(super) fn raw(&self, text: &str) {
        let body = format!(
            "{{\"jsonrpc\":\"2.0\",{}",
            text.trim_start().trim_start_matches('{')
        );
        if let Ok(mut out) = self.out.lock() {
            let _ = write!(out, "Content-Length: {}\r\n\r\n{body}", body.len());
            let _ = out.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_counted_outside_strings_and_the_count_stops_past_the_limit() {
        assert_eq!(values(br#"{"a":[1,2,{"b":3}]}"#, 100), 6);
        // Commas, brackets and escaped quotes inside strings are text.
        assert_eq!(values(br#"["a,[{", ""],", 1]"#, 100), 4);
        assert_eq!(values(&b"0,".repeat(1000), 10), 11);
    }
}
