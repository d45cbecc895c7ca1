//! Integration tests on NVIDIA's real headers, fetched (or taken from the cache) at test time.

use std::collections::BTreeMap;

use codegen::emit::EmitOptions;
use codegen::pipeline::{self, Config};
use codegen::write::Mode;
use cuda_sys_gen_tests::*;
use serde_json::Value;

/// Generates from the given pinned toolkits into a temp folder; returns registry.json.
fn generate_pinned(versions: &[&str]) -> (Value, codegen::report::Report) {
    let manifest = manifest_with_toolkits(versions);
    let out = tempfile::tempdir().unwrap();
    let report =
        generate_local(manifest.path(), vec![], out.path(), "cuda-driver-pfn").unwrap_or_else(|e| panic!("{e}"));
    let json = std::fs::read_to_string(out.path().join("registry.json")).unwrap();
    (serde_json::from_str(&json).unwrap(), report)
}

fn entries_by_pfn(v: &Value) -> BTreeMap<String, Value> {
    v["entries"].as_array().unwrap().iter().map(|e| (e["pfn"].as_str().unwrap().to_owned(), e.clone())).collect()
}

/// Counts `*PFN_name)(` declarations in a header's text: an independent check that nothing
/// was dropped between clang and the registry. `windows`: the win_amd64 wheel's copy, where
/// `_WIN32` holds (cuWGLGetDevice); the Linux copy has no `_WIN32` typedefs to skip.
fn typedef_lines(version: &str, header: &str, windows: bool) -> usize {
    let pkg = cached_include(version, windows);
    let text = std::fs::read_to_string(pkg.join(header)).unwrap();
    let mut count = text.matches("*PFN_").count();
    if !windows {
        // The Linux copy of cudaGLTypedefs.h still spells the WGL typedef, under _WIN32.
        count -= text.matches("*PFN_cuWGL").count();
    }
    count
}

/// Per header of a toolkit: entries in the registry (by module) against the header's own text.
fn assert_counts(v: &Value, version: &str) {
    let by = entries_by_pfn(v);
    let declared = |module: &str| {
        by.values()
            .filter(|e| e["module"] == module && e["toolkits"].as_array().unwrap().iter().any(|t| t == version))
            .count()
    };
    let linux = [
        ("cuda", "cudaTypedefs.h"),
        ("gl", "cudaGLTypedefs.h"),
        ("egl", "cudaEGLTypedefs.h"),
        ("vdpau", "cudaVDPAUTypedefs.h"),
        ("profiler", "cudaProfilerTypedefs.h"),
    ];
    for (module, header) in linux {
        assert_eq!(declared(module), typedef_lines(version, header, false), "{version} {header}");
        assert!(declared(module) > 0, "{version} {header}");
    }
    for (module, header) in
        [("d3d9", "cudaD3D9Typedefs.h"), ("d3d10", "cudaD3D10Typedefs.h"), ("d3d11", "cudaD3D11Typedefs.h")]
    {
        assert_eq!(declared(module), typedef_lines(version, header, true), "{version} {header}");
    }
    // wgl holds only what the Windows cudaGLTypedefs.h adds to the Linux one.
    let windows_gl = typedef_lines(version, "cudaGLTypedefs.h", true);
    assert_eq!(declared("wgl") + declared("gl"), windows_gl, "{version} Windows cudaGLTypedefs.h");
    assert_eq!(declared("wgl"), 1);
    // The summary's counts are per header row and say the same.
    let details = v["toolkit_details"].as_array().unwrap().iter().find(|t| t["version"] == version).unwrap();
    assert_eq!(details["headers"]["wgl"]["typedefs"], windows_gl as u64);
    assert_eq!(details["headers"]["cuda"]["typedefs"], declared("cuda") as u64);
}

#[test]
fn oldest_and_newest_pinned_toolkits() {
    let (v, report) = generate_pinned(&["11.7", "13.5"]);
    assert_eq!(v["toolkits"], serde_json::json!(["11.7", "13.5"]));
    let by = entries_by_pfn(&v);
    let in_135: Vec<&Value> =
        by.values().filter(|e| e["toolkits"].as_array().unwrap().iter().any(|t| t == "13.5")).collect();
    let in_117: Vec<&Value> =
        by.values().filter(|e| e["toolkits"].as_array().unwrap().iter().any(|t| t == "11.7")).collect();
    assert_counts(&v, "13.5");
    assert_counts(&v, "11.7");
    assert_eq!(in_135.len(), 780);
    assert_eq!(in_117.len(), 599);
    // The summary prints the same counts.
    assert!(
        report
            .toolkit_lines
            .iter()
            .any(|l| l.contains("13.5") && l.contains("cuda: 685 typedefs") && l.contains("-> 780 entries")),
        "{:?}",
        report.toolkit_lines
    );
    // Platforms: cuda.h's everywhere, EGL Linux only, D3D and WGL Windows only.
    let platforms = |pfn: &str| by[pfn]["platforms"].clone();
    assert_eq!(platforms("PFN_cuMemAlloc_v3020"), serde_json::json!(["linux", "windows"]));
    assert_eq!(platforms("PFN_cuEGLStreamConsumerConnect_v7000"), serde_json::json!(["linux"]));
    assert_eq!(platforms("PFN_cuD3D11GetDevice_v3000"), serde_json::json!(["windows"]));
    assert_eq!(platforms("PFN_cuWGLGetDevice_v2020"), serde_json::json!(["windows"]));
    assert_eq!(platforms("PFN_cuGLGetDevices_v6050"), serde_json::json!(["linux", "windows"]));
    assert_eq!(by["PFN_cuWGLGetDevice_v2020"]["module"], "wgl");
    assert_eq!(by["PFN_cuProfilerStart_v4000"]["module"], "profiler");
    assert_eq!(by["PFN_cuVDPAUGetDevice_v3010"]["header"], "cudaVDPAUTypedefs.h");

    let e = &by["PFN_cuMemAlloc_v2000"];
    assert_eq!(e["legacy"], true);
    assert_eq!(e["exported"], "cuMemAlloc");
    assert_eq!(
        e["params"],
        serde_json::json!([{"name": "dptr", "type": "*mut CUdeviceptr_v1"}, {"name": "bytesize", "type": "c_uint"}])
    );
    assert_eq!(e["returns"], "CUresult");
    assert_eq!(by["PFN_cuMemAlloc_v3020"]["exported"], "cuMemAlloc_v2");
    assert_eq!(by["PFN_cuMemAlloc_v3020"]["legacy"], false);
    for (pfn, exported) in [
        ("PFN_cuStreamBeginCapture_v10000", "cuStreamBeginCapture"),
        ("PFN_cuStreamBeginCapture_v10010", "cuStreamBeginCapture_v2"),
        ("PFN_cuStreamBeginCapture_v10010_ptsz", "cuStreamBeginCapture_v2_ptsz"),
        ("PFN_cuDeviceGetUuid_v9020", "cuDeviceGetUuid"),
        ("PFN_cuDeviceGetUuid_v11040", "cuDeviceGetUuid_v2"),
        ("PFN_cuCtxCreate_v2000", "cuCtxCreate"),
        ("PFN_cuCtxCreate_v3020", "cuCtxCreate_v2"),
        ("PFN_cuCtxCreate_v11040", "cuCtxCreate_v3"),
        ("PFN_cuCtxCreate_v12050", "cuCtxCreate_v4"),
        ("PFN_cuGetProcAddress_v11030", "cuGetProcAddress"),
        ("PFN_cuGetProcAddress_v12000", "cuGetProcAddress_v2"),
        ("PFN_cuMemcpy_v7000_ptds", "cuMemcpy_ptds"),
        ("PFN_cuMemcpyHtoD_v7000_ptds", "cuMemcpyHtoD_v2_ptds"),
    ] {
        let e = by.get(pfn).unwrap_or_else(|| panic!("{pfn} missing"));
        assert_eq!(e["exported"], exported, "{pfn}");
        assert_eq!(e["header"], "cudaTypedefs.h", "{pfn}");
        assert_eq!(e["module"], "cuda", "{pfn}");
    }
    assert_eq!(by["PFN_cuMemcpy_v7000_ptds"]["variant"], "ptds");
    assert_eq!(by["PFN_cuStreamBeginCapture_v10010_ptsz"]["variant"], "ptsz");
    assert_eq!(by["PFN_cuCtxCreate_v12050"]["toolkits"], serde_json::json!(["13.5"]));
    // 11.7 has header aliases, 13.5 none.
    let aliases = &v["header_aliases"];
    assert!(aliases.get("13.5").is_none());
    assert_eq!(aliases["11.7"]["PFN_cuCtxCreate"]["default"], "PFN_cuCtxCreate_v11040");
    assert_eq!(aliases["11.7"]["PFN_cuMemcpy"]["per_thread"], "PFN_cuMemcpy_v7000_ptds");
}

#[test]
fn drift_from_11_7_to_11_8_is_found() {
    let (v, _) = generate_pinned(&["11.7", "11.8"]);
    let drift = v["drift"].as_array().unwrap();
    for pfn in [
        "PFN_cuStreamSetAttribute_v11000",
        "PFN_cuStreamGetAttribute_v11000",
        "PFN_cuGraphKernelNodeSetAttribute_v11000",
        "PFN_cuGraphKernelNodeGetAttribute_v11000",
    ] {
        let d = drift.iter().find(|d| d["pfn"] == pfn).unwrap_or_else(|| panic!("no drift for {pfn}: {drift:#?}"));
        assert_eq!(d["from"], "11.7");
        assert_eq!(d["to"], "11.8");
        let after = d["after"].as_str().unwrap();
        assert!(after.contains("CUlaunchAttributeValue_union (64 bytes)"), "{after}");
        assert!(d["param"].as_str().unwrap().contains("AttrValue_v1"), "{d}");
    }
    // Nothing else changed ABI between these two.
    assert!(drift.iter().all(|d| d["pfn"].as_str().unwrap().contains("Attribute")), "{drift:#?}");
}

/// `cargo test` fails when generated/ is not what the pinned inputs produce.
#[test]
fn generated_crate_is_up_to_date() {
    let r = pipeline::generate(&Config {
        manifest: real_manifest(),
        out_dir: repo_root().join("generated"),
        cache_dir: cache_dir(),
        local_toolkits: vec![],
        mode: Mode::Check,
        emit: EmitOptions::new("cuda-driver-pfn", "cargo xtask generate"),
        offline: false,
        progress: None,
    });
    if let Err(e) = r {
        panic!("{e}");
    }
}

/// The generated crate (both packages) builds and documents with every feature and with none, on Linux: the
/// Windows-only modules are plain types, so CI type-checks them here.
#[test]
fn generated_crate_builds_with_all_features_and_none() {
    let target = repo_root().join("target").join("generated-features");
    for args in
        [&["build", "--all-features"][..], &["build", "--no-default-features"], &["doc", "--no-deps", "--all-features"]]
    {
        let out = std::process::Command::new(env!("CARGO"))
            .current_dir(repo_root())
            .args(args)
            .args(["--quiet", "--package", "cuda-driver-pfn", "--package", "cuda-driver-pfn-types", "--target-dir"])
            .arg(&target)
            .env("RUSTFLAGS", "-D warnings")
            .env("RUSTDOCFLAGS", "-D warnings")
            .output()
            .expect("run cargo");
        assert!(out.status.success(), "cargo {args:?}:\n{}", String::from_utf8_lossy(&out.stderr));
    }
}

/// The crate's docs hold no broken link with any one feature on: a link to an item
/// of another feature's module (`api`'s docs once linked `crate::aliases`) breaks only there.
#[test]
fn generated_docs_are_clean_with_each_feature_alone() {
    let target = repo_root().join("target").join("generated-features");
    let manifest = std::fs::read_to_string(repo_root().join("generated/Cargo.toml")).unwrap();
    let manifest: toml::Table = manifest.parse().unwrap();
    let features: Vec<&String> = manifest["features"].as_table().unwrap().keys().filter(|f| *f != "default").collect();
    assert!(features.len() > 10, "{features:?}");
    let mut broken = Vec::new();
    for feature in features {
        let out = std::process::Command::new(env!("CARGO"))
            .current_dir(repo_root())
            // Both packages: the types crate's docs, with the features the crate's forward.
            .args(["doc", "--no-deps", "--quiet", "--package", "cuda-driver-pfn", "--package", "cuda-driver-pfn-types"])
            .args(["--no-default-features", "--features", &format!("cuda-driver-pfn/{feature}"), "--target-dir"])
            .arg(&target)
            .env("RUSTDOCFLAGS", "-D warnings")
            .output()
            .expect("run cargo");
        if !out.status.success() {
            broken.push(format!("--features {feature}:\n{}", String::from_utf8_lossy(&out.stderr)));
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// A local toolkit of a pinned version replaces the download (and is compared with it); one
/// of another version is added to the inputs. Both are said in the summary.
///
/// A local copy of a pin's headers (the usual `/usr/local/cuda` of a pinned version)
/// gives the very tree the pin gives, registry.json included; a newer local toolkit without
/// Windows headers still gives a crate that builds with every feature.
#[test]
fn local_toolkits_replace_or_join_the_pins() {
    let manifest = manifest_with_toolkits(&["13.5"]);
    let pinned_out = tempfile::tempdir().unwrap();
    generate_local(manifest.path(), vec![], pinned_out.path(), "cuda-driver-pfn").unwrap_or_else(|e| panic!("{e}"));
    // Lay 13.5's Linux headers out as a toolkit would.
    let local = tempfile::tempdir().unwrap();
    let include = local.path().join("include");
    std::fs::create_dir_all(&include).unwrap();
    for entry in std::fs::read_dir(cache_dir().join("include")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let linux_13_5 = (name.starts_with("nvidia_cuda_runtime-13.5.")
            || name.starts_with("nvidia_cuda_profiler_api-13.5."))
            && !name.ends_with("win_amd64");
        if linux_13_5 {
            for f in std::fs::read_dir(entry.path()).unwrap().flatten().filter(|f| f.path().is_file()) {
                std::fs::copy(f.path(), include.join(f.file_name())).unwrap();
            }
        }
    }
    let out = tempfile::tempdir().unwrap();
    let same = generate_local(manifest.path(), vec![local.path().to_owned()], out.path(), "cuda-driver-pfn").unwrap();
    assert!(same.notes.iter().any(|n| n.contains("CUDA 13.5 at") && n.contains("has the pinned headers, byte for byte: read as the pin")), "{:?}", same.notes);
    let (from_pin, from_local) = (read_tree(pinned_out.path()), read_tree(out.path()));
    assert_eq!(from_pin.keys().collect::<Vec<_>>(), from_local.keys().collect::<Vec<_>>());
    for (file, text) in &from_pin {
        assert!(from_local[file] == *text, "{file} differs between the pin and an identical local toolkit");
    }
    // Windows entries still come from the pin.
    assert!(same.model.entries.values().any(|e| e.module == "d3d11"));

    let text = std::fs::read_to_string(include.join("cudaTypedefs.h")).unwrap();
    std::fs::write(include.join("cudaTypedefs.h"), format!("{text}\n/* a local edit */\n")).unwrap();
    let edited = generate_local(manifest.path(), vec![local.path().to_owned()], out.path(), "cuda-driver-pfn").unwrap();
    assert!(
        edited.notes.iter().any(|n| n.contains("these headers differ from it: cudaTypedefs.h")),
        "{:?}",
        edited.notes
    );
    let registry = std::fs::read_to_string(out.path().join("registry.json")).unwrap();
    assert!(registry.contains("a local toolkit"), "edited headers are not the pin's, and registry.json says so");

    // Relabel it 13.6: not pinned, so it joins 13.5 instead of replacing it. It has no Windows
    // headers: the Windows modules keep 13.5's types, and the crate builds with every feature.
    let cuda_h = std::fs::read_to_string(include.join("cuda.h"))
        .unwrap()
        .replace("#define CUDA_VERSION 13050", "#define CUDA_VERSION 13060");
    std::fs::write(include.join("cuda.h"), cuda_h).unwrap();
    let added = generate_local(manifest.path(), vec![include.clone()], out.path(), "cuda-driver-pfn").unwrap();
    assert!(
        added
            .notes
            .iter()
            .any(|n| n.contains("CUDA 13.6 from") && n.contains("is not pinned in the manifest: added to the inputs")),
        "{:?}",
        added.notes
    );
    assert!(
        added
            .notes
            .iter()
            .any(|n| n.contains("has no Windows headers: the modules d3d9, d3d10, d3d11, wgl keep what CUDA 13.5")),
        "{:?}",
        added.notes
    );
    let versions: Vec<String> = added.model.toolkits.iter().map(|t| t.version.to_string()).collect();
    assert_eq!(versions, ["13.5", "13.6"]);
    let d3d9 = std::fs::read_to_string(out.path().join("types/src/d3d9.rs")).unwrap();
    assert!(d3d9.contains("pub struct IDirect3DDevice9"), "the D3D9 interfaces are gone from d3d9.rs");
    let built = std::process::Command::new(env!("CARGO"))
        .args(["check", "--quiet", "--offline", "--all-features", "--manifest-path"])
        .arg(out.path().join("Cargo.toml"))
        .arg("--target-dir")
        .arg(repo_root().join("target").join("local-toolkit-crate"))
        .output()
        .expect("run cargo");
    assert!(
        built.status.success(),
        "the crate of a newer local toolkit does not build:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
}
