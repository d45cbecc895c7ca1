//! `cargo xtask package`: the packages a user would get from crates.io, packaged and used.
//!
//! `cargo package --no-verify` writes the `.crate` file of each of the five published packages
//! (the types crate, the crate, the generator library, the command line), checking their
//! manifests and file lists. Each file is then unpacked under `target/package-check/`, and a
//! crate outside the workspace depends on all five as unpacked, each one's dependencies on the
//! others patched to the unpacked copies as crates.io would resolve them. Building it compiles
//! every package from its packaged files alone, so a file missing from a package, or a path
//! that leads out of it, fails here and not on crates.io; running it uses the generated crate
//! as a user would.
//!
//! Cargo's own verification is not used: it resolves the packages against a registry under
//! `target/package/` whose unpacked copies cargo keeps by name and version in its home, so a
//! second run with the same version could build the first run's files.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

/// The published packages (cargo's package names), and the crate name each is used by.
const PACKAGES: [(&str, &str); 5] = [
    ("cuda-driver-pfn-types", "cuda_driver_pfn_types"),
    ("cuda-driver-pfn", "cuda_driver_pfn"),
    ("cuda-sys-gen-codegen", "codegen"),
    ("cuda-sys-gen-min-driver", "min_driver"),
    ("cuda-sys-gen", "cuda_sys_gen"),
];

pub fn package(root: &Path) -> Result<()> {
    // Where cargo writes: CARGO_TARGET_DIR where it is set (as cargo reads it), else target/.
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let packaged_dir = target.join("package");
    // `.crate` files of earlier runs (another version) would make the one of this run ambiguous.
    // They are cargo's output in the build folder, written at this command's request.
    for (name, _) in PACKAGES {
        for (file, _) in crate_files(&packaged_dir, name)? {
            fs::remove_file(&file).with_context(|| format!("could not remove {}", file.display()))?;
        }
    }
    let mut cmd = Command::new(cargo());
    cmd.current_dir(root).args(["package", "--no-verify", "--allow-dirty", "--locked"]);
    for (name, _) in PACKAGES {
        cmd.args(["-p", name]);
    }
    eprintln!("package: cargo package --no-verify {}", PACKAGES.map(|(p, _)| format!("-p {p}")).join(" "));
    run(&mut cmd, "cargo package")?;

    let unpacked = target.join("package-check");
    if unpacked.exists() {
        fs::remove_dir_all(&unpacked).with_context(|| format!("could not empty {}", unpacked.display()))?;
    }
    fs::create_dir_all(&unpacked).with_context(|| format!("could not create {}", unpacked.display()))?;
    let mut deps = String::new();
    let mut patches = String::new();
    for (name, _) in PACKAGES {
        let mut found = crate_files(&packaged_dir, name)?;
        let (file, version) = match found.len() {
            1 => found.remove(0),
            n => bail!("cargo package left {n} packages of {name} in {}, not one", packaged_dir.display()),
        };
        run(Command::new("tar").arg("-xzf").arg(&file).arg("-C").arg(&unpacked), "tar")?;
        let dir = unpacked.join(format!("{name}-{version}"));
        let features = if name == "cuda-driver-pfn" {
            r#", features = ["api", "newest", "aliases", "visit", "runtime", "gl", "egl", "vdpau", "standin"]"#
        } else {
            ""
        };
        deps.push_str(&format!("{name} = {{ version = \"={version}\"{features} }}\n"));
        patches.push_str(&format!("{name} = {{ path = {:?} }}\n", dir.display().to_string()));
    }
    let user = unpacked.join("user");
    fs::create_dir_all(user.join("src"))?;
    fs::write(
        user.join("Cargo.toml"),
        format!(
            "[package]\nname = \"packaged-user\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n\
             [dependencies]\n{deps}\n# The packaged files, as crates.io would serve them.\n[patch.crates-io]\n{patches}\n[workspace]\n"
        ),
    )?;
    let uses: String = PACKAGES.iter().map(|(_, krate)| format!("use {krate} as _;\n")).collect();
    fs::write(
        user.join("src/main.rs"),
        format!(
            "{uses}use cuda_driver_pfn::{{entries, Entry}};\n\n\
             fn main() {{\n\
             \x20   let _: <entries::cuCtxCreate_v12050 as Entry>::Fn;\n\
             \x20   println!(\"{{}} {{}} {{}}\", entries::cuCtxCreate_v12050::INFO.exported, entries::cuCtxCreate_v12050::VERSION, cuda_driver_pfn::registry::ENTRIES.len());\n\
             }}\n"
        ),
    )?;
    eprintln!("package: building a crate outside the workspace against the packaged files");
    let out = Command::new(cargo())
        .current_dir(&user)
        .args(["run", "--quiet", "--target-dir"])
        .arg(target.join("package-check-target"))
        .output()
        .context("could not run cargo for the crate that uses the packaged files")?;
    if !out.status.success() {
        bail!(
            "a crate outside the workspace does not build against the packaged files ({}):\n{}",
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

/// The `.crate` files of package `name` in `dir`, with their versions (cargo writes
/// `<name>-<version>.crate`).
fn crate_files(dir: &Path, name: &str) -> Result<Vec<(PathBuf, String)>> {
    let prefix = format!("{name}-");
    let mut found = Vec::new();
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(found),
        Err(e) => return Err(e).with_context(|| format!("could not list {}", dir.display())),
    };
    for e in entries {
        let file = e?.file_name().to_string_lossy().into_owned();
        let Some(v) = file.strip_prefix(&prefix).and_then(|r| r.strip_suffix(".crate")) else { continue };
        // `cuda-driver-pfn-` also begins `cuda-driver-pfn-types-...`: a version starts with a digit.
        if v.starts_with(|c: char| c.is_ascii_digit()) {
            found.push((dir.join(&file), v.to_owned()));
        }
    }
    Ok(found)
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
