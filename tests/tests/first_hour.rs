//! A new user's first hour, from a folder outside the checkout (a temporary folder), with only
//! what the README and docs/ say: the dependency added by path, the README's example built and
//! run, the doctor (the crate's function in a program of the user's, and `cuda-sys-gen
//! doctor`), `min-driver` with no flags, a stand-in libcuda with a hook per symbol and an init
//! function, and a repository's generator started from `init`. Offline: the header cache, the
//! Debian drivers and cargo's registry cache of this machine.
//!
//! The transcript of each step is printed on stderr (`--nocapture` shows it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use cuda_sys_gen_tests::*;

/// A command as the user types it, run in `dir`; its transcript on stderr.
fn step(dir: &Path, shown: &str, cmd: &mut Command) -> Output {
    let o = cmd.current_dir(dir).output().unwrap_or_else(|e| panic!("{shown}: {e}"));
    eprintln!("$ {shown}");
    for l in text(&o.stdout).lines().chain(text(&o.stderr).lines()) {
        eprintln!("{l}");
    }
    eprintln!("[exit {}]\n", o.status.code().map_or("signal".into(), |c| c.to_string()));
    o
}

/// `cargo build --offline` of a package outside the workspace, into a target folder of this
/// checkout's own (kept between runs, so only the first run compiles the crate).
fn cargo_build(dir: &Path, shown: &str) -> Output {
    let target = repo_root().join("target/first-hour");
    // The workspace's lock file, so that cargo picks the versions this machine has cached.
    std::fs::copy(repo_root().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    step(dir, shown, Command::new(env!("CARGO")).args(["build", "--offline", "--quiet", "--target-dir"]).arg(&target))
}

fn target_debug() -> PathBuf {
    repo_root().join("target/first-hour/debug")
}

/// The README's first example, as it stands there.
fn readme_example() -> String {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let start = readme.find("```rust,no_run\n").expect("the README has a Rust example") + "```rust,no_run\n".len();
    let len = readme[start..].find("```").unwrap();
    readme[start..start + len].to_owned()
}

#[test]
fn a_new_users_steps_from_a_folder_outside_the_checkout() {
    let Some(drivers) = drivers::fetched() else { return };
    let driver = drivers.iter().find(|d| d.pin.cuda == "12.5").expect("the 555 driver (CUDA 12.5) is pinned");
    let home = tempfile::tempdir().unwrap();
    let generated = repo_root().join("generated");
    let gen = cuda_sys_gen_binary();

    // 1. The dependency by path, and the README's example as the program.
    let app = home.path().join("app");
    std::fs::create_dir_all(app.join("src/bin")).unwrap();
    std::fs::write(
        app.join("Cargo.toml"),
        format!(
            "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n\
             cuda-driver-pfn = {{ path = {:?}, features = [\"doctor\"] }}\n\n[workspace]\n",
            generated.display().to_string()
        ),
    )
    .unwrap();
    std::fs::write(app.join("src/main.rs"), readme_example()).unwrap();
    // The doctor as the crate's function, in a program of the user's.
    std::fs::write(
        app.join("src/bin/doctor.rs"),
        "fn main() -> std::process::ExitCode {\n    cuda_driver_pfn::doctor::main()\n}\n",
    )
    .unwrap();
    let o = cargo_build(&app, "cargo build --offline");
    assert!(o.status.success(), "{}", text(&o.stderr));

    // 2. The example on a real driver, found by its soname as the README says.
    let exe = target_debug().join("app");
    let o = step(
        &app,
        "LD_LIBRARY_PATH=<driver 555> target/debug/app",
        Command::new(&exe).env("LD_LIBRARY_PATH", driver.library_path()),
    );
    assert!(text(&o.stdout).contains("CUDA driver version 12050"), "{}", text(&o.stdout));
    // No GPU here: cuInit's own code, with cuda.h's words.
    assert!(text(&o.stderr).contains("CUDA_ERROR_NO_DEVICE"), "{}", text(&o.stderr));

    // 3. The doctor: the user's own, then cuda-sys-gen's, both from this folder.
    let doctor = target_debug().join("doctor");
    let o = step(
        &app,
        "LD_LIBRARY_PATH=<driver 555> target/debug/doctor",
        Command::new(&doctor).env("LD_LIBRARY_PATH", driver.library_path()),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let report = text(&o.stdout);
    assert!(report.contains("driver:   CUDA 12.5 (12050)"), "{report}");
    // The file the loader opened, not the name it was asked for.
    let library = report.lines().next().unwrap().strip_prefix("library:  ").unwrap();
    assert!(library.starts_with('/') && library.ends_with("/libcuda.so.1"), "{library}");
    assert!(driver.lib_dirs.iter().any(|d| std::path::Path::new(library).parent() == Some(d.as_path())), "{library}");
    assert!(report.contains("WRONG ABI: 0"), "{report}");
    let o = step(&app, "cuda-sys-gen doctor <driver 555>", Command::new(gen).arg("doctor").arg(&driver.libcuda));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let cli = text(&o.stdout);
    // The same report (the crate's and the command's registries are this checkout's).
    let tail = |r: &str| r.lines().skip(1).map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(tail(&cli), tail(&report));

    // 4. min-driver with no flags, on the program just built: its two lookups.
    let o = step(&app, "cuda-sys-gen min-driver target/debug/app", Command::new(gen).arg("min-driver").arg(&exe));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let floor = text(&o.stdout);
    assert!(floor.contains("CUDA 3.2 (3020), set by cuMemAlloc_v3020"), "{floor}");
    assert!(floor.contains("cuInit_v2000"), "{floor}");

    // 5. A stand-in libcuda: an init function and a hook per symbol (cuInit, every ABI).
    let layer = home.path().join("layer");
    std::fs::create_dir_all(layer.join("src")).unwrap();
    std::fs::write(
        layer.join("Cargo.toml"),
        format!(
            "[package]\nname = \"my_layer\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[lib]\ncrate-type = [\"cdylib\"]\n\n\
             [dependencies]\ncuda-driver-pfn = {{ path = {:?}, features = [\"standin\", \"newest\"] }}\n\n[workspace]\n",
            generated.display().to_string()
        ),
    )
    .unwrap();
    std::fs::write(
        layer.join("src/lib.rs"),
        r#"cuda_driver_pfn::export_libcuda!(init = init);

use cuda_driver_pfn::newest::{symbols, Init};
use cuda_driver_pfn::{entries, standin, types::*};

fn init() {
    let left = standin::set_symbol_hooks::<symbols::cuInit>(&[Init::V2000(my_init)]);
    assert!(left.is_empty(), "{left:?}");
}

unsafe extern "system" fn my_init(flags: ::std::os::raw::c_uint) -> CUresult {
    eprintln!("my_layer: cuInit({flags})");
    match standin::forward::<entries::cuInit_v2000>() {
        Some(real) => unsafe { real(flags) },
        None => standin::MISSING,
    }
}
"#,
    )
    .unwrap();
    let o = cargo_build(&layer, "cargo build --offline   # the stand-in");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let stand = home.path().join("stand");
    std::fs::create_dir_all(&stand).unwrap();
    std::fs::copy(target_debug().join("libmy_layer.so"), stand.join("libcuda.so.1")).unwrap();
    let o = step(
        &app,
        "LD_LIBRARY_PATH=<stand-in> CUDA_SYS_GEN_REAL_LIBCUDA=<driver 555> target/debug/app",
        Command::new(&exe).env("LD_LIBRARY_PATH", &stand).env("CUDA_SYS_GEN_REAL_LIBCUDA", &driver.libcuda),
    );
    assert!(text(&o.stdout).contains("CUDA driver version 12050"), "{}", text(&o.stdout));
    assert!(text(&o.stderr).contains("my_layer: cuInit(0)"), "the hook did not run: {}", text(&o.stderr));
    assert!(text(&o.stderr).contains("CUDA_ERROR_NO_DEVICE"), "not forwarded to the driver: {}", text(&o.stderr));

    // 6. A repository's generator and its CI, started from `init` (offline: this machine's
    //    header cache; on a machine with the network, `cuda-sys-gen init` pins the latest).
    let repo = home.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let cache = cache_dir();
    let o = step(
        &repo,
        "cuda-sys-gen init 13.5 --offline --cache <header cache>",
        Command::new(gen).args(["init", "13.5", "--offline", "--cache"]).arg(&cache),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let generate = |check: bool| {
        let mut cmd = Command::new(gen);
        cmd.arg("generate").args(check.then_some("--check"));
        cmd.args(["--pinned-only", "--offline", "--out", "cuda-pfn", "--crate-name", "my-cuda-pfn", "--cache"])
            .arg(&cache);
        let shown = format!(
            "cuda-sys-gen generate{} --pinned-only --offline --out cuda-pfn --crate-name my-cuda-pfn --cache <header cache>",
            if check { " --check" } else { "" }
        );
        step(&repo, &shown, &mut cmd)
    };
    let o = generate(false);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let lib = std::fs::read_to_string(repo.join("cuda-pfn/src/lib.rs")).unwrap();
    assert!(
        lib.lines()
            .next()
            .unwrap()
            .ends_with("Regenerate with `cuda-sys-gen generate --out cuda-pfn --crate-name my-cuda-pfn`."),
        "{}",
        lib.lines().next().unwrap()
    );
    // What CI runs: the check passes on what was just written.
    let o = generate(true);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

/// `min-driver` answers anywhere with the registry built into cuda-sys-gen (it read
/// `generated/registry.json` relative to the working folder, and failed outside the checkout);
/// `--registry` still names another crate's.
#[test]
fn min_driver_answers_outside_the_checkout_without_a_registry_flag() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("main.rs"), "fn main() { let _ = cuda_driver_pfn::entries::cuMemAlloc_v3020; }\n")
        .unwrap();
    let gen = cuda_sys_gen_binary();
    let o = step(dir.path(), "cuda-sys-gen min-driver main.rs", Command::new(gen).args(["min-driver", "main.rs"]));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("CUDA 3.2 (3020), set by cuMemAlloc_v3020"), "{}", text(&o.stdout));
    // Another registry: a file that is none is named.
    std::fs::write(dir.path().join("registry.json"), "{}").unwrap();
    let o = step(
        dir.path(),
        "cuda-sys-gen min-driver --registry registry.json main.rs",
        Command::new(gen).args(["min-driver", "--registry", "registry.json", "main.rs"]),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("registry.json is not the registry.json of a crate cuda-sys-gen generated"),
        "{}",
        text(&o.stderr)
    );
    // The committed one, named: the same floor as the built-in one.
    let o = Command::new(gen)
        .current_dir(dir.path())
        .args(["min-driver", "--registry"])
        .arg(repo_root().join("generated/registry.json"))
        .arg("main.rs")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("CUDA 3.2 (3020), set by cuMemAlloc_v3020"));
}

/// `cuda-sys-gen doctor`: a file that is no library is an error naming it (exit 1), a bad
/// command line exits 1, and `--help` closes with the exit statuses.
#[test]
fn the_doctor_command_says_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let not_a_library = dir.path().join("libcuda.so.1");
    std::fs::write(&not_a_library, "not a library").unwrap();
    let gen = cuda_sys_gen_binary();
    let o = step(dir.path(), "cuda-sys-gen doctor ./libcuda.so.1", Command::new(gen).arg("doctor").arg(&not_a_library));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains(&not_a_library.display().to_string()), "{}", text(&o.stderr));
    let o = Command::new(gen).args(["doctor", "a", "b"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let o = Command::new(gen).args(["doctor", "--help"]).output().unwrap();
    let help = text(&o.stdout);
    for (code, _) in cuda_sys_gen::doctor::exit_statuses() {
        assert!(help.contains(&format!("\n  {code}  ")), "exit status {code} missing from --help: {help}");
    }
}

/// The generator's version is in every file's marker and in registry.json.
#[test]
fn every_generated_file_records_the_generator_version() {
    let line = format!("@generated by cuda-sys-gen {}: do not edit.", codegen::write::GENERATOR_VERSION);
    let tree = read_tree(&repo_root().join("generated"));
    let mut marked = 0;
    for (path, body) in &tree {
        if path.contains("LICENSE") {
            continue;
        }
        assert!(body.contains(&line), "{path} does not record the generator version");
        marked += 1;
    }
    assert!(marked > 20, "{marked} files");
    let json: serde_json::Value = serde_json::from_str(&tree["registry.json"]).unwrap();
    assert_eq!(json["generator"], format!("cuda-sys-gen {}", codegen::write::GENERATOR_VERSION));
}

/// A stale `--check` after the generator changed says so, with both versions; one by the same
/// generator does not.
#[test]
fn a_stale_check_names_the_generator_versions() {
    let case = repo_root().join("tests/fixtures/cudaapi-in-param");
    let manifest = manifest_with(Some(&["cuda"]), &[]);
    let out = tempfile::tempdir().unwrap();
    let m = manifest.path().join("headers-manifest.toml");
    let toolkit = case.join("cuda-13.0");
    let args = |out: &Path| -> Vec<String> {
        [
            "generate",
            "--check",
            "--manifest",
            m.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--toolkit",
            toolkit.to_str().unwrap(),
            "--crate-name",
            "fixture-cudaapi-in-param",
            "--regenerate-command",
            "cargo xtask generate",
        ]
        .map(str::to_owned)
        .to_vec()
    };
    let run = |out: &Path| {
        let a = args(out);
        cargo_run("cuda-sys-gen", &a.iter().map(String::as_str).collect::<Vec<_>>(), &[])
    };
    // Written by this generator, then checked: up to date.
    let write: Vec<String> = args(out.path()).into_iter().filter(|a| a != "--check").collect();
    let o = cargo_run("cuda-sys-gen", &write.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = run(out.path());
    assert!(o.status.success(), "{}", text(&o.stderr));
    let ours = codegen::write::GENERATOR_VERSION;
    // Every file as an older generator wrote it: its version in the markers.
    for (rel, body) in read_tree(out.path()) {
        let older = body.replace(&format!("cuda-sys-gen {ours}:"), "cuda-sys-gen 0.0.9:");
        std::fs::write(out.path().join(rel), older).unwrap();
    }
    let o = run(out.path());
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "generated by cuda-sys-gen 0.0.9, this is {ours}: a new generator alone can change the files"
        )),
        "{err}"
    );
    // A file edited by hand under the same generator: no word of versions.
    for (rel, body) in read_tree(out.path()) {
        std::fs::write(out.path().join(rel), body.replace("cuda-sys-gen 0.0.9:", &format!("cuda-sys-gen {ours}:")))
            .unwrap();
    }
    std::fs::write(out.path().join("src/lib.rs"), format!("// @generated by cuda-sys-gen {ours}: edited\n")).unwrap();
    let o = run(out.path());
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("generated files are out of date:\n"), "{err}");
    assert!(!err.contains("this is"), "{err}");
    // A crate of a generator that recorded no version.
    for (rel, body) in read_tree(out.path()) {
        std::fs::write(out.path().join(rel), body.replace(&format!("cuda-sys-gen {ours}:"), "cuda-sys-gen:")).unwrap();
    }
    let o = run(out.path());
    assert!(text(&o.stderr).contains("a cuda-sys-gen that recorded no version"), "{}", text(&o.stderr));
}

/// Without --regenerate-command, the files quote the command that writes them: its
/// --manifest, --out and --crate-name, paths as given relative to the working folder, nothing
/// of the machine (--toolkit, --cache); run from two folders, the crates are byte-identical.
#[test]
fn the_regenerate_command_defaults_to_the_options_given() {
    let toolkit = repo_root().join("tests/fixtures/internal-guard/cuda-12.9");
    let cache = cache_dir();
    let mut crates = Vec::new();
    for _ in 0..2 {
        let dir = tempfile::tempdir().unwrap();
        let manifest = manifest_with(Some(&["cuda"]), &[]);
        std::fs::copy(manifest.path().join("headers-manifest.toml"), dir.path().join("m.toml")).unwrap();
        let o = Command::new(cuda_sys_gen_binary())
            .current_dir(dir.path())
            .args(["generate", "--manifest", "./m.toml", "--out", "cuda-pfn", "--crate-name", "my-cuda-pfn"])
            .arg("--toolkit")
            .arg(&toolkit)
            .arg("--cache")
            .arg(&cache)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
        let cargo = std::fs::read_to_string(dir.path().join("cuda-pfn/Cargo.toml")).unwrap();
        let first = cargo.lines().next().unwrap();
        assert_eq!(
            first,
            format!(
                "# @generated by cuda-sys-gen {}: do not edit. Regenerate with `cuda-sys-gen generate --manifest m.toml \
                 --out cuda-pfn --crate-name my-cuda-pfn`.",
                codegen::write::GENERATOR_VERSION
            )
        );
        // An absolute --out is written relative to the working folder.
        let again = Command::new(cuda_sys_gen_binary())
            .current_dir(dir.path())
            .args(["generate", "--check", "--manifest", "m.toml", "--crate-name", "my-cuda-pfn", "--out"])
            .arg(dir.path().join("cuda-pfn"))
            .arg("--toolkit")
            .arg(&toolkit)
            .arg("--cache")
            .arg(&cache)
            .output()
            .unwrap();
        assert!(again.status.success(), "an absolute --out changed the files: {}", text(&again.stderr));
        crates.push(read_tree(&dir.path().join("cuda-pfn")));
    }
    assert_eq!(crates[0], crates[1], "two folders, two crates");
}

/// `init` pins offline from the cache what the repository's manifest pins (the same files and
/// digests), never replaces a file, and `--add-toolkit` then takes a newer patch of a pinned
/// minor (it said "already pinned; nothing to add") and says so when there is none.
#[test]
fn init_pins_from_the_cache_and_add_toolkit_takes_a_patch_release() {
    let dir = tempfile::tempdir().unwrap();
    let gen = cuda_sys_gen_binary();
    // A cache of its own: 13.4.92's three wheels, and the same files as a later patch, 13.4.99.
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(cache.join("wheels")).unwrap();
    for entry in std::fs::read_dir(cache_dir().join("wheels")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        // (and the libclang wheel, where this machine has no libclang of its own)
        if name.contains("-13.4.92-") || name.starts_with("libclang-") {
            std::fs::copy(entry.path(), cache.join("wheels").join(&name)).unwrap();
        }
    }
    let cached = std::fs::read_dir(cache.join("wheels")).unwrap().flatten();
    assert_eq!(cached.filter(|e| e.file_name().to_string_lossy().contains("-13.4.92-")).count(), 3);
    let o = step(
        dir.path(),
        "cuda-sys-gen init 13.4 --offline --cache cache",
        Command::new(gen).args(["init", "13.4", "--offline", "--cache"]).arg(&cache),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // The row min-driver's table of releases lacks for it, and where it comes from.
    let releases = cuda_sys_gen::min_driver::releases::Releases::load().unwrap();
    if !releases.driver.iter().any(|d| d.cuda == "13.4") {
        assert!(text(&o.stderr).contains("has no driver row for CUDA 13.4"), "{}", text(&o.stderr));
        assert!(text(&o.stderr).contains("Corresponding Driver Versions"), "{}", text(&o.stderr));
    }
    let m = dir.path().join("headers-manifest.toml");
    let ours = codegen::manifest::Manifest::load(&m).unwrap();
    let repo = codegen::manifest::Manifest::load(&real_manifest()).unwrap();
    let v = "13.4".parse().unwrap();
    assert_eq!(ours.toolkit(v), repo.toolkit(v), "init pinned other files than the repository");
    assert_eq!(ours.headers, repo.headers, "init's header rows are not the repository's");
    assert_eq!(ours.toolkits.len(), 1);
    // Never replaced.
    let before = std::fs::read(&m).unwrap();
    let o = Command::new(gen).current_dir(dir.path()).args(["init", "--offline"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("already exists: init never replaces a manifest"), "{}", text(&o.stderr));
    assert_eq!(std::fs::read(&m).unwrap(), before);
    // No newer patch: said, and nothing changes.
    let add = |spec: &str| {
        let mut cmd = Command::new(gen);
        cmd.args(["generate", "--pinned-only", "--offline", "--out", "cuda-pfn", "--add-toolkit", spec, "--cache"])
            .arg(&cache);
        step(
            dir.path(),
            &format!("cuda-sys-gen generate --pinned-only --offline --out cuda-pfn --add-toolkit {spec}"),
            &mut cmd,
        )
    };
    let o = add("13.4");
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("the newest patch the cache holds"), "{}", text(&o.stderr));
    assert_eq!(std::fs::read(&m).unwrap(), before);
    // A later patch in the cache: taken, by version and by `latest`.
    for entry in std::fs::read_dir(cache.join("wheels")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.contains("-13.4.92-") {
            std::fs::copy(entry.path(), cache.join("wheels").join(name.replace("-13.4.92-", "-13.4.99-"))).unwrap();
        }
    }
    let o = add("latest");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("a newer patch release (nvidia-cuda-runtime 13.4.92 -> 13.4.99"),
        "{}",
        text(&o.stderr)
    );
    let bumped = codegen::manifest::Manifest::load(&m).unwrap();
    assert_eq!(bumped.toolkits.len(), 1);
    assert!(bumped.toolkits[0].packages.iter().all(|p| p.version == "13.4.99"), "{:?}", bumped.toolkits);
    assert!(dir.path().join("cuda-pfn/registry.json").is_file());
}

/// A porter writing `cu!(cuCtxCreate(..))` on a 12.2 driver is told the `cu!` spelling of the
/// ABI the driver has (`cu!(cuCtxCreate_v3(..))`), not only `entries::` and `Driver::newest`.
#[test]
fn a_refusal_names_the_cu_spelling_of_the_abi_the_driver_has() {
    use cuda_driver_pfn::{Error, Lookup, StreamFlags};
    let e = Error::DriverTooOld {
        lookup: Lookup {
            symbol: "cuCtxCreate".into(),
            version: 12050,
            flags: StreamFlags::LEGACY_STREAM,
            via: "cuGetProcAddress_v2",
        },
        driver_version: 12020,
    };
    let said = e.to_string();
    assert!(said.contains("`entries::cuCtxCreate_v11040`"), "{said}");
    assert!(said.contains("(with `cu!`: `cu!(cuCtxCreate_v3(..))`)"), "{said}");
}

/// `api::cuCtxCreate`'s documentation starts with the 3-argument call's Rust spelling and the
/// NULL a 12.5 driver crashed on, before NVIDIA's "Can be NULL".
#[test]
fn cu_ctx_create_docs_lead_with_the_three_argument_spelling() {
    let api = std::fs::read_to_string(repo_root().join("generated/src/api.rs")).unwrap();
    let at = api.find("pub unsafe fn cuCtxCreate(").expect("api::cuCtxCreate");
    let doc_start = api[..at].rfind("/**").unwrap();
    let doc = &api[doc_start..at];
    let lead = doc.find("`cu!(cuCtxCreate_v2(&mut ctx, flags, dev))`").expect("the 3-argument spelling");
    assert!(doc.contains("crashed on a NULL `ctxCreateParams`"), "{doc}");
    if let Some(nvidia) = doc.find("Can be NULL") {
        assert!(lead < nvidia, "the lead comes after NVIDIA's text");
    }
}

/// A cuda-sys-gen built without a registry (`--no-default-features`, as `cargo xtask` is) asks
/// for `--registry` instead of reading a path relative to the working folder.
#[test]
fn min_driver_without_a_built_in_registry_asks_for_one() {
    let Ok(cuda_sys_gen::Cli { command: cuda_sys_gen::Command::MinDriver(mut args) }) =
        cuda_sys_gen::parse_from::<cuda_sys_gen::Cli, _, _>(["cuda-sys-gen", "min-driver", "main.rs"])
    else {
        panic!("min-driver's command line")
    };
    args.builtin_registry = None;
    let e = args.registry_source().unwrap_err().to_string();
    assert!(e.contains("pass --registry FILE (the generated crate's registry.json)"), "{e}");
    args.builtin_registry = cuda_sys_gen::builtin_registry();
    assert!(args.registry_source().is_ok());
}
