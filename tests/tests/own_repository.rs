//! The standalone `cuda-sys-gen` in someone else's repository. It never replaces a
//! folder that holds what it did not write, refuses crate names cargo or crates.io would, exits
//! 1 on a usage error, reads a read-only cache, and says each cause once.

use std::path::Path;
use std::process::{Command, Output};

use cuda_sys_gen_tests::*;

/// `cuda-sys-gen ARGS` run in `dir` (cargo run keeps the working directory).
fn run_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.current_dir(dir).args(["run", "--quiet", "--manifest-path"]).arg(repo_root().join("Cargo.toml"));
    cmd.args(["--package", "cuda-sys-gen", "--"]).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run cargo")
}

fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .expect("run git");
    assert!(o.status.success(), "git {args:?}: {}", text(&o.stderr));
    text(&o.stdout)
}

/// A user's repository: git, the manifest, a notes file, committed.
fn users_repository() -> (tempfile::TempDir, std::path::PathBuf) {
    let scratch = tempfile::tempdir().unwrap();
    let repo = scratch.path().join("repo");
    std::fs::create_dir_all(repo.join("sub")).unwrap();
    std::fs::copy(real_manifest(), repo.join("headers-manifest.toml")).unwrap();
    std::fs::write(repo.join("notes.txt"), "my notes\n").unwrap();
    std::fs::write(repo.join("sub/keep.txt"), "x\n").unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "mine"]);
    (scratch, repo)
}

/// The repository's own folder as --out, spelled three ways (absolute, `../repo` from inside,
/// through a symlink), and `sub/..`: refused each time before any work, naming what is in the
/// way and what to do; nothing changes.
#[test]
fn the_repository_itself_is_never_replaced() {
    let (scratch, repo) = users_repository();
    std::os::unix::fs::symlink(&repo, scratch.path().join("link")).unwrap();
    let abs = repo.display().to_string();
    let link = scratch.path().join("link").display().to_string();
    for out in [abs.as_str(), "../repo", link.as_str(), "sub/.."] {
        // PYTHON that cannot run: the refusal must come before the prerequisites are checked.
        let o = run_in(
            &repo,
            &["generate", "--manifest", "headers-manifest.toml", "--out", out, "--pinned-only", "--cache", "cache"],
            &[("PYTHON", "/nonexistent/python3")],
        );
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "--out {out}: {err}");
        assert!(err.contains(&format!("refusing to replace {out} with the generated crate")), "--out {out}: {err}");
        for named in [
            "headers-manifest.toml (the headers manifest)",
            "/.git (a git repository)",
            "/notes.txt (not written by cuda-sys-gen",
        ] {
            assert!(err.contains(named), "--out {out}: {named} not named: {err}");
        }
        assert!(err.contains("give --out a folder of its own"), "--out {out}: {err}");
        assert!(!err.contains("lacks what generation needs"), "work began before the refusal: {err}");
        assert_eq!(git(&repo, &["status", "--porcelain", "--ignored"]), "", "--out {out} changed the repository");
        assert_eq!(std::fs::read_to_string(repo.join("notes.txt")).unwrap(), "my notes\n");
    }
}

/// With the manifest elsewhere, what is left in the way is named: the .git and the files
/// without the generator's marker.
#[test]
fn a_folder_of_someone_else_s_files_is_refused_by_name() {
    let (scratch, repo) = users_repository();
    let manifest = scratch.path().join("headers-manifest.toml");
    std::fs::copy(real_manifest(), &manifest).unwrap();
    std::fs::remove_file(repo.join("headers-manifest.toml")).unwrap();
    let o = run_in(
        scratch.path(),
        &["generate", "--manifest", manifest.to_str().unwrap(), "--out", "repo/sub/..", "--pinned-only"],
        &[("PYTHON", "/nonexistent/python3")],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    for named in ["repo/sub/../.git (a git repository)", "repo/sub/../notes.txt (not written by cuda-sys-gen"] {
        assert!(err.contains(named), "{named} not named: {err}");
    }
    assert!(repo.join(".git/HEAD").is_file() && repo.join("notes.txt").is_file());
}

/// An --out that would hold the cache (it does not exist yet) is refused too.
#[test]
fn an_output_folder_around_the_cache_is_refused() {
    let scratch = tempfile::tempdir().unwrap();
    let m = real_manifest().display().to_string();
    let o = run_in(
        scratch.path(),
        &["generate", "--manifest", &m, "--out", "build", "--cache", "build/./x/../cuda-headers", "--pinned-only"],
        &[("PYTHON", "/nonexistent/python3")],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("it would hold what is not the generator's:\n    build/./x/../cuda-headers (the header cache)"),
        "{err}"
    );
    assert!(!scratch.path().join("build").exists());
}

/// What the generator wrote passes: the committed crate (so `cargo xtask generate` still works),
/// and a crate written to a new folder, whose rewrite is allowed.
#[test]
fn the_generator_s_own_folders_may_be_replaced() {
    let root = repo_root();
    codegen::output_folder::check_output_folder(&root.join("generated"), &load(&real_manifest()), &cache_dir())
        .unwrap_or_else(|e| panic!("{e}"));
    let out = tempfile::tempdir().unwrap();
    let case = root.join("tests/fixtures/cudaapi-in-param");
    let manifest = manifest_with(Some(&["cuda"]), &[]);
    let crate_dir = out.path().join("crate");
    generate_local(manifest.path(), vec![case.join("cuda-13.0")], &crate_dir, "fixture-crate")
        .unwrap_or_else(|e| panic!("{e}"));
    generate_local(manifest.path(), vec![case.join("cuda-13.0")], &crate_dir, "fixture-crate")
        .unwrap_or_else(|e| panic!("a second run into the generator's own folder: {e}"));
    // One hand-written file in it, and the next write is refused; check mode still reports it.
    std::fs::write(crate_dir.join("src/mine.rs"), "fn mine() {}\n").unwrap();
    let err = generate_local(manifest.path(), vec![case.join("cuda-13.0")], &crate_dir, "fixture-crate")
        .unwrap_err()
        .to_string();
    assert!(err.contains("src/mine.rs (not written by cuda-sys-gen"), "{err}");
    assert!(crate_dir.join("src/mine.rs").is_file());
}

/// cargo's and crates.io's package-name rules, before any work: keywords, the standard
/// library's names, too long.
#[test]
fn crate_names_cargo_or_crates_io_refuse_are_refused() {
    let scratch = tempfile::tempdir().unwrap();
    let long = "a".repeat(300);
    for (name, why) in [
        ("fn", "a Rust keyword"),
        ("self", "a Rust keyword"),
        ("crate", "a Rust keyword"),
        ("std", "standard library"),
        ("core", "standard library"),
        (long.as_str(), "300 characters long"),
    ] {
        let out = scratch.path().join("out");
        let o = run_in(
            scratch.path(),
            &["generate", "--crate-name", name, "--out", "out", "--manifest", real_manifest().to_str().unwrap()],
            &[("PYTHON", "/nonexistent/python3")],
        );
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{name}: {err}");
        assert!(err.contains("is not a valid crate name") && err.contains(why), "{name}: {err}");
        assert!(err.contains("pass another --crate-name"), "{err}");
        assert!(!err.contains("lacks what generation needs") && !out.exists(), "work began: {err}");
    }
}

/// The generated crate's dependencies are the names it refuses (a package cannot depend on
/// its own name), but its types crate, whose name is its own with `-types`.
#[test]
fn crate_names_of_the_generated_crate_s_dependencies_are_refused() {
    let cargo: toml::Table =
        std::fs::read_to_string(repo_root().join("generated/Cargo.toml")).unwrap().parse().unwrap();
    let types = format!("cuda-driver-pfn{}", codegen::crate_name::TYPES_SUFFIX);
    let deps: Vec<&String> = cargo["dependencies"].as_table().unwrap().keys().filter(|d| **d != types).collect();
    assert_eq!(cargo["dependencies"][&types]["path"].as_str(), Some("types"), "the types crate is not a dependency");
    assert_eq!(deps, codegen::crate_name::DEPENDENCIES, "crate_name::DEPENDENCIES is stale");
    for d in deps {
        assert!(codegen::crate_name::check(d).is_err(), "{d}");
    }
}

/// Usage errors exit 1, as docs/generator.md says (clap's own 2 is "additions only"), in both
/// commands; --help and --version exit 0.
#[test]
fn usage_errors_exit_1_in_both_commands() {
    for package in ["cuda-sys-gen", "xtask"] {
        for args in [
            &["diff", "--from", "12.9", "--to", "13.05"][..],
            &["diff", "--from", "12.9", "--to", "13.0", "--fail-on", "bogus"],
            &["diff", "--from", "12.9"],
            &["generate", "--toolkit", "/x", "--pinned-only"],
            &["no-such-command"],
        ] {
            let o = cargo_run(package, args, &[]);
            assert_eq!(o.status.code(), Some(1), "{package} {args:?}: {}", text(&o.stderr));
            assert!(text(&o.stderr).contains("error:"), "{package} {args:?}: {}", text(&o.stderr));
        }
        let o = cargo_run(package, &["diff", "--help"], &[]);
        assert_eq!(o.status.code(), Some(0), "{package} --help");
    }
    let o = cargo_run("cuda-sys-gen", &["--version"], &[]);
    assert_eq!(o.status.code(), Some(0));
}

/// Every exit status of `diff`'s table, as the command gives it: 0, 2 and 3 from the diff
/// fixtures, 1 from a usage error and from a failed run.
#[test]
fn every_documented_diff_status_is_the_command_s() {
    let m = manifest_with(Some(&["cuda"]), &[]);
    let manifest = m.path().join("headers-manifest.toml");
    let fixture = |case: &str, v: &str| repo_root().join("tests/diff-fixtures").join(case).join(format!("cuda-{v}"));
    let cache = cache_dir();
    let diff = |from: &Path, to: &Path| {
        let (m, c) = (manifest.to_str().unwrap(), cache.to_str().unwrap());
        cargo_run(
            "cuda-sys-gen",
            &["diff", "--manifest", m, "--cache", c, "--from", from.to_str().unwrap(), "--to", to.to_str().unwrap()],
            &[],
        )
    };
    let mut seen = std::collections::BTreeMap::new();
    seen.insert(0, diff(&fixture("unchanged", "13.2"), &fixture("unchanged", "13.3")).status.code());
    seen.insert(2, diff(&fixture("additive", "13.1"), &fixture("additive", "13.2")).status.code());
    seen.insert(3, diff(&fixture("everything", "12.9"), &fixture("everything", "13.0")).status.code());
    seen.insert(1, cargo_run("cuda-sys-gen", &["diff", "--from", "12.9", "--to", "13.05"], &[]).status.code());
    for (code, _) in codegen::diff::EXIT_STATUSES {
        assert_eq!(seen.get(&i32::from(code)), Some(&Some(i32::from(code))), "exit status {code}: {seen:?}");
    }
    assert_eq!(seen.len(), codegen::diff::EXIT_STATUSES.len());
}

/// A diff with its sides reversed says so; a header warning both sides give is said once.
#[test]
fn a_reversed_diff_says_so() {
    let m = manifest_with(Some(&["cuda"]), &[]);
    let manifest = m.path().join("headers-manifest.toml");
    let dir = repo_root().join("tests/diff-fixtures/everything");
    let (newer, older) = (dir.join("cuda-13.0"), dir.join("cuda-12.9"));
    let c = cache_dir();
    let args = ["diff", "--manifest", manifest.to_str().unwrap(), "--cache", c.to_str().unwrap()];
    let o = cargo_run(
        "cuda-sys-gen",
        &[&args[..], &["--from", newer.to_str().unwrap(), "--to", older.to_str().unwrap()]].concat(),
        &[],
    );
    let err = text(&o.stderr);
    assert!(err.contains("note: --from 13.0 is newer than --to 12.9"), "{err}");
    let o = cargo_run(
        "cuda-sys-gen",
        &[&args[..], &["--from", older.to_str().unwrap(), "--to", newer.to_str().unwrap()]].concat(),
        &[],
    );
    let err = text(&o.stderr);
    assert!(!err.contains("is newer than"), "{err}");
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning:")).collect();
    let unique: std::collections::BTreeSet<&str> =
        warnings.iter().map(|l| l.split_once(": ").map_or(*l, |p| p.1)).collect();
    assert_eq!(warnings.len(), unique.len(), "a warning said twice: {err}");
}

#[test]
fn a_warning_of_both_toolkits_is_said_once() {
    use codegen::error::Warning;
    let of = |v: &str, s: &str| Warning::of(v.parse().unwrap(), s.to_owned());
    let merged = cuda_sys_gen::diff::merge_toolkit_warnings(&[
        of("12.9", "cuGetProcAddress_v2_ptsz is declared but no C name expands to it"),
        of("12.9", "something else"),
        of("13.0", "cuGetProcAddress_v2_ptsz is declared but no C name expands to it"),
        Warning::general("not a toolkit's".to_owned()),
        // A general warning that reads like a toolkit's is not taken apart.
        Warning::general("CUDA 13.0: something else".to_owned()),
    ]);
    assert_eq!(
        merged,
        [
            "CUDA 12.9, 13.0: cuGetProcAddress_v2_ptsz is declared but no C name expands to it",
            "CUDA 12.9: something else",
            "not a toolkit's",
            "CUDA 13.0: something else"
        ]
    );
}

/// A complete cache that cannot be written serves `--check`: the stand-in headers, which a
/// run writes for clang, go elsewhere.
#[test]
fn a_read_only_cache_serves_check() {
    let case = repo_root().join("tests/fixtures/cudaapi-in-param");
    let manifest = manifest_with(Some(&["cuda"]), &[]);
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("crate");
    let (name, command) = ("fixture-cudaapi-in-param", "cargo xtask generate");
    generate_local(manifest.path(), vec![case.join("cuda-13.0")], &out, name).unwrap_or_else(|e| panic!("{e}"));
    let cache = scratch.path().join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    // The libclang wheel as the shared cache has it (this machine may have no libclang).
    let libclang = cache_dir().join("libclang");
    if libclang.is_dir() {
        // Linked file by file: `cp -al` fails when another test changes the shared cache meanwhile.
        link_tree(&libclang, &cache.join("libclang")).expect("hard-linking the libclang cache");
    }
    // What cannot be written there: `standins` is taken by a file (and, where the tests do not
    // run as root, the whole cache is read-only).
    std::fs::write(cache.join("standins"), "").unwrap();
    let m = manifest.path().join("headers-manifest.toml");
    let toolkit = case.join("cuda-13.0");
    let args = [
        "generate",
        "--check",
        "--manifest",
        m.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--cache",
        cache.to_str().unwrap(),
        "--toolkit",
        toolkit.to_str().unwrap(),
        "--crate-name",
        name,
        "--regenerate-command",
        command,
    ];
    let read_only = |on: bool| {
        let _ = Command::new("chmod").arg("-R").arg(if on { "a-w" } else { "u+w" }).arg(&cache).status();
    };
    read_only(true);
    let o = cargo_run("cuda-sys-gen", &args, &[]);
    read_only(false);
    let (stdout, err) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{stdout}\n{err}");
    assert!(stdout.contains("up to date"), "{stdout}");
}

/// Each cause once: an I/O error is not repeated after the path that quotes it.
#[test]
fn causes_are_said_once() {
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("out").display().to_string();
    let o =
        cargo_run("cuda-sys-gen", &["generate", "--manifest", "/etc/passwd/headers-manifest.toml", "--out", &out], &[]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.matches("Not a directory (os error 20)").count(), 1, "{err}");
}

/// The cudaapi-in-param fixture's crate, written into `out` as a user's repository would hold it.
fn fixture_crate(out: &Path) -> (tempfile::TempDir, std::path::PathBuf) {
    let case = repo_root().join("tests/fixtures/cudaapi-in-param");
    let manifest = manifest_with(Some(&["cuda"]), &[]);
    generate_local(manifest.path(), vec![case.join("cuda-13.0")], out, "fixture-crate")
        .unwrap_or_else(|e| panic!("{e}"));
    (manifest, case.join("cuda-13.0"))
}

/// A user's copy of a generated example keeps the marker, but no file of its name is
/// generated and the record does not list it: it is the user's, and the run is refused before
/// any work, naming it; the copy stays byte for byte.
#[test]
fn a_copy_of_a_generated_file_is_the_user_s() {
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("crate");
    let (manifest, toolkit) = fixture_crate(&out);
    let doctor = std::fs::read_to_string(out.join("examples/doctor.rs")).unwrap();
    assert!(doctor.contains("@generated by cuda-sys-gen"), "the copy must carry the marker to test anything");
    let mine = format!("{doctor}\n// my own checks\n");
    std::fs::write(out.join("examples/my_doctor.rs"), &mine).unwrap();
    for _ in 0..2 {
        let err =
            generate_local(manifest.path(), vec![toolkit.clone()], &out, "fixture-crate").unwrap_err().to_string();
        assert!(
            err.contains("examples/my_doctor.rs (not written by cuda-sys-gen: no file of that name is generated"),
            "{err}"
        );
        assert!(err.contains("keep your copy outside the output folder"), "{err}");
        assert_eq!(std::fs::read_to_string(out.join("examples/my_doctor.rs")).unwrap(), mine);
    }
    // The same guard below the pipeline: the writer refuses it too, by construction.
    let files: std::collections::BTreeMap<String, Vec<u8>> = read_tree(&out)
        .into_iter()
        .filter(|(p, _)| !p.contains("my_doctor"))
        .map(|(p, t)| (p, t.into_bytes()))
        .collect();
    let err =
        codegen::write::sync_tree(&out, &files, codegen::write::Mode::Write, "x", &Default::default(), &|_, _| true)
            .unwrap_err()
            .to_string();
    assert!(err.contains("my_doctor.rs"), "{err}");
    assert_eq!(std::fs::read_to_string(out.join("examples/my_doctor.rs")).unwrap(), mine);
}

/// What the generator wrote before and no longer writes (a header row taken out of
/// the manifest) is listed in its record, and removed; a folder written before records were
/// kept (no record) is the generator's by the names it writes, or wrote when the crate was one
/// package (`emit::earlier_file_names`).
#[test]
fn what_the_record_lists_is_replaced() {
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("crate");
    let case = repo_root().join("tests/fixtures/linux-headers");
    let toolkits = vec![case.join("cuda-12.9")];
    let all = manifest_with(Some(&["cuda", "gl", "egl", "vdpau"]), &[]);
    generate_local(all.path(), toolkits.clone(), &out, "fixture-crate").unwrap_or_else(|e| panic!("{e}"));
    let record = codegen::write::read_record(&out).unwrap();
    assert!(record.contains("types/src/vdpau.rs") && record.contains(codegen::write::RECORD), "{record:?}");
    let fewer = manifest_with(Some(&["cuda", "gl"]), &[]);
    let r = generate_local(fewer.path(), toolkits.clone(), &out, "fixture-crate").unwrap_or_else(|e| panic!("{e}"));
    assert!(r.write.removed.contains(&"types/src/vdpau.rs".to_string()), "{:?}", r.write);
    assert!(!out.join("types/src/vdpau.rs").exists());
    // No record (a crate of an earlier cuda-sys-gen): its names are still the generator's.
    std::fs::remove_file(out.join(codegen::write::RECORD)).unwrap();
    codegen::output_folder::check_output_folder(&out, &load(&fewer.path().join("headers-manifest.toml")), &cache_dir())
        .unwrap_or_else(|e| panic!("{e}"));
    generate_local(fewer.path(), toolkits.clone(), &out, "fixture-crate").unwrap_or_else(|e| panic!("{e}"));
    assert!(out.join(codegen::write::RECORD).is_file());

    // A crate of the one-package layout, no record: its modules stood in src/, where nothing
    // is written now. They are the generator's still, and go; a file of that name without the
    // marker is the user's, and stops the run.
    std::fs::remove_file(out.join(codegen::write::RECORD)).unwrap();
    let old_types = std::fs::read(out.join("types/src/types.rs")).unwrap();
    std::fs::write(out.join("src/types.rs"), &old_types).unwrap();
    std::fs::write(out.join("src/gl.rs"), std::fs::read(out.join("types/src/gl.rs")).unwrap()).unwrap();
    let manifest = load(&fewer.path().join("headers-manifest.toml"));
    codegen::output_folder::check_output_folder(&out, &manifest, &cache_dir()).unwrap_or_else(|e| panic!("{e}"));
    let r = generate_local(fewer.path(), toolkits.clone(), &out, "fixture-crate").unwrap_or_else(|e| panic!("{e}"));
    assert!(r.write.removed.contains(&"src/types.rs".to_string()), "{:?}", r.write);
    assert!(!out.join("src/types.rs").exists() && !out.join("src/gl.rs").exists());
    std::fs::remove_file(out.join(codegen::write::RECORD)).unwrap();
    std::fs::write(out.join("src/pfn.rs"), "// mine\n").unwrap();
    let err = codegen::output_folder::check_output_folder(&out, &manifest, &cache_dir()).unwrap_err().to_string();
    assert!(err.contains("src/pfn.rs") && err.contains("no `@generated` marker"), "{err}");
    let err = generate_local(fewer.path(), toolkits, &out, "fixture-crate").unwrap_err().to_string();
    assert!(err.contains("src/pfn.rs"), "{err}");
    assert_eq!(std::fs::read_to_string(out.join("src/pfn.rs")).unwrap(), "// mine\n");
}

/// `--out` inside a crate the generator wrote, inside the header cache or inside a
/// file is refused; and every folder a refusal offers instead is one the same check accepts,
/// outside cargo's target/, the cache, any file and any generated crate.
#[test]
fn folders_inside_a_crate_the_cache_or_a_file_are_refused_and_the_offers_are_good() {
    let scratch = tempfile::tempdir().unwrap();
    let repo = scratch.path().join("repo");
    std::fs::create_dir_all(repo.join("target/debug")).unwrap();
    std::fs::write(repo.join("Cargo.toml"), "[workspace]\n").unwrap();
    std::fs::write(repo.join("target/CACHEDIR.TAG"), "Signature: 8a477f597d28d172789f06886806bc55\n").unwrap();
    let manifest = repo.join("headers-manifest.toml");
    std::fs::copy(real_manifest(), &manifest).unwrap();
    let manifest = load(&manifest);
    let cache = repo.join("target/cuda-headers");
    std::fs::create_dir_all(&cache).unwrap();
    let (_m, _t) = fixture_crate(&repo.join("cuda-pfn"));
    let old = read_tree(&repo.join("cuda-pfn"));
    let mut offers = Vec::new();
    let check = |out: &str| {
        codegen::output_folder::check_output_folder(&repo.join(out), &manifest, &cache).map_err(|e| match e {
            codegen::Error::NotOurs { reason, instead, .. } => (reason, instead),
            e => panic!("{out}: {e}"),
        })
    };
    for (out, says) in [
        ("cuda-pfn/src", "a crate cuda-sys-gen wrote"),
        ("cuda-pfn/examples/new", "a crate cuda-sys-gen wrote"),
        ("target/cuda-headers/inside", "inside the header cache"),
        ("target/cuda-headers", "it is the header cache"),
        ("headers-manifest.toml", "it is the headers manifest"),
        ("headers-manifest.toml/cuda-pfn", "inside the headers manifest"),
        (".", "it holds what cuda-sys-gen did not write"),
        ("target", "it holds what cuda-sys-gen did not write"),
        (".git-like/../target/debug", "it holds what cuda-sys-gen did not write"),
    ] {
        std::fs::create_dir_all(repo.join("target/debug")).unwrap();
        std::fs::write(repo.join("target/debug/build.log"), "").unwrap();
        let (reason, instead) = check(out).map(|()| panic!("--out {out} was accepted")).unwrap_or_else(|e| e);
        assert!(reason.contains(says), "--out {out}: {reason}");
        let Some(instead) = instead else { continue };
        offers.push(format!("{out} -> {instead}"));
        let offered = std::path::Path::new(&instead);
        let offered =
            if offered.is_absolute() { offered.to_owned() } else { std::env::current_dir().unwrap().join(offered) };
        codegen::output_folder::check_output_folder(&offered, &manifest, &cache)
            .unwrap_or_else(|e| panic!("--out {out}: the offer {instead} is refused itself: {e}"));
        let canonical = codegen::write::canonical_lenient(&offered).unwrap();
        let repo = repo.canonicalize().unwrap();
        assert!(
            !canonical.starts_with(repo.join("target")) && !canonical.starts_with(repo.join("headers-manifest.toml")),
            "--out {out}: offered {instead}"
        );
        assert!(
            canonical == repo.join("cuda-pfn") || !canonical.starts_with(repo.join("cuda-pfn")),
            "--out {out}: offered {instead}, inside a generated crate"
        );
    }
    assert_eq!(read_tree(&repo.join("cuda-pfn")), old, "a refusal changed the crate");
    // The crate's own folder is offered for a folder inside it.
    assert!(offers.iter().any(|o| o.starts_with("cuda-pfn/src -> ") && o.ends_with("/repo/cuda-pfn")), "{offers:?}");
    assert!(offers.len() >= 8, "refusals without an offer: {offers:?}");
}

/// As a script in a user's repository: a generated example copied and edited, then
/// `cuda-sys-gen generate` twice: the copy survives, byte for byte.
#[test]
fn a_script_copies_an_example_and_generates_twice() {
    let scratch = tempfile::tempdir().unwrap();
    let repo = scratch.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let m = manifest_with(Some(&["cuda"]), &[]);
    std::fs::copy(m.path().join("headers-manifest.toml"), repo.join("headers-manifest.toml")).unwrap();
    let toolkit = repo_root().join("tests/fixtures/cudaapi-in-param/cuda-13.0");
    let script = r#"
set -u
gen() { "$CUDA_SYS_GEN" generate --manifest headers-manifest.toml --out cuda-pfn --crate-name my-cuda-pfn \
    --cache "$CACHE" --toolkit "$TOOLKIT"; }
gen || exit 10
cp cuda-pfn/examples/doctor.rs cuda-pfn/examples/my_doctor.rs
sed -i 's/fn main()/fn my_main()/' cuda-pfn/examples/my_doctor.rs
echo '// mine' >> cuda-pfn/examples/my_doctor.rs
cp cuda-pfn/examples/my_doctor.rs ../my_doctor.expected
for run in 1 2; do
    if gen 2> ../stderr-$run; then exit 20; fi
    grep -q 'cuda-pfn/examples/my_doctor.rs (not written by cuda-sys-gen' ../stderr-$run || exit 30
    cmp cuda-pfn/examples/my_doctor.rs ../my_doctor.expected || exit 40
done
"#;
    let o = Command::new("sh")
        .current_dir(&repo)
        .arg("-c")
        .arg(script)
        .env("CUDA_SYS_GEN", cuda_sys_gen_binary())
        .env("CACHE", cache_dir())
        .env("TOOLKIT", &toolkit)
        .env_remove("CUDA_PATH")
        .env_remove("CUDA_HOME")
        .output()
        .unwrap();
    let stderr = std::fs::read_to_string(scratch.path().join("stderr-1")).unwrap_or_default();
    assert_eq!(o.status.code(), Some(0), "{}\n{}\n{stderr}", text(&o.stdout), text(&o.stderr));
    let copy = std::fs::read(repo.join("cuda-pfn/examples/my_doctor.rs")).unwrap();
    assert!(String::from_utf8_lossy(&copy).contains("fn my_main()") && copy.ends_with(b"// mine\n"));
}

/// The manifest at `path`, loaded as a run loads it once before any work.
fn load(path: &std::path::Path) -> codegen::manifest::Manifest {
    codegen::manifest::Manifest::load(path).unwrap_or_else(|e| panic!("{e}"))
}
