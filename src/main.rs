//! The `lisp-read-file` binary: the surfaces over the library crate. The command line
//! ([`cli`]) and the MCP server ([`mcp`], feature `mcp`) are the only code that knows argv
//! or JSON-RPC; everything they answer comes from `lisp_read_file`.

mod cli;
#[cfg(feature = "lsp")]
mod lsp;
#[cfg(feature = "mcp")]
mod mcp;

fn main() -> std::process::ExitCode {
    cli::main()
}
