//! The registry's answer rule (`cuda_driver_pfn::answer::driver_answer`) against NVIDIA's real
//! drivers of `tests/real-drivers.toml` (fetched by `cuda_sys_gen_tests::drivers`, no GPU
//! needed): for every symbol of the registry, at every version where one of its ABIs begins,
//! one below it (and the release before it), the driver's own version and 99999, with flags 0,
//! 1 and 2, each driver's `cuGetProcAddress_v2` and 4-argument `cuGetProcAddress` (where it
//! exports them) answer with the result and status the rule says, and the function they hand
//! out is the export of the entry the rule names (`dladdr`). Drivers without either lookup
//! function (418, 450, 460) are checked by their exports: each entry the rule names is
//! exported under its name (but below a measured floor, `MIN_DRIVER`).
//!
//! Each driver is checked in a child process (`conformance answers`) that loads it by its
//! soname. Without apt-get or dpkg-deb the test prints SKIPPED and why; with `CI=true` it fails.

#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use std::process::Command;

use cuda_sys_gen_tests::drivers::{self, Fetched};
use cuda_sys_gen_tests::text;

/// `conformance answers` with `driver` on `LD_LIBRARY_PATH`: its exit code and output.
fn answers(driver: &Fetched, env: &[(&str, &std::ffi::OsStr)]) -> (Option<i32>, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_conformance"));
    c.arg("answers").env("LD_LIBRARY_PATH", driver.library_path()).env_remove("CUDA_SYS_GEN_LIBRARY");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().expect("start a child process");
    (out.status.code(), format!("{}{}", text(&out.stdout), text(&out.stderr)))
}

/// The summary line's request count (`... : N requests (...), M different`).
fn requests(out: &str) -> usize {
    out.lines().rev().find_map(|l| l.split(": ").nth(1)?.split(' ').next()?.parse().ok()).unwrap_or(0)
}

#[test]
fn every_real_driver_answers_as_the_rule_says() {
    let Some(drivers) = drivers::fetched() else { return };
    let mut failures = Vec::new();
    let mut total = 0;
    for driver in &drivers {
        let (code, out) = answers(driver, &[]);
        let n = requests(&out);
        total += n;
        println!("driver {}: {}", driver.pin.name, out.lines().last().unwrap_or_default());
        // Far more than the registry's symbols times 3 flags: the check must not pass by
        // asking nothing.
        if code != Some(0) || !out.contains(", 0 different") || n < 561 * 3 * 4 {
            let shown: Vec<&str> = out.lines().take(40).collect();
            failures.push(format!("driver {}: exit {code:?}, {n} requests:\n{}", driver.pin.name, shown.join("\n")));
        }
    }
    println!("{total} requests checked on {} drivers", drivers.len());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The fake driver of the shim's tests keeps its own copy of the rule, written apart from
/// `answer::driver_answer`: configured as a driver of each version the real drivers were
/// measured at (every registry entry of this platform up to it), it answers the whole request
/// check as the rule says. Two implementations, one behaviour; the real drivers above decide
/// which is right.
#[test]
fn the_fake_and_the_rule_answer_alike() {
    use cuda_driver_pfn::ENTRIES;
    use cuda_sys_gen_tests::conformance::{check_answers, Lookups};
    use cuda_sys_gen_tests::fake::{pointer_for, Fake, Flavour};
    let mut total = 0;
    for (version, flavour) in [
        (11040, Flavour::V1Only),
        (12000, Flavour::Full),
        (12040, Flavour::Full),
        (12050, Flavour::Full),
        (13000, Flavour::Full),
    ] {
        let fake = Fake::new(flavour);
        fake.set_driver_version(version);
        for (i, e) in ENTRIES.iter().enumerate().filter(|(_, e)| e.version <= version && e.platforms.here()) {
            fake.add_abi(e.symbol, e.version, e.variant.is_some(), pointer_for(i));
        }
        // SAFETY: the fake, already loaded.
        let lib = unsafe { libloading::Library::new(fake.path()) }.unwrap();
        let name_at = |p: usize| {
            let i = p.checked_sub(pointer_for(0))? / 0x10;
            ENTRIES.get(i).map(|e| e.exported.to_owned())
        };
        let check = check_answers(&lib, version, &name_at, &|_, _| Ok(()), Lookups { v2: true, v1: true });
        assert!(check.requests > 561 * 3 * 4, "{version}: {} requests", check.requests);
        assert!(
            check.differences.is_empty(),
            "the fake as a driver of {version}: {} differences, e.g.\n{}",
            check.differences.len(),
            check.differences.iter().take(10).cloned().collect::<Vec<_>>().join("\n")
        );
        total += check.requests;
    }
    println!("{total} requests: the fake and the rule agree");
}
