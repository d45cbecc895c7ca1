//! The floor of Rust sources, an estimate before a build: the files and packages to read
//! ([`read_program`]: the files given, `mod` and `include!` files, path dependencies and
//! workspace members), and [`evaluate`], a pure function from what `scan.rs` read to a floor.

use super::*;

/// Whether a name is worth reporting from a scan: the registry knows it, or it looks like one
/// of the crate's names (a C name or a marker), so that one the registry lacks is said.
fn looks_like_an_entry(s: &str) -> bool {
    let c_name = s.len() > 2 && s.starts_with("cu") && s[2..].starts_with(|c: char| c.is_ascii_uppercase());
    c_name || s.starts_with("PFN_cu")
}

/// The program's sources, read.
pub(crate) struct Program {
    files: Vec<PathBuf>,
    scanned: Vec<scan::Scanned>,
    /// Package roots: the folder of the nearest Cargo.toml of each file.
    manifest_dirs: Vec<Option<PathBuf>>,
    /// Files reached only from build scripts.
    build_only: BTreeSet<usize>,
    /// The names the program reaches the generated crate by.
    crate_idents: BTreeSet<String>,
    /// Entries named `.rs` that are no regular files (FIFOs, sockets, devices): not read.
    skipped: Vec<PathBuf>,
}

/// Why a file given by name, neither a compiled program nor a kernel file, is not read as Rust
/// source: a Rust file is one named `.rs` (as Cargo and rustc find them), and any other text
/// read as Rust tokens would read "any driver will do" for what it does (a wrapper script that
/// `exec`s a program, a Python script that loads libcuda with ctypes). `None`: a `.rs` file.
pub(crate) fn not_rust_source(path: &Path) -> Option<String> {
    if path.extension().is_some_and(|e| e == "rs") {
        return None;
    }
    let head = head_of(path).unwrap_or_default();
    let shown = path.display();
    let observe = "what a script does at run time is not in any file min-driver can read: observe a run";
    if let Some(line) = head.strip_prefix(b"#!").filter(|l| !l.starts_with(b"[")) {
        // The interpreter as the kernel reads it: the line's first word, and `env`'s argument.
        let line = String::from_utf8_lossy(line.split(|&b| b == b'\n').next().unwrap_or_default()).into_owned();
        let mut words = line.split_ascii_whitespace();
        let mut interpreter = words.next().unwrap_or("sh").to_owned();
        if interpreter.ends_with("/env") {
            interpreter = words.find(|w| !w.starts_with('-')).unwrap_or("sh").to_owned();
        }
        return Some(format!(
            "a script run by {interpreter}, not a compiled program or a Rust source; {observe}: \
             `cuda-sys-gen min-driver --run -- {interpreter} {shown}`, or pass the programs and libraries it runs"
        ));
    }
    let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    if ext == "py" {
        return Some(format!(
            "a Python script, not a compiled program or a Rust source; {observe}: \
             `cuda-sys-gen min-driver --run -- python3 {shown}`, or pass the libraries it loads"
        ));
    }
    if ["cu", "cuh", "c", "cc", "cpp", "cxx", "h", "hpp", "hxx"].contains(&ext.as_str()) {
        return Some(format!(
            "a C, C++ or CUDA source file: min-driver reads Rust sources, or the program built from these \
             (`nvcc -o app {shown}`, then `cuda-sys-gen min-driver app`): what it links and embeds is what runs"
        ));
    }
    let text = String::from_utf8_lossy(&head);
    let start = text.trim_start();
    if text.contains("GNU ld script") || ["GROUP", "INPUT", "OUTPUT_FORMAT"].iter().any(|k| start.starts_with(k)) {
        return Some(
            "a linker script (it names the libraries a link takes), not a compiled program: pass those libraries"
                .to_owned(),
        );
    }
    Some(
        "not a compiled program (ELF, PE or Mach-O, an object or archive of them), a kernel file \
         (.ptx, .cubin, .fatbin) or a Rust source file (read only by its .rs name): pass the program and the libraries it \
         loads, its kernel files, or its sources or package folder"
            .to_owned(),
    )
}

pub(crate) fn read_program(sources: &[PathBuf], reg: &Registry, package: &str) -> Result<Program> {
    let mut files = Vec::new();
    let mut walk = Walk::default();
    let mut manifests = BTreeSet::new();
    for s in sources {
        collect(s, &mut walk, &mut files, &mut manifests)?;
        for dir in s.ancestors().skip(1) {
            if dir.join("Cargo.toml").is_file() {
                manifests.insert(dir.join("Cargo.toml"));
                break;
            }
        }
    }
    // Path dependencies and workspace members of the packages read: their code is linked
    // into the program too. Followed to a fixed point, each folder once; the generated crate
    // itself is not (its names are every name).
    let mut seen_dirs: BTreeSet<PathBuf> = sources.iter().map(|s| same_file(s)).collect();
    let mut done: BTreeSet<PathBuf> = BTreeSet::new();
    let generated = |manifest: &Path| {
        let name = std::fs::read_to_string(manifest)
            .ok()
            .and_then(|t| t.parse::<toml::Table>().ok())
            .and_then(|t| t.get("package")?.get("name")?.as_str().map(str::to_owned));
        name.is_some_and(|n| n == package || n == format!("{package}-types"))
    };
    while let Some(m) = manifests.iter().find(|m| !done.contains(*m)).cloned() {
        done.insert(m.clone());
        if generated(&m) {
            continue;
        }
        for dir in local_packages(&m, package) {
            let key = same_file(&dir);
            let skip = seen_dirs.iter().any(|s| key.starts_with(s)) || generated(&dir.join("Cargo.toml"));
            if skip || !dir.join("Cargo.toml").is_file() {
                continue;
            }
            seen_dirs.insert(key);
            collect(&dir, &mut walk, &mut files, &mut manifests)?;
        }
    }
    if files.is_empty() {
        let folders = sources.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ");
        let (compiled, others) = compiled_under(sources);
        if let Some(first) = compiled.first() {
            // A folder of libraries (a framework's `lib/`): read by name, each one, never as a
            // guess of what the folder was meant to be.
            let name = |p: &PathBuf| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let dir = first.parent().map_or_else(|| ".".to_owned(), |d| d.display().to_string());
            let same_dir = compiled.iter().all(|p| p.parent() == first.parent());
            let ext = |p: &PathBuf| p.extension().map(|e| e.to_string_lossy().into_owned());
            // A pattern a shell expands to those files alone (each of them, and no other file
            // beside them: one that is no program would be refused) where one fits, else their
            // names.
            let fits = |matches: &dyn Fn(&PathBuf) -> bool| {
                same_dir
                    && compiled.iter().all(matches)
                    && !others.iter().any(|p| p.parent() == first.parent() && matches(p))
            };
            let pass = if fits(&|p| name(p).contains(".so")) {
                format!("{dir}/*.so*")
            } else if ext(first).is_some_and(|e| !e.bytes().all(|b| b.is_ascii_digit()))
                && fits(&|p| ext(p) == ext(first))
            {
                format!("{dir}/*.{}", ext(first).unwrap_or_default())
            } else {
                let shown: Vec<String> = compiled.iter().take(3).map(|p| p.display().to_string()).collect();
                format!("{}{}", shown.join(" "), if compiled.len() > 3 { " ..." } else { "" })
            };
            bail!(
                "no .rs files under {folders}, but {} compiled program(s) or kernel file(s), such as {}: \
                 pass them by name to read them (`cuda-sys-gen min-driver {pass}`)",
                compiled.len(),
                first.display()
            );
        }
        bail!("no .rs files under {folders}: pass the program's source files or its package folder");
    }
    files.sort();
    files.dedup();
    let mut crate_idents = BTreeSet::from([package.replace('-', "_")]);
    for m in &manifests {
        crate_idents.extend(dependency_names(m, package));
    }
    let wanted = |s: &str| wanted(reg, s);
    let mut program = Program {
        files: Vec::new(),
        scanned: Vec::new(),
        manifest_dirs: Vec::new(),
        build_only: BTreeSet::new(),
        crate_idents,
        skipped: std::mem::take(&mut walk.skipped),
    };
    let mut index: std::collections::HashMap<PathBuf, usize> = std::collections::HashMap::new();
    let mut queue: std::collections::VecDeque<PathBuf> = files.into_iter().collect();
    while let Some(file) = queue.pop_front() {
        if index.contains_key(&same_file(&file)) {
            continue;
        }
        let text = codegen::input::read_bytes(&file, "a Rust source file")?;
        let text = String::from_utf8(text)
            .map_err(|_| anyhow::anyhow!("{}: not UTF-8, so not a Rust source file", file.display()))?;
        let scanned = scan::scan(&text, &wanted).map_err(|(line, column, why)| {
            anyhow::anyhow!(
                "{}:{line}:{column}: not Rust tokens ({why}): fix the file, or leave it out",
                file.display()
            )
        })?;
        // Spans are only read during the scan: free each file's text.
        proc_macro2::extra::invalidate_current_thread_spans();
        index.insert(same_file(&file), program.files.len());
        // `mod x;` and `include!` of files that exist are read too (a file given alone).
        for m in &scanned.mods {
            if let Some(found) = mod_candidates(&file, m).into_iter().find(|c| c.is_file()) {
                queue.push_back(found);
            }
            // `#[cfg_attr(.., path = "x.rs")]`: whichever the build picks, so each of them.
            let parent = file.parent().map(Path::to_owned).unwrap_or_default();
            queue.extend(m.cfg_paths.iter().map(|p| parent.join(p)).filter(|p| p.is_file()));
        }
        for inc in scanned.includes.iter().filter(|i| i.kind == "include") {
            if let Some(p) = include_path(&file, manifest_dir(&file).as_deref(), &inc.target) {
                if p.is_file() {
                    queue.push_back(p);
                }
            }
        }
        program.manifest_dirs.push(manifest_dir(&file));
        program.files.push(file);
        program.scanned.push(scanned);
    }
    program.build_only = build_only(&program, &index);
    Ok(program)
}

/// Whether the scan keeps an identifier or string: a name of the registry, or one that looks
/// like an entry (so that a name the registry lacks is said, not dropped).
fn wanted(reg: &Registry, s: &str) -> bool {
    reg.meanings(s).is_some() || looks_like_an_entry(s)
}

/// A file's path as one key however it is spelled (`src/../probe.rs`, a symlink).
fn same_file(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned())
}

/// The folder of the nearest Cargo.toml above `file`.
fn manifest_dir(file: &Path) -> Option<PathBuf> {
    file.ancestors().skip(1).find(|d| d.join("Cargo.toml").is_file()).map(Path::to_owned)
}

/// Where rustc looks for the file of `mod x;` in `file`.
fn mod_candidates(file: &Path, m: &scan::ModDecl) -> Vec<PathBuf> {
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let parent = file.parent().map(Path::to_owned).unwrap_or_default();
    if let Some(p) = &m.path_attr {
        return vec![parent.join(p)];
    }
    // In mod.rs, lib.rs, main.rs (and a crate root such as build.rs): beside it; in foo.rs: foo/.
    let dir = if matches!(name.as_str(), "mod.rs" | "lib.rs" | "main.rs" | "build.rs") {
        parent.clone()
    } else {
        parent.join(name.trim_end_matches(".rs"))
    };
    // Inside `mod gpu { .. }`: under `gpu/`.
    let dir = m.inline.iter().fold(dir, |d, seg| d.join(seg));
    let mut c = vec![dir.join(format!("{}.rs", m.name)), dir.join(&m.name).join("mod.rs")];
    // A file in examples/, tests/, benches/ or src/bin/ is its crate's root: beside it too.
    if m.inline.is_empty() {
        c.push(parent.join(format!("{}.rs", m.name)));
    }
    c
}

fn include_path(file: &Path, manifest: Option<&Path>, target: &scan::IncludeTarget) -> Option<PathBuf> {
    match target {
        scan::IncludeTarget::Relative(p) => Some(file.parent()?.join(p)),
        scan::IncludeTarget::ManifestDir(p) => Some(manifest?.join(p.trim_start_matches(['/', '\\']))),
        scan::IncludeTarget::Unreadable(_) => None,
    }
}

/// The files only build scripts reach through `mod` and `include!`: a package's `build.rs`
/// (or the `package.build` its Cargo.toml names), and what it declares, unless another file
/// reaches them too.
fn build_only(program: &Program, index: &std::collections::HashMap<PathBuf, usize>) -> BTreeSet<usize> {
    let edges: Vec<Vec<usize>> = (0..program.files.len())
        .map(|i| {
            let file = &program.files[i];
            let s = &program.scanned[i];
            let mods = s.mods.iter().flat_map(|m| mod_candidates(file, m));
            let incs = s
                .includes
                .iter()
                .filter_map(|inc| include_path(file, program.manifest_dirs[i].as_deref(), &inc.target));
            mods.chain(incs).filter_map(|p| index.get(&same_file(&p)).copied()).collect()
        })
        .collect();
    let is_build_script = |i: usize| {
        let file = &program.files[i];
        let Some(dir) = &program.manifest_dirs[i] else { return false };
        let named = codegen::input::read_text(&dir.join("Cargo.toml"), "Cargo.toml")
            .ok()
            .and_then(|t| t.parse::<toml::Table>().ok())
            .and_then(|t| t.get("package")?.get("build")?.as_str().map(|b| dir.join(b)));
        match named {
            Some(b) => *file == b,
            None => *file == dir.join("build.rs"),
        }
    };
    let reach = |starts: Vec<usize>| {
        let mut seen = vec![false; program.files.len()];
        let mut stack = starts;
        while let Some(i) = stack.pop() {
            if !std::mem::replace(&mut seen[i], true) {
                stack.extend(edges[i].iter().copied());
            }
        }
        seen
    };
    let scripts: Vec<usize> = (0..program.files.len()).filter(|&i| is_build_script(i)).collect();
    let from_scripts = reach(scripts);
    let others = reach((0..program.files.len()).filter(|&i| !from_scripts[i]).collect());
    (0..program.files.len()).filter(|&i| from_scripts[i] && !others[i]).collect()
}

/// The two narrowings (see the module docs): where a path provably starts at the crate.
struct Narrowing<'a> {
    /// Names the program binds itself (`mod x`, `let x`, ...) or imports from elsewhere.
    foreign: HashSet<&'a str>,
    /// Names imported from the crate, and the paths they name (`aliases` ->
    /// `cuda_driver_pfn::aliases`, `cuda` -> `cuda_driver_pfn`).
    imports: std::collections::HashMap<&'a str, BTreeSet<&'a [String]>>,
    crate_idents: &'a BTreeSet<String>,
}

impl<'a> Narrowing<'a> {
    fn new(program: &'a Program) -> Self {
        let mut foreign = HashSet::new();
        let mut imports: std::collections::HashMap<&str, BTreeSet<&[String]>> = std::collections::HashMap::new();
        for (i, s) in program.scanned.iter().enumerate() {
            if program.build_only.contains(&i) {
                continue;
            }
            foreign.extend(s.bound.iter().map(String::as_str));
            for u in &s.uses {
                let Some(name) = u.name.as_deref() else { continue };
                let root = u.path.iter().find(|s| !matches!(s.as_str(), "crate" | "self" | "super"));
                if root.is_some_and(|r| program.crate_idents.contains(r)) {
                    imports.entry(name).or_default().insert(&u.path);
                } else {
                    foreign.insert(name);
                }
            }
        }
        // A macro that imports from the crate under a name its caller picks (`use
        // cuda_driver_pfn::api as $name;`) may bind any imported name to anything of the crate:
        // no import proves a path then, only the crate's own names do.
        let macro_made = program.scanned.iter().flat_map(|s| &s.uses).any(|u| {
            u.name.as_deref().is_some_and(|n| n.starts_with('$'))
                && u.path
                    .iter()
                    .find(|s| !matches!(s.as_str(), "crate" | "self" | "super"))
                    .is_some_and(|r| program.crate_idents.contains(r))
        });
        if macro_made {
            imports.clear();
        }
        Narrowing { foreign, imports, crate_idents: &program.crate_idents }
    }

    /// The module of the crate that `path` (root first) names, as segments after the crate's
    /// name (`["aliases", "cuda_12_9"]`); `None` unless it provably starts at the crate: at its
    /// name or a rename, or at a name the program imports from it and binds nothing else to.
    fn crate_module(&self, path: &'a [String], leading: bool) -> Option<Vec<&'a str>> {
        let skip = path.iter().take_while(|s| matches!(s.as_str(), "crate" | "self" | "super")).count();
        let rest = &path[skip..];
        let root = rest.first()?;
        if self.foreign.contains(root.as_str()) {
            return None;
        }
        if self.crate_idents.contains(root) {
            return Some(rest[1..].iter().map(String::as_str).collect());
        }
        let meant = self.imports.get(root.as_str()).filter(|m| m.len() == 1 && !leading)?;
        let target = meant.iter().next()?;
        let inner = target.iter().skip_while(|s| !self.crate_idents.contains(*s)).skip(1);
        Some(inner.chain(&rest[1..]).map(String::as_str).collect())
    }
}

pub(crate) fn evaluate(program: &Program, reg: &Registry, releases: &Releases, gpu: Option<u32>) -> Floor {
    let mut unused = Vec::new();
    let narrowing = Narrowing::new(program);
    let mut uses: BTreeMap<String, Use> = BTreeMap::new();
    let mut kernels: Vec<Kernel> = Vec::new();
    let mut unresolved = Vec::new();
    for (fi, (file, s)) in program.files.iter().zip(&program.scanned).enumerate() {
        if program.build_only.contains(&fi) {
            continue;
        }
        let mut hits: Vec<&scan::Hit> = s.hits.iter().collect();
        hits.sort_by_key(|h| h.line);
        for h in hits {
            let Some(m) = reg.meanings(&h.name) else {
                // A name shaped like the crate's that its registry lacks: misspelt, or from a
                // newer crate. Only where the path says it is the crate's.
                let in_crate_path = h.opens_macro.as_deref().is_some_and(|m| m.starts_with("cu"))
                    || h.prefix.last().is_some_and(|p| matches!(p.as_str(), "entries" | "api" | "pfn" | "symbols"));
                if in_crate_path && !h.string {
                    unresolved.push(Unresolved::in_source(
                        h.spelled(),
                        file,
                        h.line,
                        format!(
                            "not in the registry (misspelt, or a name of a newer crate: regenerate it, or pass its \
                             registry.json with --registry); {} entries and {} toolkits known",
                            reg.entries.len(),
                            reg.toolkits.len()
                        ),
                    ));
                }
                continue;
            };
            let Some((entry, read_as)) = meaning_of(h, m, reg, &narrowing) else { continue };
            // `newest`'s pointer turned into a type of the program's own: the ABI that type
            // describes may be any of the symbol's, so the oldest is only a lower bound.
            if read_as == "oldest ABI" && !h.string {
                if let Some(&t) = s.transmutes.iter().min() {
                    unresolved.push(Unresolved::in_source(
                        format!("{} and transmute (line {t})", h.spelled()),
                        file,
                        h.line,
                        "Driver::newest's pointer may be used as a function type of the program's own, whose ABI \
                              is not read: match the symbol's enum instead, or name the entry (entries::X)"
                            .to_owned(),
                    ));
                }
            }
            let e = &reg.entries[entry];
            uses.entry(e.marker.clone()).or_insert(Use {
                reading: Reading::Source,
                marker: e.marker.clone(),
                version: e.floor,
                spelled: h.spelled(),
                file: file.clone(),
                line: h.line,
                read_as,
            });
        }
        for (line, name) in &s.pasted {
            unresolved.push(Unresolved::in_source(
                format!("{name}!"),
                file,
                *line,
                "builds identifiers out of pieces, which cannot be read: name the entries whole (entries::X, \
                      cu!(cuX(..))) where the floor matters"
                    .to_owned(),
            ));
        }
        for m in &s.mods {
            let parent = file.parent().map(Path::to_owned).unwrap_or_default();
            for p in m.cfg_paths.iter().map(|p| parent.join(p)).filter(|p| !p.is_file()) {
                unresolved.push(Unresolved::in_source(
                    format!("#[cfg_attr(.., path = ..)] mod {};", m.name),
                    file,
                    m.line,
                    format!("{} is not there: pass the folder that holds it", p.display()),
                ));
            }
            if !mod_candidates(file, m).iter().any(|c| c.is_file()) {
                unresolved.push(Unresolved::in_source(
                    format!("mod {};", m.name),
                    file,
                    m.line,
                    format!(
                        "its file is not there ({}): pass the folder that holds it",
                        mod_candidates(file, m)
                            .iter()
                            .map(|p| p.display().to_string())
                            .collect::<Vec<_>>()
                            .join(" or ")
                    ),
                ));
            }
        }
        for l in &s.lookups {
            let spelled = format!(
                "{}({}, {})",
                l.function,
                l.symbol.as_deref().map_or("a name".to_owned(), |s| format!("{s:?}")),
                l.version.map_or("a version".to_owned(), |v| v.to_string())
            );
            match (l.symbol.as_deref(), l.version) {
                // The driver answers with the newest ABI at or below the version asked for.
                (Some(symbol), Some(v)) => {
                    // Its flags are not read from the source: the default variant's.
                    if let Some(e) = reg.newest_at(symbol, v, false) {
                        let e = &reg.entries[e];
                        uses.entry(e.marker.clone()).or_insert(Use {
                            marker: e.marker.clone(),
                            version: e.floor,
                            spelled,
                            file: file.clone(),
                            line: l.line,
                            read_as: "exact",
                            reading: Reading::Source,
                        });
                    }
                }
                _ => unresolved.push(Unresolved {
                    reading: Reading::Source,
                    spelled,
                    file: file.clone(),
                    line: l.line,
                    why:
                        "a lookup whose name or version is a value known only at run time: the program may need more; \
                          write both as literals, or use the entries' markers"
                            .to_owned(),
                }),
            }
        }
        if let Some((line, name)) = s.tables.iter().min_by_key(|(l, _)| *l) {
            unresolved.push(Unresolved::in_source(
                name.clone(),
                file,
                *line,
                "walks the registry's table at run time: which entries it looks up is not in the sources (the \
                      compiled program's records say more)"
                    .to_owned(),
            ));
        }
        for (line, name) in &s.runtime_files {
            unresolved.push(Unresolved::in_source(
                format!("{name:?}"),
                file,
                *line,
                "a kernel file read at run time: pass it to min-driver too (or embed it with include_bytes!)"
                    .to_owned(),
            ));
        }
        let from_file = |n: &str| MODULE_FROM_FILE.contains(&n.split("_v").next().unwrap_or(n));
        for h in s.hits.iter().filter(|h| !h.string && from_file(&h.name)) {
            unresolved.push(Unresolved::in_source(
                h.spelled(),
                file,
                h.line,
                "loads a kernel module from a file at run time: pass the file to min-driver too".to_owned(),
            ));
        }
        let mut image = Image::default();
        let mut images: Vec<(usize, Image)> = Vec::new();
        for (line, text) in &s.ptx {
            kernels::ptx(text, "a PTX string", &mut image);
            images.push((*line, std::mem::take(&mut image)));
        }
        for inc in &s.includes {
            let spelled = format!("{}!({})", inc.kind, describe(&inc.target));
            let Some(path) = include_path(file, program.manifest_dirs[fi].as_deref(), &inc.target) else {
                unresolved.push(Unresolved {
                    reading: Reading::Source,
                    spelled,
                    file: file.clone(),
                    line: inc.line,
                    why: "names a file only the build knows (OUT_DIR, a macro): pass the kernel files to \
                          min-driver too, or embed them by a path relative to the source"
                        .to_owned(),
                });
                continue;
            };
            if inc.kind == "include" {
                if !path.is_file() {
                    unresolved.push(Unresolved {
                        reading: Reading::Source,
                        spelled,
                        file: file.clone(),
                        line: inc.line,
                        why: format!("{} is not there", path.display()),
                    });
                }
                continue;
            }
            let regular = std::fs::metadata(&path).is_ok_and(|m| m.is_file());
            match if regular {
                std::fs::read(&path)
            } else {
                Err(std::io::Error::other("not a regular file: not opened"))
            } {
                Ok(bytes) => {
                    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                    kernels::binary(&bytes, &name, &mut image);
                    images.push((inc.line, std::mem::take(&mut image)));
                }
                Err(e) => unresolved.push(Unresolved {
                    reading: Reading::Source,
                    spelled,
                    file: file.clone(),
                    line: inc.line,
                    why: format!("{} cannot be read ({e})", path.display()),
                }),
            }
        }
        for (line, image) in images {
            let image = match gpu {
                Some(g) => {
                    let (kept, not_loaded) = kernels::for_gpu(image, g);
                    unused.extend(not_loaded.into_iter().map(|u| format!("{}:{line}: {u}", file.display())));
                    kept
                }
                None => image,
            };
            for (need, what) in image.needs {
                match kernel_floor(&need, releases) {
                    Ok((needs, version)) => kernels.push(Kernel {
                        needs,
                        version,
                        what,
                        file: file.clone(),
                        line,
                        reading: Reading::Source,
                    }),
                    Err(why) => unresolved.push(Unresolved::in_source(what, file, line, why)),
                }
            }
            for why in image.unreadable {
                unresolved.push(Unresolved::in_source("a kernel image".into(), file, line, why));
            }
        }
    }
    for p in &program.skipped {
        let why = "not a regular file (a FIFO, socket or device): skipped, not opened".to_owned();
        unresolved.push(Unresolved::in_source(p.display().to_string(), p, 0, why));
    }
    let mut uses: Vec<Use> = uses.into_values().collect();
    uses.sort_by(|a, b| b.version.cmp(&a.version).then_with(|| a.marker.cmp(&b.marker)));
    kernels.sort_by(|a, b| b.version.cmp(&a.version).then_with(|| (&a.file, a.line).cmp(&(&b.file, b.line))));
    kernels.dedup_by(|a, b| a.needs == b.needs && a.file == b.file && a.line == b.line);
    let build_only = program.build_only.iter().map(|&i| program.files[i].clone()).collect();
    Floor { uses, kernels, unresolved, build_only, unused, ..Floor::default() }
}

fn describe(t: &scan::IncludeTarget) -> String {
    match t {
        scan::IncludeTarget::Relative(p) => format!("{p:?}"),
        scan::IncludeTarget::ManifestDir(p) => format!("concat!(env!(\"CARGO_MANIFEST_DIR\"), {p:?})"),
        scan::IncludeTarget::Unreadable(w) => w.clone(),
    }
}

/// The driver functions that load a kernel image from a file whose name is a value.
const MODULE_FROM_FILE: &[&str] = &["cuModuleLoad", "cuLibraryLoadFromFile", "cuLinkAddFile"];

/// The entry a hit counts as, and how it was read.
fn meaning_of(
    h: &scan::Hit,
    m: &registry::Meanings,
    reg: &Registry,
    narrowing: &Narrowing<'_>,
) -> Option<(usize, &'static str)> {
    // Narrowed on proof: `aliases::cuda_X_Y::name`, `symbols::name`.
    let module = if h.string { None } else { narrowing.crate_module(&h.prefix, h.leading) };
    if let Some(module) = module {
        if let ["aliases", toolkit] = module.as_slice() {
            let toolkit = toolkit.strip_prefix("cuda_").map(|t| t.replacen('_', ".", 1));
            if let Some(meant) = toolkit.and_then(|t| m.c_name.get(&t)) {
                let all = meant.iter().copied().chain(m.exact.iter().copied());
                return reg.highest(all).map(|e| (e, "toolkit"));
            }
        }
        if module == ["symbols"] {
            if let Some(e) = m.symbol.as_deref().and_then(|s| reg.oldest_of_symbol(s)) {
                return Some((e, "oldest ABI"));
            }
        }
    }
    if h.string {
        // A string reaches an entry only through a lookup by name (`get_raw`, a raw
        // cuGetProcAddress, dlsym): an exported name is that entry; a symbol is found from its
        // oldest ABI on, and the type the pointer is used as is counted where it is named.
        if let Some(e) = reg.highest(m.exact.iter().copied().filter(|&e| reg.entries[e].marker != h.name)) {
            if m.symbol.as_deref().is_none_or(|s| s != h.name) {
                return Some((e, "exact"));
            }
        }
        if let Some(e) = m.symbol.as_deref().and_then(|s| reg.oldest_of_symbol(s)) {
            return Some((e, "oldest ABI"));
        }
        return reg.highest(m.exact.iter().copied()).map(|e| (e, "exact"));
    }
    let candidates: Vec<usize> = m.exact.iter().copied().chain(m.c_name.values().flatten().copied()).collect();
    // Tagged when the name's meanings as a C name (toolkits, stream modes) differ; that the
    // bare name is also the exported name of the symbol's first ABI is no news.
    let shown: Vec<usize> =
        if m.c_name.is_empty() { m.exact.clone() } else { m.c_name.values().flatten().copied().collect() };
    let floors: BTreeSet<u32> = shown.iter().map(|&e| reg.entries[e].floor).collect();
    let read_as = if floors.len() > 1 { "highest" } else { "exact" };
    reg.highest(candidates).map(|e| (e, read_as))
}

pub(crate) fn kernel_floor(need: &Need, releases: &Releases) -> std::result::Result<(String, u32), String> {
    match need {
        Need::PtxIsa(isa) => match releases.ptx(isa) {
            Some(v) => Ok((format!("PTX ISA {isa}"), v)),
            None => Err(format!(
                "PTX ISA {isa} is not in cuda-releases.toml (newest known: {}): a newer cuda-sys-gen may know it",
                releases.newest_ptx().map_or("none".to_owned(), |p| format!("{} of CUDA {}", p.isa, p.cuda))
            )),
        },
        Need::Toolkit(release) => match release.split_once('.').and_then(|(major, _)| major.parse::<u32>().ok()) {
            Some(major) => Ok((format!("a CUDA {major}.x cubin"), major * 1000)),
            None => Err(format!("CUDA {release}: not a release number")),
        },
        Need::Arch(name) => match releases.arch(name) {
            Some(a) => Ok((name.clone(), releases::cuda_number(&a.cuda).unwrap_or(u32::MAX))),
            None => Err(format!("architecture {name} is not in cuda-releases.toml: a newer cuda-sys-gen may know it")),
        },
    }
}

/// The folders of the path dependencies and workspace members the Cargo.toml at `manifest`
/// names, but not `package` (the generated crate) itself.
fn local_packages(manifest: &Path, package: &str) -> Vec<PathBuf> {
    let Some(table) = cargo_toml(manifest) else { return Vec::new() };
    let base = manifest.parent().map(Path::to_owned).unwrap_or_default();
    let mut tables = dependency_tables(&table);
    let workspace = table.get("workspace").and_then(|w| w.as_table());
    tables.extend(workspace.and_then(|w| w.get("dependencies")?.as_table()));
    let mut out: Vec<PathBuf> = dependencies(tables, package)
        .filter(|(_, _, generated)| !generated)
        .filter_map(|(_, value, _)| Some(base.join(value.get("path")?.as_str()?)))
        .collect();
    // Workspace members: literal folders, and `dir/*` globs.
    let members = workspace.and_then(|w| w.get("members")?.as_array()).into_iter().flatten().filter_map(|m| m.as_str());
    for m in members {
        match m.strip_suffix("/*") {
            Some(dir) => out.extend(
                std::fs::read_dir(base.join(dir))
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.is_dir()),
            ),
            None => out.push(base.join(m)),
        }
    }
    out
}

/// A Cargo.toml's dependency tables: `[dependencies]`, `[dev-dependencies]`,
/// `[build-dependencies]`, and the same under each `[target.'..']`.
fn dependency_tables(table: &toml::Table) -> Vec<&toml::Table> {
    let kinds = ["dependencies", "dev-dependencies", "build-dependencies"];
    let mut tables: Vec<&toml::Table> = kinds.iter().filter_map(|k| table.get(*k)?.as_table()).collect();
    for target in table.get("target").and_then(|t| t.as_table()).into_iter().flat_map(|t| t.values()) {
        tables.extend(kinds.iter().filter_map(|k| target.get(*k)?.as_table()));
    }
    tables
}

/// The names under which the Cargo.toml at `manifest` depends on `package` (`cuda = { package
/// = "cuda-driver-pfn" }` gives `cuda`), as the library names they give in Rust.
fn dependency_names(manifest: &Path, package: &str) -> Vec<String> {
    let Some(table) = cargo_toml(manifest) else { return Vec::new() };
    let tables = dependency_tables(&table);
    dependencies(tables, package)
        .filter(|(_, _, generated)| *generated)
        .map(|(key, ..)| key.replace('-', "_"))
        .collect()
}

/// The Cargo.toml at `manifest`, through the generator's reader of outside text (a FIFO or a
/// huge file is refused, not waited on); `None` where it cannot be read or parsed.
fn cargo_toml(manifest: &Path) -> Option<toml::Table> {
    codegen::input::read_text(manifest, "Cargo.toml").ok()?.parse().ok()
}

/// Every dependency of `tables`: the key it is named by, its entry, and whether it is
/// `package` (under its own name or renamed with `package = ..`).
fn dependencies<'a>(
    tables: Vec<&'a toml::Table>,
    package: &str,
) -> impl Iterator<Item = (&'a String, &'a toml::Value, bool)> {
    let wanted = package.replace('-', "_");
    tables.into_iter().flat_map(|deps| deps.iter()).map(move |(key, value)| {
        let real = value.get("package").and_then(|p| p.as_str()).unwrap_or(key);
        (key, value, real.replace('-', "_") == wanted)
    })
}

/// What a walk of folders has seen: each real folder once, however many links lead to it.
/// Compiled programs and kernel files under the folders `sources`, and the other regular files
/// beside them, for an error's hint: a walk of at most 4 levels and 4,096 entries, hidden
/// folders skipped, links not followed.
fn compiled_under(sources: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut found, mut others) = (Vec::new(), Vec::new());
    let mut budget = 4096usize;
    let mut stack: Vec<(PathBuf, usize)> = sources.iter().filter(|p| p.is_dir()).map(|p| (p.clone(), 0)).collect();
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        entries.sort();
        for p in entries {
            budget = match budget.checked_sub(1) {
                Some(b) => b,
                None => return (found, others),
            };
            let hidden = p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'));
            let Ok(meta) = std::fs::symlink_metadata(&p) else { continue };
            if meta.is_dir() && !hidden && depth < 4 {
                stack.push((p, depth + 1));
            } else if meta.is_file() {
                if is_compiled(&p) {
                    found.push(p);
                } else {
                    others.push(p);
                }
            }
        }
    }
    (found, others)
}

#[derive(Default)]
struct Walk {
    folders: HashSet<PathBuf>,
    /// Entries named `.rs` that are no regular files.
    skipped: Vec<PathBuf>,
}

/// The `.rs` files under `path`, and the Cargo.toml of every package root passed on the way.
/// Hidden folders are skipped, and `target` only where it is a package root's (beside a
/// Cargo.toml): a module folder of that name is read. Each real folder is walked once (links
/// resolved, so two links to `.` end); FIFOs, sockets and devices named `.rs` are not opened
/// (reading one could wait forever) and are listed.
fn collect(path: &Path, walk: &mut Walk, out: &mut Vec<PathBuf>, manifests: &mut BTreeSet<PathBuf>) -> Result<()> {
    let meta = std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?;
    if meta.is_file() {
        if let Some(what) = not_rust_source(path) {
            bail!("{}: {what}", path.display());
        }
        out.push(path.to_owned());
        return Ok(());
    }
    if !meta.is_dir() {
        bail!("{}: neither a file nor a folder (a FIFO, socket or device): pass the program's sources", path.display());
    }
    if !walk.folders.insert(same_file(path)) {
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .with_context(|| format!("listing {}", path.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()
        .with_context(|| format!("listing {}", path.display()))?;
    entries.sort();
    let package_root = path.join("Cargo.toml").is_file();
    if package_root {
        manifests.insert(path.join("Cargo.toml"));
    }
    for p in entries {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name.starts_with('.') || (package_root && name == "target") {
            continue;
        }
        // Through links: what the entry is in the end (a dangling link is neither).
        let Ok(meta) = std::fs::metadata(&p) else { continue };
        if meta.is_dir() {
            collect(&p, walk, out, manifests)?;
        } else if name.ends_with(".rs") {
            if meta.is_file() {
                out.push(p);
            } else {
                walk.skipped.push(p);
            }
        }
    }
    Ok(())
}

/// The floor is a pure function of what was read ([`evaluate`]): these build a program from
/// texts in memory, with the repository's registry, and no file of the program is read.
#[cfg(test)]
mod tests {
    use super::*;

    fn registry() -> Registry {
        Registry::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated/registry.json")).unwrap()
    }

    /// One file `src/main.rs` of a package that depends on the generated crate.
    fn floor_of(text: &str) -> Floor {
        let reg = registry();
        let scanned = scan::scan(text, &|s| wanted(&reg, s)).unwrap();
        let program = Program {
            files: vec![PathBuf::from("src/main.rs")],
            scanned: vec![scanned],
            manifest_dirs: vec![None],
            build_only: BTreeSet::new(),
            crate_idents: BTreeSet::from(["cuda_driver_pfn".to_owned()]),
            skipped: Vec::new(),
        };
        evaluate(&program, &reg, &Releases::load().unwrap(), None)
    }

    #[test]
    fn a_c_name_counts_as_its_highest_meaning() {
        let f = floor_of("fn main() { unsafe { cu!(cuCtxCreate(&mut c, std::ptr::null_mut(), 0, d)) }; }");
        let reg = registry();
        let highest = reg.entries[reg.highest_meaning("cuCtxCreate").unwrap()].floor;
        assert_eq!(f.version(), highest);
        assert!(!f.at_least());
        assert_eq!(f.uses[0].read_as, "highest");
    }

    #[test]
    fn a_toolkit_s_alias_narrows_and_a_pasted_name_makes_it_at_least() {
        // The path proves the meaning; a bare `cuCtxCreate` after a `use` would count as the
        // highest (the scan does not resolve names).
        let narrowed = floor_of("fn f() { cuda_driver_pfn::aliases::cuda_12_4::cuCtxCreate }");
        assert!(narrowed.version() < 12050, "12.4's cuCtxCreate is older than 12.5's ABI: {:?}", narrowed.uses);
        assert_eq!(narrowed.uses[0].read_as, "toolkit");
        let pasted = floor_of("paste::paste! { fn f() { [<cuCtx Create>](); } }");
        assert!(pasted.at_least(), "{:?}", pasted.unresolved);
    }

    #[test]
    fn a_ptx_string_needs_the_release_that_jit_compiles_it() {
        let f = floor_of("const K: &str = \".version 8.5\\n.target sm_90\\n.address_size 64\\n\";");
        assert_eq!(f.kernels.iter().map(|k| k.version).max(), Some(12050), "{:?}", f.kernels);
    }
}
