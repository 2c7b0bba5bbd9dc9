//! Surfaces: the only modules that know about argv, JSON lines, JSON-RPC or Emacs.

pub mod cli;
