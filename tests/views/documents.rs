//! Documents (docs/documents.md) through the library (`tool::read`) and the real binary:
//! PDF, DOCX and notebook fixtures made by independent tools (`fixtures/documents/make.py`:
//! fpdf2, pikepdf, python-docx, nbformat), every strategy on their text, the collapsed view
//! and `name_pattern` on a Common Lisp notebook, and the refusals: an encrypted and a
//! corrupt PDF, a DOCX that is no ZIP, ZIP bombs written here, the document cap, other
//! binary files.

use lisp_read_file::error::{ErrorCode, ToolError};
use lisp_read_file::grammar::Grammar;
use lisp_read_file::guard::{Guard, DEFAULT_MAX_FILE_BYTES};
use lisp_read_file::tool::{self, ReadRequest, ReadResult, Strategy};
use lisp_read_file::view::Mode;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_lisp-read-file");

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/documents")
}

fn read_with(
    cap: u64,
    edit: impl FnOnce(&mut ReadRequest),
    path: &str,
) -> Result<ReadResult, ToolError> {
    let guard = Guard::confined(&[fixtures()], cap).unwrap();
    let mut request = ReadRequest::new(path);
    edit(&mut request);
    tool::read(&guard, &Grammar::builtin(), &request)
}

fn read(path: &str, edit: impl FnOnce(&mut ReadRequest)) -> Result<ReadResult, ToolError> {
    read_with(DEFAULT_MAX_FILE_BYTES, edit, path)
}

/// The CLI in `dir`: exit status, stdout, stderr.
fn cli(dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn notebook_strategies_and_cli() {
    let r = read("python.ipynb", |q| {
        q.strategy = Strategy::LineRange {
            start_line: 4,
            end_line: None,
        }
    })
    .unwrap();
    assert_eq!(
        r.content,
        "--- cell 2 (code) ---\nprint('hello')\nout: hello\n"
    );
    assert_eq!(r.meta.document.unwrap().cells, Some(2));
    let (status, out, err) = cli(&fixtures(), &["--kinds", "defun", "lisp.ipynb"]);
    assert_eq!((status, err.as_str()), (0, ""));
    assert!(out.contains("\n 6: (defun square (x) ...)"), "{out}");
}

#[test]
fn lisp_notebook_is_outlined_and_expanded_by_name() {
    let r = read("lisp.ipynb", |_| {}).unwrap();
    assert_eq!(r.mode, Mode::LispCollapsed);
    assert_eq!(
        r.content,
        " 6: (defun square (x) ...) ;; X times X.\n11: (defvar *limit* 10)\n13: (defclass point () (x))\n17: (square 12)\n"
    );
    let doc = r.meta.document.unwrap();
    assert_eq!(
        (doc.cells, doc.language.as_deref()),
        (Some(5), Some("common-lisp"))
    );
    assert_eq!(r.meta.total_forms, 4);
    let r = read("lisp.ipynb", |q| q.name_pattern = Some("square".into())).unwrap();
    assert!(
        r.content.contains(" 7:   \"X times X.\"\n 8:   (* x x))\n"),
        "{}",
        r.content
    );
    assert_eq!(r.meta.expanded_forms, 1);
    // Raw: the markers and the markdown cell as comments.
    let r = read("lisp.ipynb", |q| q.collapsed = false).unwrap();
    assert!(
        r.content
            .starts_with(";;; --- cell 1 (markdown) ---\n;; # Squares\n"),
        "{}",
        r.content
    );
}

#[test]
fn other_notebooks_are_text_with_markers() {
    let r = read("python.ipynb", |_| {}).unwrap();
    assert_eq!(r.mode, Mode::Raw);
    assert_eq!(
        r.content,
        "--- cell 1 (markdown) ---\n# A Python notebook\n\n--- cell 2 (code) ---\nprint('hello')\nout: hello\n"
    );
}

#[test]
fn include_metadata_reports_the_file_and_byte_length_the_text() {
    let r = read("python.ipynb", |q| q.include_metadata = true).unwrap();
    let size = fs::metadata(fixtures().join("python.ipynb")).unwrap().len();
    assert_eq!(r.metadata.unwrap().size, size);
    assert_eq!(r.meta.byte_length, r.content.len());
}

#[cfg(feature = "documents")]
mod with_parsers {
    use super::*;
    use std::io::Write;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("lrf-documents-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    const PDF_TEXT: &str = "--- page 1 ---\nReading Lisp without evaluating it\nThe first page of a sample PDF.\n--- page 2 ---\nSecond page: a definition in prose.\n(defun square (x) (* x x))\n--- page 3 ---\nThird page, the last one.\n";

    #[test]
    fn pdf_text_per_page_through_every_strategy() {
        let r = read("sample.pdf", |_| {}).unwrap();
        assert_eq!((r.mode, r.content.as_str()), (Mode::Raw, PDF_TEXT));
        let doc = r.meta.document.as_ref().unwrap();
        assert_eq!(doc.pages, Some(3));
        assert_eq!(r.meta.total_lines, Some(8));
        let r = read("sample.pdf", |q| q.strategy = Strategy::Complete).unwrap();
        assert_eq!(r.content, PDF_TEXT);
        assert_eq!(r.meta.remaining_bytes, Some(0));
        let r = read("sample.pdf", |q| {
            q.strategy = Strategy::LineRange {
                start_line: 4,
                end_line: Some(6),
            }
        })
        .unwrap();
        assert_eq!(
            r.content,
            "--- page 2 ---\nSecond page: a definition in prose.\n(defun square (x) (* x x))\n"
        );
        assert_eq!(r.meta.remaining_lines, Some(2));
        let r = read("sample.pdf", |q| {
            q.strategy = Strategy::ByteRange {
                start: 0,
                end: Some(14),
            }
        })
        .unwrap();
        assert_eq!(r.content, "--- page 1 ---");
        assert_eq!(r.meta.remaining_bytes, Some(PDF_TEXT.len() as u64 - 14));
        assert!(r.meta.document.is_some());
        // Grep with context over the text.
        let r = read("sample.pdf", |q| {
            q.content_pattern = Some("defun".into());
            q.context_lines = 1;
        })
        .unwrap();
        assert_eq!(r.mode, Mode::TextFiltered);
        assert!(
            r.content.contains("(defun square (x) (* x x))"),
            "{}",
            r.content
        );
        assert!(r.content.contains("--- page 3 ---"), "{}", r.content);
        // Ranges are checked against the text.
        let e = read("sample.pdf", |q| {
            q.strategy = Strategy::ByteRange {
                start: 5000,
                end: None,
            }
        })
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(e.message.contains("text has 201 bytes"), "{e:?}");
    }

    #[test]
    fn docx_paragraphs_headings_and_tables() {
        let r = read("sample.docx", |_| {}).unwrap();
        assert_eq!(
            r.content,
            "# Lisp Read File\nA sample document made by python-docx.\n# Reading\n\
             Definitions are shown collapsed, one line each.\n- collapsed outline\n\
             - grep with context\n## Operators\noperator | defines\ndefun | a function\n\
             defclass | a class\nThe end & after the table.\n"
        );
        let r = read("sample.docx", |q| {
            q.content_pattern = Some("defclass".into());
            q.context_lines = 0;
        })
        .unwrap();
        assert!(r.content.contains("10:defclass | a class"), "{}", r.content);
    }

    #[test]
    fn encrypted_and_corrupt_pdfs_are_unsupported_documents() {
        let e = read("encrypted.pdf", |_| {}).unwrap_err();
        assert_eq!(
            (e.code, e.path.as_str()),
            (ErrorCode::UnsupportedDocument, "encrypted.pdf")
        );
        assert!(
            e.message.contains("encrypted (password-protected)"),
            "{e:?}"
        );
        let e = read("corrupt.pdf", |q| q.strategy = Strategy::Complete).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedDocument);
        assert!(e.message.contains("not a readable PDF"), "{e:?}");
    }

    /// A DOCX whose document.xml is `size` bytes of one character.
    fn bomb(size: usize) -> Vec<u8> {
        let mut out = std::io::Cursor::new(Vec::new());
        let mut zip = zip::ZipWriter::new(&mut out);
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .large_file(size > u32::MAX as usize);
        zip.start_file("[Content_Types].xml", options).unwrap();
        zip.write_all(b"<Types/>").unwrap();
        zip.start_file("word/document.xml", options).unwrap();
        let chunk = vec![b' '; 1 << 20];
        for _ in 0..size / chunk.len() {
            zip.write_all(&chunk).unwrap();
        }
        zip.finish().unwrap();
        out.into_inner()
    }

    #[test]
    fn zip_bomb_docx_is_refused_not_expanded() {
        let dir = scratch("bomb");
        // 1 GiB of spaces in about 1 MiB: over the entry limit as declared.
        let big = bomb(1 << 30);
        assert!(big.len() < 2 << 20, "{}", big.len());
        fs::write(dir.join("bomb.docx"), &big).unwrap();
        // 8 MiB: under the entry limit, over the compression-ratio limit.
        fs::write(dir.join("dense.docx"), bomb(8 << 20)).unwrap();
        let guard = Guard::confined(std::slice::from_ref(&dir), DEFAULT_MAX_FILE_BYTES).unwrap();
        let started = std::time::Instant::now();
        let e =
            tool::read(&guard, &Grammar::builtin(), &ReadRequest::new("bomb.docx")).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedDocument);
        assert!(e.message.contains("ZIP bomb is refused"), "{e:?}");
        assert!(
            e.message.contains("1073741824 bytes (as declared)"),
            "{e:?}"
        );
        let e =
            tool::read(&guard, &Grammar::builtin(), &ReadRequest::new("dense.docx")).unwrap_err();
        assert!(
            e.message.contains("compressed") && e.message.contains("to 1"),
            "{e:?}"
        );
        // Refused without inflating: well under the time 1 GiB takes to inflate.
        assert!(started.elapsed().as_secs() < 5);
        // Through the CLI too, with a clear error.
        let (status, out, err) = cli(&dir, &["bomb.docx"]);
        assert_eq!((status, out.as_str()), (1, ""));
        assert!(
            err.starts_with("UNSUPPORTED_DOCUMENT: cannot read the document bomb.docx"),
            "{err}"
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn misnamed_files_caps_and_other_binaries() {
        let dir = scratch("misnamed");
        fs::write(dir.join("text.docx"), "plain text, not a ZIP\n").unwrap();
        fs::copy(fixtures().join("sample.pdf"), dir.join("paper.bin")).unwrap();
        fs::write(dir.join("image.png"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
        let guard = Guard::confined(std::slice::from_ref(&dir), DEFAULT_MAX_FILE_BYTES).unwrap();
        let read = |path: &str| tool::read(&guard, &Grammar::builtin(), &ReadRequest::new(path));
        let e = read("text.docx").unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedDocument);
        assert!(e.message.contains("not a ZIP archive"), "{e:?}");
        // A PDF under another name is known by its header.
        let r = read("paper.bin").unwrap();
        assert_eq!(r.content, PDF_TEXT);
        // Other binary files stay refused.
        assert_eq!(read("image.png").unwrap_err().code, ErrorCode::BinaryFile);
        // The document cap is 32 times the size cap.
        let e = read_with(1000, |_| {}, "sample.docx").unwrap_err();
        assert_eq!(e.code, ErrorCode::SizeLimitExceeded);
        assert!(
            e.message.contains("over the 32000-byte cap for documents"),
            "{e:?}"
        );
        // `complete` returns at most the size cap of text; a byte range is cut to it.
        let e = read_with(100, |q| q.strategy = Strategy::Complete, "sample.pdf").unwrap_err();
        assert_eq!(e.code, ErrorCode::SizeLimitExceeded);
        let r = read_with(
            100,
            |q| {
                q.strategy = Strategy::ByteRange {
                    start: 0,
                    end: None,
                }
            },
            "sample.pdf",
        )
        .unwrap();
        assert_eq!(r.content.len(), 100);
        assert!(r.meta.truncated);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn cli_reads_documents_and_reports_errors() {
        let dir = fixtures();
        let (status, out, err) = cli(&dir, &["sample.pdf"]);
        assert_eq!((status, out.as_str(), err.as_str()), (0, PDF_TEXT, ""));
        let (status, out, _) = cli(&dir, &["--lines", "8..11", "sample.docx"]);
        assert_eq!(status, 0);
        assert_eq!(out, "operator | defines\ndefun | a function\ndefclass | a class\nThe end & after the table.\n");
        let (status, out, _) = cli(&dir, &["-n", "square", "lisp.ipynb"]);
        assert_eq!(status, 0);
        assert!(out.contains(" 8:   (* x x))"), "{out}");
        let (status, out, err) = cli(&dir, &["encrypted.pdf"]);
        assert_eq!((status, out.as_str()), (1, ""));
        assert!(err.starts_with("UNSUPPORTED_DOCUMENT: "), "{err}");
        let (status, out, _) = cli(&dir, &["--json", "corrupt.pdf"]);
        assert_eq!(status, 1);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["error"]["code"], "UNSUPPORTED_DOCUMENT");
        let (_, out, _) = cli(&dir, &["--json", "sample.pdf"]);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            v["meta"]["document"],
            serde_json::json!({"format": "pdf", "pages": 3})
        );
    }
}

#[cfg(not(feature = "documents"))]
#[test]
fn without_the_feature_pdf_and_docx_are_refused() {
    for path in ["sample.pdf", "sample.docx"] {
        let e = read(path, |_| {}).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedDocument);
        assert!(
            e.message.contains("without the `documents` feature"),
            "{e:?}"
        );
    }
}
