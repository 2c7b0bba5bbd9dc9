//! The `lisp-read-file` binary: see `surfaces::cli`.

fn main() -> std::process::ExitCode {
    lisp_read_file::surfaces::cli::main()
}
