//! How a command starts and ends, for both binaries (`cuda-sys-gen` and `cargo xtask`): the
//! standard streams made safe to write (see [`prepare_process`]), the command line parsed with
//! usage errors exiting 1, an error printed as its chain of causes, and the exit-status tables
//! `--help` closes with.
//!
//! Every line a command prints goes through [`out`] and [`err`] (the macros `outln!` and
//! `say!`): a write that fails (a reader that left, `generate | true`; a closed descriptor; a
//! full disk under `> file`; `ulimit -f`) stops further writes to that stream, never panics,
//! and the work goes on. A command whose stdout was lost ends with [`CLOSED_OUTPUT`] (unless
//! it failed: 1); one whose stderr was lost ends as it would have, silently.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;
use clap::Parser;

/// The exit status of a command whose stdout was closed, or could not be written, before all
/// of it was printed: what a shell reports for a program stopped by SIGPIPE (128 + 13), here
/// without the signal. Whatever the command did stays done (a crate written stays written).
pub const CLOSED_OUTPUT: u8 = 141;

/// [`CLOSED_OUTPUT`]'s row of every command's exit-status table.
pub const CLOSED_OUTPUT_MEANING: &str =
    "stdout was closed or could not be written before the output was printed in full \
     (`| head`, a full disk): nothing more was printed; what the command did stays done. A closed stderr \
     changes no status: the messages are lost, the status is the one above";

static STDOUT_LOST: AtomicBool = AtomicBool::new(false);
static STDERR_LOST: AtomicBool = AtomicBool::new(false);

/// What every command does first:
/// - SIGXFSZ is ignored, so that a file cut by `ulimit -f` is an error with its path (EFBIG),
///   not a death by signal;
/// - a panic while printing (a `println!` elsewhere, on a closed pipe) ends the process
///   quietly with [`CLOSED_OUTPUT`] instead of a backtrace and 101.
///
/// (A standard descriptor closed at start, `>&-`, is opened on `/dev/null` by Rust's runtime
/// before `main`, so that no file the command opens takes its number: its lines are lost as
/// into `/dev/null`, and the status is the command's own.)
pub fn prepare_process() {
    // The child of [`probe_libclang`]: the load, then its verdict as the status, nothing else.
    if std::env::var_os(LIBCLANG_PROBE).is_some() {
        std::process::exit(i32::from(codegen::read::clang::load_libclang_here().is_err()));
    }
    codegen::input::set_libclang_probe(probe_libclang);
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to "ignore", before any thread is started.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") || message.starts_with("failed printing to stderr") {
            std::process::exit(i32::from(CLOSED_OUTPUT));
        }
        default(info);
    }));
}

/// The environment variable that makes this program a libclang probe's child.
const LIBCLANG_PROBE: &str = "CUDA_SYS_GEN_LIBCLANG_PROBE";

/// Loads libclang as this process is about to (same environment) in a child: this program run
/// again as [`LIBCLANG_PROBE`]'s child, killed after 20 s. A signal or a hang there is an error
/// that says so; a load that fails there fails here too, with clang-sys's own message.
fn probe_libclang() -> Result<(), String> {
    use std::io::Read;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program to load libclang apart: {e}"))?;
    let mut child = std::process::Command::new(exe)
        .env(LIBCLANG_PROBE, "1")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start a process to load libclang apart: {e}"))?;
    let mut pipe = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        if let Some(p) = pipe.as_mut() {
            let _ = p.take(4096).read_to_end(&mut text);
            let _ = std::io::copy(p, &mut std::io::sink());
        }
        String::from_utf8_lossy(&text).trim().to_owned()
    });
    let start = std::time::Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed().as_secs() < 20 => std::thread::sleep(std::time::Duration::from_millis(5)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("loading libclang in a separate process did not end within 20 s: it hangs the system \
                            loader; point LIBCLANG_PATH at another libclang.so"
                    .into());
            }
            Err(e) => return Err(format!("cannot wait for the process that loads libclang apart: {e}")),
        }
    };
    let said = reader.join().unwrap_or_default();
    let said = if said.is_empty() { String::new() } else { format!(" (it said: {said})") };
    match status.code() {
        Some(0 | 1) => Ok(()),
        Some(code) => Err(format!(
            "loading libclang in a separate process ended with exit status {code}{said}: it stops the system \
             loader; point LIBCLANG_PATH at another libclang.so"
        )),
        None => {
            #[cfg(unix)]
            let how = {
                use std::os::unix::process::ExitStatusExt;
                format!("signal {}", status.signal().unwrap_or(0))
            };
            #[cfg(not(unix))]
            let how = status.to_string();
            Err(format!(
                "this libclang crashes the system loader: loading it in a separate process ended with {how}{said}; \
                 point LIBCLANG_PATH at another libclang.so, or unset it to use the pinned wheel"
            ))
        }
    }
}

/// Prints to stdout, unless it was lost; a failed write marks it lost (see the module doc).
pub fn out(text: std::fmt::Arguments<'_>) {
    write_to(&STDOUT_LOST, &mut std::io::stdout().lock(), text);
}

/// Prints to stderr, unless it was lost; a failed write marks it lost.
pub fn err(text: std::fmt::Arguments<'_>) {
    write_to(&STDERR_LOST, &mut std::io::stderr().lock(), text);
}

fn write_to(lost: &AtomicBool, stream: &mut dyn Write, text: std::fmt::Arguments<'_>) {
    if !lost.load(Ordering::Relaxed) && stream.write_fmt(text).and_then(|()| stream.flush()).is_err() {
        lost.store(true, Ordering::Relaxed);
    }
}

/// Whether stdout was lost (closed, or a write to it failed).
pub fn stdout_lost() -> bool {
    STDOUT_LOST.load(Ordering::Relaxed)
}

/// `println!` through [`out`].
#[macro_export]
macro_rules! outln {
    ($($t:tt)*) => { $crate::exit::out(format_args!("{}\n", format_args!($($t)*))) };
}

/// `eprintln!` through [`err`].
#[macro_export]
macro_rules! say {
    ($($t:tt)*) => { $crate::exit::err(format_args!("{}\n", format_args!($($t)*))) };
}

/// Parses the command line; a usage error exits 1 (clap's own 2 is `diff`'s "additions
/// only"), `--help` and `--version` exit 0. The process is prepared first ([`prepare_process`]).
pub fn parse_args<T: Parser>() -> Result<T, std::process::ExitCode> {
    prepare_process();
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
/// A lost stdout turns any other status into [`CLOSED_OUTPUT`].
pub fn exit_status(result: Result<u8>) -> std::process::ExitCode {
    match result {
        Ok(_) if stdout_lost() => std::process::ExitCode::from(CLOSED_OUTPUT),
        Ok(code) => std::process::ExitCode::from(code),
        Err(e) => {
            err(format_args!("error: {}\n", error_chain(&e)));
            std::process::ExitCode::FAILURE
        }
    }
}

/// A command's exit statuses as `--help` closes with them (`Exit status:`, one indented row
/// each, the table's backticks dropped), then `more`: the one renderer of every command's
/// table, so that `--help` and the docs' tables (tested against the same rows) agree. Every
/// table closes with [`CLOSED_OUTPUT`]'s row.
pub fn exit_status_help(rows: &[(u8, &str)], more: &str) -> String {
    let mut s = String::from("Exit status:\n");
    for (code, meaning) in rows.iter().chain([&(CLOSED_OUTPUT, CLOSED_OUTPUT_MEANING)]) {
        s.push_str(&format!("  {code}  {}\n", meaning.replace('`', "")));
    }
    if !more.is_empty() {
        s.push_str(more);
    }
    s.trim_end().to_owned()
}
