//! `lisp-find` with `callers` and `callees` on the real server over stdio
//! (docs/find.md#callers): the published schemas take them (tests/python validates the
//! results against the output schema) and the answers are the command line's.

use crate::client::RawServer;
use serde_json::{json, Value};
use std::path::Path;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/callers");

/// The `lisp-find` tool as `tools/list` describes it, and the result of one `lisp-find`
/// call per element of `calls`.
fn session(calls: &[Value]) -> (Value, Vec<Value>) {
    let mut server = RawServer::start_in(&["--root", FIXTURE], Path::new(FIXTURE), None);
    let find = server
        .tools()
        .into_iter()
        .find(|t| t["name"] == "lisp-find")
        .unwrap();
    let results = calls
        .iter()
        .map(|arguments| server.tool("lisp-find", arguments.clone()))
        .collect();
    (find, results)
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
    // The schemas take them (that results fit the outputSchema: tests/python).
    for key in ["callers", "callees"] {
        assert!(tool["inputSchema"]["properties"][key].is_object(), "{key}");
        assert!(tool["outputSchema"]["properties"][key].is_object(), "{key}");
    }
    for result in &results[..3] {
        assert_eq!(result["isError"], false, "{result}");
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
    // A whole answer is its entries: no count line (docs/find.md#output).
    assert!(text.contains("(defmethod describe-shape :around"), "{text}");
    assert!(!text.contains("definitions calling"), "{text}");
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

/// Over MCP too, callers cut by a file's budget of expansions say so (the command line's
/// case: tests/cli/callers.rs).
#[test]
fn callers_cut_by_the_expansion_budget_say_so_over_mcp() {
    let dir = std::env::temp_dir().join(format!("lrf-mcp-callers-cut-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let big = format!("(list {})", "x ".repeat(10_000));
    let text = format!(
        "(defmacro w (&body body)\n  `(progn (target) ,@body))\n\n(defun deep ()\n  {}{big}{})\n",
        "(w ".repeat(100),
        ")".repeat(100)
    );
    std::fs::write(dir.join("cut.lisp"), text).unwrap();
    let root = dir.to_str().unwrap();
    let mut server = RawServer::start_in(&["--root", root], &dir, None);
    let result = server.tool(
        "lisp-find",
        json!({"path": "cut.lisp", "callers": "target"}),
    );
    assert_eq!(result["isError"], false, "{result}");
    let content = result["content"][0]["text"].as_str().unwrap();
    assert!(
        content.contains("calls their later macro calls write may be missing: cut.lisp]"),
        "{content}"
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
