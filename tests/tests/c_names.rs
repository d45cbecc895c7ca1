//! The C-name map of registry.json against a second reading of the same headers:
//! clang's own semantic analysis through its Python bindings (`clang.cindex`, shipped in the
//! pinned libclang wheel), which parses `void *ref = (void *)&cuCtxCreate;` for each name and
//! reports the function the reference resolves to. The generator reads the names by token
//! pasting instead; the two must agree for every pinned toolkit and both stream modes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cuda_sys_gen_tests::*;
use serde_json::Value;

/// Resolves each `cuda_sys_gen_ref_<i>` of each job to the function it names, and whether
/// that function is defined in the headers (an inline wrapper, which the driver does not export).
const ORACLE: &str = r#"
import json, sys, zipfile, tempfile, os
wheel, libclang, jobs_path = sys.argv[1:4]
scratch = tempfile.mkdtemp()
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if "/platlib/clang/" in name and name.endswith(".py"):
            target = os.path.join(scratch, "clang", os.path.basename(name))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(z.read(name))
sys.path.insert(0, scratch)
from clang import cindex
cindex.Config.set_library_file(libclang)
index = cindex.Index.create()
out = []
for job in json.load(open(jobs_path)):
    tu = index.parse("c-names.c", args=job["args"], unsaved_files=[("c-names.c", job["source"])])
    found = {}
    def walk(c, var):
        if c.kind == cindex.CursorKind.DECL_REF_EXPR and c.referenced is not None:
            found[var] = [c.referenced.spelling, c.referenced.is_definition()]
            return
        for k in c.get_children():
            walk(k, var)
    for c in tu.cursor.get_children():
        if c.kind == cindex.CursorKind.VAR_DECL and c.spelling.startswith("cuda_sys_gen_ref_"):
            walk(c, int(c.spelling[len("cuda_sys_gen_ref_"):]))
    out.append(found)
print(json.dumps(out))
"#;

fn find_under(dir: &Path, pred: &dyn Fn(&Path) -> bool) -> Option<PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if pred(&path) {
            return Some(path);
        }
        if path.is_dir() {
            if let Some(p) = find_under(&path, pred) {
                return Some(p);
            }
        }
    }
    None
}

/// toolkit -> C name -> (default, per-thread) exported names.
type CNameMap = BTreeMap<String, BTreeMap<String, [Option<String>; 2]>>;

#[test]
fn c_names_are_what_clang_resolves_them_to() {
    let cache = cache_dir();
    let (_standins, programs) =
        codegen::read::c_names::c_programs(&real_manifest(), &cache).unwrap_or_else(|e| panic!("{e}"));
    let wheel = find_under(&cache.join("wheels"), &|p| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("libclang-") && n.to_string_lossy().ends_with(".whl"))
    })
    .expect("the pinned libclang wheel in the cache (generate fetches it)");
    let libclang = find_under(&cache.join("libclang"), &|p| p.file_name().is_some_and(|n| n == "libclang.so"))
        .expect("the extracted libclang.so in the cache");

    let jobs: Vec<Value> = programs
        .iter()
        .map(|p| {
            let mut source = p.wrapper.clone();
            for (i, c) in p.candidates.iter().enumerate() {
                source.push_str(&format!("void *cuda_sys_gen_ref_{i} = (void *)&{c};\n"));
            }
            serde_json::json!({ "args": p.args, "source": source })
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let jobs_path = dir.path().join("jobs.json");
    std::fs::write(&jobs_path, serde_json::to_vec(&jobs).unwrap()).unwrap();
    let run = std::process::Command::new("python3")
        .arg("-c")
        .arg(ORACLE)
        .arg(&wheel)
        .arg(&libclang)
        .arg(&jobs_path)
        .output()
        .expect("python3 (the README's prerequisite)");
    assert!(run.status.success(), "the clang.cindex oracle failed:\n{}", text(&run.stderr));
    let answers: Vec<BTreeMap<String, (String, bool)>> = serde_json::from_slice(&run.stdout).unwrap();

    // The oracle's map, merged Linux first as the generator merges its targets.
    let mut oracle = CNameMap::new();
    for (p, found) in programs.iter().zip(&answers) {
        let names = oracle.entry(p.toolkit.to_string()).or_default();
        for (i, c) in p.candidates.iter().enumerate() {
            let Some((function, defined)) = found.get(&i.to_string()) else { continue };
            if *defined {
                continue; // an inline wrapper in the header: nothing the driver exports
            }
            let slot = &mut names.entry(c.clone()).or_default()[p.per_thread as usize];
            slot.get_or_insert_with(|| function.clone());
        }
    }

    let registry = codegen::registry_json::Registry::parse(
        &std::fs::read_to_string(repo_root().join("generated/registry.json")).unwrap(),
    )
    .unwrap();
    let exported: BTreeMap<&str, &str> =
        registry.entries.iter().map(|e| (e.pfn.as_str(), e.exported.as_str())).collect();
    let mut ours = CNameMap::new();
    for (tk, names) in &registry.c_names {
        let map = ours.entry(tk.to_string()).or_default();
        for (c, target) in names {
            let of = |pfn: &Option<String>| pfn.as_deref().map(|pfn| exported[pfn].to_owned());
            map.insert(c.clone(), [of(&target.default), of(&target.per_thread)]);
        }
    }
    // Names that are no function in either mode are absent from the registry.
    for names in oracle.values_mut() {
        names.retain(|_, modes| modes.iter().any(Option::is_some));
    }

    assert_eq!(ours.keys().collect::<Vec<_>>(), oracle.keys().collect::<Vec<_>>(), "toolkits");
    let mut differences = Vec::new();
    for (tk, names) in &oracle {
        let mine = &ours[tk];
        for c in names.keys().chain(mine.keys()).collect::<std::collections::BTreeSet<_>>() {
            if names.get(c) != mine.get(c) {
                differences.push(format!("CUDA {tk} {c}: clang {:?}, registry {:?}", names.get(c), mine.get(c)));
            }
        }
    }
    assert!(differences.is_empty(), "{} differences:\n{}", differences.len(), differences.join("\n"));

    // What the issue names, read as a person would check it.
    let c13 = &ours["13.5"];
    assert_eq!(c13["cuGraphInstantiate"][0].as_deref(), Some("cuGraphInstantiateWithFlags"));
    assert_eq!(c13["cuMemcpy"], [Some("cuMemcpy".to_owned()), Some("cuMemcpy_ptds".to_owned())]);
    assert_eq!(ours["12.9"]["cuCtxCreate"][0].as_deref(), Some("cuCtxCreate_v2"));
    assert_eq!(ours["13.0"]["cuCtxCreate"][0].as_deref(), Some("cuCtxCreate_v4"));
    assert_eq!(ours["11.7"]["cuGraphInstantiate"][0].as_deref(), Some("cuGraphInstantiate_v2"));
    let count = |tk: &str| oracle[tk].len();
    assert!(count("13.5") > 400, "13.5 has {} C names", count("13.5"));
}
