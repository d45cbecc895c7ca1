//! `generate` on a machine that fights back: files it wrote that cannot be removed (`chattr
//! +i`), a folder with a Latin-1 name made in the crate while a run stages, every
//! `<out>.kept-N` name taken. After the swap a failure is a warning about the leftovers, never
//! "unchanged"; a leftover a run cannot clear never blocks the next run; a kept file of the
//! generator's is called that, with the system's reason.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use cuda_sys_gen_tests::*;

struct Case {
    manifest: tempfile::TempDir,
    dir: tempfile::TempDir,
}

impl Case {
    fn new() -> Case {
        Case { manifest: manifest_with(Some(&["cuda"]), &[]), dir: tempfile::tempdir().unwrap() }
    }

    fn out(&self) -> PathBuf {
        self.dir.path().join("out")
    }

    /// `generate` of the cufoo fixture's toolkits into `out`, with `env`.
    fn command(&self, toolkits: &[&str], env: &[(&str, &str)]) -> Command {
        self.command_to(&self.out(), toolkits, env)
    }

    /// The same into `out`.
    fn command_to(&self, out: &Path, toolkits: &[&str], env: &[(&str, &str)]) -> Command {
        let case = repo_root().join("tests/fixtures/cufoo");
        let mut c = Command::new(cuda_sys_gen_binary());
        // From the repository's root: the default cache is the shared target/cuda-headers.
        c.current_dir(repo_root())
            .arg("generate")
            .arg("--manifest")
            .arg(self.manifest.path().join("headers-manifest.toml"))
            .arg("--out")
            .arg(out)
            .args(["--crate-name", "fixture"])
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for t in toolkits {
            c.arg("--toolkit").arg(case.join(t));
        }
        c
    }

    fn generate(&self, toolkits: &[&str]) -> Output {
        self.command(toolkits, &[]).output().unwrap()
    }
}

fn all(o: &Output) -> String {
    format!("{}{}", text(&o.stdout), text(&o.stderr))
}

fn chattr(flag: &str, path: &Path) -> bool {
    Command::new("chattr").arg(flag).arg(path).output().is_ok_and(|o| o.status.success())
}

/// The crate's new tree is in place: it is the second run's (the 11.5 toolkit's module is in).
fn is_new(out: &Path) -> bool {
    std::fs::read_to_string(out.join("src/lib.rs")).is_ok_and(|s| s.contains("11.5") || s.contains("11050"))
}

/// A generated file made immutable (as an earlier root run, or `chattr +i`, leaves one): the
/// run replaces the crate, keeps that file aside and says it is one cuda-sys-gen wrote and why
/// it stayed (the system's error), never "what cuda-sys-gen did not write".
#[test]
fn a_generated_file_that_cannot_be_removed_is_called_the_generators_with_the_reason() {
    let case = Case::new();
    let o = case.generate(&["cuda-11.4"]);
    assert!(o.status.success(), "{}", all(&o));
    let stuck = case.out().join("Cargo.toml");
    if !chattr("+i", &stuck) {
        skip("chattr +i is not allowed here (root on a file system with the immutable flag)");
        return;
    }
    let o = case.generate(&["cuda-11.4", "cuda-11.5"]);
    let kept = case.dir.path().join("out.kept-1");
    chattr("-i", &kept.join("Cargo.toml"));
    chattr("-i", &stuck);
    let said = all(&o);
    assert!(o.status.success(), "{said}");
    assert!(is_new(&case.out()), "{said}");
    assert!(said.contains("cuda-sys-gen wrote but could not remove"), "{said}");
    assert!(said.contains("Cargo.toml") && said.contains("Operation not permitted"), "{said}");
    assert!(!said.contains("did not write"), "{said}");
    assert!(kept.join("Cargo.toml").is_file(), "{said}");
}

/// An empty folder whose name is not UTF-8 (`caf\xe9`), made in the crate while a run stages:
/// the run swaps the new crate in and ends well (the old tree with the folder kept aside),
/// never "unchanged"; the next run is not blocked.
#[test]
fn a_latin1_folder_made_while_a_run_stages_never_blocks_and_is_never_unchanged() {
    let case = Case::new();
    let o = case.generate(&["cuda-11.4"]);
    assert!(o.status.success(), "{}", all(&o));
    let child = case.command(&["cuda-11.4", "cuda-11.5"], &[("CUDA_SYS_GEN_FAULT", "write:slow")]).spawn().unwrap();
    // Once the new tree is being staged beside it, the folder appears in the crate.
    let staging = || {
        std::fs::read_dir(case.dir.path()).unwrap().flatten().any(|e| e.file_name().as_bytes().starts_with(b".out.new"))
    };
    let start = std::time::Instant::now();
    while !staging() && start.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let latin1 = case.out().join(std::ffi::OsStr::from_bytes(b"caf\xe9"));
    std::fs::create_dir(&latin1).unwrap();
    let o = child.wait_with_output().unwrap();
    let said = all(&o);
    assert!(!said.contains("is unchanged"), "{said}");
    assert!(o.status.success(), "{said}");
    assert!(is_new(&case.out()), "{said}");
    // The folder is somewhere the user sees: in the new crate, or a kept folder beside it.
    let found = case.out().join(std::ffi::OsStr::from_bytes(b"caf\xe9")).is_dir()
        || std::fs::read_dir(case.dir.path())
            .unwrap()
            .flatten()
            .any(|e| e.path().join(latin1.file_name().unwrap()).is_dir());
    assert!(found, "the folder was lost: {said}");
    // The next run is not blocked by anything the last one left.
    let o = case.generate(&["cuda-11.4"]);
    assert!(o.status.success(), "{}", all(&o));
}

/// Every `out.kept-N` name taken and a generated file that cannot be removed: the run still
/// replaces the crate and warns about the leftover it could not clear (not "unchanged"); the
/// next run warns again, and is not blocked by it.
#[test]
fn every_kept_name_taken_is_a_warning_and_never_blocks_the_next_run() {
    let case = Case::new();
    let o = case.generate(&["cuda-11.4"]);
    assert!(o.status.success(), "{}", all(&o));
    let stuck = case.out().join("Cargo.toml");
    if !chattr("+i", &stuck) {
        skip("chattr +i is not allowed here (root on a file system with the immutable flag)");
        return;
    }
    for n in 1..10_000 {
        std::fs::write(case.dir.path().join(format!("out.kept-{n}")), "").unwrap();
    }
    let o = case.generate(&["cuda-11.4", "cuda-11.5"]);
    let o2 = case.generate(&["cuda-11.4"]);
    // The immutable file, wherever it is now, made removable again.
    for e in walk(case.dir.path()) {
        if e.file_name().is_some_and(|n| n == "Cargo.toml") {
            chattr("-i", &e);
        }
    }
    let said = all(&o);
    assert!(!said.contains("is unchanged"), "{said}");
    assert!(o.status.success(), "{said}");
    assert!(said.contains("warning: ") && said.contains("could not be cleared"), "{said}");
    assert!(said.contains("no free name out.kept-N"), "{said}");
    let said2 = all(&o2);
    assert!(o2.status.success(), "the next run was blocked: {said2}");
    assert!(said2.contains("could not be cleared"), "{said2}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(walk(&p));
        }
        out.push(p);
    }
    out
}

/// Two users, a cache the second cannot write: the first user's stand-in folder in the
/// temporary folder (0755, theirs) does not stop the second, whose run gets a folder of its
/// own. Run as `nobody` through `setpriv` (root only; elsewhere SKIPPED).
#[test]
fn a_second_user_with_a_read_only_cache_gets_stand_ins_of_their_own() {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } != 0 || !Path::new("/usr/bin/setpriv").exists() {
        skip("the second user is made with setpriv, as root");
        return;
    }
    let case = Case::new();
    let open = |p: &Path, mode: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    open(case.manifest.path(), 0o755);
    open(&case.manifest.path().join("headers-manifest.toml"), 0o644);
    open(case.dir.path(), 0o1777);
    let tmp = case.dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    open(&tmp, 0o1777);
    // The first user's shared folder, as cuda-sys-gen before per-user folders made it.
    std::fs::create_dir(tmp.join("cuda-sys-gen-standins")).unwrap();
    open(&tmp.join("cuda-sys-gen-standins"), 0o755);
    // A cache the second user can read and not write: the shared one (root's, 0755).
    let mut c = Command::new("/usr/bin/setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]);
    let inner = case.command(&["cuda-11.4"], &[("TMPDIR", tmp.to_str().unwrap())]);
    c.arg(inner.get_program()).args(inner.get_args());
    c.arg("--cache").arg(cache_dir()).arg("--offline").env("TMPDIR", &tmp).env("HOME", "/nonexistent");
    let o = c.stdin(Stdio::null()).output().unwrap();
    let said = all(&o);
    assert!(o.status.success(), "{said}");
    assert!(case.out().join("src/lib.rs").is_file(), "{said}");
}

/// An `--out` whose name leaves no room for the folders written beside it (`.<name>.new-...`)
/// is refused before any work, by its length, not after the work blaming `.`.
#[test]
fn an_out_name_near_255_bytes_is_refused_before_any_work() {
    let case = Case::new();
    let long = "c".repeat(240);
    let out = case.dir.path().join(&long);
    let cache = case.dir.path().join("fresh-cache");
    let mut c = case.command_to(&out, &["cuda-11.4"], &[]);
    c.arg("--cache").arg(&cache);
    let o = c.output().unwrap();
    let said = all(&o);
    assert_eq!(o.status.code(), Some(1), "{said}");
    assert!(said.contains("240 bytes long") && said.contains("shorter name"), "{said}");
    assert!(!cache.exists() && !out.exists(), "work was done before the refusal: {said}");
}

/// Two output folders whose names differ only in a byte that is not UTF-8 (`out\xfd`,
/// `out\xff`): a run for one never takes the other's killed run's leftovers (named after the
/// other's bytes, or as a lossy conversion would have named them) for its own.
#[test]
fn scratch_names_come_from_the_bytes_of_the_output_folders_name() {
    let case = Case::new();
    let parent = case.dir.path();
    // pid 2147483632 is above Linux's pid_max: a killed run's, never a live one's.
    let theirs: Vec<PathBuf> = [&b".out%FF.new-2147483632-7"[..], ".out\u{FFFD}.new-2147483632-7".as_bytes()]
        .iter()
        .map(|n| parent.join(std::ffi::OsStr::from_bytes(n)))
        .collect();
    for t in &theirs {
        std::fs::create_dir(t).unwrap();
        std::fs::write(t.join("note.txt"), "out\\xff's").unwrap();
    }
    let mine = parent.join(std::ffi::OsStr::from_bytes(b"out\xfd"));
    let mut c = case.command_to(&mine, &["cuda-11.4"], &[]);
    let o = c.output().unwrap();
    let said = all(&o);
    assert!(o.status.success(), "{said}");
    assert!(mine.join("src/lib.rs").is_file(), "{said}");
    for t in &theirs {
        assert!(t.join("note.txt").is_file(), "{} was taken: {said}", t.display());
    }
    assert!(!said.contains("moved to"), "{said}");
}

/// A crate that is a mount point is refused (it cannot be renamed); the folder the refusal
/// offers instead passes the same check: following the advice never leads back to a refusal.
#[test]
fn a_refusal_for_a_mounted_crate_offers_only_a_folder_that_passes() {
    let case = Case::new();
    let source = case.dir.path().join("source");
    let mut c = case.command_to(&source, &["cuda-11.4"], &[]);
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", all(&o));
    let mp = case.dir.path().join("mp");
    std::fs::create_dir(&mp).unwrap();
    if !Command::new("mount").arg("--bind").arg(&source).arg(&mp).output().is_ok_and(|o| o.status.success()) {
        skip("the bind mount: mount --bind is not allowed here");
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(mp.clone());
    let mut out = mp.clone();
    for round in 0..4 {
        let mut c = case.command_to(&out, &["cuda-11.4"], &[]);
        let o = c.output().unwrap();
        let said = all(&o);
        if o.status.success() {
            assert!(round > 0, "the mount point itself was accepted: {said}");
            return;
        }
        assert!(said.contains("refusing to replace"), "round {round}: {said}");
        let Some(offered) = said.split("such as `").nth(1).and_then(|r| r.split('`').next()) else {
            // No folder offered: no circle.
            return;
        };
        assert_ne!(Path::new(offered), out, "round {round}: the refusal offers the folder it refused: {said}");
        out = if Path::new(offered).is_absolute() { PathBuf::from(offered) } else { repo_root().join(offered) };
        assert!(round == 0, "round {round}: the offered folder was refused in turn: {said}");
    }
}

/// `--add-toolkit`'s manifest write keeps what the manifest is to others: a 0664 file of
/// another user and group stays so; a symbolic link stays a link and its shared target gets
/// the pin; a hard link is not broken. Each way of writing is said.
#[test]
fn the_manifest_keeps_its_mode_owner_and_links() {
    use codegen::add_toolkit::journal::write_manifest;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    // Mode and owner (owner: as root only).
    let plain = dir.path().join("headers-manifest.toml");
    std::fs::write(&plain, "old\n").unwrap();
    std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o664)).unwrap();
    // SAFETY: getuid has no preconditions.
    let root = unsafe { libc::getuid() } == 0;
    if root {
        std::os::unix::fs::chown(&plain, Some(1000), Some(50)).unwrap();
    }
    let said = format!("{:?}", write_manifest(&plain, "new\n").unwrap());
    let meta = std::fs::metadata(&plain).unwrap();
    assert_eq!(std::fs::read_to_string(&plain).unwrap(), "new\n");
    assert_eq!(meta.mode() & 0o7777, 0o664, "{said}");
    if root {
        assert_eq!((meta.uid(), meta.gid()), (1000, 50), "{said}");
    }
    // A symbolic link to a shared manifest.
    let shared = dir.path().join("shared.toml");
    std::fs::write(&shared, "old\n").unwrap();
    let link = dir.path().join("link.toml");
    std::os::unix::fs::symlink(&shared, &link).unwrap();
    let said = format!("{:?}", write_manifest(&link, "new\n").unwrap());
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced: {said}");
    assert_eq!(std::fs::read_to_string(&shared).unwrap(), "new\n", "{said}");
    assert!(said.contains("symbolic link") && said.contains("shared.toml"), "{said}");
    // A hard link.
    let a = dir.path().join("a.toml");
    let b = dir.path().join("b.toml");
    std::fs::write(&a, "old\n").unwrap();
    std::fs::hard_link(&a, &b).unwrap();
    let said = format!("{:?}", write_manifest(&a, "new\n").unwrap());
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "new\n", "the hard link was broken: {said}");
    assert_eq!(std::fs::metadata(&a).unwrap().ino(), std::fs::metadata(&b).unwrap().ino(), "{said}");
    assert!(said.contains("hard links"), "{said}");
}

/// A disk that fills while the new crate is staged (a 256 KiB tmpfs): the run fails naming
/// the error, and leaves no half-written generated file behind, kept aside or not (a file
/// cut short, 0 bytes on the first page, is this run's own and removed).
#[test]
fn a_full_disk_while_staging_leaves_no_half_file() {
    let case = Case::new();
    let mnt = case.dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = Command::new("mount").args(["-t", "tmpfs", "-o", "size=256k"]).arg("tmpfs").arg(&mnt).output();
    if !mounted.is_ok_and(|o| o.status.success()) {
        skip("a small tmpfs: mount -t tmpfs is not allowed here");
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(mnt.clone());
    let o = case.command_to(&mnt.join("crate"), &["cuda-11.4", "cuda-11.5"], &[]).output().unwrap();
    let said = all(&o);
    assert_eq!(o.status.code(), Some(1), "the crate fit in 256 KiB: make the file system smaller: {said}");
    assert!(said.contains("No space left on device"), "{said}");
    let left = walk(&mnt);
    assert!(left.iter().all(|p| p.is_dir()), "files were left: {left:?}\n{said}");
}

/// A folder of the user's made, while a run stages, where the run writes its last file: the
/// run fails before its swap (the crate unchanged), and its error names the `<out>.kept-N`
/// that holds what it could not remove (the user's file), never leaving it unnamed.
#[test]
fn a_failure_before_the_swap_names_the_folder_that_keeps_what_stayed() {
    let case = Case::new();
    let o = case.generate(&["cuda-11.4"]);
    assert!(o.status.success(), "{}", all(&o));
    let mut files = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        for e in std::fs::read_dir(case.out().join(&rel)).unwrap().flatten() {
            let rel = rel.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                stack.push(rel)
            } else {
                files.push(rel)
            }
        }
    }
    // The run writes its files in this order (a sorted map of `/`-separated names).
    files.sort_by_key(|p| p.to_string_lossy().into_owned());
    let last = files.pop().unwrap();
    let before = std::fs::read(case.out().join("src/lib.rs")).unwrap();
    let mut child = case.command(&["cuda-11.4", "cuda-11.5"], &[("CUDA_SYS_GEN_FAULT", "write:slow")]).spawn().unwrap();
    let start = std::time::Instant::now();
    let staged = loop {
        let found = std::fs::read_dir(case.dir.path())
            .unwrap()
            .flatten()
            .find(|e| e.file_name().as_bytes().starts_with(b".out.new"));
        if let Some(e) = found {
            break e.path();
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the run ended ({status}) before a staged tree was seen");
        }
        assert!(start.elapsed().as_secs() < 60, "no staged tree appeared");
        std::thread::sleep(std::time::Duration::from_millis(1));
    };
    std::fs::create_dir_all(staged.join(&last)).unwrap();
    std::fs::write(staged.join(&last).join("mine.txt"), "the user's\n").unwrap();
    let o = child.wait_with_output().unwrap();
    let said = all(&o);
    assert!(!o.status.success(), "{said}");
    let kept = case.dir.path().join("out.kept-1");
    assert!(said.contains(&kept.display().to_string()), "the kept folder is not named: {said}");
    assert!(kept.join(&last).join("mine.txt").is_file(), "{said}");
    assert_eq!(std::fs::read(case.out().join("src/lib.rs")).unwrap(), before, "the crate changed: {said}");
}
