//! `read_file` (and `Read`) on a file over the size cap whose lines are long: the default
//! window holds whole lines within the cap, a line the cap would cut is the next
//! window's first, and a line longer than the cap alone is cut and says where its rest is
//! (docs/mcp.md#read_file). The real binary over stdio.

use crate::client::{text_of, RawServer};
use serde_json::json;
use std::path::{Path, PathBuf};

/// The size cap of these servers (the default's 1 MiB would make the test slow).
const CAP: usize = 64 * 1024;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lrf-read-file-cap-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn start(dir: &Path) -> RawServer {
    let root = dir.to_str().unwrap();
    let cap = CAP.to_string();
    let args = [
        "--root",
        root,
        "--max-file-bytes",
        &cap,
        "--tools",
        "read_file,Read",
    ];
    RawServer::start_in(&args, dir, None)
}

/// Line `i`: its number, then words up to `len` bytes.
fn line(i: usize, len: usize) -> String {
    let mut text = format!("line{i:04}");
    while text.len() < len {
        text.push_str(" word");
    }
    text.truncate(len);
    text
}

#[test]
fn the_default_window_of_long_lines_stays_within_the_cap_in_whole_lines() {
    let dir = scratch("whole");
    // 3 times the cap in lines of 5,000 bytes: 13 lines fit the cap, the 14th would not.
    let lines: Vec<String> = (1..=40).map(|i| line(i, 5_000)).collect();
    std::fs::write(dir.join("long.txt"), lines.join("\n") + "\n").unwrap();
    let mut server = start(&dir);
    let result = server.tool("read_file", json!({"path": "long.txt"}));
    let content = result["structuredContent"]["content"].as_str().unwrap();
    assert!(content.len() <= CAP, "{} bytes", content.len());
    let returned: Vec<&str> = content.lines().collect();
    assert_eq!(returned, lines[..returned.len()], "whole lines only");
    assert_eq!(returned.len(), 13);
    let next = returned.len() + 1;
    assert_eq!(result["structuredContent"]["next_start_line"], next);
    assert!(
        text_of(&result).ends_with(&format!("Use start_line={next} to continue.]")),
        "{}",
        text_of(&result)
    );
    // Followed, the hint starts at the line the cap left out, whole.
    let result = server.tool("read_file", json!({"path": "long.txt", "start_line": next}));
    let content = result["structuredContent"]["content"].as_str().unwrap();
    assert_eq!(content.lines().next(), Some(lines[next - 1].as_str()));
    // Read: the same window.
    let result = server.tool("Read", json!({"path": "long.txt"}));
    let content = result["structuredContent"]["data"]["content"]
        .as_str()
        .unwrap();
    assert_eq!(content.lines().count(), 13, "{}", text_of(&result));
}

#[test]
fn a_line_longer_than_the_cap_is_cut_alone_and_says_where_its_rest_is() {
    let dir = scratch("alone");
    let long = line(1, 3 * CAP);
    std::fs::write(dir.join("one.txt"), format!("{long}\nshort\n")).unwrap();
    let mut server = start(&dir);
    let result = server.tool("read_file", json!({"path": "one.txt"}));
    let content = result["structuredContent"]["content"].as_str().unwrap();
    assert!(content.len() <= CAP, "{} bytes", content.len());
    assert!(long.starts_with(content.trim_end()), "a prefix of line 1");
    assert_eq!(result["structuredContent"]["truncated"], true);
    assert_eq!(result["structuredContent"]["next_start_line"], 2);
    let kept = content.trim_end().len();
    let text = text_of(&result);
    let note = format!(
        "[Line 1 is longer than the size cap: its rest is bytes {kept}..{}",
        long.len()
    );
    assert!(text.contains(&note), "{text}");
    // Read says it in its summary.
    let result = server.tool("Read", json!({"path": "one.txt"}));
    assert!(text_of(&result).contains(&note), "{}", text_of(&result));
}
