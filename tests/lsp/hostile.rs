//! Hostile input to the real binary over stdio: malformed JSON-RPC, requests out of
//! order, positions and ranges out of bounds, unknown URIs, paths outside the roots, a
//! huge Content-Length. Each gets an error (or ends the session with one), never a panic
//! or a hang.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(30);

struct Session {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
}

fn project() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/lsp/project")
        .to_string_lossy()
        .into_owned()
}

fn start() -> Session {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lisp-read-file"))
        .args(["lsp", "--root", &project()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the server");
    let stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let (tx, messages) = channel();
    std::thread::spawn(move || loop {
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            if stdout.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
            if let Some(n) = line.strip_prefix("Content-Length: ") {
                length = n.trim().parse().expect("a length");
            }
        }
        let mut body = vec![0; length];
        if stdout.read_exact(&mut body).is_err() {
            return;
        }
        if tx
            .send(serde_json::from_slice(&body).expect("the server writes JSON"))
            .is_err()
        {
            return;
        }
    });
    Session {
        child,
        stdin,
        messages,
    }
}

impl Session {
    fn raw(&mut self, body: &[u8]) {
        let _ = write!(self.stdin, "Content-Length: {}\r\n\r\n", body.len());
        let _ = self.stdin.write_all(body);
        let _ = self.stdin.flush();
    }

    fn send(&mut self, message: Value) {
        self.raw(message.to_string().as_bytes());
    }

    /// The next message that satisfies `wanted`, others dropped.
    fn next(&self, wanted: &dyn Fn(&Value) -> bool) -> Value {
        loop {
            let m = self.messages.recv_timeout(WAIT).expect("an answer in time");
            if wanted(&m) {
                return m;
            }
        }
    }

    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.next(&|m| m["id"] == json!(id))
    }
}

fn error_code(answer: &Value) -> i64 {
    answer["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("an error: {answer}"))
}

fn at(uri: &str, line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}})
}

#[test]
fn hostile_messages_get_errors_and_the_session_goes_on() {
    let mut s = start();
    // Before initialize.
    let early = s.request(1, "textDocument/hover", at("file:///x.lisp", 0, 0));
    assert_eq!(error_code(&early), -32002);
    // Not JSON, then JSON that is no message.
    s.raw(b"{not json");
    let parse = s.next(&|m| m.get("error").is_some());
    assert_eq!(error_code(&parse), -32700);
    assert_eq!(parse["id"], Value::Null);
    s.raw(b"[1, 2, 3]");
    assert_eq!(error_code(&s.next(&|m| m.get("error").is_some())), -32700);
    let init = s.request(
        2,
        "initialize",
        json!({"processId": null, "capabilities": {}}),
    );
    assert!(
        init["result"]["capabilities"]["definitionProvider"] == json!(true),
        "{init}"
    );
    assert_eq!(
        error_code(&s.request(3, "initialize", json!({"capabilities": {}}))),
        -32600
    );
    s.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    let render = format!("file://{}/src/render.lisp", project());
    // Parameters of the wrong shape, an unknown method.
    assert_eq!(
        error_code(&s.request(4, "textDocument/definition", json!({"x": 1}))),
        -32602
    );
    assert_eq!(
        error_code(&s.request(5, "textDocument/unheardOf", json!({}))),
        -32601
    );
    // Positions past the end, unknown URIs, files outside the roots.
    assert_eq!(
        error_code(&s.request(6, "textDocument/definition", at(&render, 9999, 0))),
        -32602
    );
    let far = s.request(7, "textDocument/hover", at(&render, 0, 4_000_000_000));
    assert!(
        far.get("error").is_none(),
        "a character past the line's end is its end: {far}"
    );
    for (id, uri) in [
        (8, "untitled:Untitled-1"),
        (9, "file:///etc/passwd"),
        (10, "file://remote.host/a.lisp"),
        (11, "file:///a%ZZ.lisp"),
    ] {
        let answer = s.request(
            id,
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri}}),
        );
        assert_eq!(error_code(&answer), -32602, "{uri}: {answer}");
    }
    let outside = s.request(
        12,
        "textDocument/definition",
        at("file:///etc/passwd", 0, 0),
    );
    assert!(
        outside["error"]["message"]
            .as_str()
            .unwrap()
            .contains("ACCESS_DENIED"),
        "{outside}"
    );
    // A change whose range is out of bounds: refused with a message, buffer unchanged.
    let uri = format!("file://{}/src/scratch.lisp", project());
    s.send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": uri, "languageId": "lisp", "version": 1, "text": "(a)\n"}}}));
    s.next(&|m| m["method"] == "textDocument/publishDiagnostics");
    s.send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": {"start": {"line": 7, "character": 0}, "end": {"line": 8, "character": 0}}, "text": "("}]}}));
    let shown = s.next(&|m| m["method"] == "window/showMessage");
    assert!(
        shown["params"]["message"]
            .as_str()
            .unwrap()
            .contains("past the end"),
        "{shown}"
    );
    // A change to a buffer never opened.
    s.send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": "file:///nowhere.lisp", "version": 2}, "contentChanges": [{"text": "("}]}}));
    s.next(&|m| m["method"] == "window/showMessage");
    // A buffer over the size cap is refused, not kept.
    let huge = "(a)".repeat(400_000);
    s.send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": format!("file://{}/src/huge.lisp", project()), "languageId": "lisp", "version": 1, "text": huge}}}));
    let refused = s.next(&|m| m["method"] == "window/showMessage");
    assert!(
        refused["params"]["message"]
            .as_str()
            .unwrap()
            .contains("over the limit"),
        "{refused}"
    );
    // Still answering.
    let symbols = s.request(
        13,
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": render}}),
    );
    assert_eq!(symbols["result"][0]["name"], "draw", "{symbols}");
    assert!(s
        .request(14, "shutdown", Value::Null)
        .get("error")
        .is_none());
    s.send(json!({"jsonrpc": "2.0", "method": "exit"}));
    assert!(s.child.wait().expect("exit").success());
}

#[test]
fn a_huge_content_length_ends_the_session_with_an_error_not_an_allocation() {
    let mut s = start();
    let _ = s
        .stdin
        .write_all(b"Content-Length: 18446744073709551615\r\n\r\n{}");
    let _ = s.stdin.flush();
    let status = s.child.wait().expect("the server exits");
    assert_eq!(status.code(), Some(1));
    let mut s = start();
    let _ = s.stdin.write_all(b"Content-Length 12\n\n");
    let _ = s.stdin.flush();
    assert_eq!(s.child.wait().expect("the server exits").code(), Some(1));
}

/// A request whose `id` is given twice is no valid request (which id would the answer
/// carry?): it is answered with an `InvalidRequest` error and a null id, as an id of the
/// wrong type is. It was read as a notification (which has no id) and never answered, so
/// that the client waited for it forever.
#[test]
fn a_request_with_two_ids_gets_an_invalid_request_error() {
    let mut s = start();
    s.request(1, "initialize", json!({"capabilities": {}}));
    s.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    s.raw(br#"{"jsonrpc":"2.0","id":2,"id":3,"method":"workspace/symbol","params":{"query":"a"}}"#);
    let answer = s.next(&|m| m.get("method").is_none());
    assert_eq!(error_code(&answer), -32600, "{answer}");
    assert_eq!(answer["id"], Value::Null, "{answer}");
    // A notification given an id twice was meant as a request too.
    s.raw(br#"{"jsonrpc":"2.0","id":4,"id":5,"method":"initialized","params":{}}"#);
    let answer = s.next(&|m| m.get("method").is_none());
    assert_eq!(error_code(&answer), -32600, "{answer}");
    let symbols = s.request(6, "workspace/symbol", json!({"query": "draw"}));
    assert!(symbols["result"].is_array(), "{symbols}");
    s.child.kill().ok();
}
