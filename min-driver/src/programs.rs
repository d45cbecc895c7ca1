//! The floor of compiled programs and kernel files: each file, and each member of an archive,
//! handed to its reader (`binary.rs` for ELF, PE, Mach-O and COFF; a kernel file read as one),
//! whose evidence `model.rs` turns into needs. Nothing here decides what evidence means.

use super::*;

/// The floor of compiled programs: the records of the generated crate they hold, the libcuda
/// functions they import, the names their strings hold where they look functions up by name
/// without records, the CUDA runtime they link, and the kernels they embed. For linked code
/// the records are exact: the linker kept those of the lookups in the code it kept.
pub fn floor_of_programs<'a>(registry: impl Into<RegistrySource<'a>>, programs: &[PathBuf]) -> Result<Floor> {
    floor_of_programs_on(registry, programs, None)
}

/// [`floor_of_programs`] on a GPU of compute capability `gpu` (see [`floor_on`]).
pub fn floor_of_programs_on<'a>(
    registry: impl Into<RegistrySource<'a>>,
    programs: &[PathBuf],
    gpu: Option<u32>,
) -> Result<Floor> {
    let reg = registry.into().load()?;
    let releases = Releases::load()?;
    let mut floor = Floor::default();
    let mut cubin_sets: Vec<Vec<String>> = Vec::new();
    for p in programs {
        let meta = std::fs::metadata(p).with_context(|| format!("reading {}", p.display()))?;
        if !meta.is_file() {
            bail!("{}: not a regular file (a FIFO, socket or device): pass a program or kernel file", p.display());
        }
        let size = meta.len();
        let head = head_of(p).unwrap_or_default();
        let mut found: Vec<(String, u64, model::Evidence)> = Vec::new();
        match kernel_file(p, &head) {
            Some(kind) => {
                let data = std::fs::read(p).with_context(|| format!("reading {}", p.display()))?;
                found.push((p.display().to_string(), size, kernel_evidence(p, kind, &data)));
            }
            None => {
                // Only the headers and the sections read are held (a sparse file's holes, and
                // what lies between sections, are never read).
                let file = std::fs::File::open(p).with_context(|| format!("reading {}", p.display()))?;
                let cache = object::ReadCache::new(&file);
                if head.starts_with(b"!<arch>\n") || head.starts_with(b"!<thin>\n") {
                    read_archive(&cache, &p.display().to_string(), 0, &reg, &mut found)?;
                    if found.is_empty() {
                        // Named for what it is, though nothing in it is read.
                        let format = "an archive with no object file or kernel file among its members".to_owned();
                        found.push((
                            p.display().to_string(),
                            size,
                            model::Evidence { file: p.clone(), format, ..Default::default() },
                        ));
                    }
                } else {
                    let tables = binary::string_tables(&cache);
                    let data = binary::Tables { cache: &cache, tables: &tables };
                    found.push((p.display().to_string(), size, binary::collect(p, data, Some(&file), &reg)?));
                }
            }
        }
        for (shown, size, evidence) in found {
            let read = model::decide(evidence, &reg, &releases, gpu);
            floor.notes.extend(read.notes);
            floor.runtimes.extend(read.runtimes);
            if !read.cubin_gpus.is_empty() {
                cubin_sets.push(read.cubin_gpus);
            }
            floor.programs.push(format!(
                "{shown} ({}, {size} bytes): {} record(s) of the generated crate",
                read.format, read.records
            ));
            floor.uses.extend(read.uses);
            floor.kernels.extend(read.kernels);
            floor.unresolved.extend(read.unresolved);
            floor.unused.extend(read.unused);
            floor.not_read.extend(read.not_read);
        }
    }
    // A library given too was read.
    let given: BTreeSet<&std::ffi::OsStr> = programs.iter().filter_map(|p| p.file_name()).collect();
    floor.not_read.retain(|lib| !given.contains(std::ffi::OsStr::new(lib)));
    floor.not_read.sort();
    floor.not_read.dedup();
    floor.uses.sort_by(|a, b| b.version.cmp(&a.version).then_with(|| a.marker.cmp(&b.marker)));
    floor.uses.dedup_by(|a, b| a.marker == b.marker);
    // At one version, what every GPU needs sets the floor before what only JIT-compiling does.
    floor.kernels.sort_by(|a, b| {
        b.version
            .cmp(&a.version)
            .then_with(|| (a.reading == Reading::Jit).cmp(&(b.reading == Reading::Jit)))
            .then_with(|| a.needs.cmp(&b.needs))
    });
    floor.runtimes.sort();
    floor.runtimes.dedup();
    // The GPUs every file's fatbins hold cubins for (by name; none may be common to all).
    floor.cubin_gpus = cubin_sets.first().cloned().unwrap_or_default();
    for set in &cubin_sets[1.min(cubin_sets.len())..] {
        floor.cubin_gpus.retain(|g| set.contains(g));
    }
    floor
        .cubin_gpus
        .sort_by_key(|a| a.trim_start_matches("sm_").trim_end_matches(char::is_alphabetic).parse::<u32>().unwrap_or(0));
    Ok(floor)
}

/// A kernel file `path` of `kind` ([`kernel_file`]), its bytes `data`, read as one.
fn kernel_evidence(path: &Path, kind: &str, data: &[u8]) -> model::Evidence {
    let mut ev = model::Evidence {
        file: path.to_owned(),
        format: format!("a {kind} file, read as a kernel"),
        kernel_file: true,
        ..model::Evidence::default()
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    match kind {
        "PTX" => kernels::ptx(&String::from_utf8_lossy(data), &name, &mut ev.image),
        "fatbin" | "cubin" => kernels::binary(data, &name, &mut ev.image),
        _ => ev.image.unreadable.push(format!(
            "{name}: named as a kernel file, but neither a fatbin nor a cubin for EM_CUDA: its needs are not read"
        )),
    }
    ev
}

/// How deep archives inside archives are read.
const ARCHIVE_DEPTH: usize = 8;

/// The members of the archive `data` (`shown` in the report; `depth` archives deep): each
/// object read as a program, each kernel file as a kernel, each archive as an archive. A member
/// that cannot be read is said, so the floor is "at least"; one that is neither an object nor
/// a kernel file (a linker takes neither) holds nothing the driver loads.
fn read_archive<'d, R: object::ReadRef<'d>>(
    data: R,
    shown: &str,
    depth: usize,
    reg: &Registry,
    found: &mut Vec<(String, u64, model::Evidence)>,
) -> Result<()> {
    let archive = object::read::archive::ArchiveFile::parse(data)
        .map_err(|e| anyhow::anyhow!("{shown}: an archive the object crate cannot read ({e})"))?;
    for member in archive.members() {
        let member = member.map_err(|e| anyhow::anyhow!("{shown}: an archive member ({e})"))?;
        let name = String::from_utf8_lossy(member.name()).into_owned();
        let shown = format!("{shown}({name})");
        let unread = |why: String| model::Evidence {
            file: PathBuf::from(&shown),
            format: "a member of an archive".into(),
            unreadable: vec![Unresolved {
                spelled: format!("archive member {name}"),
                file: PathBuf::from(&shown),
                line: 0,
                why,
                reading: Reading::Record,
            }],
            ..model::Evidence::default()
        };
        let bytes = match member.data(data) {
            Ok(b) => b,
            Err(e) => {
                let why = if member.is_thin() {
                    format!("a thin archive's member, kept outside it ({e}): pass {name} itself")
                } else {
                    format!("its bytes cannot be read ({e})")
                };
                found.push((shown.clone(), 0, unread(why)));
                continue;
            }
        };
        let head = &bytes[..bytes.len().min(HEAD)];
        if bytes.starts_with(b"!<arch>\n") || bytes.starts_with(b"!<thin>\n") {
            if depth + 1 >= ARCHIVE_DEPTH {
                let why = format!("an archive {ARCHIVE_DEPTH} archives deep: not read");
                found.push((shown.clone(), bytes.len() as u64, unread(why)));
            } else {
                read_archive(bytes, &shown, depth + 1, reg, found)?;
            }
        } else if let Some(kind) = kernel_file(Path::new(&name), head) {
            let mut ev = kernel_evidence(Path::new(&shown), kind, bytes);
            ev.format = format!("{}, a member of an archive", ev.format);
            found.push((shown, bytes.len() as u64, ev));
        } else if binary::is_binary(bytes) {
            // The object crate reads an ELF file only from bytes aligned as its headers are; a
            // member of an archive inside another may lie at any offset.
            let copy;
            let aligned = if bytes.as_ptr().align_offset(8) == 0 {
                bytes
            } else {
                copy = bytes.to_vec();
                &copy[..]
            };
            match binary::collect(Path::new(&shown), aligned, None, reg) {
                Ok(mut ev) => {
                    ev.format = format!("{}, a member of an archive", ev.format);
                    found.push((shown, bytes.len() as u64, ev));
                }
                Err(e) => found.push((shown.clone(), bytes.len() as u64, unread(format!("{e:#}")))),
            }
        }
    }
    Ok(())
}

/// The benchmarks' baseline for [`floor_of_programs`]: the least any reader of a compiled
/// program does, the `object` crate's parse of it, every section's bytes taken and its symbols
/// walked. Returns the bytes and symbols seen.
pub fn object_bare_parse(data: &[u8]) -> Result<(usize, usize)> {
    use object::{Object, ObjectSection};
    let file = object::File::parse(data)?;
    let bytes = file.sections().map(|s| s.data().map_or(0, <[u8]>::len)).sum();
    Ok((bytes, file.symbols().count() + file.dynamic_symbols().count()))
}
