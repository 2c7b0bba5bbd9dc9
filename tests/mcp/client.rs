//! The one MCP client of this test binary: the real server on raw pipes, driven with
//! plain JSON-RPC lines (the protocol's stdio transport), synchronously.
//!
//! Every stdout line is checked to be a JSON-RPC 2.0 message. Requests the server sends
//! while a test waits (MCP `roots/list`) are answered with the roots the client was
//! started with. The official Python SDK drives the server too (tests/python), and checks
//! every `structuredContent` against its tool's `outputSchema` (JSON Schema 2020-12).

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");
/// How long a test waits for an answer before it fails.
pub const TIMEOUT: Duration = Duration::from_secs(30);
/// Ids the client picks itself start here, above the ones tests pick.
const FIRST_OWN_ID: u64 = 1_000_000;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Tests that keep the CPU busy for seconds run one at a time: on a small machine, two
/// at once would make each other look hung.
pub fn heavy() -> std::sync::MutexGuard<'static, ()> {
    static HEAVY: std::sync::Mutex<()> = std::sync::Mutex::new(());
    HEAVY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `lisp-read-file mcp` on raw pipes.
pub struct RawServer {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Receiver<String>,
    /// What `initialize` answered.
    pub init: Value,
    /// The MCP roots offered to the server, as `file://` URIs.
    roots: Option<Vec<String>>,
    next_id: u64,
}

impl RawServer {
    /// `lisp-read-file mcp ARGS` started in the repository and initialized.
    pub fn start(args: &[&str]) -> RawServer {
        RawServer::start_in(args, &repo(), None)
    }

    /// Started in the repository and initialized as a client with `capabilities`.
    pub fn start_with(args: &[&str], capabilities: Value) -> RawServer {
        RawServer::spawn(args, &repo(), capabilities, None)
    }

    /// Started in `cwd`; with `roots`, a client that offers them as MCP roots.
    pub fn start_in(args: &[&str], cwd: &Path, roots: Option<&[PathBuf]>) -> RawServer {
        let roots = roots.map(|roots| {
            roots
                .iter()
                .map(|p| format!("file://{}", p.display().to_string().replace(' ', "%20")))
                .collect()
        });
        let capabilities = match roots {
            Some(_) => json!({"roots": {}}),
            None => json!({}),
        };
        RawServer::spawn(args, cwd, capabilities, roots)
    }

    fn spawn(args: &[&str], cwd: &Path, capabilities: Value, roots: Option<Vec<String>>) -> Self {
        let mut child = Command::new(BIN)
            .arg("mcp")
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let lines = lines_of(child.stdout.take().unwrap());
        let stderr = all_of(child.stderr.take().unwrap());
        let stdin = child.stdin.take();
        let mut server = RawServer {
            child,
            stdin,
            lines,
            stderr,
            init: Value::Null,
            roots,
            next_id: FIRST_OWN_ID,
        };
        let init = server.request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": capabilities,
                   "clientInfo": {"name": "raw", "version": "1"}}),
        );
        assert!(init["result"]["protocolVersion"].is_string(), "{init}");
        server.init = init["result"].clone();
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).unwrap();
        line.push(b'\n');
        self.send_raw(&line);
    }

    /// The next stdout line within `within`, which must be a JSON-RPC 2.0 message.
    pub fn message_within(&mut self, within: Duration) -> Option<Value> {
        let line = self.lines.recv_timeout(within).ok()?;
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:.200}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line:.200}");
        assert!(
            message.get("result").is_some()
                || message.get("error").is_some()
                || message.get("method").is_some(),
            "not a JSON-RPC message: {line:.200}"
        );
        Some(message)
    }

    /// The next stdout line, which must come within [`TIMEOUT`].
    pub fn next_message(&mut self) -> Value {
        self.message_within(TIMEOUT)
            .expect("the server answers within 30 s")
    }

    /// Sends a request and returns the response with its id.
    pub fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(id)
    }

    /// The response to `id`; requests from the server are answered, notifications skipped.
    pub fn response(&mut self, id: u64) -> Value {
        let mut others = Vec::new();
        self.answer(id, TIMEOUT, &mut others)
            .expect("the server answers within 30 s")
    }

    /// The response to `id` if it comes within `within`; the server's requests are
    /// answered, other messages collected in `others`.
    pub fn answer(&mut self, id: u64, within: Duration, others: &mut Vec<Value>) -> Option<Value> {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            let message = self.message_within(left)?;
            if message.get("method").is_some() && message.get("id").is_some() {
                self.answer_server_request(&message);
            } else if message["id"] == id {
                return Some(message);
            } else {
                others.push(message);
            }
        }
    }

    fn answer_server_request(&mut self, request: &Value) {
        let id = request["id"].clone();
        let reply = match (request["method"].as_str(), &self.roots) {
            (Some("roots/list"), Some(roots)) => {
                let roots: Vec<Value> = roots.iter().map(|uri| json!({"uri": uri})).collect();
                json!({"jsonrpc": "2.0", "id": id, "result": {"roots": roots}})
            }
            (Some("ping"), _) => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
            _ => json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": -32601, "message": "Method not found"}}),
        };
        self.send(&reply);
    }

    /// Sends a `tools/call` request with `id` without waiting for its answer.
    pub fn send_call(&mut self, id: u64, tool: &str, arguments: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}));
    }

    /// A `tools/call` with `id`: the whole response message.
    pub fn call(&mut self, id: u64, tool: &str, arguments: Value) -> Value {
        self.send_call(id, tool, arguments);
        self.response(id)
    }

    /// A `tools/call`: its result (a tool result, successful or not); a protocol error
    /// fails the test.
    pub fn tool(&mut self, tool: &str, arguments: Value) -> Value {
        let id = self.own_id();
        let response = self.call(id, tool, arguments);
        assert!(
            response.get("error").is_none(),
            "{tool}: the call failed at the protocol level: {response}"
        );
        response["result"].clone()
    }

    /// The tools `tools/list` lists.
    pub fn tools(&mut self) -> Vec<Value> {
        let id = self.own_id();
        let response = self.request(id, "tools/list", json!({}));
        response["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("tools/list: {response}"))
            .clone()
    }

    pub fn own_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    pub fn cancel(&mut self, id: u64) {
        self.send(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "test"}}),
        );
    }

    /// A good call still gets a good answer.
    pub fn assert_alive(&mut self, id: u64) {
        let response = self.call(
            id,
            "lisp-read-file",
            json!({"path": "fixtures/demo/demo.lisp"}),
        );
        assert_eq!(response["result"]["isError"], false, "{response}");
        let text = response["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with(" 2: (defpackage #:demo ...)"), "{text}");
    }

    /// Closes stdin; the server must exit 0 soon, with only JSON-RPC lines left on stdout
    /// and no panic on stderr. Returns the messages that were still written.
    pub fn finish(mut self) -> Vec<Value> {
        drop(self.stdin.take());
        let status = self.exit_status();
        let mut rest = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:.200}"));
            rest.push(message);
        }
        let stderr = self.stderr.recv_timeout(TIMEOUT).unwrap_or_default();
        assert!(
            !stderr.contains("panicked"),
            "the server panicked:\n{stderr}"
        );
        assert!(status.success(), "exit status {status}; stderr:\n{stderr}");
        rest
    }

    fn exit_status(&mut self) -> ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                started.elapsed() < TIMEOUT,
                "the server did not exit after stdin closed"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The lines of `pipe`, read on a thread of their own.
fn lines_of(pipe: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

/// All of `pipe` once it closes, read on a thread of its own.
fn all_of(pipe: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (tx, all) = mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            text.push_str(&line);
            text.push('\n');
        }
        let _ = tx.send(text);
    });
    all
}

/// The text of a tool result's content blocks, joined by newlines.
pub fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// CPU time of the process `pid` so far, in clock ticks: user and system, of every thread,
/// the ended ones' too (fields 14 and 15 of `/proc/PID/stat`, 12 and 13 after the name).
pub fn process_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}
