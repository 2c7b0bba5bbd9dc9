//! Every command transcript of `README.md` and `docs/*.md`, run against the real binary and
//! compared with what the page shows, so that no example can drift from the program.
//!
//! A transcript is a fenced code block with lines that start with `$ `. Each such line is a
//! command; the lines after it, up to the next `$ ` line or the end of the block, are what it
//! prints: standard output, then standard error. The rules, also in
//! `docs/README.md` ("Examples"):
//!
//! - The command is `lisp-read-file ARGS...`, run with the binary Cargo built for this
//!   package, from the repository root. Arguments are split as a POSIX shell splits them
//!   (single and double quotes, backslashes); a final `< FILE` is standard input. Anything
//!   else a shell would do (pipes, `;`, `&&`, other redirections, `$`, globs) is refused, so
//!   that a page never shows a command this test did not run.
//! - The exit status is 0, or N when the output's last line is `[exit status N]`.
//! - Two elisions, and nothing else is loosened (every other character is compared, spaces
//!   included): a line that is exactly `...` stands for any number of lines, none included;
//!   `[..]` inside a line stands for any text within that line (a time, a size, an owner).
//! - The files a command names are in the repository (`fixtures/`), or are three files too
//!   big to ship that this test writes, the same bytes each time, before anything runs:
//!   `target/docs/app.log` (150,000 log lines, 8 MB), `target/docs/data.json` (one line of
//!   1 MB) and `target/docs/bomb.docx` (a ZIP bomb: 1 GiB of spaces in 1 MiB). They live
//!   under `target/` (ignored by git), not `fixtures/`, whose every file other suites read.
//! - A command that names Debian's Lisp sources (`/usr/share/common-lisp/source/...`,
//!   installed by `bash .ci/run`) is skipped with a notice when they are missing, and fails
//!   under `CI=true` (`tests/common`).
//!
//! Run: `cargo test --release --test cli transcripts`.
#![cfg(feature = "documents")]

use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The fewest transcripts the pages hold; fewer means the pages lost examples or this file
/// stopped finding them, not that everything passed.
const MIN_TRANSCRIPTS: usize = 60;

/// Where the pages name files outside the repository: Debian's Common Lisp sources.
const OUTSIDE: &str = "/usr/share/common-lisp/source/";

/// One `$ ` command of a page and the output the page shows for it.
#[derive(Debug)]
struct Transcript {
    page: String,
    line: usize,
    command: String,
    expected: Vec<String>,
}

/// The transcripts of one page, in page order. A block indented under a list item has
/// its indentation removed from every line.
fn transcripts_of(page: &str, text: &str) -> Vec<Transcript> {
    let mut found: Vec<Transcript> = Vec::new();
    // The open fence's backquotes and indentation.
    let mut fence: Option<(&str, usize)> = None;
    let mut current: Option<Transcript> = None;
    for (index, raw) in text.lines().enumerate() {
        let trimmed = raw.trim_start();
        if let Some((open, indent)) = fence {
            let line = raw
                .get(indent..)
                .filter(|_| raw[..indent].trim().is_empty())
                .unwrap_or(trimmed);
            if trimmed.starts_with(open) && trimmed.trim_start_matches('`').trim().is_empty() {
                fence = None;
                found.extend(current.take());
            } else if let Some(command) = line.strip_prefix("$ ") {
                found.extend(current.take());
                current = Some(Transcript {
                    page: page.to_string(),
                    line: index + 1,
                    command: command.to_string(),
                    expected: Vec::new(),
                });
            } else if let Some(transcript) = current.as_mut() {
                transcript.expected.push(line.to_string());
            }
        } else if trimmed.starts_with("```") {
            let ticks = trimmed.len() - trimmed.trim_start_matches('`').len();
            fence = Some((&trimmed[..ticks], raw.len() - trimmed.len()));
        }
    }
    found.extend(current);
    found
}

/// A word of a command line, or the `<` of a redirection.
#[derive(Debug, PartialEq)]
enum Token {
    Word(String),
    Stdin,
}

/// The words of a command line as a POSIX shell splits them, and the file of a final
/// `< FILE`. An error names what the shell would do that this test does not.
fn split_command(command: &str) -> Result<(Vec<String>, Option<String>), String> {
    let mut tokens: Vec<Token> = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => tokens.extend(word.take().map(Token::Word)),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err("an unclosed single quote".into()),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') if matches!(chars.peek(), Some('"' | '\\' | '$' | '`')) => {
                            w.extend(chars.next())
                        }
                        Some('$' | '`') => return Err("`$` or a backquote in double quotes".into()),
                        Some(c) => w.push(c),
                        None => return Err("an unclosed double quote".into()),
                    }
                }
            }
            '\\' => match chars.next() {
                Some(c) => word.get_or_insert_with(String::new).push(c),
                None => return Err("a backslash at the end".into()),
            },
            '<' => {
                tokens.extend(word.take().map(Token::Word));
                tokens.push(Token::Stdin);
            }
            // A shell starts a comment or expands `~` only at the start of a word.
            '#' | '~' if word.is_some() => word.get_or_insert_with(String::new).push(c),
            '|' | ';' | '&' | '>' | '$' | '`' | '*' | '?' | '[' | '(' | ')' | '#' | '~' => {
                return Err(format!(
                    "shell syntax `{c}` (pipes, lists, redirections, expansions and globs are not run)"
                ))
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    tokens.extend(word.take().map(Token::Word));
    let stdin = match tokens.as_slice() {
        [.., Token::Stdin, Token::Word(file)] => {
            let file = file.clone();
            tokens.truncate(tokens.len() - 2);
            Some(file)
        }
        _ => None,
    };
    let words = tokens
        .into_iter()
        .map(|token| match token {
            Token::Word(word) => Ok(word),
            Token::Stdin => Err("a `<` that is not a final `< FILE`".to_string()),
        })
        .collect::<Result<Vec<String>, String>>()?;
    Ok((words, stdin))
}

/// Whether `actual` matches `expected`, where `[..]` in `expected` stands for any text.
fn line_matches(expected: &str, actual: &str) -> bool {
    let mut parts = expected.split("[..]");
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = actual.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    // Leftmost matches of the middle parts leave the most room for the ones after them.
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Whether the lines of `actual` match the lines of `expected`, where a line `...` stands
/// for any number of lines. Quadratic in the worst case, on outputs of a few hundred lines.
fn lines_match(expected: &[String], actual: &[&str]) -> bool {
    // reachable[j]: the first i expected lines can match the first j actual lines.
    let mut reachable = vec![false; actual.len() + 1];
    reachable[0] = true;
    for pattern in expected {
        let mut next = vec![false; actual.len() + 1];
        if pattern == "..." {
            let mut any = false;
            for j in 0..=actual.len() {
                any |= reachable[j];
                next[j] = any;
            }
        } else {
            for j in 0..actual.len() {
                if reachable[j] && line_matches(pattern, actual[j]) {
                    next[j + 1] = true;
                }
            }
        }
        reachable = next;
    }
    reachable[actual.len()]
}

/// The exit status a transcript expects, and its output lines without the status line.
fn expected_status(expected: &[String]) -> (i32, &[String]) {
    if let Some((last, output)) = expected.split_last() {
        if let Some(n) = last
            .strip_prefix("[exit status ")
            .and_then(|s| s.strip_suffix(']'))
            .and_then(|s| s.parse().ok())
        {
            return (n, output);
        }
    }
    (0, expected)
}

/// Runs one transcript; `Ok(false)` when it was skipped, `Err` with a report when it differs.
fn run(transcript: &Transcript) -> Result<bool, String> {
    let at = format!(
        "{}:{}: $ {}",
        transcript.page, transcript.line, transcript.command
    );
    let (words, stdin) =
        split_command(&transcript.command).map_err(|e| format!("{at}\n  cannot run it: {e}"))?;
    if words.first().map(String::as_str) != Some("lisp-read-file") {
        return Err(format!(
            "{at}\n  cannot run it: a transcript's command starts with `lisp-read-file`"
        ));
    }
    if let Some(outside) = words.iter().chain(&stdin).find(|w| w.starts_with(OUTSIDE)) {
        let present = Path::new(outside).exists();
        let how = format!("{at} names {outside}; apt-get install cl-ppcre cl-alexandria");
        if !common::tool_available(present, "Debian's Common Lisp sources", &how) {
            return Ok(false);
        }
    }
    let mut command = Command::new(BIN);
    command.args(&words[1..]).current_dir(ROOT);
    command.stdin(match &stdin {
        Some(file) => Stdio::from(
            fs::File::open(Path::new(ROOT).join(file))
                .map_err(|e| format!("{at}\n  {file}: {e}"))?,
        ),
        None => Stdio::null(),
    });
    let output = command
        .output()
        .map_err(|e| format!("{at}\n  {BIN}: {e}"))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let actual: Vec<&str> = text.lines().collect();
    let (status, expected) = expected_status(&transcript.expected);
    let got_status = output.status.code().unwrap_or(-1);
    if got_status == status && lines_match(expected, &actual) {
        return Ok(true);
    }
    let mut report = format!("{at}\n  exit status {got_status} (expected {status})\n  expected:\n");
    for line in expected {
        let _ = writeln!(report, "    |{line}");
    }
    report.push_str("  actual:\n");
    for line in &actual {
        let _ = writeln!(report, "    |{line}");
    }
    Err(report)
}

/// The pages that hold transcripts: README.md and docs/*.md, in name order.
fn pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = fs::read_dir(Path::new(ROOT).join("docs"))
        .expect("read docs/")
        .map(|entry| entry.expect("a docs/ entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages.insert(0, Path::new(ROOT).join("README.md"));
    pages
}

/// Writes `bytes` to `path` unless it holds them already.
fn write_if_changed(path: &Path, bytes: &[u8]) {
    if fs::read(path).is_ok_and(|old| old == bytes) {
        return;
    }
    fs::write(path, bytes).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    // `--metadata` shows the mode: the same whatever the umask.
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o644))
        .unwrap_or_else(|e| panic!("chmod {}: {e}", path.display()));
}

/// `target/docs/app.log`: 150,000 lines of a web server's log, 8,383,895 bytes.
fn app_log() -> Vec<u8> {
    let mut log = Vec::with_capacity(8_400_000);
    for i in 1..=150_000u64 {
        let s = i % 3600;
        let ms = i * 7 % 300;
        let _ = writeln!(
            log,
            "2026-11-23T10:{:02}:{:02} INFO request {i} served in {ms} ms",
            s / 60,
            s % 60
        );
    }
    log
}

/// `target/docs/data.json`: one line of 1,087,791 bytes, without a final newline.
fn data_json() -> Vec<u8> {
    let items: Vec<String> = (0..30_000)
        .map(|i| format!("{{\"id\": {i}, \"name\": \"item {i}\"}}"))
        .collect();
    format!("{{\"items\": [{}]}}", items.join(", ")).into_bytes()
}

/// `target/docs/bomb.docx`: a DOCX whose `word/document.xml` inflates to 1 GiB of spaces.
fn bomb_docx() -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut out);
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default());
    zip.start_file("[Content_Types].xml", options)
        .expect("zip entry");
    zip.write_all(b"<Types/>").expect("zip write");
    zip.start_file("word/document.xml", options)
        .expect("zip entry");
    let chunk = vec![b' '; 1 << 20];
    for _ in 0..1024 {
        zip.write_all(&chunk).expect("zip write");
    }
    zip.finish().expect("zip finish");
    out.into_inner()
}

/// Writes the fixtures too big to ship (see the module documentation).
fn write_generated_fixtures() {
    let dir = Path::new(ROOT).join("target/docs");
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    write_if_changed(&dir.join("app.log"), &app_log());
    write_if_changed(&dir.join("data.json"), &data_json());
    let bomb = dir.join("bomb.docx");
    // Deflating 1 GiB takes seconds: written once, checked by its size.
    if fs::metadata(&bomb).map(|m| m.len()).unwrap_or(0) < 1 << 19 {
        write_if_changed(&bomb, &bomb_docx());
    }
}

#[test]
fn every_transcript_of_the_docs_reproduces() {
    write_generated_fixtures();
    let mut failures: Vec<String> = Vec::new();
    let (mut total, mut ran) = (0, 0);
    for page in pages() {
        let text = fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        let name = page
            .strip_prefix(ROOT)
            .unwrap_or(&page)
            .display()
            .to_string();
        let name = name.trim_start_matches('/').to_string();
        for transcript in transcripts_of(&name, &text) {
            total += 1;
            match run(&transcript) {
                Ok(true) => ran += 1,
                Ok(false) => {}
                Err(report) => failures.push(report),
            }
        }
    }
    let _ = writeln!(
        std::io::stderr(),
        "transcripts: {total} found, {ran} run and matched, {} differ",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {total} transcripts differ from the program:\n\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        total >= MIN_TRANSCRIPTS,
        "only {total} transcripts found, expected at least {MIN_TRANSCRIPTS}"
    );
}

#[test]
fn elision_is_exact_outside_its_two_marks() {
    let lines = |s: &str| s.lines().map(str::to_string).collect::<Vec<_>>();
    // `...` stands for any number of lines, none included.
    assert!(lines_match(&lines("a\n...\nd"), &["a", "b", "c", "d"]));
    assert!(lines_match(&lines("a\n...\nb"), &["a", "b"]));
    assert!(lines_match(&lines("...\nz"), &["z"]));
    assert!(!lines_match(&lines("a\n...\nd"), &["a", "b", "c"]));
    // `[..]` stands for text within one line, never across lines.
    assert!(lines_match(&lines("mtime [..] ms"), &["mtime 17 ms"]));
    assert!(line_matches("[..]", ""));
    assert!(line_matches("a[..]b[..]c", "a1b2b3c"));
    assert!(!line_matches("a[..]b", "a\nb c"));
    assert!(!lines_match(&lines("x [..] y"), &["x", "y"]));
    // Everything else is compared exactly: a changed character, a trailing space, a
    // missing or extra line all differ.
    assert!(!lines_match(&lines("12: (defun f)"), &["12: (defun g)"]));
    assert!(!lines_match(&lines("a"), &["a "]));
    assert!(!lines_match(&lines("a\nb"), &["a"]));
    assert!(!lines_match(&lines("a"), &["a", "b"]));
    assert!(!line_matches("ab[..]ba", "aba"));
}

#[test]
fn commands_split_as_a_shell_splits_them() {
    let split = split_command;
    assert_eq!(
        split("lisp-read-file -n 'area :around (shape)' x.lisp")
            .unwrap()
            .0,
        ["lisp-read-file", "-n", "area :around (shape)", "x.lisp"]
    );
    assert_eq!(
        split(r#"lisp-read-file -c "a \"b\"" a\ b"#).unwrap().0,
        ["lisp-read-file", "-c", "a \"b\"", "a b"]
    );
    assert_eq!(
        split("lisp-read-file - < fixtures/docs/stdin.lisp").unwrap(),
        (
            vec!["lisp-read-file".to_string(), "-".to_string()],
            Some("fixtures/docs/stdin.lisp".to_string())
        )
    );
    for refused in [
        "lisp-read-file x | cut -c1-60",
        "cd x && lisp-read-file y",
        "lisp-read-file x > out",
        "lisp-read-file $HOME",
        "lisp-read-file *.lisp",
        "lisp-read-file x; ls",
        "lisp-read-file 'open",
        "lisp-read-file - < a b",
    ] {
        assert!(split(refused).is_err(), "{refused}");
    }
}

#[test]
fn transcripts_are_found_in_fenced_blocks_only() {
    let page = "$ not in a block\n```text\n$ lisp-read-file a\none\n\n$ lisp-read-file b\n```\n$ after\n````md\n```\n$ lisp-read-file c\n````\n- item\n\n  ```text\n  $ lisp-read-file d\n    two\n  ```\n";
    let found = transcripts_of("p.md", page);
    let commands: Vec<&str> = found.iter().map(|t| t.command.as_str()).collect();
    assert_eq!(
        commands,
        [
            "lisp-read-file a",
            "lisp-read-file b",
            "lisp-read-file c",
            "lisp-read-file d"
        ]
    );
    assert_eq!(found[3].expected, ["  two"]);
    assert_eq!(found[0].expected, ["one", ""]);
    assert_eq!(found[0].line, 3);
}
