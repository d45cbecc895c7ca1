//! How a command starts and ends, for both binaries (`cuda-sys-gen` and `cargo xtask`): the
//! command line parsed with usage errors exiting 1, an error printed as its chain of causes,
//! and the exit-status tables `--help` closes with.

use anyhow::Result;
use clap::Parser;

/// Parses the command line; a usage error exits 1 (clap's own 2 is `diff`'s "additions
/// only"), `--help` and `--version` exit 0.
pub fn parse_args<T: Parser>() -> Result<T, std::process::ExitCode> {
    parse_from(std::env::args_os())
}

/// [`parse_args`] of the given arguments (the first is the program's name).
pub fn parse_from<T: Parser, I: IntoIterator<Item = A>, A: Into<std::ffi::OsString> + Clone>(
    args: I,
) -> Result<T, std::process::ExitCode> {
    T::try_parse_from(args).map_err(|e| {
        let _ = e.print();
        if e.use_stderr() {
            std::process::ExitCode::FAILURE
        } else {
            std::process::ExitCode::SUCCESS
        }
    })
}

/// An error and its causes, `a: b: c`, each cause said once: a cause whose text is already
/// in what was said (an I/O error its path's message quotes) is left out.
pub fn error_chain(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// `main` for both binaries: runs `f`, prints an error chain the way rustc would.
pub fn exit_code(result: Result<()>) -> std::process::ExitCode {
    exit_status(result.map(|()| 0))
}

/// The same for commands with exit statuses of their own (`diff`, `min-driver`); errors
/// exit 1.
pub fn exit_status(result: Result<u8>) -> std::process::ExitCode {
    match result {
        Ok(code) => std::process::ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {}", error_chain(&e));
            std::process::ExitCode::FAILURE
        }
    }
}

/// A command's exit statuses as `--help` closes with them (`Exit status:`, one indented row
/// each, the table's backticks dropped), then `more`: the one renderer of every command's
/// table, so that `--help` and the docs' tables (tested against the same rows) agree.
pub fn exit_status_help(rows: &[(u8, &str)], more: &str) -> String {
    let mut s = String::from("Exit status:\n");
    for (code, meaning) in rows {
        s.push_str(&format!("  {code}  {}\n", meaning.replace('`', "")));
    }
    if !more.is_empty() {
        s.push_str(more);
    }
    s.trim_end().to_owned()
}
