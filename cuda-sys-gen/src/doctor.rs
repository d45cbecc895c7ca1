//! `cuda-sys-gen doctor [LIBCUDA]`: the generated crate's doctor (`cuda_driver_pfn::doctor`,
//! the shim's `doctor.rs`) for the registry this binary was built with. This room only
//! parses the command line and names the exit statuses; the check, the child process that
//! loads the library apart first, and the report are the crate's.

use std::path::PathBuf;

/// `doctor`'s options.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// The driver library to check (a path); without it, the driver the system loader finds by
    /// name (libcuda.so.1, nvcuda.dll), as a program would load it.
    #[arg(value_name = "LIBCUDA")]
    pub library: Option<PathBuf>,
    /// This run is the doctor's own child, which loads the library apart first.
    #[arg(long = "load-probe", hide = true)]
    pub load_probe: bool,
}

/// The doctor's exit statuses as `cuda-sys-gen` gives them: the crate's, but a bad command
/// line exits 1, as with every command of `cuda-sys-gen`.
pub fn exit_statuses() -> Vec<(u8, String)> {
    let mut rows: Vec<(u8, String)> = cuda_driver_pfn::doctor::EXIT_STATUSES
        .iter()
        .filter(|(code, _)| *code != 2)
        .map(|(code, meaning)| (*code, (*meaning).to_owned()))
        .collect();
    if let Some(row) = rows.iter_mut().find(|(code, _)| *code == 1) {
        row.1.push_str("; a bad command line");
    }
    rows
}

/// `doctor --help`'s closing text. A closed stdout is no failure of the driver: the report
/// stops and the status is the driver's (the crate's rule), so this table has no 141 row.
pub fn exit_status_help() -> String {
    let mut s = String::from("Exit status:\n");
    for (code, meaning) in exit_statuses() {
        s.push_str(&format!("  {code}  {}\n", meaning.replace('`', "")));
    }
    s.push_str(
        "A closed stdout (| head) stops the report and changes no status.\n\nThe registry checked is the one this \
         cuda-sys-gen was built with; a crate of your own has the same check as `your_crate::doctor::main()` (its \
         `doctor` feature and example). What each line means: docs/crate.md in cuda-sys-gen's repository.",
    );
    s
}

/// Runs the doctor: this binary is its own child (`cuda-sys-gen doctor --load-probe`).
pub fn run(args: &DoctorArgs) -> std::process::ExitCode {
    let library = args.library.as_deref().map(std::path::Path::as_os_str);
    if args.load_probe {
        cuda_driver_pfn::doctor::run_child(library)
    } else {
        cuda_driver_pfn::doctor::run(library, &["doctor"])
    }
}
