//! Every lookup of the crate against NVIDIA's real drivers of CUDA 10.1 to 12.5
//! (`tests/real-drivers.toml`, fetched from Debian's archive by `cuda_sys_gen_tests::drivers`).
//! `cuGetProcAddress` and `cuDriverGetVersion` answer without a GPU, so this runs anywhere.
//!
//! For each driver, in a child process that loads it by its soname:
//! - `conformance check`: every registry entry resolves to exactly the library's export of its
//!   name, or is refused with a typed error; none the library exports is refused ("lost");
//!   the entries refused as newer than the driver are exactly those above its version;
//! - `conformance c-names`: every `api::` function calls its entry's export, or returns
//!   the code of its lookup error (`api::code_of`) with that error from `api::error_of`;
//! - the doctor: `WRONG ABI: 0`, and the same count of resolved entries;
//! - `conformance probe`: the driver's raw answers to a set of requests (a version above its
//!   own, below a first ABI, an unknown name, the flags, a NULL status), which the fake
//!   driver must give alike, configured as that driver.
//!
//! The table of the results is docs/real-drivers.md's (`CUDA_SYS_GEN_BLESS=1` rewrites it).
//! Without apt-get or dpkg-deb the test prints SKIPPED and why; with `CI=true` it fails instead.

#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use cuda_driver_pfn::{visit_entries, Entry, EntryVisitor, ENTRIES};
use cuda_sys_gen_tests::conformance::probe;
use cuda_sys_gen_tests::drivers::{self, Fetched};
use cuda_sys_gen_tests::fake::{pointer_for, Fake, Flavour};
use cuda_sys_gen_tests::{repo_root, text};

const BEGIN: &str = "<!-- matrix:begin (tests/tests/real_drivers.rs writes this table) -->";
const END: &str = "<!-- matrix:end -->";

/// Runs `program args` with the driver on `LD_LIBRARY_PATH`; its exit code and output.
fn run(driver: &Fetched, program: &mut Command) -> (Option<i32>, String) {
    let out = program.env("LD_LIBRARY_PATH", driver.library_path()).output().expect("start a child process");
    (out.status.code(), format!("{}{}", text(&out.stdout), text(&out.stderr)))
}

fn conformance(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_conformance"));
    c.args(args);
    c
}

/// The doctor example, built once.
fn doctor() -> std::path::PathBuf {
    cuda_sys_gen_tests::doctor_binary().to_owned()
}

/// One driver's row of the table.
#[derive(Default)]
struct Row {
    verdicts: BTreeMap<String, usize>,
    c_names: String,
    via: String,
    /// The markers (`cuInit_v2000`) this driver serves.
    served: BTreeSet<String>,
}

/// Every marker's `Entry::MIN_DRIVER`, by typedef name.
fn min_drivers() -> BTreeMap<&'static str, u32> {
    struct V(BTreeMap<&'static str, u32>);
    impl EntryVisitor for V {
        fn visit<E: Entry>(&mut self) {
            self.0.insert(E::INFO.pfn, E::MIN_DRIVER);
        }
    }
    let mut v = V(BTreeMap::new());
    visit_entries(&mut v);
    v.0
}

fn check_driver(driver: &Fetched, doctor: &Path, failures: &mut Vec<String>) -> Row {
    let name = &driver.pin.name;
    let expected = driver.pin.cuda_version().expect("checked on load");
    let mut fail = |what: String| failures.push(format!("driver {name}: {what}"));
    let dir = tempfile::tempdir().unwrap();

    // Every registry entry, judged.
    let (code, out) = run(driver, &mut conformance(&["check", &dir.path().display().to_string()]));
    if code != Some(0) {
        fail(format!("conformance check exited {code:?}:\n{out}"));
    }
    let first = out.lines().next().unwrap_or_default().to_owned();
    if !first.contains(&format!("(version {expected})")) {
        fail(format!("the driver says another version than CUDA {} ({expected}): {first}", driver.pin.cuda));
    }
    let mut row = Row { via: first.rsplit(", ").next().unwrap_or_default().to_owned(), ..Row::default() };
    let tsv = std::fs::read_to_string(dir.path().join("conformance.tsv")).unwrap_or_default();
    let floors = min_drivers();
    for line in tsv.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (pfn, version, verdict) = (cols[0], cols[2].parse::<u32>().unwrap_or(0), cols[4]);
        let kind = verdict.split(':').next().unwrap_or_default().to_owned();
        let info = ENTRIES.iter().find(|e| e.pfn == pfn).expect("a registry entry");
        // A driver lacks an entry exactly below its measured floor (the manifest's
        // [[driver_floor]], each marker's MIN_DRIVER): never at or above it.
        let floor = floors.get(pfn).copied().unwrap_or(version);
        match kind.as_str() {
            "missing" if floor <= expected => fail(format!(
                "{pfn} is missing although its floor is CUDA {floor}: add a [[driver_floor]] to headers-manifest.toml \
                 with this driver as evidence: {verdict}"
            )),
            "matched" if floor > expected => {
                fail(format!("{pfn} is served, yet its [[driver_floor]] says CUDA {floor}: lower the rule"))
            }
            "matched" => {
                row.served.insert(pfn.strip_prefix("PFN_").unwrap_or(pfn).to_owned());
            }
            _ => {}
        }
        // Refused as newer exactly when newer; never an entry the library serves.
        match kind.as_str() {
            "mismatched" | "lost" => fail(format!("{pfn}: {verdict}")),
            "not in this driver" if version <= expected => fail(format!("{pfn} refused as newer: {verdict}")),
            _ if version > expected && info.platforms.here() && kind != "not in this driver" => {
                fail(format!("{pfn} is newer than the driver, yet {verdict}"))
            }
            _ => {}
        }
        *row.verdicts.entry(kind).or_default() += 1;
    }
    if row.verdicts.values().sum::<usize>() != ENTRIES.len() {
        fail(format!(
            "conformance.tsv has {} rows, the registry {}",
            row.verdicts.values().sum::<usize>(),
            ENTRIES.len()
        ));
    }

    // The C-name functions.
    let (code, out) = run(driver, &mut conformance(&["c-names"]));
    if code != Some(0) {
        fail(format!("conformance c-names exited {code:?}:\n{out}"));
    }
    row.c_names = out.lines().next().unwrap_or_default().to_owned();

    // The doctor agrees, and finds no wrong ABI.
    let (code, out) = run(driver, &mut Command::new(doctor));
    let matched = row.verdicts.get("matched").copied().unwrap_or(0);
    if code != Some(0) || !out.contains("WRONG ABI: 0") {
        fail(format!("the doctor exited {code:?}:\n{}", out.lines().rev().take(12).collect::<Vec<_>>().join("\n")));
    }
    let resolve = format!("{matched} of {} entries resolve", ENTRIES.len());
    if !out.contains(&resolve) {
        fail(format!("the doctor does not say `{resolve}`"));
    }

    // The fake answers the probe as the real driver does.
    let (_, real) = run(driver, &mut conformance(&["probe"]));
    let real: Vec<String> = real.lines().skip(1).map(str::to_owned).collect();
    if let Err(why) = fake_answers_alike(expected, &real) {
        fail(why);
    }
    row
}

/// The fake, configured as a driver of `version` with every registry entry up to it, answers
/// the probe with `real`'s lines (nothing to compare for a driver without lookup functions).
fn fake_answers_alike(version: u32, real: &[String]) -> Result<(), String> {
    if real.is_empty() {
        return Ok(());
    }
    let flavour = if real.iter().any(|l| l.starts_with("v2 ")) { Flavour::Full } else { Flavour::V1Only };
    let fake = Fake::new(flavour);
    fake.set_driver_version(version);
    for (i, e) in ENTRIES.iter().enumerate().filter(|(_, e)| e.version <= version && e.platforms.here()) {
        fake.add_abi(e.symbol, e.version, e.variant.is_some(), pointer_for(i));
    }
    // SAFETY: the fake, already loaded.
    let lib = unsafe { libloading::Library::new(fake.path()) }.unwrap();
    let name_of = |p: usize| {
        (p.checked_sub(pointer_for(0)).map(|d| d / 0x10))
            .and_then(|i| ENTRIES.get(i))
            .map_or_else(|| format!("?{p:#x}"), |e| e.pfn.to_owned())
    };
    let faked = probe(&lib, version, &name_of);
    let differ: Vec<String> = real
        .iter()
        .zip(&faked)
        .filter(|(r, f)| r != f)
        .map(|(r, f)| format!("the fake answers otherwise:\n  real: {r}\n  fake: {f}"))
        .collect();
    if real.len() != faked.len() {
        return Err(format!("the probe made {} requests of the driver and {} of the fake", real.len(), faked.len()));
    }
    if differ.is_empty() {
        Ok(())
    } else {
        Err(differ.join("\n"))
    }
}

/// The GPU machine's driver (580.159.04, CUDA 13.0), as `conformance probe` printed it there
/// (`cargo xtask device-build`, then `bash .device-bin/run-all.sh`): the first driver that
/// refuses a version above its own. The fake must answer as it did, here, without it.
#[test]
fn the_fake_answers_as_the_cuda_13_driver_did() {
    let path = repo_root().join("tests").join("real-drivers-580-probe.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let version: u32 = lines.next().and_then(|l| l.strip_prefix("driver ")?.parse().ok()).expect("a `driver N` line");
    assert_eq!(version, 13000);
    let real: Vec<String> = lines.map(str::to_owned).collect();
    assert!(real.iter().any(|l| l.contains("result 1 status unwritten")), "the file lost its refusals");
    fake_answers_alike(version, &real).unwrap_or_else(|e| panic!("{e}"));
}

fn table(drivers: &[Fetched], rows: &[Row]) -> String {
    let mut s = format!(
        "| driver | CUDA | lookups through | served | refused: newer than the driver | not on this platform | missing | \
         wrong ABI | lost | `api::` functions ({}) |\n\
         | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n",
        cuda_driver_pfn::api::C_NAMES.len()
    );
    for (d, r) in drivers.iter().zip(rows) {
        let n = |k: &str| r.verdicts.get(k).copied().unwrap_or(0);
        // "C names: 606 functions; 481 equal to dlsym ..., 125 not on this driver, 0 different"
        let count = |after: &str| {
            r.c_names
                .split([';', ','])
                .find(|p| p.contains(after))
                .and_then(|p| p.split_whitespace().next())
                .unwrap_or("?")
        };
        let c_names = format!(
            "{} call their export, {} unavailable, {} different",
            count("equal to dlsym"),
            count("not on this driver"),
            count("different")
        );
        let _ = writeln!(
            s,
            "| {} ({}) | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            d.pin.name,
            d.pin.package[0].version,
            d.pin.cuda,
            r.via,
            n("matched"),
            n("not in this driver"),
            n("not on this platform"),
            n("missing"),
            n("mismatched"),
            n("lost"),
            c_names
        );
    }
    s
}

/// For every program in generated/examples, on every driver: every entry point
/// min-driver lists is served by drivers at or above its floor, and a driver below the floor
/// refuses at least one of them.
fn min_driver_agrees(drivers: &[Fetched], rows: &[Row], failures: &mut Vec<String>) {
    let examples = repo_root().join("generated/examples");
    let mut files: Vec<_> = std::fs::read_dir(&examples).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    // And each example built in release: its binary's records (exact for the linked code).
    files.extend(release_examples());
    for file in files {
        let floor =
            cuda_sys_gen::min_driver::floor(&repo_root().join("generated/registry.json"), std::slice::from_ref(&file))
                .unwrap_or_else(|e| panic!("{e:#}"));
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let entries_floor = floor.uses.first().map_or(0, |u| u.version);
        for (driver, row) in drivers.iter().zip(rows) {
            let version = driver.pin.cuda_version().expect("checked on load");
            let refused: Vec<&str> =
                floor.uses.iter().map(|u| u.marker.as_str()).filter(|m| !row.served.contains(*m)).collect();
            if version >= entries_floor && !refused.is_empty() {
                failures.push(format!(
                    "min-driver says {name} needs CUDA {entries_floor}, yet driver {} (CUDA {version}) refuses {refused:?}",
                    driver.pin.name
                ));
            }
            if version < entries_floor && refused.is_empty() {
                failures.push(format!(
                    "min-driver says {name} needs CUDA {entries_floor}, yet driver {} (CUDA {version}) serves every entry it lists",
                    driver.pin.name
                ));
            }
        }
    }
}

/// The generated crate's examples, built in release with the features they need (`api`,
/// `newest`), in a target folder of their own under the repository's.
fn release_examples() -> Vec<std::path::PathBuf> {
    let target = repo_root().join("target/min-driver-programs/target");
    let o = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--release", "--examples", "--features", "api,newest", "--manifest-path"])
        .arg(repo_root().join("generated/Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .unwrap();
    assert!(o.status.success(), "building the examples: {}", text(&o.stderr));
    let mut out: Vec<_> = std::fs::read_dir(repo_root().join("generated/examples"))
        .unwrap()
        .filter_map(|e| e.ok()?.path().file_stem().map(|s| target.join("release/examples").join(s)))
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    out
}

#[test]
fn every_lookup_on_every_real_driver() {
    let Some(drivers) = drivers::fetched() else { return };
    let doctor = doctor();
    let mut failures = Vec::new();
    let rows: Vec<Row> = drivers.iter().map(|d| check_driver(d, &doctor, &mut failures)).collect();
    min_driver_agrees(&drivers, &rows, &mut failures);
    let table = table(&drivers, &rows);
    println!("{table}");
    let docs = repo_root().join("docs").join("real-drivers.md");
    let text = std::fs::read_to_string(&docs).unwrap_or_default();
    let (head, rest) = text.split_once(BEGIN).unwrap_or((&text, ""));
    let tail = rest.split_once(END).map_or("", |(_, t)| t);
    let fresh = format!("{head}{BEGIN}\n{table}{END}{tail}");
    if fresh != text {
        if std::env::var_os("CUDA_SYS_GEN_BLESS").is_some() {
            std::fs::write(&docs, fresh).unwrap();
        } else {
            failures.push(format!(
                "{} does not hold this table (CUDA_SYS_GEN_BLESS=1 cargo test -p cuda-sys-gen-tests --test real_drivers rewrites it):\n{table}",
                docs.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
}

/// 418's libcuda links libnvidia-fatbinaryloader, which Debian ships in a package of its own:
/// loaded without it, the error names the library that is missing instead of telling the user
/// to install the driver they have.
#[test]
fn a_driver_without_a_library_it_links_names_that_library() {
    let Some(drivers) = drivers::fetched() else { return };
    let d = drivers.iter().find(|d| d.pin.name == "418").expect("the matrix pins driver 418");
    // This process's loader path does not hold the fatbinaryloader's folder.
    let e = cuda_driver_pfn::Driver::from_path(&d.libcuda).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("not `libnvidia-fatbinaryloader.so.418.226.00`, a library it needs"), "{text}");
    assert!(!text.contains("Install the NVIDIA driver") && !text.contains("Check the path"), "{text}");
}
