//! `lisp-find` with `callers` and `callees` on the real server over stdio
//! (docs/find.md#callers): the published input schema takes them, the structured
//! result validates against the published output schema, and the answers are the
//! command line's.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");
const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/callers");

/// The answers to `tools/list` and to one `lisp-find` call per element of `calls`.
fn session(calls: &[Value]) -> (Value, Vec<Value>) {
    let mut child = Command::new(BIN)
        .args(["mcp", "--root", FIXTURE])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut messages = vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    ];
    for (k, arguments) in calls.iter().enumerate() {
        messages.push(
            json!({"jsonrpc": "2.0", "id": 2 + k, "method": "tools/call",
            "params": {"name": "lisp-find", "arguments": arguments}}),
        );
    }
    for message in messages {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    let mut tools = Value::Null;
    let mut results = vec![Value::Null; calls.len()];
    let mut answered = 0;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let message: Value = serde_json::from_str(&line.unwrap()).unwrap();
        match message["id"].as_u64() {
            Some(1) => tools = message["result"]["tools"].clone(),
            Some(id @ 2..) => {
                results[id as usize - 2] = message["result"].clone();
                answered += 1;
                if answered == calls.len() {
                    break;
                }
            }
            _ => {}
        }
    }
    drop(stdin);
    let _ = child.wait();
    let find = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "lisp-find")
        .unwrap()
        .clone();
    (find, results)
}

fn validate(schema: &Value, value: &Value) {
    let validator = jsonschema::validator_for(schema).expect("the schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}\n{value:#}");
}

#[test]
fn lisp_find_lists_callers_and_callees_within_its_published_schemas() {
    let calls = [
        json!({"callers": "area"}),
        json!({"callees": "report"}),
        json!({"callers": "area", "kinds": ["defmethod"]}),
        json!({"callers": "area", "name": "area"}),
    ];
    let (tool, results) = session(&calls);
    for arguments in &calls[..3] {
        validate(&tool["inputSchema"], arguments);
    }
    for result in &results[..3] {
        assert_eq!(result["isError"], false, "{result}");
        validate(&tool["outputSchema"], &result["structuredContent"]);
    }
    let callers: Vec<&str> = results[0]["structuredContent"]["callers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        callers,
        [
            "total-area",
            "areas",
            "quoted-areas",
            "describe-shape :around (square)",
            "describe-shape (circle)"
        ]
    );
    let text = results[0]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("[5 definitions calling area (6 calls) in 1 file; 2 files searched]"),
        "{text}"
    );
    let report = &results[1]["structuredContent"]["callees"][0];
    assert_eq!(report["callees"][0]["name"], "areas");
    assert_eq!(report["callees"][0]["definitions"][0]["line"], 14);
    assert_eq!(report["outside"], json!(["print-shapes"]));
    // kinds keeps the methods only.
    assert_eq!(
        results[2]["structuredContent"]["callers"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // Two modes at once is an error that names them.
    assert_eq!(results[3]["isError"], true);
    let message = results[3]["content"][0]["text"].as_str().unwrap();
    assert!(message.contains("name and callers"), "{message}");
}
