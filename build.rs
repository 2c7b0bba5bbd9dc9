//! Links the `lisp-read-file` executable as a non-PIE on x86_64 GNU/Linux.
//!
//! Why: a position-independent executable is relocated by the dynamic loader at every
//! start. Ours links rmcp, tokio, clap, regex and serde, so that is about 16,000 relative
//! relocations writing into 80 pages of `.data.rel.ro`, each write a copy-on-write page
//! fault. For a command that answers in a few milliseconds this is a third of the time:
//! measured here (hyperfine, 300 runs), `lisp-read-file --version` takes 1.6 ms as a PIE
//! and 1.2 ms without, the collapsed view of SBCL's `srctran.lisp` 2.9 ms and 2.7 ms
//! (page faults 396 -> 316). See BENCHMARKS.md.
//!
//! The cost: the executable's own image is not placed at a random address (libraries,
//! stack and heap still are). For a read-only viewer written in safe Rust we take that
//! trade; packagers whose policy requires PIE set `LISP_READ_FILE_PIE=1` when building.
//! Only the executables are affected, never the library, tests' objects or proc-macros.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=LISP_READ_FILE_PIE");
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let target_env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let target_arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let keep_pie = std::env::var_os("LISP_READ_FILE_PIE").is_some_and(|v| v != "0");
    if target_os == "linux" && target_env == "gnu" && target_arch == "x86_64" && !keep_pie {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
