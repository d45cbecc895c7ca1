//! The command-line tools as a user runs them: exit codes and messages.

use cuda_sys_gen_tests::*;

#[test]
fn check_names_every_stale_file_and_the_fix() {
    let case = repo_root().join("tests/fixtures/cudaapi-in-param");
    let manifest = manifest_with(Some(&["cuda"]), &[]);
    let out = tempfile::tempdir().unwrap();
    for (rel, body) in read_tree(&case.join("expected")) {
        let p = out.path().join(&rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }
    std::fs::write(out.path().join("types/src/pfn.rs"), "// edited by hand\n").unwrap();
    std::fs::remove_file(out.path().join("src/aliases.rs")).unwrap();
    std::fs::write(out.path().join("src/stray.rs"), "").unwrap();
    let m = manifest.path().join("headers-manifest.toml");
    let toolkit = case.join("cuda-13.0");
    let args = [
        "generate",
        "--check",
        "--manifest",
        m.to_str().unwrap(),
        "--out",
        out.path().to_str().unwrap(),
        "--toolkit",
        toolkit.to_str().unwrap(),
        "--crate-name",
        "fixture-cudaapi-in-param",
        "--regenerate-command",
        "cargo xtask generate",
    ];
    let o = cargo_run("cuda-sys-gen", &args, &[]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    // An unmarked file is the user's: the write run would refuse the folder for it.
    for f in ["types/src/pfn.rs", "src/aliases.rs", "src/stray.rs (not written by cuda-sys-gen: move it out"] {
        assert!(err.contains(&format!("{}", out.path().join(f).display())), "{f} not named: {err}");
    }
    // The fix is the command that was run, with every option it was given (not the
    // --regenerate-command the headers quote, nor a bare `cuda-sys-gen generate`).
    let fix = err
        .split_once("run `")
        .and_then(|(_, rest)| rest.split_once("` and commit the result"))
        .map(|(cmd, _)| cmd.to_owned())
        .unwrap_or_else(|| panic!("no command to run: {err}"));
    let rerun: Vec<&str> = args.iter().filter(|a| **a != "--check").copied().collect();
    assert_eq!(
        fix,
        format!("cuda-sys-gen {}", rerun.join(" ").replace("cargo xtask generate", "'cargo xtask generate'"))
    );
    assert!(!err.contains("src/lib.rs"), "an up-to-date file was named: {err}");
    // And check mode changed nothing.
    assert_eq!(std::fs::read_to_string(out.path().join("types/src/pfn.rs")).unwrap(), "// edited by hand\n");
    // Run as it says (through a shell, what is not the generator's taken out first), it writes
    // the crate that was checked: the check then passes.
    for mine in ["types/src/pfn.rs", "src/stray.rs", "summary.txt"] {
        std::fs::remove_file(out.path().join(mine)).unwrap();
    }
    // In the folder the check ran in (cargo_run's): its relative defaults (--cache) are that
    // folder's.
    let fixed = std::process::Command::new("sh")
        .current_dir(repo_root())
        .arg("-c")
        .arg(fix.replacen("cuda-sys-gen", "\"$0\"", 1))
        .arg(cuda_sys_gen_binary())
        .output()
        .unwrap();
    assert!(fixed.status.success(), "{}", text(&fixed.stderr));
    let o = cargo_run("cuda-sys-gen", &args, &[]);
    assert!(o.status.success(), "the named fix did not fix: {}", text(&o.stderr));
}

/// A stale crate checked by `cargo xtask generate --check` is fixed by the same
/// command without `--check`, options kept.
#[test]
fn xtask_check_names_itself_as_the_fix() {
    let rerun = cuda_sys_gen::rerun_command(
        "cargo xtask",
        ["target/debug/xtask", "generate", "--check", "--pinned-only", "--toolkit", "/opt/my cuda"].map(Into::into),
    );
    assert_eq!(rerun, "cargo xtask generate --pinned-only --toolkit '/opt/my cuda'");
    let quoted = cuda_sys_gen::rerun_command("x", ["x", "it's"].map(Into::into));
    assert_eq!(quoted, r"x 'it'\''s'");
}

/// A renamed crate says its own name in its prose, never the default one.
#[test]
fn a_renamed_crate_says_its_own_name() {
    let case = repo_root().join("tests/fixtures/per-thread");
    let manifest = manifest_with(Some(&["cuda"]), &[]);
    let out = tempfile::tempdir().unwrap();
    let toolkits: Vec<std::path::PathBuf> = std::fs::read_dir(&case)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("cuda-")))
        .collect();
    generate_local(manifest.path(), toolkits, out.path(), "my-cuda-pfn").unwrap_or_else(|e| panic!("{e}"));
    let tree = read_tree(out.path());
    let mut uses = 0;
    for (rel, body) in &tree {
        for (n, line) in body.lines().enumerate() {
            assert!(
                !line.contains("cuda_driver_pfn") && !line.contains("cuda-driver-pfn"),
                "{rel}:{}: the default crate's name in a crate called my-cuda-pfn: {line}",
                n + 1
            );
            uses += line.matches("use my_cuda_pfn::").count();
        }
    }
    assert!(tree["src/api.rs"].contains("`use my_cuda_pfn::cu_ptds as cu;`"), "{}", tree["src/api.rs"]);
    assert!(uses > 10, "the crate's own name is hardly used: {uses}");
}

/// Every file's header names the manifest the crate came from by its own file name, whatever
/// `--manifest` called it (not always `headers-manifest.toml`); a name that would break the
/// header's comment line is refused before any work.
#[test]
fn the_header_names_the_manifest_given() {
    let case = repo_root().join("tests/fixtures/cudaapi-in-param");
    let manifest = manifest_with(Some(&["cuda"]), &[]);
    let renamed = manifest.path().join("cuda-pins.toml");
    std::fs::rename(manifest.path().join("headers-manifest.toml"), &renamed).unwrap();
    let out = tempfile::tempdir().unwrap();
    let config = |manifest: std::path::PathBuf| codegen::pipeline::Config {
        manifest,
        out_dir: out.path().to_owned(),
        cache_dir: cache_dir(),
        local_toolkits: vec![case.join("cuda-13.0")],
        mode: codegen::write::Mode::Write,
        emit: codegen::emit::EmitOptions::new("named-pins", "cuda-sys-gen generate"),
        offline: false,
        progress: None,
    };
    codegen::pipeline::generate(&config(renamed.clone())).unwrap_or_else(|e| panic!("{e}"));
    let tree = read_tree(out.path());
    for file in ["src/lib.rs", "Cargo.toml", "types/src/registry.rs"] {
        let second = tree[file].lines().nth(1).unwrap_or_default();
        assert!(second.contains(" Inputs: cuda-pins.toml; CUDA toolkits 13.0 (1 in all)."), "{file}: {second}");
    }
    assert!(!tree.values().any(|t| t.contains("headers-manifest.toml;")), "a header names the default manifest");
    let odd = manifest.path().join("pins\nfake = 1.toml");
    std::fs::copy(&renamed, &odd).unwrap();
    let err = codegen::pipeline::generate(&config(odd)).map(|_| ()).unwrap_err().to_string();
    assert!(err.contains("the manifest's file name") && err.contains("a line feed"), "{err}");
}

#[test]
fn bad_command_lines_fail_cleanly() {
    let o = cargo_run("cuda-sys-gen", &["generate", "--crate-name", "9lives", "--pinned-only"], &[]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("`9lives` is not a valid crate name"), "{}", text(&o.stderr));
    let o = cargo_run("cuda-sys-gen", &["generate", "--toolkit", "/x", "--pinned-only"], &[]);
    assert_eq!(o.status.code(), Some(1), "clap rejects conflicting flags: a usage error is 1");
    let o = cargo_run("xtask", &["generate", "--toolkit", "/nonexistent/cuda"], &[]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("generated/ is unchanged") || err.contains("generated is unchanged"), "{err}");
    assert!(err.contains("/nonexistent/cuda: no such file or directory"), "{err}");
}

/// Without a system libclang the generator fetches the pinned libclang wheel and, thanks to
/// its own stand-in C library headers, produces the very same crate.
#[test]
fn libclang_wheel_fallback_gives_the_same_crate() {
    let o = cargo_run("xtask", &["generate", "--check", "--pinned-only"], &[("LIBCLANG_PATH", "/nonexistent")]);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("libclang 18.1.1 wheel"), "{out}");
    assert!(out.contains("up to date"), "{out}");
}

/// The summary is a few lines; `--verbose` adds the warnings, per-toolkit counts and
/// drift. A warm run prints no progress (nothing is downloaded, clang does not run).
#[test]
fn the_summary_is_short_and_verbose_has_the_rest() {
    let o = cargo_run("xtask", &["generate", "--check", "--pinned-only"], &[]);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.lines().count() <= 5, "{out}");
    assert!(
        out.contains("17 toolkits (11.7 to 13.5): 780 entries of 561 symbols") && out.contains("--verbose lists them"),
        "{out}"
    );
    assert!(!out.contains("ABI drift:") && !out.contains("warning:"), "{out}");
    let o = cargo_run("xtask", &["generate", "--check", "--pinned-only", "--verbose"], &[]);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{out}\n{err}");
    assert!(
        out.contains("ABI drift: PFN_cuStreamGetAttribute_v11000 11.7 -> 11.8")
            && out.contains("CUDA 13.5 cuda: 685 typedefs"),
        "{out}"
    );
    assert!(!err.contains("downloading") && !err.contains("clang ["), "a warm run reports progress: {err}");
}

/// What the machine lacks is found before anything is downloaded, every missing
/// thing at once, each with how to get it.
#[test]
fn prerequisites_are_checked_before_any_download() {
    let scratch = tempfile::tempdir().unwrap();
    let (cache, out) = (scratch.path().join("cache"), scratch.path().join("out"));
    let (m, c, o) = (real_manifest().display().to_string(), cache.display().to_string(), out.display().to_string());
    let args = ["generate", "--pinned-only", "--manifest", &m, "--cache", &c, "--out", &o];
    let run = cargo_run("cuda-sys-gen", &args, &[("PYTHON", "/nonexistent/python3")]);
    let err = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(err.contains("this machine lacks what generation needs (checked before any download)"), "{err}");
    assert!(
        err.contains("`/nonexistent/python3 -m pip`: `/nonexistent/python3` could not be run")
            && err.contains("wheel(s) must be downloaded"),
        "{err}"
    );
    assert!(err.contains("ensurepip") && err.contains("--toolkit"), "no way out offered: {err}");
    assert!(!cache.join("wheels").exists() && !out.exists(), "something was written before the check failed");
    // Offline, with nothing cached: every package is named at once.
    let run = cargo_run("cuda-sys-gen", &[&args[..], &["--offline"]].concat(), &[]);
    let err = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{err}");
    // How many, where they belong, one a line by file name (Linux and Windows wheels apart).
    let count: usize = err
        .split_once(" wheel(s) are not in the cache")
        .and_then(|(before, _)| before.rsplit(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no count: {err}"));
    assert!(
        err.contains(&format!("{count} wheel(s) are not in the cache at {}", cache.join("wheels").display()))
            && err.contains("downloads are off (--offline)"),
        "{err}"
    );
    let listed: Vec<&str> = err.lines().filter(|l| l.starts_with("  ") && l.contains(".whl (")).collect();
    assert!(listed.iter().any(|l| l.contains("nvidia_cuda_runtime_cu11-11.7.99") && l.contains("manylinux")), "{err}");
    let more = count - listed.len();
    assert!(more == 0 || err.contains(&format!("and {more} more")), "{err}");
}

/// The documentation and the command line agree: every option of `cuda-sys-gen` is in the README
/// or the page of its command (docs/generator.md, diff.md, min-driver.md, crate.md for `doctor`), and every option they
/// give the generator is one of them (the options of
/// cargo, git and rustup they quote are listed here).
#[test]
fn docs_options_are_the_command_lines() {
    use clap::CommandFactory;
    let cli = cuda_sys_gen::Cli::command();
    let mut ours = std::collections::BTreeSet::new();
    for sub in cli.get_subcommands() {
        // A hidden option (the doctor's child's `--load-probe`) is no user's.
        for arg in sub.get_arguments().filter(|a| !a.is_hide_set()) {
            if let Some(long) = arg.get_long() {
                ours.insert(format!("--{long}"));
            }
        }
    }
    let mut docs = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    for page in ["docs/generator.md", "docs/diff.md", "docs/min-driver.md", "docs/crate.md"] {
        docs.push_str(&std::fs::read_to_string(repo_root().join(page)).unwrap());
    }
    let others = [
        "--workspace",
        "--test",
        "--toolchain",
        "--path",
        "--no-deps",
        "--locked",
        "--help",
        "--git",
        "--rev",
        "--example",
        "--depth",
        "--features",
        "--all-features",
        "--release",
        "--only",
        "--runs",
        "--bin",
        "--lib",
        "--open",
        "--target",
        "--manifest-path",
        "--strip-sections",
        // cuobjdump's, which min-driver is measured against.
        "--list-elf",
    ];
    let mut named = std::collections::BTreeSet::new();
    for (i, _) in docs.match_indices("--") {
        let word: String = docs[i + 2..].chars().take_while(|c| c.is_ascii_lowercase() || *c == '-').collect();
        if word.starts_with(|c: char| c.is_ascii_lowercase())
            && docs[..i].chars().next_back().is_none_or(|c| !c.is_alphanumeric() && c != '-')
        {
            named.insert(format!("--{word}"));
        }
    }
    let unknown: Vec<&String> = named.iter().filter(|n| !ours.contains(*n) && !others.contains(&n.as_str())).collect();
    assert!(unknown.is_empty(), "the docs name options cuda-sys-gen does not have: {unknown:?}");
    let undocumented: Vec<&String> = ours.iter().filter(|o| !named.contains(*o)).collect();
    assert!(undocumented.is_empty(), "options of cuda-sys-gen the docs do not mention: {undocumented:?}");
}

/// docs/min-driver.md's outputs of `min-driver` on sources are what the command prints today.
#[test]
fn docs_min_driver_output_is_the_command_s() {
    let root = repo_root();
    let page = std::fs::read_to_string(root.join("docs/min-driver.md")).unwrap();
    let mut checked = 0;
    let mut lines = page.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(path) = line.strip_prefix("$ cuda-sys-gen min-driver ").filter(|p| p.ends_with(".rs")) else {
            continue;
        };
        let mut shown = String::new();
        while let Some(next) = lines.peek().filter(|l| !l.starts_with("$ ") && !l.starts_with("```")) {
            shown.push_str(next);
            shown.push('\n');
            lines.next();
        }
        let floor = cuda_sys_gen::min_driver::floor(&root.join("generated/registry.json"), &[root.join(path)])
            .unwrap_or_else(|e| panic!("{e:#}"));
        let releases = cuda_sys_gen::min_driver::releases::Releases::load().unwrap();
        assert_eq!(
            shown,
            floor.render(&root, Some(&releases)),
            "docs/min-driver.md's output of `min-driver {path}` is stale"
        );
        checked += 1;
    }
    assert_eq!(checked, 2, "docs/min-driver.md shows min-driver for both sample ports");
}

/// Names brought in by `use` (lists, renames, globs) count as much as written-out paths, a C
/// name in either stream mode (`api::legacy`, `api::ptds`, `cu!`, `cu_ptds!`): the higher.
#[test]
fn min_driver_follows_use_and_both_stream_modes() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("main.rs");
    std::fs::write(
        &file,
        "use cuda_driver_pfn::api::{cuInit, cuCtxCreate as create};\nuse cuda_driver_pfn::api::*;\n\
         use cuda_driver_pfn::entries::{self, cuMemAlloc_v3020};\n\
         fn main() {\n    unsafe { cuInit(0); create(); cuEventRecord(); }\n    let _ = cuMemAlloc_v3020;\n\
         let _ = entries::cuLaunchKernel_v4000;\n}\n",
    )
    .unwrap();
    let registry = repo_root().join("generated/registry.json");
    let floor =
        cuda_sys_gen::min_driver::floor(&registry, std::slice::from_ref(&file)).unwrap_or_else(|e| panic!("{e:#}"));
    let markers: Vec<&str> = floor.uses.iter().map(|u| u.marker.as_str()).collect();
    assert_eq!(
        markers,
        ["cuCtxCreate_v12050", "cuEventRecord_v7000_ptsz", "cuLaunchKernel_v4000", "cuMemAlloc_v3020", "cuInit_v2000"],
        "{}",
        floor.render(dir.path(), None)
    );
}
