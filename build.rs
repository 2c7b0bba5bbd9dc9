//! The executable is a position-independent executable (PIE) by default: the tool reads
//! untrusted files for agents, so the whole program image keeps address randomisation.
//!
//! For start-up measurements only, `LISP_READ_FILE_NO_PIE=1` links the executables as a
//! non-PIE on x86_64 GNU/Linux: the loader then has no relative relocations to apply
//! (about 16,000 of them, 80 copy-on-write pages; `--version` measured 1.6 ms as a PIE and
//! 1.2 ms without, see BENCHMARKS.md). Never for a shipped binary. Only the executables
//! are affected, never the library, the tests' objects or proc-macros.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=LISP_READ_FILE_NO_PIE");
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let target_env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let target_arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let no_pie = std::env::var_os("LISP_READ_FILE_NO_PIE").is_some_and(|v| v != "0");
    if no_pie && target_os == "linux" && target_env == "gnu" && target_arch == "x86_64" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
