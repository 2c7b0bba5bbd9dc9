#![allow(deprecated)] // MCP roots: deprecated by the newest protocol, used by the older ones.
//! The MCP server driven by rmcp's own client over the real binary's stdio: initialize,
//! `tools/list` (schemas, annotations), every tool on fixtures, every error code, MCP
//! roots, and every `structuredContent` validated against its tool's `outputSchema`.

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    ListRootsResult, Root, Tool,
};
use rmcp::service::{Peer, RequestContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A scratch directory under the target directory, fresh for each test.
fn scratch(name: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "lrf-mcp-{}-{}-{name}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

type Client = RunningService<RoleClient, ()>;

/// Starts `lisp-read-file mcp ARGS` in `cwd` and initializes it with rmcp's client.
async fn start(args: &[&str], cwd: &Path) -> Client {
    ().serve(server_process(args, cwd))
        .await
        .expect("initialize")
}

/// Starts `lisp-read-file mcp` in `cwd` with a client that offers `roots` as MCP roots.
async fn start_with_roots(
    roots: Vec<PathBuf>,
    cwd: &Path,
) -> RunningService<RoleClient, RootsClient> {
    RootsClient { roots }
        .serve(server_process(&[], cwd))
        .await
        .expect("initialize")
}

fn server_process(args: &[&str], cwd: &Path) -> TokioChildProcess {
    let mut command = tokio::process::Command::new(BIN);
    command.arg("mcp").args(args).current_dir(cwd);
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the server");
    transport
}

fn arguments(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("arguments must be an object: {other}"),
    }
}

async fn call(client: &Peer<RoleClient>, tool: &str, args: Value) -> CallToolResult {
    client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(arguments(args)))
        .await
        .unwrap_or_else(|e| panic!("{tool}: the call failed at the protocol level: {e}"))
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Checks that a successful result's structured content validates against the tool's
/// `outputSchema`, and returns it.
/// The view is said once (docs/mcp.md#results): `lisp-read-file` and `lisp-find` give it
/// as the text content only; it is put back here, as a client would, for the checks below.
fn structured_ok(tool: &Tool, result: &CallToolResult) -> Value {
    let mut value = structured_fits(tool, result);
    if ["lisp-read-file", "lisp-find"].contains(&tool.name.as_ref()) {
        assert!(value.get("content").is_none(), "the view twice: {value}");
        value["content"] = Value::String(text_of(result));
    }
    value
}

/// Checks that a successful result's structured content validates against the tool's
/// `outputSchema`, and returns it.
fn structured_fits(tool: &Tool, result: &CallToolResult) -> Value {
    assert_eq!(
        result.is_error,
        Some(false),
        "{}: {}",
        tool.name,
        text_of(result)
    );
    let value = result
        .structured_content
        .clone()
        .expect("structuredContent");
    let schema = Value::Object((*tool.output_schema.clone().unwrap()).clone());
    let validator = jsonschema::validator_for(&schema).expect("outputSchema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{}: {errors:?}\n{value:#}", tool.name);
    value
}

/// Checks a tool error and returns its code.
fn error_code(result: &CallToolResult) -> String {
    assert_eq!(
        result.is_error,
        Some(true),
        "expected an error: {}",
        text_of(result)
    );
    let value = result
        .structured_content
        .clone()
        .expect("structuredContent on error");
    let code = value["code"]
        .as_str()
        .or_else(|| value["error"]["code"].as_str())
        .unwrap_or_else(|| panic!("no code in {value}"));
    assert!(!text_of(result).is_empty());
    code.to_string()
}

async fn tools(client: &Client) -> Vec<Tool> {
    client.list_all_tools().await.expect("tools/list")
}

fn find<'a>(tools: &'a [Tool], name: &str) -> &'a Tool {
    tools
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

#[tokio::test]
async fn initialize_and_the_default_tools() {
    let client = start(&[], &repo()).await;
    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("lisp-read-file")
    );
    let instructions = info.instructions.clone().unwrap_or_default();
    assert!(instructions.contains("before you edit"), "{instructions}");
    let tools = tools(&client).await;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["lisp-read-file", "lisp-find", "read_file"]);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn every_tool_has_schemas_and_annotations() {
    let client = start(
        &["--tools", "lisp-read-file,lisp-find,read_file,Read"],
        &repo(),
    )
    .await;
    let tools = tools(&client).await;
    assert_eq!(tools.len(), 4);
    for tool in &tools {
        let wire = serde_json::to_value(tool).unwrap();
        assert!(wire["title"].is_string(), "{}", tool.name);
        let annotations = &wire["annotations"];
        assert_eq!(annotations["readOnlyHint"], true, "{}", tool.name);
        assert_eq!(annotations["idempotentHint"], true, "{}", tool.name);
        assert_eq!(annotations["openWorldHint"], false, "{}", tool.name);
        assert_eq!(annotations["destructiveHint"], false, "{}", tool.name);
        assert!(annotations["title"].is_string(), "{}", tool.name);
        for key in ["inputSchema", "outputSchema"] {
            let schema = &wire[key];
            assert_eq!(schema["type"], "object", "{} {key}", tool.name);
            jsonschema::meta::validate(schema)
                .unwrap_or_else(|e| panic!("{} {key} is not a valid JSON Schema: {e}", tool.name));
        }
        let description = tool.description.as_deref().unwrap_or("");
        assert!(
            !description.is_empty() && !description.contains('\n'),
            "{}",
            tool.name
        );
    }
    let own = find(&tools, "lisp-read-file");
    assert!(own
        .description
        .as_deref()
        .unwrap()
        .starts_with("Read before you edit"));
    // read_file: the read_file definition (docs/mcp.md#read_file), verbatim.
    let read_file = serde_json::to_value(find(&tools, "read_file")).unwrap();
    assert_eq!(
        read_file["description"],
        "Reads a UTF-8 text file in the workspace and returns a line-limited content window."
    );
    assert_eq!(
        read_file["inputSchema"],
        json!({
          "type": "object",
          "properties": {
            "path": {"type": "string",
                     "description": "Workspace-root-relative file path to read (e.g., \"src/main.ts\")."},
            "start_line": {"type": "number", "default": 1,
                           "description": "1-based start line of the returned window (default: 1)."},
            "max_lines": {"type": "number", "default": 200,
                          "description": "Maximum number of lines to return (default: 200)."}
          },
          "required": ["path"]
        })
    );
    // Read: the Read definition (docs/mcp.md#read), verbatim.
    let read = serde_json::to_value(find(&tools, "Read")).unwrap();
    assert_eq!(
        read["description"],
        "Reads a file from the local filesystem with line numbers. Optimized for code editing."
    );
    assert_eq!(
        read["inputSchema"],
        json!({
          "type": "object",
          "properties": {
            "path": {"type": "string",
                     "description": "Path to the file (relative to project root). Required."},
            "start_line": {"type": "integer", "default": 1,
                           "description": "The line number to start reading from (1-based). Default is 1."},
            "limit": {"type": "integer", "default": 500,
                      "description": "The maximum number of lines to read. Default is 500. Hard limit is 2000."}
          },
          "required": ["path"]
        })
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn lisp_read_file_views_match_the_cli() {
    let client = start(&[], &repo()).await;
    let tools = tools(&client).await;
    let tool = find(&tools, "lisp-read-file");
    let cli = |args: &[&str]| {
        let out = std::process::Command::new(BIN)
            .args(args)
            .current_dir(repo())
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let demo = "fixtures/demo/demo.lisp";
    let cases = [
        (json!({"path": demo}), vec![demo], "lisp-collapsed"),
        (
            json!({"path": demo, "name_pattern": "with-shape"}),
            vec!["-n", "with-shape", demo],
            "lisp-collapsed",
        ),
        (
            json!({"path": demo, "content_pattern": "incf"}),
            vec!["-c", "incf", demo],
            "lisp-collapsed",
        ),
        (
            json!({"path": demo, "comments": "headers", "limit": 3}),
            vec!["--comments", "headers", "--limit", "3", demo],
            "lisp-collapsed",
        ),
        (
            json!({"path": demo, "collapsed": false, "offset": 5, "limit": 4, "line_numbers": true}),
            vec![
                "--raw",
                "--offset",
                "5",
                "--limit",
                "4",
                "--line-numbers",
                demo,
            ],
            "raw",
        ),
        (
            json!({"path": "fixtures/views/kinds_features.lisp", "kinds": ["defun", "cl:defmethod"], "features": ["sbcl", "x86-64", "unix"]}),
            vec![
                "--kinds",
                "defun,cl:defmethod",
                "--features",
                "sbcl,x86-64,unix",
                "fixtures/views/kinds_features.lisp",
            ],
            "lisp-collapsed",
        ),
        (
            json!({"path": "README.md", "content_pattern": "MCP", "context_lines": 1}),
            vec!["-c", "MCP", "--context", "1", "README.md"],
            "text-filtered",
        ),
    ];
    for (args, cli_args, mode) in cases {
        let result = call(&client, "lisp-read-file", args.clone()).await;
        let value = structured_ok(tool, &result);
        // The same view; only the hints are spelled for each surface (docs/tool.md#hints).
        let expected = cli(&cli_args)
            .replace("Use --offset ", "Use offset=")
            .replace("use --offset ", "use offset=");
        // The CLI ends its output with a newline; the tool's content is the view itself.
        assert_eq!(
            format!("{}\n", text_of(&result)).trim_end(),
            expected.trim_end(),
            "{args}"
        );
        assert_eq!(value["content"].as_str().unwrap(), text_of(&result));
        assert_eq!(value["mode"], mode, "{args}");
        assert_eq!(value["path"], args["path"]);
    }
    let result = call(
        &client,
        "lisp-read-file",
        json!({"path": demo, "name_pattern": "area :around"}),
    )
    .await;
    let value = structured_ok(tool, &result);
    assert_eq!(value["meta"]["expanded_forms"], 1);
    assert!(text_of(&result).contains("22: (defmethod area :around ((s shape))"));
    let result = call(
        &client,
        "lisp-read-file",
        json!({"path": "fixtures/views/kinds_features.lisp", "kinds": ["defclass"], "features": ["ccl"]}),
    )
    .await;
    structured_ok(tool, &result);
    assert!(text_of(&result).starts_with(
        "[features: 1 form not shown, excluded by #+/#- under (ccl).]\n[kinds: 9 other forms not shown (kinds defclass).]\n 5: (defclass shape () (name))\n"
    ), "{}", text_of(&result));
    client.cancel().await.unwrap();
}

/// `lisp-find` over a scratch project: definitions, references, paging, every refusal as
/// a tool result with its code, and every `structuredContent` against the output schema.
#[tokio::test]
async fn lisp_find_derived_definitions_match_the_output_schema() {
    let dir = scratch("find-derived");
    std::fs::write(
        dir.join("s.lisp"),
        "(defstruct (point (:include base)) x)\n(defstruct base id)\n(defgeneric area (s)\n  (:method ((s point)) 0))\n",
    )
    .unwrap();
    let root = dir.to_str().unwrap();
    let client = start(&["--root", root], &dir).await;
    let listed = tools(&client).await;
    let tool = find(&listed, "lisp-find");
    let result = call(
        &client,
        "lisp-find",
        json!({"name": "point-id", "include_body": true}),
    )
    .await;
    let value = structured_ok(tool, &result);
    let d = &value["definitions"][0];
    assert_eq!(d["kind"], "accessor");
    assert_eq!(
        d["form"],
        json!({"line": 1, "end_line": 1, "kind": "defstruct", "name": "point"})
    );
    assert!(d["body"].as_str().unwrap().starts_with("(defstruct (point"));
    let result = call(
        &client,
        "lisp-find",
        json!({"name_pattern": "area", "features": ["sbcl"]}),
    )
    .await;
    let value = structured_ok(tool, &result);
    let kinds: Vec<&str> = value["definitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["defgeneric", "method"]);
    assert_eq!(value["definitions"][1]["name"], "area (point)");
}

#[tokio::test]
async fn lisp_find_definitions_references_and_errors() {
    let dir = scratch("find");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("src/a.lisp"),
        "(defun make-point (x y)\n  (list x y))\n\n(defun norm (p)\n  ;; make-point here is a comment\n  (reduce #'+ (make-point 1 \"make-point\")))\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/b.lisp"),
        "(defmacro make-line () `(make-point ,1 2))\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("p.asd"),
        "(defsystem p :components ((:file \"src/a\")))\n",
    )
    .unwrap();
    std::fs::write(dir.join("bin.lisp"), "(make-point \0)").unwrap();
    let root = dir.to_str().unwrap();
    let client = start(&["--root", root], &dir).await;
    let listed = tools(&client).await;
    let tool = find(&listed, "lisp-find");
    // Definitions by pattern, whole project.
    let result = call(&client, "lisp-find", json!({"name_pattern": "^make-"})).await;
    let value = structured_ok(tool, &result);
    assert_eq!(value["mode"], "definitions");
    assert_eq!(value["total"], 2);
    assert_eq!(value["definitions"][0]["file"], "src/a.lisp");
    assert_eq!(value["definitions"][0]["kind"], "defun");
    assert_eq!(value["definitions"][1]["name"], "make-line");
    assert_eq!(value["files_skipped"][0]["file"], "bin.lisp");
    assert_eq!(value["files_skipped"][0]["code"], "BINARY_FILE");
    assert_eq!(text_of(&result), value["content"].as_str().unwrap());
    // With bodies, by exact name.
    let result = call(
        &client,
        "lisp-find",
        json!({"name": "MAKE-POINT", "include_body": true, "path": "src"}),
    )
    .await;
    let value = structured_ok(tool, &result);
    assert_eq!(
        value["definitions"][0]["body"],
        "(defun make-point (x y)\n  (list x y))"
    );
    // References, grouped by form, the definition marked.
    let result = call(
        &client,
        "lisp-find",
        json!({"symbol": "make-point", "path": "p.asd"}),
    )
    .await;
    let value = structured_ok(tool, &result);
    assert_eq!(value["mode"], "references");
    let refs = value["references"].as_array().unwrap();
    let got: Vec<(String, u64, bool, usize)> = refs
        .iter()
        .map(|r| {
            (
                r["file"].as_str().unwrap().to_string(),
                r["line"].as_u64().unwrap(),
                r["definition"].as_bool().unwrap(),
                r["uses"].as_array().unwrap().len(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("src/a.lisp".to_string(), 1, true, 1),
            ("src/a.lisp".to_string(), 4, false, 1),
            ("src/b.lisp".to_string(), 1, false, 1)
        ]
    );
    assert_eq!(
        refs[1]["uses"][0],
        json!({"line": 6, "column": 15, "text": "  (reduce #'+ (make-point 1 \"make-point\")))"})
    );
    // Paging: one entry per page at limit 1.
    let result = call(
        &client,
        "lisp-find",
        json!({"symbol": "make-point", "limit": 1, "offset": 1}),
    )
    .await;
    let value = structured_ok(tool, &result);
    assert_eq!(value["truncated"], true);
    assert_eq!(value["next_offset"], 2);
    assert!(text_of(&result).contains("continue with offset=2"));
    // Refusals.
    for (args, code) in [
        (json!({}), "INVALID_ARGUMENT"),
        (json!({"name": "a", "symbol": "a"}), "INVALID_ARGUMENT"),
        (json!({"symbol": "a", "bogus": true}), "INVALID_ARGUMENT"),
        (json!({"name_pattern": "\\w{5000}"}), "INVALID_ARGUMENT"),
        (json!({"symbol": "a", "limit": 0}), "INVALID_ARGUMENT"),
        (json!({"symbol": "a", "path": "missing"}), "NOT_FOUND"),
        (json!({"symbol": "a", "path": "/etc"}), "ACCESS_DENIED"),
        (json!({"symbol": "a", "path": "bin.lisp"}), "BINARY_FILE"),
    ] {
        let result = call(&client, "lisp-find", args.clone()).await;
        assert_eq!(error_code(&result), code, "{args}");
        structured_error_fits(tool, &result);
    }
    client.cancel().await.unwrap();
}

/// A tool error's structured content fits the tool's output schema too.
fn structured_error_fits(tool: &Tool, result: &CallToolResult) {
    let value = result.structured_content.clone().unwrap();
    let schema = Value::Object((*tool.output_schema.clone().unwrap()).clone());
    let validator = jsonschema::validator_for(&schema).expect("outputSchema compiles");
    assert!(validator.is_valid(&value), "{value}");
}

#[tokio::test]
async fn read_file_windows() {
    let root = scratch("read-file");
    let lines: String = (1..=450).map(|i| format!("line {i}\r\n")).collect();
    std::fs::write(root.join("long.txt"), lines).unwrap();
    std::fs::write(root.join("short.lisp"), "(a)\n(b)").unwrap();
    std::fs::write(root.join("bad.txt"), b"ok\n\xFF\n").unwrap();
    let client = start(&["--root", root.to_str().unwrap()], &repo()).await;
    let tools = tools(&client).await;
    let tool = find(&tools, "read_file");

    let value = structured_ok(
        tool,
        &call(&client, "read_file", json!({"path": "long.txt"})).await,
    );
    assert_eq!(value["truncated"], true);
    assert_eq!(value["next_start_line"], 201);
    assert_eq!(value["meta"]["returned_line_count"], 200);
    assert_eq!(value["meta"]["line_count"], 450);
    assert_eq!(value["path"], "long.txt");
    let content = value["content"].as_str().unwrap();
    assert!(content.starts_with("line 1\nline 2\n") && content.ends_with("line 200\n"));

    let value = structured_ok(
        tool,
        &call(
            &client,
            "read_file",
            json!({"path": "long.txt", "start_line": 401, "max_lines": 500}),
        )
        .await,
    );
    assert_eq!(value["truncated"], false);
    assert_eq!(value["next_start_line"], Value::Null);
    assert_eq!(value["meta"]["returned_line_count"], 50);

    // Past the end: empty content, not an error (the read_file definition (docs/mcp.md#read_file)).
    let value = structured_ok(
        tool,
        &call(
            &client,
            "read_file",
            json!({"path": "long.txt", "start_line": 999}),
        )
        .await,
    );
    assert_eq!(
        (value["content"].as_str(), value["truncated"].as_bool()),
        (Some(""), Some(false))
    );

    let value = structured_ok(
        tool,
        &call(&client, "read_file", json!({"path": "short.lisp"})).await,
    );
    assert_eq!(value["content"], "(a)\n(b)");
    assert_eq!(value["meta"]["byte_length"], 7);

    let value = structured_ok(
        tool,
        &call(&client, "read_file", json!({"path": "bad.txt"})).await,
    );
    assert_eq!(value["content"], "ok\n\u{FFFD}\n");
    assert_eq!(value["meta"]["fallback_encoding"], "replace");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn read_envelope() {
    let root = scratch("read");
    let lines: String = (1..=30).map(|i| format!("l{i}\n")).collect();
    std::fs::write(root.join("f.txt"), lines).unwrap();
    std::fs::write(root.join("empty.txt"), "").unwrap();
    let client = start(
        &["--root", root.to_str().unwrap(), "--tools", "Read"],
        &repo(),
    )
    .await;
    let tools = tools(&client).await;
    assert_eq!(tools.len(), 1);
    let tool = find(&tools, "Read");

    let value = structured_ok(
        tool,
        &call(
            &client,
            "Read",
            json!({"path": "f.txt", "start_line": 9, "limit": 2}),
        )
        .await,
    );
    assert_eq!(value["status"], "partial");
    assert_eq!(value["data"]["content"], "   9 | l9\n  10 | l10\n");
    assert_eq!(value["data"]["truncated"], true);
    assert_eq!(value["stats"]["lines_read"], 2);
    assert_eq!(value["stats"]["total_lines"], 30);
    assert_eq!(value["context"]["cwd"], ".");
    assert_eq!(value["context"]["path_resolved"], "f.txt");
    assert_eq!(
        value["context"]["params_input"],
        json!({"path": "f.txt", "start_line": 9, "limit": 2})
    );
    let text = value["text"].as_str().unwrap();
    assert!(
        text.starts_with("Read 2 lines from 'f.txt' (Lines 9-10).\n(Took "),
        "{text}"
    );
    assert!(text.ends_with("Use start_line=11 to continue.]"), "{text}");
    assert!(value.get("error").is_none());

    let value = structured_ok(tool, &call(&client, "Read", json!({"path": "f.txt"})).await);
    assert_eq!(value["status"], "success");
    assert_eq!(value["stats"]["lines_read"], 30);

    let value = structured_ok(
        tool,
        &call(&client, "Read", json!({"path": "empty.txt"})).await,
    );
    assert_eq!(value["status"], "success");
    assert_eq!(
        value["text"],
        "Read 0 lines from 'empty.txt' (file is empty)."
    );

    for args in [
        json!({"path": "f.txt", "start_line": 31}),
        json!({"path": "f.txt", "limit": 2001}),
        json!({"path": "f.txt", "limit": 0}),
        json!({"path": "empty.txt", "start_line": 2}),
    ] {
        let result = call(&client, "Read", args.clone()).await;
        assert_eq!(error_code(&result), "INVALID_PARAM", "{args}");
        let envelope = result.structured_content.unwrap();
        assert_eq!(envelope["status"], "error");
        assert_eq!(envelope["data"], Value::Null);
        // Errors keep the envelope, so they validate against the outputSchema too.
        let schema = Value::Object((*tool.output_schema.clone().unwrap()).clone());
        assert!(jsonschema::is_valid(&schema, &envelope), "{envelope}");
    }
    client.cancel().await.unwrap();
}

/// A project with one file of every kind the guard refuses.
fn troublesome_project() -> (PathBuf, PathBuf) {
    let base = scratch("errors");
    let root = base.join("root");
    std::fs::create_dir_all(root.join("dir")).unwrap();
    std::fs::write(root.join("ok.lisp"), "(defun f (x) x)\n").unwrap();
    std::fs::write(root.join("binary.lisp"), b"(a)\0(b)").unwrap();
    std::fs::write(root.join("big.lisp"), "(a)\n".repeat(2000)).unwrap();
    std::fs::write(base.join("secret.lisp"), "(secret)").unwrap();
    std::os::unix::fs::symlink(base.join("secret.lisp"), root.join("link.lisp")).unwrap();
    let fifo = root.join("fifo.lisp");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    (base, root)
}

#[tokio::test]
async fn every_error_code_is_a_tool_result_and_the_server_keeps_serving() {
    let (base, root) = troublesome_project();
    let client = start(
        &[
            "--root",
            root.to_str().unwrap(),
            "--tools",
            "lisp-read-file,read_file,Read",
            "--max-file-bytes",
            "4096",
        ],
        &repo(),
    )
    .await;
    let tools = tools(&client).await;
    let secret = base.join("secret.lisp");
    let secret = secret.to_str().unwrap();
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "lisp-read-file",
            json!({"path": "missing.lisp"}),
            "NOT_FOUND",
        ),
        (
            "lisp-read-file",
            json!({"path": "dir", "collapsed": false}),
            "INVALID_ARGUMENT",
        ),
        ("lisp-read-file", json!({"path": "fifo.lisp"}), "NOT_FILE"),
        (
            "lisp-read-file",
            json!({"path": "../secret.lisp"}),
            "ACCESS_DENIED",
        ),
        ("lisp-read-file", json!({"path": secret}), "ACCESS_DENIED"),
        (
            "lisp-read-file",
            json!({"path": "link.lisp"}),
            "ACCESS_DENIED",
        ),
        (
            "lisp-read-file",
            json!({"path": "binary.lisp"}),
            "BINARY_FILE",
        ),
        (
            "lisp-read-file",
            json!({"path": "big.lisp", "strategy": {"type": "complete"}}),
            "SIZE_LIMIT_EXCEEDED",
        ),
        (
            "lisp-read-file",
            json!({"path": "ok.lisp", "strategy": {"type": "byteRange", "start": 17}}),
            "INVALID_ARGUMENT",
        ),
        (
            "lisp-read-file",
            json!({"path": "ok.lisp", "strategy": {"type": "byteRange", "start": 5, "end": 4}}),
            "INVALID_ARGUMENT",
        ),
        (
            "lisp-read-file",
            json!({"path": "ok.lisp", "strategy": {"type": "lineRange", "startLine": 0}}),
            "INVALID_ARGUMENT",
        ),
        (
            "lisp-read-file",
            json!({"path": "ok.lisp", "strategy": {"type": "lineRange", "startLine": 2}}),
            "INVALID_ARGUMENT",
        ),
        (
            "lisp-read-file",
            json!({"path": "ok.lisp", "strategy": {"type": "lineRange", "startLine": 1, "endLine": 18446744073709551615u64}}),
            "INVALID_ARGUMENT",
        ),
        (
            "lisp-read-file",
            json!({"path": "ok.lisp", "strategy": {"type": "lineRange", "start": 1}}),
            "INVALID_ARGUMENT",
        ),
        (
            "lisp-read-file",
            json!({"path": "ok.lisp", "strategy": {"type": "everything"}}),
            "INVALID_ARGUMENT",
        ),
        (
            "lisp-read-file",
            json!({"path": "ok.lisp", "strategy": "complete"}),
            "INVALID_ARGUMENT",
        ),
        (
            "read_file",
            json!({"path": "ok.lisp", "start_line": 5, "end_line": 6}),
            "INVALID_ARGUMENT",
        ),
        (
            "read_file",
            json!({"path": "ok.lisp", "maxLines": 6}),
            "INVALID_ARGUMENT",
        ),
        (
            "read_file",
            json!({"path": "ok.lisp", "strategy": {"type": "complete"}}),
            "INVALID_ARGUMENT",
        ),
        (
            "Read",
            json!({"path": "ok.lisp", "start_line": 1, "end_line": 6}),
            "INVALID_PARAM",
        ),
        (
            "lisp-read-file",
            json!({"path": "ok.lisp", "content_pattern": "\\w{5000}"}),
            "INVALID_ARGUMENT",
        ),
        (
            "lisp-read-file",
            json!({"path": "ok.lisp", "limit": 0}),
            "INVALID_ARGUMENT",
        ),
        (
            "lisp-read-file",
            json!({"path": "ok.lisp", "limit": "ten"}),
            "INVALID_ARGUMENT",
        ),
        (
            "lisp-read-file",
            json!({"path": "ok.lisp", "comments": "some"}),
            "INVALID_ARGUMENT",
        ),
        (
            "lisp-read-file",
            json!({"path": "ok.lisp", "colapsed": false}),
            "INVALID_ARGUMENT",
        ),
        ("lisp-read-file", json!({"path": ""}), "INVALID_ARGUMENT"),
        ("lisp-read-file", json!({"path": 42}), "INVALID_ARGUMENT"),
        ("lisp-read-file", json!({}), "INVALID_ARGUMENT"),
        ("read_file", json!({"path": "missing.lisp"}), "NOT_FOUND"),
        ("read_file", json!({"path": "dir"}), "NOT_FILE"),
        ("read_file", json!({"path": "fifo.lisp"}), "NOT_FILE"),
        (
            "read_file",
            json!({"path": "../secret.lisp"}),
            "ACCESS_DENIED",
        ),
        (
            "read_file",
            json!({"path": "binary.lisp"}),
            "BINARY_NOT_SUPPORTED",
        ),
        (
            "read_file",
            json!({"path": "ok.lisp", "max_lines": 501}),
            "INVALID_ARGUMENT",
        ),
        (
            "read_file",
            json!({"path": "ok.lisp", "start_line": 0}),
            "INVALID_ARGUMENT",
        ),
        ("read_file", json!({"path": ""}), "INVALID_ARGUMENT"),
        ("Read", json!({"path": "missing.lisp"}), "NOT_FOUND"),
        ("Read", json!({"path": "dir"}), "IS_DIRECTORY"),
        ("Read", json!({"path": "../secret.lisp"}), "ACCESS_DENIED"),
        ("Read", json!({"path": "binary.lisp"}), "BINARY_FILE"),
        (
            "Read",
            json!({"path": "ok.lisp", "start_line": "x"}),
            "INVALID_PARAM",
        ),
    ];
    for (tool, args, code) in &cases {
        let result = call(&client, tool, args.clone()).await;
        assert_eq!(&error_code(&result), code, "{tool} {args}");
        let structured = result.structured_content.unwrap();
        // Errors validate against the outputSchema too (it describes the error object).
        let schema = Value::Object((*find(&tools, tool).output_schema.clone().unwrap()).clone());
        let errors: Vec<String> = jsonschema::validator_for(&schema)
            .unwrap()
            .iter_errors(&structured)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{tool} {args}: {errors:?}");
        let message = structured["message"]
            .as_str()
            .or_else(|| structured["error"]["message"].as_str())
            .unwrap();
        assert!(message.len() > 10, "{tool} {args}: {message}");
        if *tool != "Read" {
            assert_eq!(structured.as_object().unwrap().len(), 3, "{structured}");
            assert!(structured["path"].is_string());
            let shown = structured["path"].as_str().unwrap();
            assert!(
                !shown.starts_with(root.to_str().unwrap()),
                "absolute path shown: {shown}"
            );
        }
        // After each failure, a good call still works.
        let ok = call(&client, tool, json!({"path": "ok.lisp"})).await;
        structured_ok(find(&tools, tool), &ok);
    }
    // An unknown tool is a protocol error, not a result.
    let unknown = client
        .call_tool(
            CallToolRequestParams::new("write_file")
                .with_arguments(arguments(json!({"path": "ok.lisp"}))),
        )
        .await;
    let message = format!(
        "{:?}",
        unknown.expect_err("unknown tool must be a JSON-RPC error")
    );
    assert!(
        message.contains("-32602") || message.contains("Unknown tool"),
        "{message}"
    );
    structured_ok(
        find(&tools, "read_file"),
        &call(&client, "read_file", json!({"path": "ok.lisp"})).await,
    );
    client.cancel().await.unwrap();
}

/// A client that offers MCP roots.
#[derive(Clone)]
struct RootsClient {
    roots: Vec<PathBuf>,
}

impl ClientHandler for RootsClient {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.roots = Some(Default::default());
        ClientConfig::new(capabilities, Implementation::new("roots-test", "1"))
            .with_protocol_version(rmcp::model::ProtocolVersion::V_2025_06_18)
    }

    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        Ok(ListRootsResult::new(
            self.roots
                .iter()
                .map(|p| {
                    Root::new(format!(
                        "file://{}",
                        p.display().to_string().replace(' ', "%20")
                    ))
                })
                .collect(),
        ))
    }
}

/// Every strategy through the server on a file over the cap: results validate against
/// the outputSchema; errors name the valid range; unknown compatibility arguments name
/// what is accepted.
#[tokio::test]
async fn strategies_and_windows_of_files_over_the_cap() {
    let (_base, root) = troublesome_project();
    // 30 lines of 10 bytes, then one line of 5,000 characters: 5,301 bytes, over 4,096.
    let mut text = String::new();
    for i in 1..=30 {
        text.push_str(&format!("line {i:04}\n"));
    }
    text.push_str(&"é".repeat(2500));
    text.push('\n');
    std::fs::write(root.join("log.txt"), &text).unwrap();
    let client = start(
        &[
            "--root",
            root.to_str().unwrap(),
            "--tools",
            "lisp-read-file,read_file,Read",
            "--max-file-bytes",
            "4096",
        ],
        &repo(),
    )
    .await;
    let tools = tools(&client).await;
    let lrf = find(&tools, "lisp-read-file");
    let ok = |args: Value| {
        let client = client.clone();
        async move {
            let result = call(&client, "lisp-read-file", args).await;
            structured_ok(lrf, &result)
        }
    };
    // lineRange near the end of a file over the cap.
    let v = ok(json!({"path": "log.txt", "strategy": {"type": "lineRange", "startLine": 29, "endLine": 30}, "include_metadata": true})).await;
    assert_eq!(v["content"], "line 0029\nline 0030\n");
    assert_eq!(
        v["meta"]["applied_strategy"],
        json!({"type": "lineRange", "startLine": 29, "endLine": 30})
    );
    assert_eq!(v["meta"]["remaining_lines"], 1);
    assert_eq!(v["meta"]["total_lines"], 31);
    assert_eq!(v["meta"]["truncated"], false);
    assert_eq!(v["metadata"]["size"], text.len());
    assert_eq!(v["metadata"]["permissions"].as_str().unwrap().len(), 9);
    // The long last line is cut, and the rest named as a byte range.
    let v =
        ok(json!({"path": "log.txt", "strategy": {"type": "lineRange", "startLine": 31}})).await;
    assert_eq!(v["meta"]["truncated"], true);
    assert_eq!(
        v["meta"]["cut_lines"],
        json!([{"line": 31, "start": 300 + 4000, "end": 300 + 5000}])
    );
    assert!(v["content"].as_str().unwrap().ends_with(
        "é…[+500 chars; the rest is {\"type\":\"byteRange\",\"start\":4300,\"end\":5300}]\n"
    ));
    // byteRange: cut to character boundaries (4301 is inside an é), and to the cap.
    let v = ok(json!({"path": "log.txt", "strategy": {"type": "byteRange", "start": 4301}})).await;
    assert_eq!(
        v["meta"]["applied_strategy"],
        json!({"type": "byteRange", "start": 4302, "end": 5301})
    );
    assert_eq!(
        v["content"].as_str().unwrap(),
        format!("{}\n", "é".repeat(499))
    );
    assert_eq!(v["meta"]["remaining_bytes"], 0);
    assert_eq!(v["meta"]["total_lines"], Value::Null);
    let v = ok(json!({"path": "log.txt", "strategy": {"type": "byteRange", "start": 0}})).await;
    assert_eq!(v["meta"]["applied_strategy"]["end"], 4096);
    assert_eq!(v["meta"]["remaining_bytes"], 5301 - 4096);
    assert_eq!(v["meta"]["truncated"], true);
    // The default strategy on a text file over the cap: a streamed raw window.
    let v = ok(json!({"path": "log.txt", "offset": 2, "limit": 2})).await;
    assert_eq!(
        v["content"],
        "line 0003\nline 0004\n[Showing lines 3-4 of 31. Use offset=4 to read more.]\n"
    );
    assert_eq!(v["meta"]["next_offset"], 4);
    assert_eq!(v["meta"]["remaining_lines"], 27);
    // complete on a small file; the collapsed view of a Lisp file over the cap says so.
    let v = ok(json!({"path": "ok.lisp", "strategy": {"type": "complete"}})).await;
    assert_eq!(v["content"], "(defun f (x) x)\n");
    assert_eq!(v["meta"]["remaining_bytes"], 0);
    let v = ok(json!({"path": "big.lisp"})).await;
    assert!(
        v["content"].as_str().unwrap().contains("\"startLine\":1"),
        "{v}"
    );
    assert_eq!(v["meta"]["truncated"], true);
    // Invalid ranges name the valid range.
    let result = call(
        &client,
        "lisp-read-file",
        json!({"path": "log.txt", "strategy": {"type": "byteRange", "start": 9999}}),
    )
    .await;
    assert_eq!(error_code(&result), "INVALID_ARGUMENT");
    assert!(
        text_of(&result).contains("the file has 5301 bytes: start must be at most 5301"),
        "{}",
        text_of(&result)
    );
    let result = call(&client, "lisp-read-file", json!({"path": "log.txt", "strategy": {"type": "lineRange", "startLine": 5, "endLine": 40}})).await;
    assert!(
        text_of(&result).contains("the file has 31 lines: endLine must be at most 31"),
        "{}",
        text_of(&result)
    );
    // The compatibility tools name what they accept.
    let result = call(
        &client,
        "read_file",
        json!({"path": "ok.lisp", "start_line": 5, "end_line": 6}),
    )
    .await;
    assert_eq!(error_code(&result), "INVALID_ARGUMENT");
    assert_eq!(text_of(&result), "INVALID_ARGUMENT: unknown argument end_line: read_file accepts path, start_line, max_lines (end_line is not supported: use max_lines)");
    let result = call(&client, "Read", json!({"path": "ok.lisp", "end_line": 6})).await;
    assert_eq!(result.is_error, Some(true));
    let envelope = result.structured_content.unwrap();
    assert_eq!(envelope["error"]["code"], "INVALID_PARAM");
    assert_eq!(envelope["error"]["message"], "unknown argument end_line: Read accepts path, start_line, limit (end_line is not supported: use limit)");
    // The compatibility tools read line windows of files over the cap too.
    let result = call(
        &client,
        "read_file",
        json!({"path": "log.txt", "start_line": 30, "max_lines": 1}),
    )
    .await;
    let v = structured_ok(find(&tools, "read_file"), &result);
    assert_eq!(v["content"], "line 0030\n");
    assert_eq!(v["meta"]["line_count"], 31);
    assert_eq!(v["meta"]["byte_length"], 5301);
    assert_eq!(v["next_start_line"], 31);
    let result = call(
        &client,
        "Read",
        json!({"path": "log.txt", "start_line": 29, "limit": 2}),
    )
    .await;
    let v = structured_ok(find(&tools, "Read"), &result);
    assert_eq!(v["data"]["content"], "  29 | line 0029\n  30 | line 0030\n");
    assert_eq!(v["stats"]["total_lines"], 31);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn without_root_the_clients_roots_are_the_allowed_directories() {
    let base = scratch("client-roots");
    let root = base.join("my project");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("inside.lisp"), "(defun inside () 1)\n").unwrap();
    std::fs::write(base.join("outside.lisp"), "(defun outside () 2)\n").unwrap();
    // Started in `base`: without the client's roots, outside.lisp would be readable.
    let client = start_with_roots(vec![root.clone()], &base).await;
    let result = call(&client, "lisp-read-file", json!({"path": "inside.lisp"})).await;
    assert_eq!(result.is_error, Some(false), "{}", text_of(&result));
    assert!(text_of(&result).contains("(defun inside ()"));
    let result = call(
        &client,
        "lisp-read-file",
        json!({"path": "../outside.lisp"}),
    )
    .await;
    assert_eq!(error_code(&result), "ACCESS_DENIED");
    let result = call(&client, "lisp-read-file", json!({"path": "outside.lisp"})).await;
    assert_eq!(error_code(&result), "NOT_FOUND");
    client.cancel().await.unwrap();

    // A client that offers roots but none usable: refused, not the working directory.
    let unusable = vec![base.join("no such dir"), base.join("outside.lisp")];
    let client = start_with_roots(unusable, &base).await;
    let result = call(&client, "lisp-read-file", json!({"path": "outside.lisp"})).await;
    assert_eq!(error_code(&result), "ACCESS_DENIED");
    assert!(text_of(&result).contains("--root"), "{}", text_of(&result));
    client.cancel().await.unwrap();

    // A client without roots: the working directory is the root.
    let client = start(&[], &base).await;
    let result = call(&client, "lisp-read-file", json!({"path": "outside.lisp"})).await;
    assert!(
        text_of(&result).contains("(defun outside ()"),
        "{}",
        text_of(&result)
    );
    let result = call(&client, "lisp-read-file", json!({"path": "/etc/hostname"})).await;
    assert_eq!(error_code(&result), "ACCESS_DENIED");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_thousand_sequential_calls_and_eight_concurrent_ones() {
    let client = start(&[], &repo()).await;
    let tools = tools(&client).await;
    let tool = find(&tools, "lisp-read-file");
    let expected = call(
        &client,
        "lisp-read-file",
        json!({"path": "fixtures/demo/demo.lisp"}),
    )
    .await;
    let mut micros = Vec::with_capacity(1000);
    for i in 0..1000 {
        let started = Instant::now();
        let result = call(
            &client,
            "lisp-read-file",
            json!({"path": "fixtures/demo/demo.lisp"}),
        )
        .await;
        micros.push(started.elapsed().as_micros());
        assert_eq!(result, expected, "call {i}");
    }
    micros.sort_unstable();
    eprintln!(
        "1000 sequential tools/call round trips (client side, demo.lisp): median {} µs, p90 {} µs",
        micros[500], micros[900]
    );
    let calls = (0..8).map(|i| {
        let peer = client.peer().clone();
        let args = if i % 2 == 0 {
            json!({"path": "fixtures/demo/demo.lisp", "name_pattern": "area"})
        } else {
            json!({"path": "README.md", "collapsed": false, "limit": 5})
        };
        tokio::spawn(async move {
            peer.call_tool(
                CallToolRequestParams::new("lisp-read-file").with_arguments(arguments(args)),
            )
            .await
        })
    });
    let results: Vec<_> = futures_join(calls.collect()).await;
    for (i, result) in results.into_iter().enumerate() {
        let result = result.unwrap_or_else(|e| panic!("concurrent call {i}: {e}"));
        let value = structured_ok(tool, &result);
        let mode = if i % 2 == 0 { "lisp-collapsed" } else { "raw" };
        assert_eq!(value["mode"], mode, "concurrent call {i}");
    }
    client.cancel().await.unwrap();
}

async fn futures_join<T>(handles: Vec<tokio::task::JoinHandle<T>>) -> Vec<T> {
    let mut out = Vec::with_capacity(handles.len());
    for handle in handles {
        out.push(handle.await.expect("task"));
    }
    out
}
