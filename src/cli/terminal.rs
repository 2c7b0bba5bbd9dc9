//! The command line's standard output. On a terminal, a file's text is written as
//! `shown_on_terminal` shows it (docs/guard.md#file-contents-on-a-terminal): a carriage
//! return cannot forge a `==> PATH <==` header, an ESC cannot drive the terminal. Piped
//! output and `--json` carry the bytes verbatim, as a script needs them. One writer under
//! every text the command line prints, so no view has to think of it.

use lisp_read_file::guard::shown_on_terminal;
use std::io::{self, IsTerminal, Write};

/// Where the command line writes its answer: escaped on a terminal (not for `--json`).
pub(super) fn stdout(json: bool) -> Box<dyn Write> {
    let stdout = io::stdout();
    if !json && stdout.is_terminal() {
        Box::new(TerminalText::new(stdout.lock()))
    } else {
        Box::new(stdout.lock())
    }
}

/// Writes text with its control and bidirectional characters escaped.
pub(super) struct TerminalText<W: Write> {
    inner: W,
    /// The start of a character a write ended inside (at most 3 bytes).
    pending: Vec<u8>,
}

impl<W: Write> TerminalText<W> {
    pub(super) fn new(inner: W) -> Self {
        TerminalText {
            inner,
            pending: Vec::new(),
        }
    }

    /// Writes the complete characters of `bytes` escaped, a byte that is not UTF-8 as
    /// `\xHH`; returns where an unfinished character starts.
    fn write_escaped(&mut self, mut bytes: &[u8]) -> io::Result<usize> {
        let whole = bytes.len();
        loop {
            let (text, bad) = match std::str::from_utf8(bytes) {
                Ok(text) => (text, None),
                Err(e) => {
                    let (good, _) = bytes.split_at(e.valid_up_to());
                    (std::str::from_utf8(good).unwrap_or(""), Some(e))
                }
            };
            self.inner.write_all(shown_on_terminal(text).as_bytes())?;
            let Some(e) = bad else {
                return Ok(whole);
            };
            let rest = &bytes[e.valid_up_to()..];
            let Some(len) = e.error_len() else {
                return Ok(whole - rest.len());
            };
            for byte in &rest[..len] {
                write!(self.inner, "\\x{byte:02x}")?;
            }
            bytes = &rest[len..];
        }
    }
}

impl<W: Write> Write for TerminalText<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut bytes = std::mem::take(&mut self.pending);
        bytes.extend_from_slice(buf);
        let done = self.write_escaped(&bytes)?;
        self.pending = bytes[done..].to_vec();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Write> Drop for TerminalText<W> {
    /// A character the output ended inside is written as its bytes, `\xHH`.
    fn drop(&mut self) {
        for byte in std::mem::take(&mut self.pending) {
            let _ = write!(self.inner, "\\x{byte:02x}");
        }
        let _ = self.inner.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_character_split_between_writes_is_written_whole() {
        let mut out = Vec::new();
        {
            let mut text = TerminalText::new(&mut out);
            let bytes = "é\u{202e}\r\u{1b}x".as_bytes();
            for byte in bytes {
                text.write_all(std::slice::from_ref(byte)).unwrap();
            }
            text.write_all(b"\xffy\xc3").unwrap();
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "é\\u{202e}\\r\\u{1b}x\\xffy\\xc3"
        );
    }
}
