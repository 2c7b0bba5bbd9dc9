//! Reading strategies (docs/tool.md#strategies) through the library (`tool::read`) and the
//! real binary: every strategy on a small file and on files over the size cap, invalid
//! ranges, long lines, the refusals the guard keeps for windows, `include_metadata`.
//! Outputs shown in the docs are insta snapshots (`tests/views/snapshots/views__strategies__*.snap`).

use lisp_read_file::error::ErrorCode;
use lisp_read_file::grammar::Grammar;
use lisp_read_file::guard::Guard;
use lisp_read_file::tool::{self, ReadRequest, ReadResult, Strategy};
use lisp_read_file::view::Mode;
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");

struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("lrf-strategies-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Scratch { dir }
    }

    fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.dir.join(name);
        fs::write(&path, bytes).unwrap();
        path
    }

    fn guard(&self, cap: u64) -> Guard {
        Guard::confined(std::slice::from_ref(&self.dir), cap).unwrap()
    }

    fn read(
        &self,
        cap: u64,
        path: &str,
        strategy: Strategy,
    ) -> Result<ReadResult, lisp_read_file::error::ToolError> {
        let mut request = ReadRequest::new(path);
        request.strategy = strategy;
        tool::read(&self.guard(cap), &Grammar::builtin(), &request)
    }

    /// The CLI in this directory: exit status, stdout, stderr.
    fn cli(&self, args: &[&str]) -> (i32, String, String) {
        let out = Command::new(BIN)
            .args(args)
            .current_dir(&self.dir)
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

const SMALL: &str = "alpha\nbeta\r\ngamma é\ndelta";
const CAP: u64 = 1 << 20;

fn invalid(result: Result<ReadResult, lisp_read_file::error::ToolError>) -> String {
    let e = result.expect_err("an error");
    assert_eq!(e.code, ErrorCode::InvalidArgument, "{e:?}");
    e.message
}

#[test]
fn every_strategy_on_a_small_file() {
    let s = Scratch::new("small");
    s.write("small.txt", SMALL);
    let r = s.read(CAP, "small.txt", Strategy::Default).unwrap();
    assert_eq!(r.content, "alpha\nbeta\ngamma é\ndelta\n");
    assert_eq!(r.meta.applied_strategy, Strategy::Default);
    assert_eq!(
        (r.meta.remaining_lines, r.meta.total_lines),
        (Some(0), Some(4))
    );
    // complete: the text verbatim, line breaks and all.
    let r = s.read(CAP, "small.txt", Strategy::Complete).unwrap();
    assert_eq!((r.content.as_str(), r.mode), (SMALL, Mode::Raw));
    assert_eq!(r.meta.remaining_bytes, Some(0));
    assert!(!r.meta.truncated);
    // byteRange: end exclusive; 19 cuts "é" (bytes 18-19): moved back to 18.
    let r = s
        .read(
            CAP,
            "small.txt",
            Strategy::ByteRange {
                start: 6,
                end: Some(19),
            },
        )
        .unwrap();
    assert_eq!(r.content, "beta\r\ngamma ");
    assert_eq!(
        r.meta.applied_strategy,
        Strategy::ByteRange {
            start: 6,
            end: Some(18)
        }
    );
    assert_eq!(r.meta.remaining_bytes, Some(SMALL.len() as u64 - 18));
    assert!(r.meta.truncated, "short of the asked end");
    assert_eq!(r.meta.total_lines, None, "a byte window counts no lines");
    // A start inside "é" moves forward past it.
    let r = s
        .read(
            CAP,
            "small.txt",
            Strategy::ByteRange {
                start: 19,
                end: None,
            },
        )
        .unwrap();
    assert_eq!(r.content, "\ndelta");
    assert_eq!(
        r.meta.applied_strategy,
        Strategy::ByteRange {
            start: 20,
            end: Some(26)
        }
    );
    assert!(!r.meta.truncated);
    // The end of the file is a valid start: nothing.
    let r = s
        .read(
            CAP,
            "small.txt",
            Strategy::ByteRange {
                start: 26,
                end: None,
            },
        )
        .unwrap();
    assert_eq!(r.content, "");
    // lineRange: 1-based, inclusive, CR LF shown as LF.
    let r = s
        .read(
            CAP,
            "small.txt",
            Strategy::LineRange {
                start_line: 2,
                end_line: Some(3),
            },
        )
        .unwrap();
    assert_eq!(r.content, "beta\ngamma é\n");
    assert_eq!(
        (r.meta.remaining_lines, r.meta.total_lines),
        (Some(1), Some(4))
    );
    assert!(!r.meta.truncated);
    let r = s
        .read(
            CAP,
            "small.txt",
            Strategy::LineRange {
                start_line: 4,
                end_line: None,
            },
        )
        .unwrap();
    assert_eq!(r.content, "delta\n");
    assert_eq!(
        r.meta.applied_strategy,
        Strategy::LineRange {
            start_line: 4,
            end_line: Some(4)
        }
    );
    // lineRange stops at `limit` lines and says how to go on.
    let mut request = ReadRequest::new("small.txt");
    request.strategy = Strategy::LineRange {
        start_line: 1,
        end_line: None,
    };
    request.limit = 2;
    request.line_numbers = true;
    let r = tool::read(&s.guard(CAP), &Grammar::builtin(), &request).unwrap();
    insta::assert_snapshot!("line_range_cut_by_limit", r.content);
    assert_eq!((r.meta.truncated, r.meta.remaining_lines), (true, Some(2)));
}

#[test]
fn invalid_ranges_name_the_valid_range() {
    let s = Scratch::new("invalid");
    s.write("small.txt", SMALL);
    let byte = |start, end| s.read(CAP, "small.txt", Strategy::ByteRange { start, end });
    let line = |start_line, end_line| {
        s.read(
            CAP,
            "small.txt",
            Strategy::LineRange {
                start_line,
                end_line,
            },
        )
    };
    insta::assert_snapshot!(
        "invalid_ranges",
        [
            invalid(byte(27, None)),
            invalid(byte(0, Some(27))),
            invalid(byte(u64::MAX, Some(u64::MAX))),
            invalid(byte(9, Some(3))),
            invalid(line(0, None)),
            invalid(line(5, None)),
            invalid(line(2, Some(9))),
            invalid(line(1, Some(u64::MAX))),
            invalid(line(3, Some(2))),
        ]
        .join("\n")
    );
    // An empty file has no lines: startLine 1 is still valid, and gives nothing.
    s.write("empty.txt", "");
    let r = s
        .read(
            CAP,
            "empty.txt",
            Strategy::LineRange {
                start_line: 1,
                end_line: None,
            },
        )
        .unwrap();
    assert_eq!((r.content.as_str(), r.meta.total_lines), ("", Some(0)));
    // Patterns and offset belong to the default strategy.
    let mut request = ReadRequest::new("small.txt");
    request.strategy = Strategy::Complete;
    request.content_pattern = Some("a".into());
    let e = tool::read(&s.guard(CAP), &Grammar::builtin(), &request).unwrap_err();
    assert!(e.message.contains("apply to the default strategy"), "{e:?}");
    request.content_pattern = None;
    request.offset = 3;
    let e = tool::read(&s.guard(CAP), &Grammar::builtin(), &request).unwrap_err();
    assert!(e.message.contains("startLine"), "{e:?}");
    // JSON: unknown members, a missing start, a negative number are refused by serde.
    for bad in [
        json!({"path": "a", "strategy": {"type": "lineRange", "startLine": 1, "end": 2}}),
        json!({"path": "a", "strategy": {"type": "byteRange"}}),
        json!({"path": "a", "strategy": {"type": "byteRange", "start": -1}}),
        json!({"path": "a", "strategy": {"type": "all"}}),
        json!({"path": "a", "strategy": {"type": "complete", "x": 1}}),
    ] {
        assert!(
            serde_json::from_value::<ReadRequest>(bad.clone()).is_err(),
            "{bad}"
        );
    }
}

/// A file of `lines` numbered lines of 16 bytes.
fn numbered(lines: u64) -> String {
    (1..=lines).map(|i| format!("line {i:010}\n")).collect()
}

#[test]
fn files_over_the_cap_are_read_in_windows() {
    let s = Scratch::new("large");
    // 4,000 lines of 16 bytes: 64,000 bytes, over a 10,000-byte cap.
    s.write("big.log", numbered(4000));
    s.write("big.lisp", "(defun f () 1)\n".repeat(1000));
    let cap = 10_000;
    let r = s
        .read(
            cap,
            "big.log",
            Strategy::LineRange {
                start_line: 3999,
                end_line: None,
            },
        )
        .unwrap();
    assert_eq!(r.content, "line 0000003999\nline 0000004000\n");
    assert_eq!(
        (r.meta.total_lines, r.meta.byte_length),
        (Some(4000), 64_000)
    );
    // A line window is bounded by the cap too: 625 lines of 16 bytes fill 10,000.
    let r = s.read(
        cap,
        "big.log",
        Strategy::LineRange {
            start_line: 1,
            end_line: Some(4000),
        },
    );
    let mut request = ReadRequest::new("big.log");
    request.strategy = Strategy::LineRange {
        start_line: 1,
        end_line: Some(4000),
    };
    request.limit = 4000;
    let capped = tool::read(&s.guard(cap), &Grammar::builtin(), &request).unwrap();
    assert!(capped.content.len() <= cap as usize + 200);
    assert_eq!(
        capped.meta.applied_strategy,
        Strategy::LineRange {
            start_line: 1,
            end_line: Some(625)
        }
    );
    assert!(capped.content.ends_with("[Showing lines 1-625 of 4000 (the size cap stops a window). Use strategy {\"type\":\"lineRange\",\"startLine\":626} to read more.]\n"));
    assert_eq!(
        r.unwrap().meta.remaining_lines,
        Some(4000 - 625),
        "the cap stops the window before the limit"
    );
    // byteRange: at most the cap.
    let r = s
        .read(
            cap,
            "big.log",
            Strategy::ByteRange {
                start: 16,
                end: None,
            },
        )
        .unwrap();
    assert_eq!(
        r.meta.applied_strategy,
        Strategy::ByteRange {
            start: 16,
            end: Some(10_016)
        }
    );
    assert_eq!(
        (r.meta.remaining_bytes, r.meta.truncated),
        (Some(64_000 - 10_016), true)
    );
    // default: a raw window of a text file, streamed; the Lisp file's view says what to ask.
    let mut request = ReadRequest::new("big.log");
    request.offset = 3998;
    let r = tool::read(&s.guard(cap), &Grammar::builtin(), &request).unwrap();
    assert_eq!(r.content, "line 0000003999\nline 0000004000\n");
    assert_eq!(r.meta.remaining_lines, Some(0));
    let r = s.read(cap, "big.lisp", Strategy::Default).unwrap();
    assert_eq!(r.mode, Mode::LispCollapsed);
    insta::assert_snapshot!("collapsed_over_the_cap", r.content);
    assert!(r.meta.truncated);
    // complete keeps the cap.
    let e = s.read(cap, "big.log", Strategy::Complete).unwrap_err();
    assert_eq!(e.code, ErrorCode::SizeLimitExceeded);
}

#[test]
fn a_cancelled_line_window_stops() {
    let s = Scratch::new("cancel");
    s.write("big.log", numbered(10_000));
    let mut request = ReadRequest::new("big.log");
    request.strategy = Strategy::LineRange {
        start_line: 9_000,
        end_line: None,
    };
    let cancel = lisp_read_file::cancel::CancelToken::new();
    let guard = s.guard(1000);
    let grammar = Grammar::builtin();
    assert!(tool::read_cancellable(&guard, &grammar, &request, &cancel).is_ok());
    cancel.cancel();
    let e = tool::read_cancellable(&guard, &grammar, &request, &cancel).unwrap_err();
    assert_eq!(e.code, ErrorCode::Cancelled);
    // The default strategy over the cap streams the same way.
    request.strategy = Strategy::Default;
    let e = tool::read_cancellable(&guard, &grammar, &request, &cancel).unwrap_err();
    assert_eq!(e.code, ErrorCode::Cancelled);
}

#[test]
fn windows_keep_every_refusal_of_the_guard() {
    let s = Scratch::new("refusals");
    let mut binary = b"\x89PNG\r\n\x1a\n\0\0\0".to_vec();
    binary.extend(std::iter::repeat_n(b'a', 100_000));
    s.write("image.png", &binary);
    fs::create_dir_all(s.dir.join("dir")).unwrap();
    let outside = Scratch::new("refusals-outside");
    outside.write("secret.txt", "secret\n");
    std::os::unix::fs::symlink(outside.dir.join("secret.txt"), s.dir.join("link.txt")).unwrap();
    // A short first line, then binary bytes within the first 8 KiB.
    let mut late = b"ok\n\xff".to_vec();
    late.extend(std::iter::repeat_n(0u8, 200));
    s.write("late.bin", &late);
    for strategy in [
        Strategy::ByteRange {
            start: 0,
            end: Some(2),
        },
        Strategy::LineRange {
            start_line: 1,
            end_line: Some(1),
        },
    ] {
        let e = s.read(CAP, "late.bin", strategy).unwrap_err();
        assert_eq!(e.code, ErrorCode::BinaryFile, "{strategy:?}");
    }
    let strategies = [
        Strategy::ByteRange {
            start: 50_000,
            end: None,
        },
        Strategy::LineRange {
            start_line: 1,
            end_line: None,
        },
        Strategy::Complete,
    ];
    for strategy in strategies {
        let code = |path: &str| s.read(CAP, path, strategy).unwrap_err().code;
        // Binary by the file's first 8 KiB, even when the window is all text.
        assert_eq!(code("image.png"), ErrorCode::BinaryFile, "{strategy:?}");
        // A directory is read as a project map, by the default strategy only.
        assert_eq!(code("dir"), ErrorCode::InvalidArgument);
        assert_eq!(code("missing.txt"), ErrorCode::NotFound);
        assert_eq!(code("link.txt"), ErrorCode::AccessDenied);
        assert_eq!(
            code("../refusals-outside/secret.txt"),
            ErrorCode::AccessDenied
        );
        assert_eq!(
            Guard::unconfined(1000)
                .read_bytes("/dev/zero", 0, None)
                .unwrap_err()
                .code,
            ErrorCode::NotFile
        );
    }
}

#[test]
fn long_lines_say_which_bytes_hold_their_rest() {
    let s = Scratch::new("long");
    // A one-line JSON file of 50,000 bytes, and a line of 3,000 "é" in a small file.
    let json_line = format!("{{\"data\": \"{}\"}}", "x".repeat(49_988));
    s.write("one-line.json", &json_line);
    let text = format!("head\n{}\ntail\n", "é".repeat(3000));
    s.write("accents.txt", &text);
    for cap in [CAP, 20_000] {
        let r = s.read(cap, "one-line.json", Strategy::Default).unwrap();
        assert!(r.meta.truncated);
        assert_eq!(r.meta.cut_lines.len(), 1);
        let cut = r.meta.cut_lines[0];
        assert_eq!(
            (cut.line, cut.start, cut.end),
            (1, 2000, 50_000),
            "cap {cap}"
        );
        assert!(r.content.ends_with("…[+48000 chars; the rest is {\"type\":\"byteRange\",\"start\":2000,\"end\":50000}]\n"), "cap {cap}");
    }
    // Same in a line window (the guard keeps only a prefix of the line).
    let r = s
        .read(
            CAP,
            "accents.txt",
            Strategy::LineRange {
                start_line: 2,
                end_line: Some(2),
            },
        )
        .unwrap();
    insta::assert_snapshot!(
        "long_line_in_a_line_window",
        r.content.replace(&"é".repeat(2000), "é×2000")
    );
    let cut = r.meta.cut_lines[0];
    assert_eq!((cut.line, cut.start, cut.end), (2, 5 + 4000, 5 + 6000));
    // The named range reads the rest: the line is whole again.
    let rest = s
        .read(
            CAP,
            "accents.txt",
            Strategy::ByteRange {
                start: cut.start,
                end: Some(cut.end),
            },
        )
        .unwrap();
    assert_eq!(rest.content, "é".repeat(1000));
    // The grep view names the range too.
    let mut request = ReadRequest::new("accents.txt");
    request.content_pattern = Some("é".into());
    let r = tool::read(&s.guard(CAP), &Grammar::builtin(), &request).unwrap();
    assert_eq!(r.meta.cut_lines.len(), 1);
    assert!(r.meta.truncated);
}

#[test]
fn metadata_when_asked() {
    let s = Scratch::new("metadata");
    let path = s.write("small.txt", SMALL);
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
    for strategy in [
        Strategy::Default,
        Strategy::Complete,
        Strategy::ByteRange {
            start: 0,
            end: None,
        },
        Strategy::LineRange {
            start_line: 1,
            end_line: None,
        },
    ] {
        let mut request = ReadRequest::new("small.txt");
        request.strategy = strategy;
        let r = tool::read(&s.guard(CAP), &Grammar::builtin(), &request).unwrap();
        assert!(r.metadata.is_none(), "only when asked");
        request.include_metadata = true;
        let r = tool::read(&s.guard(CAP), &Grammar::builtin(), &request).unwrap();
        let m = r.metadata.expect("metadata");
        assert_eq!(
            (m.size, m.mode, m.permissions.as_str()),
            (SMALL.len() as u64, 0o640, "rw-r-----")
        );
        assert_eq!(m.mtime_ms, r.meta.mtime_ms);
        assert_eq!(
            m.owner_uid,
            std::os::unix::fs::MetadataExt::uid(&fs::metadata(&path).unwrap())
        );
    }
}

#[test]
fn the_command_line_flags() {
    let s = Scratch::new("cli");
    s.write("small.txt", SMALL);
    s.write("big.log", numbered(100_000)); // 1.6 MB, over the default cap
    let ok = |args: &[&str]| {
        let (code, out, err) = s.cli(args);
        assert_eq!((code, err.as_str()), (0, ""), "{args:?}");
        out
    };
    assert_eq!(ok(&["--strategy", "complete", "small.txt"]), SMALL);
    assert_eq!(ok(&["--bytes", "6..10", "small.txt"]), "beta");
    assert_eq!(ok(&["--lines", "2..3", "small.txt"]), "beta\ngamma é\n");
    assert_eq!(
        ok(&["--lines", "99999..", "big.log"]),
        "line 0000099999\nline 0000100000\n"
    );
    assert_eq!(
        ok(&["--bytes", "1599984..", "big.log"]),
        "line 0000100000\n"
    );
    let v: Value =
        serde_json::from_str(&ok(&["--json", "--metadata", "--lines", "1..1", "big.log"])).unwrap();
    assert_eq!(
        v["meta"]["applied_strategy"],
        json!({"type": "lineRange", "startLine": 1, "endLine": 1})
    );
    assert_eq!(v["meta"]["remaining_lines"], 99_999);
    assert_eq!(v["metadata"]["size"], 1_600_000);
    // Usage errors (status 2), and range errors (status 1, INVALID_ARGUMENT).
    for args in [
        &["--bytes", "5", "small.txt"][..],
        &["--lines", "a..b", "small.txt"],
        &["--lines", "1..2", "--bytes", "1..2", "small.txt"],
        &["--strategy", "complete", "--lines", "1..2", "small.txt"],
        &["--strategy", "all", "small.txt"],
    ] {
        assert_eq!(s.cli(args).0, 2, "{args:?}");
    }
    let (code, _, err) = s.cli(&["--lines", "7..", "small.txt"]);
    assert_eq!(code, 1);
    assert_eq!(err, "INVALID_ARGUMENT: the file has 4 lines: startLine must be at most 4, not 7 (reading \"small.txt\"); the valid line range is 1 to 4\n");
    let (code, _, err) = s.cli(&["--strategy", "complete", "big.log"]);
    assert_eq!(code, 1);
    assert!(
        err.starts_with("SIZE_LIMIT_EXCEEDED: file is 1600000 bytes"),
        "{err}"
    );
    assert!(Path::new(&s.dir).join("big.log").exists());
}
