use super::*;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/../../fixtures/documents/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn run(format: Format, bytes: &[u8], limits: &Limits) -> Result<Extracted, ToolError> {
    extract(format, bytes, "doc", limits, &CancelToken::default())
}

#[test]
fn formats_by_extension_and_content() {
    assert_eq!(Format::of_path("a/B.PDF"), Some(Format::Pdf));
    assert_eq!(Format::of_path("x.docx"), Some(Format::Docx));
    assert_eq!(Format::of_path("n.ipynb"), Some(Format::Ipynb));
    assert_eq!(Format::of_path("a.lisp"), None);
    assert_eq!(Format::of_path("pdf"), None);
    assert_eq!(Format::sniff(b"%PDF-1.4\n"), Some(Format::Pdf));
    assert_eq!(Format::sniff(b"PK\x03\x04"), None);
}

#[test]
fn text_is_capped_at_a_character_boundary_with_a_marker() {
    let mut t = Text::new(10);
    assert!(t.line("abc"));
    assert!(!t.line("d\u{e9}\u{e9}\u{e9}\u{e9}"));
    assert!(t.truncated);
    assert!(!t.line("more"));
    assert!(t.out.starts_with("abc\nd\u{e9}\u{e9}\n"), "{:?}", t.out);
    assert!(
        t.out.ends_with("limit of extracted text ---\n"),
        "{:?}",
        t.out
    );
}

#[test]
fn notebook_of_a_lisp_kernel_is_lisp() {
    let e = run(Format::Ipynb, &fixture("lisp.ipynb"), &DEFAULT_LIMITS).unwrap();
    assert!(e.lisp);
    assert_eq!(e.info.cells, Some(5));
    assert_eq!(e.info.language.as_deref(), Some("common-lisp"));
    assert!(
        e.text
            .starts_with(";;; --- cell 1 (markdown) ---\n;; # Squares\n"),
        "{}",
        e.text
    );
    assert!(e.text.contains("\n(defun square (x)\n"), "{}", e.text);
    assert!(e.text.contains("(square 12)\n;; out: 144\n"), "{}", e.text);
    assert!(
        e.text.contains(";;; --- cell 5 (raw) ---\n;; raw text\n"),
        "{}",
        e.text
    );
}

#[test]
fn notebook_of_another_kernel_is_text_with_markers() {
    let e = run(Format::Ipynb, &fixture("python.ipynb"), &DEFAULT_LIMITS).unwrap();
    assert!(!e.lisp);
    assert_eq!(
        e.text,
        "--- cell 1 (markdown) ---\n# A Python notebook\n\n--- cell 2 (code) ---\nprint('hello')\nout: hello\n"
    );
}

#[test]
fn broken_notebooks_are_unsupported() {
    for bad in [
        &b"{\"cells\": ["[..],
        b"[]",
        b"{\"nbformat\": 3, \"worksheets\": []}",
        b"\xff\xfe",
    ] {
        let e = run(Format::Ipynb, bad, &DEFAULT_LIMITS).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedDocument, "{e:?}");
        assert!(e.message.contains("doc"), "{e:?}");
    }
}

#[test]
fn long_outputs_are_cut() {
    let lines: Vec<String> = (0..50).map(|i| format!("\"{i}\\n\"")).collect();
    let nb = format!(
        r#"{{"cells": [{{"cell_type": "code", "source": "x", "outputs": [{{"output_type": "stream", "text": [{}]}}]}}], "metadata": {{}}, "nbformat": 4}}"#,
        lines.join(",")
    );
    let e = run(Format::Ipynb, nb.as_bytes(), &DEFAULT_LIMITS).unwrap();
    assert!(
        e.text.contains("out: 19\nout: [30 more lines]\n"),
        "{}",
        e.text
    );
    assert!(!e.text.contains("out: 20\n"));
}

#[cfg(feature = "documents")]
mod with_parsers {
    use super::*;

    #[test]
    fn pdf_pages_have_markers() {
        let e = run(Format::Pdf, &fixture("sample.pdf"), &DEFAULT_LIMITS).unwrap();
        assert_eq!(e.info.pages, Some(3));
        assert!(e.text.starts_with("--- page 1 ---\n"), "{}", e.text);
        assert!(e.text.contains("--- page 2 ---\n"), "{}", e.text);
        assert!(e.text.contains("(defun square (x) (* x x))"), "{}", e.text);
        assert!(
            e.text.contains("--- page 3 ---\nThird page, the last one."),
            "{}",
            e.text
        );
    }

    #[test]
    fn pdf_page_limit_stops_with_a_marker() {
        let limits = Limits {
            max_pages: 2,
            ..DEFAULT_LIMITS
        };
        let e = run(Format::Pdf, &fixture("sample.pdf"), &limits).unwrap();
        assert!(e.info.truncated);
        assert!(!e.text.contains("--- page 3 ---"), "{}", e.text);
        assert!(
            e.text
                .ends_with("--- stopped after page 2 of 3: the limit is 2 pages ---\n"),
            "{}",
            e.text
        );
    }

    #[test]
    fn encrypted_corrupt_and_fake_pdfs_are_unsupported() {
        let e = run(Format::Pdf, &fixture("encrypted.pdf"), &DEFAULT_LIMITS).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedDocument);
        assert!(e.message.contains("encrypted"), "{e:?}");
        let e = run(Format::Pdf, &fixture("corrupt.pdf"), &DEFAULT_LIMITS).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedDocument);
        assert!(e.message.contains("not a readable PDF"), "{e:?}");
        let e = run(Format::Pdf, b"hello", &DEFAULT_LIMITS).unwrap_err();
        assert!(e.message.contains("no %PDF- header"), "{e:?}");
        // Every prefix of a real PDF: an error or text, never a panic.
        let pdf = fixture("sample.pdf");
        for n in (0..pdf.len()).step_by(97) {
            let _ = run(Format::Pdf, &pdf[..n], &DEFAULT_LIMITS);
        }
    }

    #[test]
    fn docx_headings_lists_and_tables() {
        let e = run(Format::Docx, &fixture("sample.docx"), &DEFAULT_LIMITS).unwrap();
        assert_eq!(
            e.text,
            "# Lisp Read File\nA sample document made by python-docx.\n# Reading\n\
             Definitions are shown collapsed, one line each.\n- collapsed outline\n\
             - grep with context\n## Operators\noperator | defines\ndefun | a function\n\
             defclass | a class\nThe end & after the table.\n"
        );
    }

    #[test]
    fn docx_that_is_not_a_zip_or_not_word_is_unsupported() {
        let e = run(Format::Docx, b"plain text", &DEFAULT_LIMITS).unwrap_err();
        assert!(e.message.contains("not a ZIP archive"), "{e:?}");
        let e = run(Format::Docx, b"PK\x03\x04garbage", &DEFAULT_LIMITS).unwrap_err();
        assert!(e.message.contains("not a readable ZIP"), "{e:?}");
        let e = run(Format::Docx, &zip_of(&[("a.txt", b"x")]), &DEFAULT_LIMITS).unwrap_err();
        assert!(e.message.contains("no word/document.xml"), "{e:?}");
    }

    #[test]
    fn zip_bombs_are_refused_before_they_are_expanded() {
        // Declared size over the entry limit.
        let limits = Limits {
            max_entry_bytes: 1 << 20,
            ..DEFAULT_LIMITS
        };
        let big = vec![b' '; 2 << 20];
        let bomb = zip_of(&[("word/document.xml", &big)]);
        let e = run(Format::Docx, &bomb, &limits).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedDocument);
        assert!(e.message.contains("ZIP bomb"), "{e:?}");
        assert!(e.message.contains("limit for one entry"), "{e:?}");
        // The ratio.
        let e = run(Format::Docx, &bomb, &DEFAULT_LIMITS).unwrap_err();
        assert!(e.message.contains("to 1"), "{e:?}");
        // Many entries.
        let names: Vec<String> = (0..20).map(|i| format!("f{i}")).collect();
        let many: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b""[..])).collect();
        let limits = Limits {
            max_entries: 10,
            ..DEFAULT_LIMITS
        };
        let e = run(Format::Docx, &zip_of(&many), &limits).unwrap_err();
        assert!(
            e.message.contains("20 entries, over the limit of 10"),
            "{e:?}"
        );
    }

    #[test]
    fn a_lying_header_is_caught_by_the_actual_size() {
        // An entry that declares 100 bytes but inflates to 64 KiB: at most the cap is read.
        let body = vec![b'a'; 64 * 1024];
        let mut bytes = zip_of(&[("word/document.xml", &body)]);
        patch_sizes(&mut bytes, 100);
        let limits = Limits {
            max_entry_bytes: 1000,
            ..DEFAULT_LIMITS
        };
        let e = run(Format::Docx, &bytes, &limits).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedDocument, "{e:?}");
    }

    /// Sets the uncompressed size of every entry (local headers and central directory).
    fn patch_sizes(bytes: &mut [u8], size: u32) {
        let mut i = 0;
        while i + 4 <= bytes.len() {
            match &bytes[i..i + 4] {
                b"PK\x03\x04" => bytes[i + 22..i + 26].copy_from_slice(&size.to_le_bytes()),
                b"PK\x01\x02" => bytes[i + 24..i + 28].copy_from_slice(&size.to_le_bytes()),
                _ => {}
            }
            i += 1;
        }
    }

    pub(super) fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
        use std::io::Write;
        let mut out = std::io::Cursor::new(Vec::new());
        let mut zip = zip::ZipWriter::new(&mut out);
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (name, body) in entries {
            zip.start_file(*name, options).unwrap();
            zip.write_all(body).unwrap();
        }
        zip.finish().unwrap();
        out.into_inner()
    }

    /// A PDF of `n` object streams, each inflating to `size` bytes of one string (few
    /// tokens: the byte budget decides), or of one array of zeros when `numbers`.
    fn object_stream_bomb(n: usize, size: usize) -> Vec<u8> {
        object_streams(n, size, false)
    }

    fn object_streams(n: usize, size: usize, numbers: bool) -> Vec<u8> {
        use std::io::Write;
        let mut out = b"%PDF-1.5\n".to_vec();
        let mut body = if numbers {
            b"[".to_vec()
        } else {
            b"(".to_vec()
        };
        let unit: &[u8] = if numbers { b"0 " } else { b"ab" };
        body.extend(std::iter::repeat_n(unit, size / 2).flatten());
        body.push(if numbers { b']' } else { b')' });
        for i in 0..n {
            let header = format!("{} 0 ", 100 + i);
            let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
            z.write_all(header.as_bytes()).unwrap();
            z.write_all(&body).unwrap();
            let packed = z.finish().unwrap();
            out.extend_from_slice(
                format!(
                    "{} 0 obj\n<< /Type /ObjStm /N 1 /First {} /Length {} /Filter /FlateDecode >>\nstream\n",
                    10 + i,
                    header.len(),
                    packed.len()
                )
                .as_bytes(),
            );
            out.extend_from_slice(&packed);
            out.extend_from_slice(b"\nendstream\nendobj\n");
        }
        out.extend_from_slice(b"1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n");
        out
    }

    #[test]
    fn object_streams_inflate_under_one_budget() {
        // Ten streams of 4 MiB: each under the per-stream limit, 40 MiB in all.
        let bomb = object_stream_bomb(10, 4 << 20);
        assert!(bomb.len() < 200_000, "{}", bomb.len());
        let e = run(Format::Pdf, &bomb, &DEFAULT_LIMITS).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedDocument);
        assert!(
            e.message
                .contains("inflate to more than 33554432 bytes in all"),
            "{e:?}"
        );
        // Two of them are within the budget: loaded (no pages, no text).
        let fine = object_stream_bomb(2, 4 << 20);
        assert!(run(Format::Pdf, &fine, &DEFAULT_LIMITS).is_ok());
        // A name written with #xx escapes is charged too.
        let hidden = replace_all(&bomb, b"/ObjStm", b"/Obj#53tm");
        let e = run(Format::Pdf, &hidden, &DEFAULT_LIMITS).unwrap_err();
        assert!(e.message.contains("in all"), "{e:?}");
        // Within the byte budget, but 2 MiB of numbers: refused by its tokens.
        let numbers = object_streams(1, 2 << 20, true);
        let e = run(Format::Pdf, &numbers, &DEFAULT_LIMITS).unwrap_err();
        assert!(e.message.contains("more than 500000 tokens"), "{e:?}");
        // The same count without the object stream: the file's own bytes.
        let mut plain = b"%PDF-1.4\n1 0 obj\n[".to_vec();
        plain.extend(std::iter::repeat_n(&b"0 "[..], 600_000).flatten());
        plain.extend_from_slice(b"]\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n");
        let e = run(Format::Pdf, &plain, &DEFAULT_LIMITS).unwrap_err();
        assert!(e.message.contains("more than 500000 tokens"), "{e:?}");
    }

    fn replace_all(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i..].starts_with(from) {
                out.extend_from_slice(to);
                i += from.len();
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        out
    }

    #[test]
    fn time_limit_is_an_unsupported_document() {
        let limits = Limits {
            max_time: std::time::Duration::ZERO,
            ..DEFAULT_LIMITS
        };
        let e = run(Format::Pdf, &fixture("sample.pdf"), &limits).unwrap_err();
        assert!(e.message.contains("time limit"), "{e:?}");
    }
}
