//! Killed runs: the `cuda-sys-gen` binary (the same front end as `cargo xtask generate`)
//! aborted at every named point of the write and the fetch (`CUDA_SYS_GEN_FAULT`, see
//! codegen/src/fault.rs) and SIGKILLed after many delays. Every time, the output folder is
//! entirely the old crate or entirely the new one, the cache holds nothing a later run would
//! trust, and the next run finishes the job and clears the leftovers.

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use codegen::fetch::Fetcher;
use codegen::manifest::Manifest;
use cuda_sys_gen_tests::*;

/// The `cuda-sys-gen` binary, built once.
fn binary() -> &'static Path {
    cuda_sys_gen_binary()
}

/// The cufoo fixture: its 11.4 toolkit alone gives the old crate, all three the new one.
struct Case {
    manifest: tempfile::TempDir,
    old_args: Vec<PathBuf>,
    new_args: Vec<PathBuf>,
    old: BTreeMap<String, String>,
    new: BTreeMap<String, String>,
}

fn case() -> Case {
    let dir = repo_root().join("tests/fixtures/cufoo");
    let manifest = manifest_with(Some(&["cuda"]), &[]);
    let old_args = vec![dir.join("cuda-11.4")];
    let new_args = ["cuda-11.4", "cuda-11.5", "cuda-11.6"].iter().map(|t| dir.join(t)).collect::<Vec<_>>();
    let render = |tks: &[PathBuf]| {
        let out = tempfile::tempdir().unwrap();
        generate_local(manifest.path(), tks.to_vec(), out.path(), "fixture").unwrap();
        read_tree(out.path())
    };
    let (old, new) = (render(&old_args), render(&new_args));
    assert_ne!(old, new);
    Case { manifest, old_args, new_args, old, new }
}

/// SIGINT as a terminal's Ctrl-C finds it: a shell starts a background job with SIGINT
/// ignored, and the child inherits that (a CI script run with `&`, or under `nohup`); the
/// tests of what Ctrl-C does would then see it do nothing.
fn sigint_as_at_a_terminal(cmd: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec only `signal`, which is async-signal-safe, is called.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        })
    }
}

fn command(manifest: &Path, toolkits: &[PathBuf], out: &Path, cache: &Path, fault: Option<&str>) -> Command {
    let mut cmd = Command::new(binary());
    cmd.args(["generate", "--manifest"]).arg(manifest.join("headers-manifest.toml"));
    cmd.arg("--out").arg(out).arg("--cache").arg(cache);
    cmd.args(["--crate-name", "fixture", "--regenerate-command", "cargo xtask generate"]);
    if toolkits.is_empty() {
        cmd.arg("--pinned-only");
    }
    for t in toolkits {
        cmd.arg("--toolkit").arg(t);
    }
    cmd.env_remove("CUDA_PATH").env_remove("CUDA_HOME");
    sigint_as_at_a_terminal(&mut cmd);
    match fault {
        Some(f) => cmd.env(codegen::fault::ENV, f),
        None => cmd.env_remove(codegen::fault::ENV),
    };
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    cmd
}

fn write_tree(dir: &Path, tree: &BTreeMap<String, String>) {
    let _ = std::fs::remove_dir_all(dir);
    for (rel, text) in tree {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// The scratch folders of the output folder `out`: `.out.new-*`, `.out.old-*`.
fn leftovers(out: &Path) -> Vec<String> {
    let name = out.file_name().unwrap().to_string_lossy().into_owned();
    let mut v: Vec<String> = std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!(".{name}.")))
        .collect();
    v.sort();
    v
}

/// Which crate `out` holds, if it is exactly one of them.
fn which(c: &Case, out: &Path) -> Option<&'static str> {
    let tree = read_tree(out);
    if tree == c.old {
        Some("old")
    } else if tree == c.new {
        Some("new")
    } else {
        None
    }
}

#[test]
fn a_run_aborted_at_each_write_point_leaves_old_or_new() {
    let c = case();
    let cache = cache_dir();
    // (switches and point, what the output folder holds after the abort)
    let cases = [
        ("write:staged-half", Some("old")),
        ("write:staged", Some("old")),
        ("write:swapped", Some("new")),
        ("write:no-exchange,write:staged", Some("old")),
        // The portable swap's one window: the old tree renamed aside, the new one not yet in
        // place. The output folder is missing; the next run puts the old tree back first.
        ("write:no-exchange,write:moved-old", None),
        ("write:no-exchange,write:swapped", Some("new")),
    ];
    for (fault, after) in cases {
        let scene = tempfile::tempdir().unwrap();
        let out = scene.path().join("generated");
        write_tree(&out, &c.old);
        let o = command(c.manifest.path(), &c.new_args, &out, &cache, Some(fault)).output().unwrap();
        assert_eq!(o.status.signal(), Some(libc_sigabrt()), "{fault}: {}", String::from_utf8_lossy(&o.stderr));
        match after {
            Some(state) => assert_eq!(which(&c, &out), Some(state), "{fault}"),
            None => {
                assert!(!out.exists(), "{fault}");
                let aside = leftovers(&out);
                assert!(aside.iter().any(|n| n.starts_with(".generated.old-")), "{fault}: {aside:?}");
            }
        }
        assert!(!leftovers(&out).is_empty(), "{fault}: a kill there leaves a scratch folder behind");
        // The next run repairs, finishes and cleans up; with the portable swap, first check
        // that recovery alone restores the old tree.
        if after.is_none() {
            let o = command(c.manifest.path(), &c.old_args, &out, &cache, Some("write:no-exchange")).output().unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            assert_eq!(which(&c, &out), Some("old"), "{fault}: recovery");
        }
        let switches = if fault.contains("no-exchange") { Some("write:no-exchange") } else { None };
        let o = command(c.manifest.path(), &c.new_args, &out, &cache, switches).output().unwrap();
        assert!(o.status.success(), "{fault}: {}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(which(&c, &out), Some("new"), "{fault}: the rerun");
        assert_eq!(leftovers(&out), Vec::<String>::new(), "{fault}: leftovers stay");
    }
}

fn libc_sigabrt() -> i32 {
    6
}

/// SIGKILL after delays spread over a whole run (file writes slowed to 20 ms each so that
/// many kills land inside the write), alternating old -> new and new -> old.
#[test]
fn sigkill_at_any_moment_leaves_old_or_new() {
    let c = case();
    let cache = cache_dir();
    let scene = tempfile::tempdir().unwrap();
    let out = scene.path().join("generated");
    write_tree(&out, &c.old);
    // One uninterrupted run, timed: the delays cover it and a little past it.
    let start = Instant::now();
    let o = command(c.manifest.path(), &c.new_args, &out, &cache, Some("write:slow")).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let full = start.elapsed();
    assert_eq!(which(&c, &out), Some("new"));
    let kills = 60;
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for k in 0..kills {
        let (from, args) = if which(&c, &out) == Some("new") { ("new", &c.old_args) } else { ("old", &c.new_args) };
        let delay = full.mul_f64(1.1 * k as f64 / kills as f64);
        let mut child = command(c.manifest.path(), args, &out, &cache, Some("write:slow")).spawn().unwrap();
        std::thread::sleep(delay);
        let _ = child.kill();
        let status = child.wait().unwrap();
        let state = which(&c, &out)
            .unwrap_or_else(|| panic!("kill {k} after {delay:?} (from {from}, {status}) left a mixed tree"));
        // A scratch folder beside the output means the kill landed inside the write.
        let mid_write = !leftovers(&out).is_empty();
        let what = match (state == from, status.signal(), mid_write) {
            (true, Some(_), false) => "killed before writing: old tree",
            (true, Some(_), true) => "killed while writing the new tree: old tree",
            (false, Some(_), _) => "killed after the swap: new tree",
            (false, None, _) => "finished first: new tree",
            (true, None, _) => panic!("a finished run did not write its crate"),
        };
        *seen.entry(what).or_default() += 1;
    }
    eprintln!("{kills} kills over {full:?}: {seen:?}");
    assert!(
        seen.get("killed while writing the new tree: old tree").copied().unwrap_or(0) > 0,
        "no kill landed inside the write: {seen:?}"
    );
    let o = command(c.manifest.path(), &c.new_args, &out, &cache, None).output().unwrap();
    assert!(o.status.success());
    assert_eq!(which(&c, &out), Some("new"));
    assert_eq!(leftovers(&out), Vec::<String>::new());
}

/// A fake `python3 -m pip download` that copies the pinned wheels out of the shared cache.
fn fake_pip(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("fake-python");
    let wheels = cache_dir().join("wheels");
    let body = format!(
        "#!/bin/sh\ncase \" $* \" in *\" --version \"*) echo 'pip 0 (a fake of the tests)'; exit 0;; esac\n\
         while [ $# -gt 0 ]; do if [ \"$1\" = --dest ]; then dest=$2; fi; spec=$1; shift; done\n\
         name=$(echo \"${{spec%%==*}}\" | tr - _); version=${{spec##*==}}\n\
         cp '{}'/\"$name-$version\"-*.whl \"$dest/\"\n",
        wheels.display()
    );
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The pinned 13.5 wheels must be in the shared cache (any earlier test run fetched them).
fn fetch_scene() -> (tempfile::TempDir, Manifest, tempfile::TempDir) {
    let manifest_dir = manifest_with(Some(&["cuda"]), &["13.5"]);
    let manifest = Manifest::load(&manifest_dir.path().join("headers-manifest.toml")).unwrap();
    let real = Fetcher::new(cache_dir(), &manifest);
    for p in &manifest.toolkits[0].packages {
        real.wheel(p).expect("the 13.5 wheels in the shared cache");
    }
    // libclang found before the child runs (a system one, or the shared cache's wheel, whose
    // folder this sets in LIBCLANG_PATH for every child): else a machine without one has the
    // child fetch the libclang wheel into the scene's empty cache first, and the fetch points
    // fire there, not in the headers' fetch these tests are about. Run alone, this test saw it.
    codegen::read::clang::ensure_libclang(&manifest, &real).expect("libclang");
    (manifest_dir, manifest, tempfile::tempdir().unwrap())
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn a_fetch_aborted_at_each_point_is_redone() {
    let (manifest_dir, manifest, scene) = fetch_scene();
    let pin = &manifest.toolkits[0];
    let first = &pin.packages[0];
    let dest_name = first.file.trim_end_matches(".whl").to_owned();
    for fault in ["fetch:downloaded", "fetch:extract-half", "fetch:extracted", "fetch:old-removed"] {
        let cache = scene.path().join(fault.replace(':', "-"));
        let include = cache.join("include");
        if fault == "fetch:old-removed" {
            // A cached wheel and a stale include folder (wrong stamp) to be replaced.
            std::fs::create_dir_all(cache.join("wheels")).unwrap();
            std::fs::copy(cache_dir().join("wheels").join(&first.file), cache.join("wheels").join(&first.file))
                .unwrap();
            std::fs::create_dir_all(include.join(&dest_name)).unwrap();
            std::fs::write(include.join(&dest_name).join("cuda.h"), "stale").unwrap();
            std::fs::write(include.join(&dest_name).join(".sha256"), "0".repeat(64)).unwrap();
        }
        let out = scene.path().join(format!("out-{}", fault.replace(':', "-")));
        let mut cmd = command(manifest_dir.path(), &[], &out, &cache, Some(fault));
        cmd.env("PYTHON", fake_pip(scene.path()));
        let o = cmd.output().unwrap();
        assert_eq!(o.status.signal(), Some(libc_sigabrt()), "{fault}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(!out.exists(), "{fault}: the output folder was touched");
        // Nothing a later run would trust: no wheel under its final name unless complete,
        // no include folder without its stamp.
        if fault == "fetch:downloaded" {
            assert!(!cache.join("wheels").join(&first.file).exists(), "{fault}");
            assert!(names(&cache.join("wheels")).iter().any(|n| n.starts_with(".download-")), "{fault}");
        } else {
            assert!(!include.join(&dest_name).exists(), "{fault}: {:?}", names(&include));
            assert!(names(&include).iter().any(|n| n.starts_with(".extract-")), "{fault}: {:?}", names(&cache));
        }
        // The next fetch (pip on hand) finishes it and clears the dead run's scratch folders.
        let mut fetcher = Fetcher::new(cache.clone(), &manifest);
        fetcher.python = fake_pip(scene.path()).display().to_string();
        let headers = fetcher.toolkit(pin).unwrap_or_else(|e| panic!("{fault}: {e}"));
        let dir = &headers.include_dirs[0];
        assert_eq!(std::fs::read_to_string(dir.join(".sha256")).unwrap(), first.sha256.0, "{fault}");
        assert!(std::fs::read_to_string(dir.join("cuda.h")).unwrap().contains("CUDA_VERSION"), "{fault}");
        assert!(
            names(&cache.join("wheels")).iter().all(|n| !n.starts_with('.')),
            "{fault}: {:?}",
            names(&cache.join("wheels"))
        );
        assert!(names(&include).iter().all(|n| !n.starts_with('.')), "{fault}: {:?}", names(&include));
    }
}

#[test]
fn a_half_extracted_include_folder_is_redone() {
    let (_m, manifest, scene) = fetch_scene();
    let pin = &manifest.toolkits[0];
    let first = &pin.packages[0];
    for stamp in [None, Some("not the sha256"), Some("")] {
        let cache = scene.path().join(format!("cache-{}", stamp.map_or(0, |s| s.len() + 1)));
        let dest = cache.join("include").join(first.file.trim_end_matches(".whl"));
        std::fs::create_dir_all(&dest).unwrap();
        std::fs::write(dest.join("cuda.h"), "#define CUDA_").unwrap();
        if let Some(s) = stamp {
            std::fs::write(dest.join(".sha256"), s).unwrap();
        }
        let mut fetcher = Fetcher::new(cache.clone(), &manifest);
        fetcher.python = fake_pip(scene.path()).display().to_string();
        let headers = fetcher.toolkit(pin).unwrap();
        assert_eq!(headers.include_dirs[0], dest);
        let cuda_h = std::fs::read_to_string(dest.join("cuda.h")).unwrap();
        assert!(cuda_h.contains("#define CUDA_VERSION 13050"), "{stamp:?}: the half-extracted cuda.h was kept");
        assert_eq!(std::fs::read_to_string(dest.join(".sha256")).unwrap(), first.sha256.0);
    }
}

#[test]
fn a_half_downloaded_wheel_is_fetched_again_and_used() {
    let (_m, manifest, scene) = fetch_scene();
    let pin = &manifest.toolkits[0];
    let first = &pin.packages[0];
    let cache = scene.path().join("cache");
    let wheels = cache.join("wheels");
    std::fs::create_dir_all(&wheels).unwrap();
    let real = std::fs::read(cache_dir().join("wheels").join(&first.file)).unwrap();
    // Cut in half, as a killed `pip download` into the cache would have left it.
    std::fs::write(wheels.join(&first.file), &real[..real.len() / 2]).unwrap();
    let mut fetcher = Fetcher::new(cache.clone(), &manifest);
    fetcher.python = fake_pip(scene.path()).display().to_string();
    let headers = fetcher.toolkit(pin).unwrap();
    assert_eq!(std::fs::read(wheels.join(&first.file)).unwrap(), real, "the cut wheel was not replaced");
    assert!(headers.include_dirs[0].join("cuda.h").is_file());
    // Offline, a cut wheel is an error that says what to do, not a crash.
    std::fs::write(wheels.join(&first.file), &real[..real.len() / 3]).unwrap();
    std::fs::remove_dir_all(&headers.include_dirs[0]).unwrap();
    let mut offline = Fetcher::new(cache.clone(), &manifest);
    offline.offline = true;
    let err = offline.toolkit(pin).unwrap_err().to_string();
    // The file is there with another hash: said as such, with what to do.
    assert!(err.contains("the hash differs") && err.contains("run once with network access"), "{err}");
}

/// A fake `python3 -m pip` for `--add-toolkit`: `index versions` lists, and `download` copies,
/// the wheels of the shared cache for the platform asked (`--version` for the prerequisites).
fn fake_pip_index(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("fake-python-index");
    let body = format!(
        r#"#!/bin/sh
wheels='{}'
shift 2
cmd=$1; shift
platform=; dest=; last=
while [ $# -gt 0 ]; do
    case "$1" in --platform) platform=$2; shift;; --dest) dest=$2; shift;; versions) ;; -*) ;; *) last=$1;; esac
    shift
done
case "$platform" in win*) kind=win_amd64;; *) kind=manylinux;; esac
case "$cmd" in
--version) echo 'pip 0 (a fake of the tests)';;
index)
    stem=$(echo "$last" | tr - _)
    list=$(ls "$wheels" | grep "^$stem-" | grep "$kind" | cut -d- -f2 | sort -u | tr '\n' ',' | sed 's/,$//; s/,/, /g')
    [ -n "$list" ] || {{ echo "ERROR: No matching distribution found for $last" >&2; exit 1; }}
    echo "$last ($list)"; echo "Available versions: $list";;
download)
    stem=$(echo "${{last%%==*}}" | tr - _); version=${{last##*==}}
    cp "$wheels/$stem-$version"-*"$kind"*.whl "$dest/";;
*) echo "fake pip: $cmd?" >&2; exit 2;;
esac
"#,
        cache_dir().join("wheels").display()
    );
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// `--add-toolkit` stopped at each of its steps, by SIGINT (Ctrl-C) and by SIGKILL: afterwards
/// the manifest and the crate agree, both old or both new. SIGINT leaves them agreeing at once
/// (the commit holds it off); after SIGKILL the next run makes them agree from the journal, and
/// a `--check` before it that fails says so.
#[test]
fn add_toolkit_stopped_at_each_step_leaves_manifest_and_crate_agreeing() {
    let scene = tempfile::tempdir().unwrap();
    // A cache of this scene's own (hard links of the shared one: pins and the unit cache it
    // writes stay here), and 12.5's wheels served by the fake pip from the shared one.
    let cache = scene.path().join("cache");
    cuda_sys_gen_tests::link_tree(&cache_dir(), &cache).expect("hard-linking the shared cache");
    let python = fake_pip_index(scene.path());
    let base = manifest_with(Some(&["cuda"]), &["12.4"]);
    let old_manifest = std::fs::read_to_string(base.path().join("headers-manifest.toml")).unwrap();
    let repo = scene.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let (manifest, out) = (repo.join("headers-manifest.toml"), repo.join("cuda-pfn"));
    // The local-toolkit form: 12.5's headers from the cache's include folder (its cuda.h names
    // the version; the wheels pinned are the fake pip's).
    let local_12_5 = cached_include("12.5", false);
    let run = |add: bool, check: bool, fault: Option<&str>| {
        let mut cmd = Command::new(binary());
        cmd.args(["generate", "--manifest"]).arg(&manifest).arg("--out").arg(&out).arg("--cache").arg(&cache);
        cmd.args(["--crate-name", "fixture", "--pinned-only"]);
        if add {
            cmd.arg("--add-toolkit").arg(&local_12_5);
        }
        if check {
            cmd.arg("--check");
        }
        cmd.env("PYTHON", &python).env_remove("CUDA_PATH").env_remove("CUDA_HOME");
        sigint_as_at_a_terminal(&mut cmd);
        match fault {
            Some(f) => cmd.env(codegen::fault::ENV, f),
            None => cmd.env_remove(codegen::fault::ENV),
        };
        cmd.output().unwrap()
    };
    let reset = |tree: &BTreeMap<String, String>| {
        std::fs::write(&manifest, &old_manifest).unwrap();
        write_tree(&out, tree);
        let _ = std::fs::remove_file(codegen::add_toolkit::journal_path(&manifest));
    };
    // The old crate, and the new manifest and crate of one uninterrupted run.
    std::fs::write(&manifest, &old_manifest).unwrap();
    let o = run(false, false, None);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let old = read_tree(&out);
    let o = run(true, false, None);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (new_manifest, new) = (std::fs::read_to_string(&manifest).unwrap(), read_tree(&out));
    assert!(new_manifest.contains("version = \"12.5\"") && new != old);
    let state = || {
        let m = std::fs::read_to_string(&manifest).unwrap();
        let t = read_tree(&out);
        let m = if m == old_manifest {
            "old"
        } else if m == new_manifest {
            "new"
        } else {
            "other"
        };
        let t = if t == old {
            "old"
        } else if t == new {
            "new"
        } else {
            "mixed"
        };
        (m, t)
    };
    let steps = ["pin:prepared", "pin:journal-written", "write:staged-half", "write:staged", "write:swapped"];
    let steps = steps.iter().chain(&["pin:crate-written", "pin:manifest-written"]);
    let mut seen = Vec::new();
    for step in steps {
        assert!(codegen::fault::POINTS.contains(step), "{step}");
        for signal in ["signal:int", "signal:kill"] {
            reset(&old);
            let o = run(true, false, Some(&format!("{step},{signal}")));
            let what = format!("{step} {signal}");
            let expected = if signal == "signal:int" { 2 } else { 9 };
            assert_eq!(o.status.signal(), Some(expected), "{what}: {}", text(&o.stderr));
            let after = state();
            assert!(after.1 != "mixed" && after.0 != "other", "{what}: {after:?}");
            if signal == "signal:int" {
                // Held off during the commit: both old before it, both new once it began.
                let want = if *step == "pin:prepared" { "old" } else { "new" };
                assert_eq!(after, (want, want), "{what}");
                assert!(!codegen::add_toolkit::journal_path(&manifest).exists(), "{what}: the journal was left");
            }
            let check = run(false, true, None);
            if after.0 != after.1 {
                assert!(!check.status.success(), "{what}: --check passed on {after:?}");
                assert!(text(&check.stderr).contains("an interrupted `generate --add-toolkit` left"), "{what}");
            } else {
                assert!(check.status.success(), "{what} {after:?}: {}", text(&check.stderr));
            }
            // The next run makes them agree (and says what it did where there was a journal).
            let next = run(false, false, None);
            assert!(next.status.success(), "{what}: {}", text(&next.stderr));
            let settled = state();
            assert_eq!(settled.0, settled.1, "{what}: the next run left {settled:?}");
            assert!(!codegen::add_toolkit::journal_path(&manifest).exists(), "{what}");
            let check = run(false, true, None);
            assert!(check.status.success(), "{what}: {}", text(&check.stderr));
            seen.push(format!("{what}: {after:?} -> {settled:?}"));
        }
    }
    eprintln!("{}", seen.join("\n"));
    // SIGKILL between the crate and the manifest was seen and repaired (the journal's case).
    assert!(seen.iter().any(|s| s.contains("(\"old\", \"new\") -> (\"new\", \"new\")")), "{seen:#?}");
    // The issue's own case, with the version form: Ctrl-C right after "pinned CUDA 12.5" is said.
    reset(&old);
    let mut cmd = Command::new(binary());
    cmd.args(["generate", "--manifest"]).arg(&manifest).arg("--out").arg(&out).arg("--cache").arg(&cache);
    cmd.args(["--crate-name", "fixture", "--pinned-only", "--add-toolkit", "12.5"]);
    cmd.env("PYTHON", &python).env_remove("CUDA_PATH").env_remove("CUDA_HOME").env_remove(codegen::fault::ENV);
    sigint_as_at_a_terminal(&mut cmd);
    let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let stderr = std::io::BufRead::lines(std::io::BufReader::new(child.stderr.take().unwrap()));
    for line in stderr.map_while(Result::ok) {
        if line.starts_with("pinned CUDA 12.5") {
            // SAFETY: a signal to the child this test started.
            unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
            break;
        }
    }
    let _ = child.wait().unwrap();
    assert_eq!(state(), ("new", "new"), "Ctrl-C after \"pinned\"");
    let check = run(false, true, None);
    assert!(check.status.success(), "{}", text(&check.stderr));
}
