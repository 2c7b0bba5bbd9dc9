//! The one harness of the `find` complexity tests (find, packages, callers): each family
//! of generated adversarial files, under each request, must cost about 4× at 4× the size
//! (thread CPU time, `common::cpu`), retried at larger sizes before it fails.

use crate::common::cpu::cost;
use lisp_read_file::cancel::CancelToken;
use lisp_read_file::find::{find, FindRequest};
use lisp_read_file::grammar::Grammar;
use lisp_read_file::guard::Guard;
use std::fs;

/// Most a 4× larger input may cost, as a multiple of the smaller one's cost.
pub const MAX_RATIO: f64 = 10.0;
/// The smallest size a family is generated at.
pub const N: usize = if cfg!(debug_assertions) {
    25_000
} else {
    100_000
};

/// A file of about `size` bytes.
pub type Family = fn(usize) -> Vec<u8>;
/// What is asked of each file: a name and an edit of the request.
pub type Request = (&'static str, fn(&mut FindRequest));

/// Fails with every (request, family) whose cost grew more than [`MAX_RATIO`] from a file
/// to one 4× larger, at each of three sizes; `tag` names the scratch directory.
pub fn assert_find_linear(
    tag: &str,
    families: Vec<(&'static str, Family)>,
    requests: Vec<Request>,
) {
    assert_find_linear_from(tag, families, requests, N);
}

/// [`assert_find_linear`] from files of `n` bytes: for families whose every byte may
/// cost the expansion budget's steps (64 a byte), smaller than [`N`].
pub fn assert_find_linear_from(
    tag: &str,
    families: Vec<(&'static str, Family)>,
    requests: Vec<Request>,
    n: usize,
) {
    let scratch = Scratch::new(tag);
    let mut failures = Vec::new();
    for (family, make) in &families {
        for (what, edit) in &requests {
            let run = |name: &str, bytes: &[u8]| scratch.search(name, bytes, *edit);
            let mut line = String::new();
            for size in [n, 2 * n, 4 * n] {
                let work = run("small.lisp", &make(size));
                work();
                let a = cost(&work);
                let b = cost(&run("large.lisp", &make(4 * size)));
                let ratio = b as f64 / a as f64;
                line = format!(
                    "{what} / {family}: {:.2} ms -> {:.2} ms, ratio {ratio:.1}",
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
    }
    assert!(failures.is_empty(), "superlinear:\n{}", failures.join("\n"));
}

/// Most an adversarial file may cost, as a multiple of what ordinary code of its size
/// costs under the same request ([`assert_find_costs_like_code`]).
pub const MAX_PER_BYTE_RATIO: f64 = 25.0;

/// Fails with every (request, family) whose file of [`N`] bytes costs more than
/// [`MAX_PER_BYTE_RATIO`] times what [`N`] bytes of ordinary code cost: linear is not
/// enough when each byte may cost a window's scan (a per-`#.` look 4 KiB around cost a
/// file of `#.(` lines 390 times what code costs).
pub fn assert_find_costs_like_code(
    tag: &str,
    families: Vec<(&'static str, Family)>,
    requests: Vec<Request>,
) {
    assert_find_costs_like_code_from(tag, families, requests, N);
}

/// [`assert_find_costs_like_code`] with files of `n` bytes.
pub fn assert_find_costs_like_code_from(
    tag: &str,
    families: Vec<(&'static str, Family)>,
    requests: Vec<Request>,
    n: usize,
) {
    let scratch = Scratch::new(tag);
    let code = "(defun f (x) (g x))\n".repeat(n / 20).into_bytes();
    let mut failures = Vec::new();
    for (what, edit) in &requests {
        let cost_of = |name: &str, bytes: &[u8]| {
            let work = scratch.search(name, bytes, *edit);
            work();
            cost(&work)
        };
        let baseline = cost_of("code.lisp", &code);
        for (family, make) in &families {
            let bytes = make(n);
            let spent = cost_of("family.lisp", &bytes);
            let ratio = spent as f64 / baseline as f64;
            let line = format!(
                "{what} / {family}: {:.2} ms against {:.2} ms of code, ratio {ratio:.1}",
                spent as f64 / 1e6,
                baseline as f64 / 1e6
            );
            eprintln!("{line}");
            if ratio > MAX_PER_BYTE_RATIO {
                failures.push(line);
            }
        }
    }
    assert!(
        failures.is_empty(),
        "costlier than code:\n{}",
        failures.join("\n")
    );
}

/// A scratch directory whose files are searched on the calling thread; removed on drop.
struct Scratch {
    dir: std::path::PathBuf,
    guard: Guard,
    grammar: Grammar,
}

impl Scratch {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("lrf-{tag}-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let guard = Guard::confined(std::slice::from_ref(&dir), 64 << 20).unwrap();
        Scratch {
            dir,
            guard,
            grammar: Grammar::builtin(),
        }
    }

    /// A search of `bytes`, written as the file `name`, asked as `edit` says.
    fn search(&self, name: &str, bytes: &[u8], edit: fn(&mut FindRequest)) -> impl Fn() + '_ {
        fs::write(self.dir.join(name), bytes).unwrap();
        let mut request = FindRequest::new(name);
        edit(&mut request);
        move || {
            let result = find(&self.guard, &self.grammar, &request, &CancelToken::new()).unwrap();
            std::hint::black_box(result);
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}
