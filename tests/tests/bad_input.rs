//! Bad input: each gets a clear error naming what is wrong and where, and leaves the output
//! folder exactly as it was.

use std::io::Write;
use std::path::{Path, PathBuf};

use codegen::emit::EmitOptions;
use codegen::fetch::Fetcher;
use codegen::manifest::Manifest;
use codegen::pipeline::{self, Config};
use codegen::write::Mode;
use cuda_sys_gen_tests::*;

/// An output folder holding one file, to prove a failed run does not touch it.
fn sentinel_out() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/lib.rs"), "// the previous generation\n").unwrap();
    dir
}

fn assert_untouched(out: &Path) {
    assert_eq!(
        read_tree(out).into_iter().collect::<Vec<_>>(),
        vec![("src/lib.rs".to_string(), "// the previous generation\n".to_string())]
    );
}

/// Runs the pipeline with local toolkits only and returns the error text.
fn fails_with(manifest_dir: &Path, toolkits: Vec<PathBuf>, offline: bool, cache: &Path) -> String {
    let out = sentinel_out();
    let r = pipeline::generate(&Config {
        manifest: manifest_dir.join("headers-manifest.toml"),
        out_dir: out.path().to_owned(),
        cache_dir: cache.to_owned(),
        local_toolkits: toolkits,
        mode: Mode::Write,
        emit: EmitOptions { crate_name: "x".into(), command: "cargo xtask generate".into() },
        offline,
        progress: None,
    });
    let err = match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    };
    assert_untouched(out.path());
    err
}

/// A toolkit folder made of the internal-guard fixture's cuda.h and the given typedef header.
fn toolkit_with_typedefs(typedefs: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let cuda = repo_root().join("tests/fixtures/internal-guard/cuda-12.9/cuda.h");
    std::fs::copy(cuda, dir.path().join("cuda.h")).unwrap();
    std::fs::write(dir.path().join("cudaTypedefs.h"), typedefs).unwrap();
    dir
}

fn local_only(toolkit: &Path) -> String {
    let m = manifest_with(Some(&["cuda"]), &[]);
    fails_with(m.path(), vec![toolkit.to_owned()], false, &cache_dir())
}

#[test]
fn missing_toolkit_path() {
    let err = local_only(Path::new("/nonexistent/cuda-13.5"));
    assert!(err.contains("/nonexistent/cuda-13.5") && err.contains("no such file"), "{err}");
}

#[test]
fn folder_without_cuda_h() {
    let dir = tempfile::tempdir().unwrap();
    let err = local_only(dir.path());
    assert!(err.contains("no cuda.h"), "{err}");
    assert!(err.contains(&dir.path().display().to_string()), "{err}");
}

/// Issue 13, case 4: a folder that cannot be read says so, not "no cuda.h". (Tests run as root
/// here, which permissions do not stop; a symbolic link loop stops everyone.)
#[test]
fn unreadable_toolkit_folder_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let looped = dir.path().join("loop");
    std::os::unix::fs::symlink(&looped, &looped).unwrap();
    let err = local_only(&looped);
    assert!(
        err.contains(&looped.display().to_string()) && err.contains("cannot be read: a symbolic link loop"),
        "{err}"
    );
    assert!(!err.contains("no cuda.h"), "{err}");
    // The loop one level down, where cuda.h would be.
    let root = dir.path().join("cuda");
    std::fs::create_dir(&root).unwrap();
    std::os::unix::fs::symlink(root.join("include"), root.join("include")).unwrap();
    let err = local_only(&root);
    assert!(err.contains("include/cuda.h cannot be read: a symbolic link loop"), "{err}");
    // A file given as the toolkit.
    let file = dir.path().join("cuda.h");
    std::fs::write(&file, "").unwrap();
    let err = local_only(&file);
    assert!(err.contains("it is a file, not a folder"), "{err}");
}

/// Issue 13, case 3: names that break `PFN_<symbol>_v<version>[_ptds|_ptsz]` are errors naming
/// the file, the line and the rule (they gave a crate that did not build, a symbol with a
/// version in it, or "has no _v<version>").
#[test]
fn malformed_typedef_names_are_errors() {
    for (name, rule) in [
        ("PFN_cuCtxCreate_v12050_v13060", "it has two version suffixes (`_v12050` on the symbol `cuCtxCreate_v12050`)"),
        ("PFN_cuTwoV_v13060_v13060", "it has two version suffixes (`_v13060` on the symbol `cuTwoV_v13060`)"),
        ("PFN_x_v99999999999", "its version `99999999999` has 11 digits; a CUDA version (major*1000 + minor*10, such as 12050) has at most 6"),
        ("PFN_cuX_v0", "its version is 0"),
    ] {
        let tk = toolkit_with_typedefs(&format!(
            "#include <cuda.h>\ntypedef CUresult (CUDAAPI *PFN_cuInit_v2000)(unsigned int Flags);\n\ntypedef CUresult (CUDAAPI *{name})(int a);\n"
        ));
        let err = local_only(tk.path());
        let at = format!("{}:4", tk.path().join("cudaTypedefs.h").display());
        assert!(err.contains(&format!("typedef {name} is malformed: {rule}")) && err.contains(&at), "{name}: {err}");
    }
}

#[test]
fn empty_typedef_header() {
    let tk = toolkit_with_typedefs("");
    let err = local_only(tk.path());
    assert!(err.contains("the file is empty") && err.contains("cudaTypedefs.h:1"), "{err}");
}

#[test]
fn truncated_typedef_header() {
    let full =
        std::fs::read_to_string(repo_root().join("tests/fixtures/internal-guard/cuda-12.9/cudaTypedefs.h")).unwrap();
    // Cut in the middle of the first typedef.
    let cut = &full[..full.find("unsigned int Flags").unwrap()];
    let tk = toolkit_with_typedefs(cut);
    let err = local_only(tk.path());
    assert!(err.contains("toolkit 12.9: clang could not parse"), "{err}");
    assert!(err.contains("cudaTypedefs.h"), "{err}");
}

#[test]
fn typedef_header_without_typedefs() {
    let tk = toolkit_with_typedefs("#include <cuda.h>\n/* nothing here */\n");
    let err = local_only(tk.path());
    assert!(err.contains("cudaTypedefs.h has no PFN_<symbol>_v<version> typedef"), "{err}");
}

#[test]
fn header_clang_cannot_parse() {
    let tk = toolkit_with_typedefs(
        "#include <cuda.h>\ntypedef CUresult (CUDAAPI *PFN_cuInit_v2000)(unsigned int Flags);\nthis is not C;\n",
    );
    let err = local_only(tk.path());
    assert!(err.contains("clang could not parse") && err.contains("cudaTypedefs.h:3"), "{err}");
}

fn manifest_error(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("headers-manifest.toml"), text).unwrap();
    let err = fails_with(dir.path(), vec![], true, &cache_dir());
    assert!(err.contains("headers-manifest.toml:"), "no location in: {err}");
    err
}

const HEAD: &str = "schema = 1\n[fetch]\nplatform = \"manylinux2014_x86_64\"\n[[header]]\nname = \"cuda\"\napi = \"cuda.h\"\ntypedefs = \"cudaTypedefs.h\"\n";

/// Issue 13, case 7: a version has one spelling; `13.05` is not taken for 13.5.
#[test]
fn manifest_versions_have_one_spelling() {
    for (bad, says) in
        [("13.05", "write `13.5` (no leading zeros)"), ("013.5", "write `13.5`"), ("13.5.1", "not a toolkit version")]
    {
        let package = "name = \"x\"\nversion = \"1\"\nfile = \"x-1-py3-none-any.whl\"\ninclude = \"x\"\nsha256 = \"0000000000000000000000000000000000000000000000000000000000000000\"\n";
        let text = format!("{HEAD}[[toolkit]]\nversion = \"{bad}\"\n[[toolkit.package]]\n{package}");
        let err = manifest_error(&text);
        assert!(err.contains(says) && err.contains("headers-manifest.toml:9:"), "{bad}: {err}");
    }
}

#[test]
fn manifest_unknown_key() {
    let err = manifest_error(&format!("{HEAD}colour = \"blue\"\n"));
    assert!(err.contains("unknown field `colour`") && err.contains("headers-manifest.toml:8:1"), "{err}");
}

#[test]
fn manifest_malformed() {
    let err = manifest_error(&format!("{HEAD}[[toolkit]\n"));
    assert!(err.contains(":8:"), "{err}");
}

#[test]
fn manifest_version_not_major_minor() {
    for bad in ["12", "12.9.1", "twelve", "12.x", ""] {
        let pin = format!("{HEAD}[[toolkit]]\nversion = \"{bad}\"\n");
        let err = manifest_error(&pin);
        assert!(err.contains("not a toolkit version of the form major.minor") && err.contains(":9:"), "{bad}: {err}");
    }
}

#[test]
fn manifest_bad_sha256() {
    let pin = format!(
        "{HEAD}[[toolkit]]\nversion = \"12.9\"\n[[toolkit.package]]\nname = \"p\"\nversion = \"1\"\nfile = \"p-1-py3-none-any.whl\"\nsha256 = \"abc\"\ninclude = \"inc\"\n"
    );
    let err = manifest_error(&pin);
    assert!(err.contains("not a sha256 digest") && err.contains(":14:"), "{err}");
}

/// A stand-in for `python3 -m pip download`: a script that writes what the test says.
fn fake_python(dir: &Path, body: &str) -> String {
    let path = dir.join("fake-python");
    let mut f = std::fs::File::create(&path).unwrap();
    writeln!(f, "#!/bin/sh\nwhile [ $# -gt 0 ]; do if [ \"$1\" = --dest ]; then dest=$2; fi; shift; done\n{body}")
        .unwrap();
    drop(f);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

fn one_pin_manifest() -> Manifest {
    let m = manifest_with_toolkits(&["13.5"]);
    Manifest::load(&m.path().join("headers-manifest.toml")).unwrap()
}

#[test]
fn sha256_mismatch_is_refused_and_nothing_is_cached() {
    let manifest = one_pin_manifest();
    let pin = &manifest.toolkits[0];
    let tmp = tempfile::tempdir().unwrap();
    let file = &pin.packages[0].file;
    let mut fetcher = Fetcher::new(tmp.path().join("cache"), &manifest);
    fetcher.python = fake_python(tmp.path(), &format!("echo 'not the wheel' > \"$dest/{file}\""));
    let err = fetcher.toolkit(pin).unwrap_err().to_string();
    assert!(err.contains("sha256 mismatch") && err.contains(file) && err.contains(&pin.packages[0].sha256.0), "{err}");
    assert!(!tmp.path().join("cache/wheels").join(file).exists(), "a bad download was kept");
}

#[test]
fn no_network_and_no_cache() {
    let manifest = one_pin_manifest();
    let tmp = tempfile::tempdir().unwrap();
    let mut fetcher = Fetcher::new(tmp.path().join("cache"), &manifest);
    fetcher.python =
        fake_python(tmp.path(), "echo 'ERROR: Could not find a version that satisfies the requirement' >&2; exit 1");
    let err = fetcher.toolkit(&manifest.toolkits[0]).unwrap_err().to_string();
    assert!(
        err.contains("pip download nvidia-cuda-runtime==13.5.37") && err.contains("Could not find a version"),
        "{err}"
    );
    assert!(err.contains("--toolkit"), "the message should say what to do: {err}");
}

#[test]
fn offline_with_empty_cache_leaves_output_alone() {
    let m = manifest_with_toolkits(&["13.5"]);
    let cache = tempfile::tempdir().unwrap();
    let err = fails_with(m.path(), vec![], true, cache.path());
    assert!(err.contains("nvidia-cuda-runtime==13.5.37 is not in the cache"), "{err}");
}

#[test]
fn half_downloaded_wheel_is_fetched_again() {
    let manifest = one_pin_manifest();
    let pin = &manifest.toolkits[0].packages[0];
    let tmp = tempfile::tempdir().unwrap();
    let wheels = tmp.path().join("cache/wheels");
    std::fs::create_dir_all(&wheels).unwrap();
    std::fs::write(wheels.join(&pin.file), b"PK\x03\x04 truncated").unwrap();
    let mut fetcher = Fetcher::new(tmp.path().join("cache"), &manifest);
    let marker = tmp.path().join("pip-was-called");
    fetcher.python = fake_python(tmp.path(), &format!("touch '{}'; exit 1", marker.display()));
    assert!(fetcher.wheel(pin).is_err());
    assert!(marker.exists(), "a corrupt cached wheel must be fetched again");
    assert!(!wheels.join(&pin.file).exists());
}

fn zip_with(entries: &[(&str, &[u8])]) -> tempfile::NamedTempFile {
    let f = tempfile::NamedTempFile::new().unwrap();
    let mut z = zip::ZipWriter::new(f.reopen().unwrap());
    for (name, data) in entries {
        z.start_file(*name, zip::write::SimpleFileOptions::default()).unwrap();
        z.write_all(data).unwrap();
    }
    z.finish().unwrap();
    f
}

#[test]
fn unsafe_archive_paths_are_refused() {
    for bad in
        ["nvidia/include/../../../evil.h", "/etc/evil.h", "nvidia/include/..\\evil.h", "nvidia/include/a/../../b.h"]
    {
        let zip = zip_with(&[("nvidia/include/cuda.h", b"ok"), (bad, b"evil")]);
        let scratch = tempfile::tempdir().unwrap();
        let dest = scratch.path().join("cache/include/pkg-1");
        let err = codegen::archive::extract_includes(zip.path(), "nvidia/include", &dest, "x", 1 << 20)
            .unwrap_err()
            .to_string();
        assert!(err.contains("refusing archive") && err.contains(bad.trim_start_matches('/')), "{bad}: {err}");
        assert!(!dest.exists(), "{bad}: a refused archive left files behind");
        assert!(!scratch.path().join("evil.h").exists() && !Path::new("/etc/evil.h").exists());
    }
}

/// System headers are stand-ins of ours (issue 13: nothing of the host is read): one we have
/// none of is a manifest error, and the old form that named a Debian package is refused with
/// the new spelling.
#[test]
fn system_headers_must_have_stand_ins() {
    let err = manifest_error(&format!(
        "{HEAD}[[header]]\nname = \"gl\"\napi = \"cudaGL.h\"\ntypedefs = \"cudaGLTypedefs.h\"\nfeature = \"gl\"\nsystem = [\"GL/no-such-gl.h\"]\n"
    ));
    assert!(
        err.contains("no linux stand-in for the system header `GL/no-such-gl.h`")
            && err.contains("headers-manifest.toml:13:"),
        "{err}"
    );
    let err = manifest_error(&format!(
        "{HEAD}[[header]]\nname = \"gl\"\napi = \"cudaGL.h\"\ntypedefs = \"cudaGLTypedefs.h\"\nsystem = [{{ header = \"GL/gl.h\", package = \"libgl-dev\" }}]\n"
    ));
    assert!(err.contains("write `\"GL/gl.h\"`") && err.contains("no package needs installing"), "{err}");
}

#[test]
fn unknown_standin_is_a_manifest_error() {
    let err = manifest_error(&format!(
        "{HEAD}[[header]]\nname = \"d3d12\"\napi = \"cudaD3D12.h\"\ntypedefs = \"cudaD3D12Typedefs.h\"\ntarget = \"windows\"\nstandins = [\"d3d12.h\"]\n"
    ));
    assert!(err.contains("no windows stand-in header `d3d12.h`"), "{err}");
}
