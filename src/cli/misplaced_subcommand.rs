//! A subcommand typed after the read command's options (`lisp-read-file --root . find
//! --name x`): the read command takes `find` for a PATH and clap's tip then points at a
//! read option. When the arguments do not parse and one of them names a subcommand, the
//! usage error says to put the options after it, with the command line that works.

use std::ffi::OsString;

/// The subcommands whose name, after an option, is most likely a misplaced subcommand.
const SUBCOMMANDS: [&str; 4] = ["find", "outline", "mcp", "lsp"];

/// The usage error for `args` (the program name first) when an argument after the first
/// option names a subcommand; `None` otherwise.
pub(super) fn misplaced_subcommand(args: &[OsString]) -> Option<String> {
    let words: Vec<String> = args
        .iter()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if !words.first()?.starts_with('-') {
        return None;
    }
    let at = words
        .iter()
        .position(|w| SUBCOMMANDS.contains(&w.as_str()))?;
    let name = &words[at];
    let mut reordered = vec![name.clone()];
    reordered.extend(words[..at].iter().cloned());
    reordered.extend(words[at + 1..].iter().cloned());
    Some(format!(
        "error: `{name}` is a subcommand: put the options after `{name}`, not before it:\n\n  \
         lisp-read-file {}\n\nFor more information, try 'lisp-read-file {name} --help'.",
        lisp_read_file::guard::shown_on_terminal(&reordered.join(" "))
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    #[test]
    fn options_before_a_subcommand_are_moved_after_it() {
        let message = misplaced_subcommand(&args(&["lrf", "--root", ".", "find", "--name", "ok"]));
        assert!(message
            .unwrap()
            .contains("lisp-read-file find --root . --name ok"),);
        assert_eq!(
            misplaced_subcommand(&args(&["lrf", "find", "--name"])),
            None
        );
        assert_eq!(
            misplaced_subcommand(&args(&["lrf", "--raw", "x.lisp"])),
            None
        );
    }
}
