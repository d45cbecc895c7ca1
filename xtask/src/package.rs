//! `cargo xtask package`: the packages a user would get from crates.io, packaged and used.
//!
//! `cargo package` builds each of the four published packages from its `.crate` file, in the
//! order they depend on each other (the types crate first: `cuda-driver-pfn` pins its exact
//! version; the generator library before the command line). Cargo verifies a package that
//! depends on another of the same run against a local registry of the freshly packaged ones,
//! so a file missing from a package, or a path that leads out of it, fails here and not on
//! crates.io.
//!
//! Then a crate outside the workspace depends on the generated crate as unpacked from its
//! `.crate` file (the types crate patched in the same way), builds with every feature and
//! runs: what a user of the published crate compiles, not the folders of this repository.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

/// The published packages, each after the packages it depends on.
const PACKAGES: [&str; 4] = ["cuda-driver-pfn-types", "cuda-driver-pfn", "cuda-sys-gen-codegen", "cuda-sys-gen"];

pub fn package(root: &Path) -> Result<()> {
    // Where cargo writes: CARGO_TARGET_DIR where it is set (as cargo reads it), else target/.
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let mut cmd = Command::new(cargo());
    cmd.current_dir(root).args(["package", "--allow-dirty", "--locked"]);
    for p in PACKAGES {
        cmd.args(["-p", p]);
    }
    eprintln!("package: cargo package {}", PACKAGES.map(|p| format!("-p {p}")).join(" "));
    run(&mut cmd, "cargo package")?;

    let unpacked = target.join("package-check");
    if unpacked.exists() {
        fs::remove_dir_all(&unpacked).with_context(|| format!("could not empty {}", unpacked.display()))?;
    }
    fs::create_dir_all(&unpacked).with_context(|| format!("could not create {}", unpacked.display()))?;
    let mut dirs = Vec::new();
    let mut version = String::new();
    for name in ["cuda-driver-pfn-types", "cuda-driver-pfn"] {
        let (file, v) = packaged(&target.join("package"), name)?;
        run(Command::new("tar").arg("-xzf").arg(&file).arg("-C").arg(&unpacked), "tar")?;
        dirs.push(unpacked.join(format!("{name}-{v}")));
        version = v;
    }
    let user = unpacked.join("user");
    fs::create_dir_all(user.join("src"))?;
    fs::write(
        user.join("Cargo.toml"),
        format!(
            "[package]\nname = \"packaged-user\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dependencies]\ncuda-driver-pfn = {{ version = \"={v}\", features = [\"api\", \"newest\", \"aliases\", \"visit\", \"runtime\", \"gl\", \"egl\", \"vdpau\"] }}\n\n\
             # The packaged files, as crates.io would serve them.\n[patch.crates-io]\n\
             cuda-driver-pfn-types = {{ path = {types:?} }}\ncuda-driver-pfn = {{ path = {pfn:?} }}\n\n[workspace]\n",
            v = version,
            types = dirs[0].display().to_string(),
            pfn = dirs[1].display().to_string(),
        ),
    )?;
    fs::write(
        user.join("src/main.rs"),
        "use cuda_driver_pfn::{entries, Entry};\n\n\
         fn main() {\n\
         \x20   let _: <entries::cuCtxCreate_v12050 as Entry>::Fn;\n\
         \x20   println!(\"{} {} {}\", entries::cuCtxCreate_v12050::INFO.exported, entries::cuCtxCreate_v12050::VERSION, cuda_driver_pfn::registry::ENTRIES.len());\n\
         }\n",
    )?;
    let out = Command::new(cargo())
        .current_dir(&user)
        .args(["run", "--quiet", "--target-dir"])
        .arg(target.join("package-check-target"))
        .output()
        .context("could not run cargo for the crate that uses the packaged files")?;
    if !out.status.success() {
        bail!(
            "a crate outside the workspace does not build against the packaged cuda-driver-pfn ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let said = String::from_utf8_lossy(&out.stdout);
    let mut words = said.split_whitespace();
    if words.next() != Some("cuCtxCreate_v4") || words.next() != Some("12050") {
        bail!("the crate built against the packaged files printed {said:?}, not cuCtxCreate_v4 12050 ...");
    }
    eprintln!("package: a crate outside the workspace built and ran against the packaged files: {}", said.trim());
    Ok(())
}

/// The `.crate` file `cargo package` wrote for `name`, and its version: the one file of that
/// package in `dir` (cargo writes `<name>-<version>.crate`; the folder is emptied of older ones
/// by no one, so more than one is an error that says which).
fn packaged(dir: &Path, name: &str) -> Result<(PathBuf, String)> {
    let prefix = format!("{name}-");
    let mut found = Vec::new();
    for e in fs::read_dir(dir).with_context(|| format!("could not list {}", dir.display()))? {
        let file = e?.file_name().to_string_lossy().into_owned();
        let Some(v) = file.strip_prefix(&prefix).and_then(|r| r.strip_suffix(".crate")) else { continue };
        // `cuda-driver-pfn-` also begins `cuda-driver-pfn-types-...`: a version starts with a digit.
        if v.starts_with(|c: char| c.is_ascii_digit()) {
            found.push((dir.join(&file), v.to_owned()));
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => bail!("cargo package wrote no {name}-<version>.crate into {}", dir.display()),
        _ => bail!(
            "{} holds {} packages of {name} ({}): remove the older ones and run again",
            dir.display(),
            found.len(),
            found.iter().map(|(_, v)| v.as_str()).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

fn run(cmd: &mut Command, what: &str) -> Result<()> {
    let status = cmd.status().with_context(|| format!("could not run {what}"))?;
    if !status.success() {
        bail!("{what} failed ({status}); its output is above");
    }
    Ok(())
}
