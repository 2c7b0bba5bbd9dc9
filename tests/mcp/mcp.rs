//! The MCP server over the real binary's stdio, driven by this binary's raw JSON-RPC
//! client (`client.rs`): initialize, `tools/list` (schemas, annotations), every tool on
//! fixtures, every error code, MCP roots, concurrent calls. That every
//! `structuredContent` fits its tool's `outputSchema` (JSON Schema 2020-12) is checked by
//! the official Python SDK's suite (tests/python), on every call it makes.

use crate::client::{repo, text_of, RawServer, BIN};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

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

/// Starts `lisp-read-file mcp ARGS` in `cwd`, initialized.
fn start(args: &[&str], cwd: &Path) -> RawServer {
    RawServer::start_in(args, cwd, None)
}

/// Starts `lisp-read-file mcp` in `cwd` with a client that offers `roots` as MCP roots.
fn start_with_roots(roots: Vec<PathBuf>, cwd: &Path) -> RawServer {
    RawServer::start_in(&[], cwd, Some(&roots))
}

/// A tool call's result; a protocol-level error fails the test.
fn call(client: &mut RawServer, tool: &str, args: Value) -> Value {
    client.tool(tool, args)
}

fn name_of(tool: &Value) -> &str {
    tool["name"].as_str().unwrap_or_default()
}

/// Checks that a result is a success with structured content, and returns it.
/// The view is said once (docs/mcp.md#results): `lisp-read-file` and `lisp-find` give it
/// as the text content only; it is put back here, as a client would, for the checks below.
fn structured_ok(tool: &Value, result: &Value) -> Value {
    let mut value = structured_fits(tool, result);
    if ["lisp-read-file", "lisp-find"].contains(&name_of(tool)) {
        assert!(value.get("content").is_none(), "the view twice: {value}");
        value["content"] = Value::String(text_of(result));
    }
    value
}

/// Checks that a result is a success with structured content, and returns it.
fn structured_fits(tool: &Value, result: &Value) -> Value {
    assert_eq!(
        result["isError"],
        false,
        "{}: {}",
        name_of(tool),
        text_of(result)
    );
    let value = result["structuredContent"].clone();
    assert!(
        value.is_object(),
        "{}: no structuredContent: {result}",
        name_of(tool)
    );
    value
}

/// Checks a tool error and returns its code.
fn error_code(result: &Value) -> String {
    assert_eq!(
        result["isError"],
        true,
        "expected an error: {}",
        text_of(result)
    );
    let value = &result["structuredContent"];
    assert!(value.is_object(), "structuredContent on error: {result}");
    let code = value["code"]
        .as_str()
        .or_else(|| value["error"]["code"].as_str())
        .unwrap_or_else(|| panic!("no code in {value}"));
    assert!(!text_of(result).is_empty());
    code.to_string()
}

fn tools(client: &mut RawServer) -> Vec<Value> {
    client.tools()
}

fn find<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

#[test]
fn initialize_and_the_default_tools() {
    let mut client = start(&[], &repo());
    assert_eq!(client.init["serverInfo"]["name"], "lisp-read-file");
    let instructions = client.init["instructions"].as_str().unwrap_or_default();
    assert!(instructions.contains("before you edit"), "{instructions}");
    let tools = tools(&mut client);
    let names: Vec<&str> = tools.iter().map(name_of).collect();
    assert_eq!(names, ["lisp-read-file", "lisp-find", "read_file"]);
    drop(client);
}

/// The block quotes of docs/mcp.md that say "Description, as sent" and the
/// `instructions` are what the server sends: a reader of the docs sees what a model sees.
#[test]
fn the_docs_quote_what_the_server_sends() {
    let docs = std::fs::read_to_string(repo().join("docs/mcp.md")).unwrap();
    // Each block quote of the page, its lines joined by spaces (a word cut by the page's
    // wrapping at a hyphen, `lisp-` then `read-file`, joined back).
    let mut quotes: Vec<String> = Vec::new();
    let mut open = false;
    for line in docs.lines() {
        match line.strip_prefix("> ") {
            Some(text) if open => {
                let last = quotes.last_mut().unwrap();
                if !last.ends_with('-') {
                    last.push(' ');
                }
                last.push_str(text);
            }
            Some(text) => quotes.push(text.to_string()),
            None => {}
        }
        open = line.starts_with("> ");
    }
    let mut client = start(&[], &repo());
    let instructions = client.init["instructions"].as_str().unwrap().to_string();
    let tools = tools(&mut client);
    for sent in [
        instructions.as_str(),
        find(&tools, "lisp-read-file")["description"]
            .as_str()
            .unwrap(),
        find(&tools, "lisp-find")["description"].as_str().unwrap(),
    ] {
        assert!(
            quotes.iter().any(|q| q == sent),
            "docs/mcp.md does not quote, as sent:\n{sent}\nits quotes:\n{quotes:#?}"
        );
    }
}

#[test]
fn every_tool_has_schemas_and_annotations() {
    let mut client = start(
        &["--tools", "lisp-read-file,lisp-find,read_file,Read"],
        &repo(),
    );
    let tools = tools(&mut client);
    assert_eq!(tools.len(), 4);
    for tool in &tools {
        let wire = tool;
        let name = name_of(tool);
        assert!(wire["title"].is_string(), "{name}");
        let annotations = &wire["annotations"];
        assert_eq!(annotations["readOnlyHint"], true, "{name}");
        assert_eq!(annotations["idempotentHint"], true, "{name}");
        assert_eq!(annotations["openWorldHint"], false, "{name}");
        assert_eq!(annotations["destructiveHint"], false, "{name}");
        assert!(annotations["title"].is_string(), "{name}");
        for key in ["inputSchema", "outputSchema"] {
            let schema = &wire[key];
            // That it is a valid JSON Schema: tests/python (Draft 2020-12 check_schema).
            assert_eq!(schema["type"], "object", "{name} {key}");
        }
        let description = tool["description"].as_str().unwrap_or("");
        assert!(
            !description.is_empty() && !description.contains('\n'),
            "{name}"
        );
    }
    let own = find(&tools, "lisp-read-file");
    assert!(own["description"]
        .as_str()
        .unwrap()
        .starts_with("Read before you edit"));
    // read_file: the read_file definition (docs/mcp.md#read_file), verbatim.
    let read_file = find(&tools, "read_file").clone();
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
    let read = find(&tools, "Read").clone();
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
    drop(client);
}

#[test]
fn lisp_read_file_views_match_the_cli() {
    let mut client = start(&[], &repo());
    let tools = tools(&mut client);
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
        (
            json!({"path": "README.md", "content_pattern": "MCP", "max_count": 2, "before_context": 3, "after_context": 1}),
            vec!["-c", "MCP", "-m", "2", "-B", "3", "-A", "1", "README.md"],
            "text-filtered",
        ),
    ];
    for (args, cli_args, mode) in cases {
        let result = call(&mut client, "lisp-read-file", args.clone());
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
        &mut client,
        "lisp-read-file",
        json!({"path": demo, "name_pattern": "area :around"}),
    );
    let value = structured_ok(tool, &result);
    assert_eq!(value["meta"]["expanded_forms"], 1);
    assert!(text_of(&result).contains("22: (defmethod area :around ((s shape))"));
    let result = call(
        &mut client,
        "lisp-read-file",
        json!({"path": "fixtures/views/kinds_features.lisp", "kinds": ["defclass"], "features": ["ccl"]}),
    );
    structured_ok(tool, &result);
    assert!(text_of(&result).starts_with(
        "[features: 1 form not shown, excluded by #+/#- under (ccl).]\n[kinds: 9 other forms not shown (kinds defclass).]\n 5: (defclass shape () (name))\n"
    ), "{}", text_of(&result));
    drop(client);
}

/// The grep of a text file with `max_count`, `before_context` and `after_context`: the
/// answer `rg -n -m 1 -B 2` gives, complete (no note), said so in `meta`, on both sides
/// of the size cap; `max_count` 0 is refused.
#[test]
fn grep_max_count_and_one_sided_context() {
    let dir = scratch("grep-max-count");
    let log: String = (1..=30)
        .map(|i| format!("line {i}{}\n", if i % 10 == 0 { " timed out" } else { "" }))
        .collect();
    std::fs::write(dir.join("app.log"), log).unwrap();
    for cap in ["1000000", "100"] {
        let mut client = start(&["--max-file-bytes", cap], &dir);
        let tools = tools(&mut client);
        let tool = find(&tools, "lisp-read-file");
        let read = |client: &mut RawServer, extra: Value| {
            let mut args = json!({"path": "app.log", "content_pattern": "timed out"});
            args.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            call(client, "lisp-read-file", args)
        };
        let result = read(&mut client, json!({"max_count": 1, "before_context": 2}));
        let value = structured_ok(tool, &result);
        assert_eq!(
            text_of(&result),
            "8-line 8\n9-line 9\n10:line 10 timed out\n"
        );
        assert_eq!(value["meta"]["stopped_at_max_count"], 1, "{value}");
        assert_eq!(value["meta"]["truncated"], false);
        // after_context alone: no leading context; every match, nothing stopped.
        let result = read(&mut client, json!({"after_context": 1}));
        let value = structured_ok(tool, &result);
        assert_eq!(
            text_of(&result),
            "10:line 10 timed out\n11-line 11\n--\n20:line 20 timed out\n21-line 21\n--\n30:line 30 timed out\n"
        );
        assert!(
            value["meta"].get("stopped_at_max_count").is_none(),
            "{value}"
        );
        // The second match is in the first's trailing context: shown as context (grep -m).
        let result = read(
            &mut client,
            json!({"max_count": 1, "before_context": 0, "after_context": 10}),
        );
        structured_ok(tool, &result);
        assert!(
            text_of(&result).ends_with("19-line 19\n20-line 20 timed out\n"),
            "{}",
            text_of(&result)
        );
        let result = read(&mut client, json!({"max_count": 0}));
        assert_eq!(error_code(&result), "INVALID_ARGUMENT");
        drop(client);
    }
}

/// `lisp-find` over a scratch project: definitions, references, paging, every refusal as
/// a tool result with its code, and every `structuredContent` against the output schema.
#[test]
fn lisp_find_derived_definitions_match_the_output_schema() {
    let dir = scratch("find-derived");
    std::fs::write(
        dir.join("s.lisp"),
        "(defstruct (point (:include base)) x)\n(defstruct base id)\n(defgeneric area (s)\n  (:method ((s point)) 0))\n",
    )
    .unwrap();
    let root = dir.to_str().unwrap();
    let mut client = start(&["--root", root], &dir);
    let listed = tools(&mut client);
    let tool = find(&listed, "lisp-find");
    let result = call(
        &mut client,
        "lisp-find",
        json!({"name": "point-id", "include_body": true}),
    );
    let value = structured_ok(tool, &result);
    let d = &value["definitions"][0];
    assert_eq!(d["kind"], "accessor");
    assert_eq!(
        d["form"],
        json!({"line": 1, "end_line": 1, "kind": "defstruct", "name": "point"})
    );
    assert!(d["body"].as_str().unwrap().starts_with("(defstruct (point"));
    let result = call(
        &mut client,
        "lisp-find",
        json!({"name_pattern": "area", "features": ["sbcl"]}),
    );
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

#[test]
fn lisp_find_definitions_references_and_errors() {
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
    let mut client = start(&["--root", root], &dir);
    let listed = tools(&mut client);
    let tool = find(&listed, "lisp-find");
    // Definitions by pattern, whole project.
    let result = call(&mut client, "lisp-find", json!({"name_pattern": "^make-"}));
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
        &mut client,
        "lisp-find",
        json!({"name": "MAKE-POINT", "include_body": true, "path": "src"}),
    );
    let value = structured_ok(tool, &result);
    assert_eq!(
        value["definitions"][0]["body"],
        "(defun make-point (x y)\n  (list x y))"
    );
    // References, grouped by form, the definition marked.
    let result = call(
        &mut client,
        "lisp-find",
        json!({"symbol": "make-point", "path": "p.asd"}),
    );
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
    // The names level: the same entries, each one line in the text.
    let names = call(
        &mut client,
        "lisp-find",
        json!({"symbol": "make-point", "path": "p.asd", "detail": "names"}),
    );
    let named = structured_ok(tool, &names);
    assert_eq!(named["references"], value["references"]);
    assert!(
        text_of(&names).starts_with("==> src/a.lisp <==\n1: defun make-point  [definition]\n4: defun norm\nsrc/b.lisp:1:defmacro make-line\n"),
        "{}",
        text_of(&names)
    );
    // Paging: one entry per page at limit 1.
    let result = call(
        &mut client,
        "lisp-find",
        json!({"symbol": "make-point", "limit": 1, "offset": 1}),
    );
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
        (
            json!({"symbol": "a", "detail": "lines"}),
            "INVALID_ARGUMENT",
        ),
        (
            json!({"callees": "a", "detail": "names"}),
            "INVALID_ARGUMENT",
        ),
        (json!({"symbol": "a", "path": "missing"}), "NOT_FOUND"),
        (json!({"symbol": "a", "path": "/etc"}), "ACCESS_DENIED"),
        (json!({"symbol": "a", "path": "bin.lisp"}), "BINARY_FILE"),
    ] {
        let result = call(&mut client, "lisp-find", args.clone());
        assert_eq!(error_code(&result), code, "{args}");
        assert!(result["structuredContent"].is_object(), "{args}: {result}");
    }
    drop(client);
}

#[test]
fn read_file_windows() {
    let root = scratch("read-file");
    let lines: String = (1..=450).map(|i| format!("line {i}\r\n")).collect();
    std::fs::write(root.join("long.txt"), lines).unwrap();
    std::fs::write(root.join("short.lisp"), "(a)\n(b)").unwrap();
    std::fs::write(root.join("bad.txt"), b"ok\n\xFF\n").unwrap();
    let mut client = start(&["--root", root.to_str().unwrap()], &repo());
    let tools = tools(&mut client);
    let tool = find(&tools, "read_file");

    let value = structured_ok(
        tool,
        &call(&mut client, "read_file", json!({"path": "long.txt"})),
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
            &mut client,
            "read_file",
            json!({"path": "long.txt", "start_line": 401, "max_lines": 500}),
        ),
    );
    assert_eq!(value["truncated"], false);
    assert_eq!(value["next_start_line"], Value::Null);
    assert_eq!(value["meta"]["returned_line_count"], 50);

    // Past the end: empty content, not an error (the read_file definition (docs/mcp.md#read_file)).
    let value = structured_ok(
        tool,
        &call(
            &mut client,
            "read_file",
            json!({"path": "long.txt", "start_line": 999}),
        ),
    );
    assert_eq!(
        (value["content"].as_str(), value["truncated"].as_bool()),
        (Some(""), Some(false))
    );

    let value = structured_ok(
        tool,
        &call(&mut client, "read_file", json!({"path": "short.lisp"})),
    );
    assert_eq!(value["content"], "(a)\n(b)");
    assert_eq!(value["meta"]["byte_length"], 7);

    let value = structured_ok(
        tool,
        &call(&mut client, "read_file", json!({"path": "bad.txt"})),
    );
    assert_eq!(value["content"], "ok\n\u{FFFD}\n");
    assert_eq!(value["meta"]["fallback_encoding"], "replace");
    drop(client);
}

#[test]
fn read_envelope() {
    let root = scratch("read");
    let lines: String = (1..=30).map(|i| format!("l{i}\n")).collect();
    std::fs::write(root.join("f.txt"), lines).unwrap();
    std::fs::write(root.join("empty.txt"), "").unwrap();
    let mut client = start(
        &["--root", root.to_str().unwrap(), "--tools", "Read"],
        &repo(),
    );
    let tools = tools(&mut client);
    assert_eq!(tools.len(), 1);
    let tool = find(&tools, "Read");

    let value = structured_ok(
        tool,
        &call(
            &mut client,
            "Read",
            json!({"path": "f.txt", "start_line": 9, "limit": 2}),
        ),
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

    let value = structured_ok(tool, &call(&mut client, "Read", json!({"path": "f.txt"})));
    assert_eq!(value["status"], "success");
    assert_eq!(value["stats"]["lines_read"], 30);

    let value = structured_ok(
        tool,
        &call(&mut client, "Read", json!({"path": "empty.txt"})),
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
        let result = call(&mut client, "Read", args.clone());
        assert_eq!(error_code(&result), "INVALID_PARAM", "{args}");
        let envelope = result["structuredContent"].clone();
        assert_eq!(envelope["status"], "error");
        assert_eq!(envelope["data"], Value::Null);
        // Errors keep the envelope (so they fit the outputSchema too: tests/python).
        assert!(envelope["stats"].is_object(), "{envelope}");
    }
    drop(client);
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

#[test]
fn every_error_code_is_a_tool_result_and_the_server_keeps_serving() {
    let (base, root) = troublesome_project();
    let mut client = start(
        &[
            "--root",
            root.to_str().unwrap(),
            "--tools",
            "lisp-read-file,read_file,Read",
            "--max-file-bytes",
            "4096",
        ],
        &repo(),
    );
    let tools = tools(&mut client);
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
        let result = call(&mut client, tool, args.clone());
        assert_eq!(&error_code(&result), code, "{tool} {args}");
        let structured = result["structuredContent"].clone();
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
        let ok = call(&mut client, tool, json!({"path": "ok.lisp"}));
        structured_ok(find(&tools, tool), &ok);
    }
    // An unknown tool is a protocol error, not a result.
    let id = client.own_id();
    let unknown = client.call(id, "write_file", json!({"path": "ok.lisp"}));
    let error = &unknown["error"];
    assert!(
        error.is_object(),
        "unknown tool must be a JSON-RPC error: {unknown}"
    );
    assert!(
        error["code"] == -32602
            || error["message"]
                .as_str()
                .unwrap_or("")
                .contains("Unknown tool"),
        "{unknown}"
    );
    structured_ok(
        find(&tools, "read_file"),
        &call(&mut client, "read_file", json!({"path": "ok.lisp"})),
    );
    drop(client);
}

/// Every strategy through the server on a file over the cap: results validate against
/// the outputSchema; errors name the valid range; unknown compatibility arguments name
/// what is accepted.
#[test]
fn strategies_and_windows_of_files_over_the_cap() {
    let (_base, root) = troublesome_project();
    // 30 lines of 10 bytes, then one line of 5,000 characters: 5,301 bytes, over 4,096.
    let mut text = String::new();
    for i in 1..=30 {
        text.push_str(&format!("line {i:04}\n"));
    }
    text.push_str(&"é".repeat(2500));
    text.push('\n');
    std::fs::write(root.join("log.txt"), &text).unwrap();
    let mut client = start(
        &[
            "--root",
            root.to_str().unwrap(),
            "--tools",
            "lisp-read-file,read_file,Read",
            "--max-file-bytes",
            "4096",
        ],
        &repo(),
    );
    let tools = tools(&mut client);
    let lrf = find(&tools, "lisp-read-file");
    let ok = |client: &mut RawServer, args: Value| {
        let result = call(client, "lisp-read-file", args);
        structured_ok(lrf, &result)
    };
    // lineRange near the end of a file over the cap.
    let v = ok(
        &mut client,
        json!({"path": "log.txt", "strategy": {"type": "lineRange", "startLine": 29, "endLine": 30}, "include_metadata": true}),
    );
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
    let v = ok(
        &mut client,
        json!({"path": "log.txt", "strategy": {"type": "lineRange", "startLine": 31}}),
    );
    assert_eq!(v["meta"]["truncated"], true);
    assert_eq!(
        v["meta"]["cut_lines"],
        json!([{"line": 31, "start": 300 + 4000, "end": 300 + 5000}])
    );
    assert!(v["content"].as_str().unwrap().ends_with(
        "é…[+500 chars; the rest is {\"type\":\"byteRange\",\"start\":4300,\"end\":5300}]\n"
    ));
    // byteRange: cut to character boundaries (4301 is inside an é), and to the cap.
    let v = ok(
        &mut client,
        json!({"path": "log.txt", "strategy": {"type": "byteRange", "start": 4301}}),
    );
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
    let v = ok(
        &mut client,
        json!({"path": "log.txt", "strategy": {"type": "byteRange", "start": 0}}),
    );
    assert_eq!(v["meta"]["applied_strategy"]["end"], 4096);
    assert_eq!(v["meta"]["remaining_bytes"], 5301 - 4096);
    assert_eq!(v["meta"]["truncated"], true);
    // The default strategy on a text file over the cap: a streamed raw window.
    let v = ok(
        &mut client,
        json!({"path": "log.txt", "offset": 2, "limit": 2}),
    );
    assert_eq!(
        v["content"],
        "line 0003\nline 0004\n[Showing lines 3-4 of 31. Use offset=4 to read more.]\n"
    );
    assert_eq!(v["meta"]["next_offset"], 4);
    assert_eq!(v["meta"]["remaining_lines"], 27);
    // complete on a small file; the collapsed view of a Lisp file over the cap says so.
    let v = ok(
        &mut client,
        json!({"path": "ok.lisp", "strategy": {"type": "complete"}}),
    );
    assert_eq!(v["content"], "(defun f (x) x)\n");
    assert_eq!(v["meta"]["remaining_bytes"], 0);
    let v = ok(&mut client, json!({"path": "big.lisp"}));
    assert!(
        v["content"].as_str().unwrap().contains("\"startLine\":1"),
        "{v}"
    );
    assert_eq!(v["meta"]["truncated"], true);
    // Invalid ranges name the valid range.
    let result = call(
        &mut client,
        "lisp-read-file",
        json!({"path": "log.txt", "strategy": {"type": "byteRange", "start": 9999}}),
    );
    assert_eq!(error_code(&result), "INVALID_ARGUMENT");
    assert!(
        text_of(&result).contains("the file has 5301 bytes: start must be at most 5301"),
        "{}",
        text_of(&result)
    );
    let result = call(
        &mut client,
        "lisp-read-file",
        json!({"path": "log.txt", "strategy": {"type": "lineRange", "startLine": 5, "endLine": 40}}),
    );
    assert!(
        text_of(&result).contains("the file has 31 lines: endLine must be at most 31"),
        "{}",
        text_of(&result)
    );
    // The compatibility tools name what they accept.
    let result = call(
        &mut client,
        "read_file",
        json!({"path": "ok.lisp", "start_line": 5, "end_line": 6}),
    );
    assert_eq!(error_code(&result), "INVALID_ARGUMENT");
    assert_eq!(text_of(&result), "INVALID_ARGUMENT: unknown argument end_line: read_file accepts path, start_line, max_lines (end_line is not supported: use max_lines)");
    let result = call(
        &mut client,
        "Read",
        json!({"path": "ok.lisp", "end_line": 6}),
    );
    assert_eq!(result["isError"], true);
    let envelope = result["structuredContent"].clone();
    assert_eq!(envelope["error"]["code"], "INVALID_PARAM");
    assert_eq!(envelope["error"]["message"], "unknown argument end_line: Read accepts path, start_line, limit (end_line is not supported: use limit)");
    // The compatibility tools read line windows of files over the cap too.
    let result = call(
        &mut client,
        "read_file",
        json!({"path": "log.txt", "start_line": 30, "max_lines": 1}),
    );
    let v = structured_ok(find(&tools, "read_file"), &result);
    assert_eq!(v["content"], "line 0030\n");
    assert_eq!(v["meta"]["line_count"], 31);
    assert_eq!(v["meta"]["byte_length"], 5301);
    assert_eq!(v["next_start_line"], 31);
    let result = call(
        &mut client,
        "Read",
        json!({"path": "log.txt", "start_line": 29, "limit": 2}),
    );
    let v = structured_ok(find(&tools, "Read"), &result);
    assert_eq!(v["data"]["content"], "  29 | line 0029\n  30 | line 0030\n");
    assert_eq!(v["stats"]["total_lines"], 31);
    drop(client);
}

#[test]
fn without_root_the_clients_roots_are_the_allowed_directories() {
    let base = scratch("client-roots");
    let root = base.join("my project");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("inside.lisp"), "(defun inside () 1)\n").unwrap();
    std::fs::write(base.join("outside.lisp"), "(defun outside () 2)\n").unwrap();
    // Started in `base`: without the client's roots, outside.lisp would be readable.
    let mut client = start_with_roots(vec![root.clone()], &base);
    let result = call(
        &mut client,
        "lisp-read-file",
        json!({"path": "inside.lisp"}),
    );
    assert_eq!(result["isError"], false, "{}", text_of(&result));
    assert!(text_of(&result).contains("(defun inside ()"));
    let result = call(
        &mut client,
        "lisp-read-file",
        json!({"path": "../outside.lisp"}),
    );
    assert_eq!(error_code(&result), "ACCESS_DENIED");
    let result = call(
        &mut client,
        "lisp-read-file",
        json!({"path": "outside.lisp"}),
    );
    assert_eq!(error_code(&result), "NOT_FOUND");
    drop(client);

    // A client that offers roots but none usable: refused, not the working directory.
    let unusable = vec![base.join("no such dir"), base.join("outside.lisp")];
    let mut client = start_with_roots(unusable, &base);
    let result = call(
        &mut client,
        "lisp-read-file",
        json!({"path": "outside.lisp"}),
    );
    assert_eq!(error_code(&result), "ACCESS_DENIED");
    assert!(text_of(&result).contains("--root"), "{}", text_of(&result));
    drop(client);

    // A client without roots: the working directory is the root.
    let mut client = start(&[], &base);
    let result = call(
        &mut client,
        "lisp-read-file",
        json!({"path": "outside.lisp"}),
    );
    assert!(
        text_of(&result).contains("(defun outside ()"),
        "{}",
        text_of(&result)
    );
    let result = call(
        &mut client,
        "lisp-read-file",
        json!({"path": "/etc/hostname"}),
    );
    assert_eq!(error_code(&result), "ACCESS_DENIED");
    drop(client);
}

#[test]
fn a_thousand_sequential_calls_and_eight_concurrent_ones() {
    let mut client = start(&[], &repo());
    let tools = tools(&mut client);
    let tool = find(&tools, "lisp-read-file");
    let expected = call(
        &mut client,
        "lisp-read-file",
        json!({"path": "fixtures/demo/demo.lisp"}),
    );
    let mut micros = Vec::with_capacity(1000);
    for i in 0..1000 {
        let started = Instant::now();
        let result = call(
            &mut client,
            "lisp-read-file",
            json!({"path": "fixtures/demo/demo.lisp"}),
        );
        micros.push(started.elapsed().as_micros());
        assert_eq!(result, expected, "call {i}");
    }
    micros.sort_unstable();
    eprintln!(
        "1000 sequential tools/call round trips (client side, demo.lisp): median {} µs, p90 {} µs",
        micros[500], micros[900]
    );
    // Eight requests in flight at once; the answers come back in any order, by id.
    for i in 0..8u64 {
        let args = if i % 2 == 0 {
            json!({"path": "fixtures/demo/demo.lisp", "name_pattern": "area"})
        } else {
            json!({"path": "README.md", "collapsed": false, "limit": 5})
        };
        client.send_call(100 + i, "lisp-read-file", args);
    }
    let mut responses = std::collections::BTreeMap::new();
    while responses.len() < 8 {
        let message = client.next_message();
        if let Some(id) = message["id"].as_u64().filter(|id| (100..108).contains(id)) {
            responses.insert(id, message);
        }
    }
    for (i, response) in (0..8u64).zip(responses.values()) {
        let value = structured_ok(tool, &response["result"]);
        let mode = if i % 2 == 0 { "lisp-collapsed" } else { "raw" };
        assert_eq!(value["mode"], mode, "concurrent call {i}");
    }
    drop(client);
}
