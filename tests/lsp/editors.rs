//! Real editors against the real binary: Neovim headless (its built-in LSP client),
//! Emacs with eglot and Emacs with lsp-mode, each starting `lisp-read-file lsp` on fixtures/lsp/project and
//! jumping from `square` in src/render.lisp to its definition in src/geometry.lisp.
//! Skipped without the editor (a failure under `CI=true`).

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(120);

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `command` with the binary and the fixture in its environment, killed past the
/// deadline.
fn run(mut command: Command) -> Output {
    let mut child = command
        .current_dir(repo())
        .env("LRF_BIN", env!("CARGO_BIN_EXE_lisp-read-file"))
        .env("LRF_ROOT", repo().join("fixtures/lsp/project"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the editor");
    let started = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().expect("the editor's output")
}

fn assert_jumped(output: &Output) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let expected = format!(
        "JUMPED {}:17",
        repo()
            .join("fixtures/lsp/project/src/geometry.lisp")
            .display()
    );
    assert!(
        output.status.success() && stdout.lines().any(|l| l == expected),
        "expected {expected:?}\n--- stdout ---\n{stdout}\n--- stderr ---\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn available(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn neovim_jumps_to_a_definition_in_another_file() {
    if !crate::common::tool_available(
        available("nvim", "--version"),
        "Neovim (`nvim`)",
        "apt-get install neovim",
    ) {
        return;
    }
    let mut nvim = Command::new("nvim");
    nvim.args(["--headless", "-u", "NONE", "-i", "NONE", "-n", "-c"])
        .arg("luafile tests/lsp/editors/nvim_definition.lua");
    assert_jumped(&run(nvim));
}

#[test]
fn emacs_eglot_jumps_to_a_definition_in_another_file() {
    emacs_jumps(
        "eglot",
        "elpa-eglot",
        "tests/lsp/editors/eglot_definition.el",
    );
}

#[test]
fn emacs_lsp_mode_jumps_to_a_definition_in_another_file() {
    emacs_jumps(
        "lsp-mode",
        "elpa-lsp-mode",
        "tests/lsp/editors/lsp_mode_definition.el",
    );
}

/// Batch Emacs running `script` with Debian's `package` (its directory under
/// /usr/share/emacs/site-lisp/elpa starts with `client`).
fn emacs_jumps(client: &str, package: &str, script: &str) {
    let installed = Path::new("/usr/share/emacs/site-lisp/elpa")
        .read_dir()
        .is_ok_and(|mut d| {
            d.any(|e| {
                e.is_ok_and(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with(&format!("{client}-"))
                })
            })
        });
    if !crate::common::tool_available(
        available("emacs", "--version") && installed,
        &format!("Emacs with {client}"),
        &format!("apt-get install emacs-nox {package}"),
    ) {
        return;
    }
    let mut emacs = Command::new("emacs");
    emacs.args(["-Q", "--batch", "-l", script]);
    assert_jumped(&run(emacs));
}
