//! Cancelled walks free the MCP server's compute slots: the map, `lisp-find` and the
//! `read` tool's component search look at the request's cancellation while they walk and
//! read `.asd` files. Four slow calls are sent (as many as the server computes at once),
//! cancelled, and a small call sent after them must be answered within a fraction of one
//! slow call's time, measured in the same run (a ratio, not a wall-clock limit). Before,
//! the read tool over 300 `.asd` files of 1 MB took 7.3 s and a call after four cancelled
//! ones waited 72 s; four maps of a 1,500-deep chain delayed the next call by 17 s.

use crate::client::RawServer;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(120);
/// `.asd` files of 1 MB each: the read tool parses every one looking for a component.
const ASD_FILES: usize = 150;

fn start(root: &Path) -> RawServer {
    let root = root.to_str().unwrap();
    let tools = "lisp-read-file,lisp-find,read";
    RawServer::start_in(&["--root", root, "--tools", tools], Path::new(root), None)
}

/// How long the call takes to be answered, and its text.
fn timed_call(server: &mut RawServer, id: u64, tool: &str, arguments: Value) -> (Duration, String) {
    let started = Instant::now();
    server.send_call(id, tool, arguments);
    let answer = server
        .answer(id, TIMEOUT, &mut Vec::new())
        .unwrap_or_else(|| panic!("no answer to request {id} in {TIMEOUT:?}"));
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (started.elapsed(), text)
}

/// The root: `asds/` (many 1 MB `.asd` files), `deep/` (a chain 1,500 directories deep
/// holding one file) and `small.lisp`.
fn root() -> PathBuf {
    let root = std::env::temp_dir().join(format!("lrf-walk-cancel-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("asds")).unwrap();
    let filler = "(defparameter *v* '(a b c d e f g h i j k l m n o p q r s t u v w x y z))\n"
        .repeat((1 << 20) / 74);
    for i in 0..ASD_FILES {
        let text = format!("(defsystem \"s{i}\" :components ((:file \"f{i}\")))\n{filler}");
        std::fs::write(root.join(format!("asds/s{i}.asd")), text).unwrap();
    }
    let mut deep = root.join("deep");
    for _ in 0..1_500 {
        deep.push("d");
    }
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("x.lisp"), "(defun x ())\n").unwrap();
    std::fs::write(root.join("small.lisp"), "(defun small () 1)\n").unwrap();
    root
}

/// A slow call: the tool, what it does, its arguments.
type SlowCall = (&'static str, &'static str, fn() -> Value);

#[test]
fn cancelled_walks_and_component_searches_free_their_slots() {
    let root = root();
    let mut server = start(&root);
    let missing = || json!({"file": "no-such-component"});
    let (one_call, text) = timed_call(&mut server, 1, "read", missing());
    assert!(text.contains("File not found"), "{text}");
    let slow_calls: [SlowCall; 3] = [
        (
            "read",
            "a component search",
            || json!({"file": "no-such-component"}),
        ),
        (
            "lisp-read-file",
            "a map of a deep chain",
            || json!({"path": "deep"}),
        ),
        (
            "lisp-find",
            "a find over a deep chain",
            || json!({"path": "deep", "name_pattern": "^x$"}),
        ),
    ];
    let mut id = 10;
    for (tool, what, arguments) in slow_calls {
        let ids: Vec<u64> = (id..id + 4).collect();
        for &i in &ids {
            server.send_call(i, tool, arguments());
        }
        std::thread::sleep(one_call / 10);
        for &i in &ids {
            server.cancel(i);
        }
        let small = json!({"path": "small.lisp"});
        let (waited, text) = timed_call(&mut server, id + 4, "lisp-read-file", small);
        assert!(text.contains("small"), "{text}");
        eprintln!(
            "after four cancelled calls of {what}: {waited:?}; one component search: {one_call:?}"
        );
        assert!(
            waited < one_call / 3,
            "the call after four cancelled calls of {what} waited {waited:?}; one component search takes {one_call:?}"
        );
        id += 10;
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&root);
}
