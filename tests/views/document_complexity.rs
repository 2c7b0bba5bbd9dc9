//! Document extraction grows linearly with the input on the shapes that used to cost the
//! most memory: notebooks of many empty outputs, many source lines or many cells, and
//! PDFs whose objects or page content hold many tokens (below the token budget, so that
//! the whole file is parsed, and above it, where the pre-scan refuses it). CPU time of
//! the test thread at n and 4n, as tests/reader/complexity.rs measures it.

use crate::common;

use common::cpu::cost;
use lisp_read_file::cancel::CancelToken;
use lisp_read_file::document::{extract, Format, DEFAULT_LIMITS};

/// Linear work gives 4; quadratic 16 (as tests/reader/complexity.rs).
const MAX_RATIO: f64 = 10.0;

fn notebook(outputs_of_one_cell: &[u8], unit: &[u8], times: usize, end: &[u8]) -> Vec<u8> {
    let mut out = b"{\"cells\": [".to_vec();
    out.extend_from_slice(outputs_of_one_cell);
    for i in 0..times {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(unit);
    }
    out.extend_from_slice(end);
    out.extend_from_slice(b"], \"metadata\": {}, \"nbformat\": 4}");
    out
}

/// A one-page PDF whose object 5 is `object` and whose page content is `content`.
fn pdf(object: &[u8], content: &[u8]) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    let contents = [
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>".to_vec(),
        [
            format!("<< /Length {} >>\nstream\n", content.len()).as_bytes(),
            content,
            b"endstream",
        ]
        .concat(),
        object.to_vec(),
    ];
    for (i, body) in contents.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(b"xref\n0 6\n0000000000 65535 f \n");
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!("trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n").as_bytes(),
    );
    out
}

fn numbers(n: usize) -> Vec<u8> {
    [b"[".as_slice(), &b"0 ".repeat(n), b"]"].concat()
}

type Shape = (&'static str, Format, fn(usize) -> Vec<u8>);

fn shapes() -> Vec<Shape> {
    vec![
        ("notebook: empty outputs", Format::Ipynb, |n| {
            notebook(
                b"{\"cell_type\": \"code\", \"outputs\": [",
                b"{}",
                n,
                b"], \"source\": \"x\"}",
            )
        }),
        ("notebook: source lines", Format::Ipynb, |n| {
            notebook(
                b"{\"cell_type\": \"code\", \"source\": [",
                b"\"a\\n\"",
                n,
                b"]}",
            )
        }),
        ("notebook: cells", Format::Ipynb, |n| {
            notebook(b"", b"{\"cell_type\":\"raw\",\"source\":\"a\"}", n / 4, b"")
        }),
        ("pdf: an array under the token budget", Format::Pdf, |n| {
            pdf(&numbers(n / 4), b"")
        }),
        (
            "pdf: an array over the token budget (refused)",
            Format::Pdf,
            |n| pdf(&numbers(600_000 + n), b""),
        ),
        (
            "pdf: page content under the token budget",
            Format::Pdf,
            |n| pdf(b"null", &b"0 0 m\n".repeat(n / 12)),
        ),
    ]
}

#[test]
fn documents_are_extracted_in_linear_time() {
    let n = if cfg!(debug_assertions) {
        25_000
    } else {
        100_000
    };
    let mut failures = Vec::new();
    for (name, format, make) in shapes() {
        let run = |bytes: &[u8]| {
            let _ = extract(format, bytes, "doc", &DEFAULT_LIMITS, &CancelToken::new());
        };
        let mut line = String::new();
        for size in [n, 2 * n] {
            let (small, large) = (make(size), make(4 * size));
            run(&small);
            let (a, b) = (cost(&|| run(&small)), cost(&|| run(&large)));
            let ratio = b as f64 / a as f64;
            line = format!(
                "{name}: {:.2} ms -> {:.2} ms, ratio {ratio:.1}",
                a as f64 / 1e6,
                b as f64 / 1e6
            );
            eprintln!("{line}");
            if ratio <= MAX_RATIO || b < 1_000_000 {
                line.clear();
                break;
            }
        }
        if !line.is_empty() {
            failures.push(line);
        }
    }
    assert!(failures.is_empty(), "superlinear:\n{}", failures.join("\n"));
}
