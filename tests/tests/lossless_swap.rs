//! Nothing of the user's is lost when the output folder is swapped, whatever stops a run: a
//! run killed at each of the writer's points (`CUDA_SYS_GEN_FAULT`) leaves a scratch folder
//! beside the crate; a file of the user's that lands in it (a file saved into the crate folder
//! while it was being swapped lands in the old tree) is moved to a visible `<out>.kept-N` by
//! the next run, which removes only the generator's own files and names the folder in its
//! summary.

use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Command, Output};

use cuda_sys_gen_tests::*;

struct Scene {
    manifest: tempfile::TempDir,
    toolkit: PathBuf,
    dir: tempfile::TempDir,
}

impl Scene {
    fn new() -> Scene {
        let manifest = manifest_with(Some(&["cuda"]), &[]);
        let toolkit = repo_root().join("tests/fixtures/internal-guard/cuda-12.9");
        Scene { manifest, toolkit, dir: tempfile::tempdir().unwrap() }
    }

    fn out(&self) -> PathBuf {
        self.dir.path().join("out")
    }

    /// `generate` with `command` in every file's header (so that two commands are two crates),
    /// aborted at `fault` when given.
    fn run(&self, command: &str, fault: Option<&str>) -> Output {
        let mut cmd = Command::new(cuda_sys_gen_binary());
        cmd.args(["generate", "--manifest"]).arg(self.manifest.path().join("headers-manifest.toml"));
        cmd.arg("--out").arg(self.out()).arg("--cache").arg(cache_dir()).arg("--toolkit").arg(&self.toolkit);
        cmd.args(["--crate-name", "small", "--regenerate-command", command]);
        cmd.env_remove("CUDA_PATH").env_remove("CUDA_HOME");
        match fault {
            Some(f) => cmd.env(codegen::fault::ENV, f),
            None => cmd.env_remove(codegen::fault::ENV),
        };
        cmd.output().unwrap()
    }

    /// The names beside the crate: its scratch folders and kept folders.
    fn beside(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != "out")
            .collect();
        v.sort();
        v
    }
}

fn ok(o: &Output, what: &str) -> String {
    assert!(o.status.success(), "{what}: {}", text(&o.stderr));
    text(&o.stdout)
}

#[test]
fn a_users_file_in_a_killed_runs_leftover_is_kept_and_named() {
    let cases = [
        ("write:staged-half", ".out.new-"),
        ("write:staged", ".out.new-"),
        // The new tree is in place; the old one, in the scratch folder, not yet cleared.
        ("write:swapped", ".out.new-"),
        ("write:no-exchange,write:swapped", ".out.old-"),
    ];
    for (round, (fault, leftover_kind)) in cases.into_iter().enumerate() {
        let scene = Scene::new();
        ok(&scene.run("first", None), "the first run");
        let o = scene.run("second", Some(fault));
        assert_eq!(o.status.signal(), Some(libc::SIGABRT), "{fault}: {}", text(&o.stderr));
        let beside = scene.beside();
        let leftover = beside
            .iter()
            .find(|n| n.starts_with(leftover_kind))
            .unwrap_or_else(|| panic!("{fault}: no {leftover_kind}* beside the crate: {beside:?}"));
        // What a user's editor or shell saved into the folder it had open.
        let at = scene.dir.path().join(leftover);
        std::fs::write(at.join("note.txt"), "mine").unwrap();
        std::fs::create_dir_all(at.join("drafts")).unwrap();
        let summary = ok(&scene.run("third", None), fault);
        let kept = scene.dir.path().join("out.kept-1");
        assert_eq!(scene.beside(), ["out.kept-1"], "{fault}: {summary}");
        assert_eq!(std::fs::read_to_string(kept.join("note.txt")).unwrap(), "mine", "{fault}");
        assert!(kept.join("drafts").is_dir(), "{fault}");
        // Only the user's things were kept: every generator's file was removed.
        let left = read_tree(&kept);
        assert_eq!(left.keys().collect::<Vec<_>>(), ["note.txt"], "{fault}");
        assert!(summary.contains(&format!("moved to {}", kept.display())), "{fault}: {summary}");
        assert!(summary.contains("interrupted runs left beside it"), "{fault}: {summary}");
        // The crate is the third run's.
        let cargo = std::fs::read_to_string(scene.out().join("Cargo.toml")).unwrap();
        assert!(cargo.contains("Regenerate with `third`"), "{round}: {cargo}");
    }
}

/// An empty folder of the user's inside the crate stays there, and the summary counts it.
#[test]
fn an_empty_folder_of_the_users_stays_in_the_crate_and_is_counted() {
    let scene = Scene::new();
    ok(&scene.run("first", None), "the first run");
    std::fs::create_dir_all(scene.out().join("notes/old")).unwrap();
    let summary = ok(&scene.run("second", None), "the second run");
    assert!(scene.out().join("notes/old").is_dir(), "{summary}");
    assert!(summary.contains("kept 2 empty folder(s) of yours in it: notes, notes/old"), "{summary}");
    assert!(scene.beside().is_empty(), "{:?}", scene.beside());
}

/// A hand edit in a generated file is replaced, as documented, and the summary names it.
#[test]
fn a_replaced_hand_edit_is_named_in_the_summary() {
    let scene = Scene::new();
    ok(&scene.run("first", None), "the first run");
    let lib = scene.out().join("src/lib.rs");
    let edited = format!("{}\n// a note of mine\n", std::fs::read_to_string(&lib).unwrap());
    std::fs::write(&lib, edited).unwrap();
    let summary = ok(&scene.run("second", None), "the second run");
    assert!(summary.contains("replaced a hand edit in src/lib.rs"), "{summary}");
    assert_eq!(summary.matches("replaced a hand edit").count(), 1, "{summary}");
    // A run that only regenerates names none.
    let summary = ok(&scene.run("third", None), "the third run");
    assert!(!summary.contains("hand edit"), "{summary}");
}
