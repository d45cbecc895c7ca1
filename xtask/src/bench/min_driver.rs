//! `min-driver` over every `.rs` file of the generated crate itself (its sources and
//! examples: 7 MB of Rust), against syn's bare parse of the same files, in one process,
//! alternately, run after run. The baseline is the least any syntax-based reader must do;
//! min-driver lexes every token and looks each name up, and reads its registry. Then
//! min-driver over compiled programs (rustc's own driver library; a synthetic program of 400 MB
//! shaped as PyTorch's `libtorch_cuda.so`, 5400 zstd fatbin entries; one of 419 MB of strings
//! dense with `cu` words, shaped as JAX's `xla_cuda_plugin.so`; a 4 GiB sparse one) against
//! the `object` crate's bare parse of each (the file read, every section's bytes taken), with
//! min-driver's peak memory in a process of its own.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};

use super::{Env, Paired, Row, Target};
use crate::progress;

pub fn run(env: &Env, runs: usize) -> Result<(Vec<Row>, Vec<String>)> {
    let crate_dir = env.root.join("generated");
    let registry = crate_dir.join("registry.json");
    let mut files = Vec::new();
    collect(&crate_dir, &mut files)?;
    files.sort();
    let bytes: u64 = files.iter().map(|f| std::fs::metadata(f).map_or(0, |m| m.len())).sum();
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    for i in 0..runs {
        let t = Instant::now();
        let floor = cuda_sys_gen::min_driver::floor(&registry, std::slice::from_ref(&crate_dir))
            .context("min-driver over the generated crate")?;
        ours.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        for f in &files {
            let text = std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
            let file = syn::parse_file(&text).with_context(|| format!("syn cannot parse {}", f.display()))?;
            std::hint::black_box(&file);
        }
        base.push(t.elapsed().as_secs_f64() * 1000.0);
        progress!(
            "min-driver run {}/{runs}: {:.0} ms, syn {:.0} ms ({} entries)",
            i + 1,
            ours[i],
            base[i],
            floor.uses.len()
        );
    }
    let metric = format!("min-driver over the generated crate ({} files, {:.1} MB)", files.len(), bytes as f64 / 1e6);
    let row = Paired {
        metric,
        baseline_name: "syn::parse_file of the same files",
        unit: "ms",
        digits: 0,
        ours,
        base,
        target: Target::None,
    }
    .row();
    let mut rows = vec![row];
    let mut notes = Vec::new();
    match large_release_binary() {
        Some(program) => rows.push(over_binary(&registry, &program, runs)?),
        None => notes.push("no release binary of 50 MB or more found (rustc's librustc_driver): min-driver over a compiled program not measured".to_owned()),
    }
    let synthetic = synthetic_program(&env.root.join("target/bench"))?;
    rows.push(over_binary(&registry, &synthetic, runs.min(3))?);
    notes.push(peak_memory(&registry, &synthetic)?);
    let strings = strings_program(&env.root.join("target/bench"), &registry)?;
    rows.push(over_binary(&registry, &strings, runs.min(3))?);
    notes.push(peak_memory(&registry, &strings)?);
    let sparse = sparse_program(&env.root.join("target/bench"), &synthetic)?;
    rows.push(over_binary(&registry, &sparse, runs.min(3))?);
    notes.push(peak_memory(&registry, &sparse)?);
    Ok((rows, notes))
}

/// How many fatbin containers the synthetic program holds (each two cubins and one PTX), and
/// the size of each cubin in them.
const SYNTHETIC_CONTAINERS: usize = 1800;
const SYNTHETIC_CUBIN: usize = 160 << 10;

/// A program of 400 MB or more made here, the same bytes every time, shaped as PyTorch's
/// `libtorch_cuda.so` is: an ELF shared object whose `.nv_fatbin` holds 1800 fatbin containers,
/// each a zstd-compressed cubin for sm_90 and one for sm_100 by "ptxas 13.0" (ELF ABI 8, the
/// toolkit note 16 KiB in, past a string table, as a real cubin's `.strtab` comes first) and
/// zstd-compressed PTX for sm_100 (entry flag 0x8000, as nvcc 13's default): 5400 compressed
/// entries. The cubins' bytes are a xorshift stream over 64 letters, so that they compress
/// about as much as real ones (to three quarters) and decompressing them is real work. Kept
/// under target/bench/ once made.
fn synthetic_program(dir: &std::path::Path) -> Result<PathBuf> {
    let path = dir.join(format!("min-driver-synthetic-zstd-{SYNTHETIC_CONTAINERS}x{SYNTHETIC_CUBIN}.so"));
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > 400_000_000) {
        return Ok(path);
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut fatbin = Vec::new();
    let zstd = |bytes: &[u8]| ruzstd::encoding::compress_to_vec(bytes, ruzstd::encoding::CompressionLevel::Fastest);
    // One entry: its 64-byte header, then the payload padded to 8 bytes.
    let entry = |kind: u16, arch: u32, version: (u16, u16), payload: &[u8], size: usize| {
        let padded = (payload.len() + 7) & !7;
        let mut e = vec![0u8; 64];
        e[..2].copy_from_slice(&kind.to_le_bytes());
        e[2..4].copy_from_slice(&0x0101u16.to_le_bytes());
        e[4..8].copy_from_slice(&64u32.to_le_bytes());
        e[8..16].copy_from_slice(&(padded as u64).to_le_bytes());
        e[16..20].copy_from_slice(&(payload.len() as u32).to_le_bytes());
        e[24..26].copy_from_slice(&version.0.to_le_bytes());
        e[26..28].copy_from_slice(&version.1.to_le_bytes());
        e[28..32].copy_from_slice(&arch.to_le_bytes());
        e[40..48].copy_from_slice(&0x8011u64.to_le_bytes());
        e[56..64].copy_from_slice(&(size as u64).to_le_bytes());
        e.extend_from_slice(payload);
        e.resize(64 + padded, 0);
        e
    };
    for _ in 0..SYNTHETIC_CONTAINERS {
        let mut entries = Vec::new();
        for sm in [90u32, 100] {
            let mut cubin = vec![0u8; SYNTHETIC_CUBIN];
            cubin[..4].copy_from_slice(b"\x7fELF");
            cubin[4] = 2;
            cubin[5] = 1;
            cubin[6] = 1;
            cubin[7] = 0x41;
            cubin[8] = 8;
            cubin[16] = 2;
            cubin[18..20].copy_from_slice(&190u16.to_le_bytes());
            cubin[48..52].copy_from_slice(&(0x0600_0002 | (sm << 8)).to_le_bytes());
            for b in cubin[64..].iter_mut() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                *b = b'0' + (state & 0x3f) as u8;
            }
            let note = b"\0Cuda compilation tools, release 13.0, V13.0.88\0";
            cubin[(16 << 10)..(16 << 10) + note.len()].copy_from_slice(note);
            entries.extend(entry(2, sm, (8, 1), &zstd(&cubin), cubin.len()));
        }
        let ptx = format!(
            "//\n// Generated by NVIDIA NVVM Compiler\n//\n\n.version 9.0\n.target sm_100\n.address_size 64\n\n{}\0",
            ".visible .entry k() { ret; }\n".repeat(256)
        );
        entries.extend(entry(1, 100, (0, 9), &zstd(ptx.as_bytes()), ptx.len()));
        fatbin.extend_from_slice(&0xBA55_ED50u32.to_le_bytes());
        fatbin.extend_from_slice(&1u16.to_le_bytes());
        fatbin.extend_from_slice(&16u16.to_le_bytes());
        fatbin.extend_from_slice(&(entries.len() as u64).to_le_bytes());
        fatbin.extend_from_slice(&entries);
    }
    write_elf(&path, ".nv_fatbin", &fatbin, 0)?;
    Ok(path)
}

/// An ELF64 shared object whose one allocated section `name` holds `data` then `hole` bytes
/// never written (a sparse file's hole where the file system makes one), written whole to
/// `path` or not at all.
fn write_elf(path: &std::path::Path, name: &str, data: &[u8], hole: u64) -> Result<()> {
    use std::io::{Seek, Write};
    let names = format!("\0{name}\0.shstrtab\0");
    let data_at = 0x1000u64;
    let size = data.len() as u64 + hole;
    let names_at = data_at + size;
    let shoff = (names_at + names.len() as u64 + 7) & !7;
    let mut elf = vec![0u8; 64];
    elf[..4].copy_from_slice(b"\x7fELF");
    elf[4] = 2;
    elf[5] = 1;
    elf[6] = 1;
    elf[16..18].copy_from_slice(&3u16.to_le_bytes());
    elf[18..20].copy_from_slice(&62u16.to_le_bytes());
    elf[20..24].copy_from_slice(&1u32.to_le_bytes());
    elf[40..48].copy_from_slice(&shoff.to_le_bytes());
    elf[52..54].copy_from_slice(&64u16.to_le_bytes());
    elf[58..60].copy_from_slice(&64u16.to_le_bytes());
    elf[60..62].copy_from_slice(&3u16.to_le_bytes());
    elf[62..64].copy_from_slice(&2u16.to_le_bytes());
    elf.resize(data_at as usize, 0);
    let section = |name: u32, kind: u32, flags: u64, offset: u64, size: u64| {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(&name.to_le_bytes());
        h[4..8].copy_from_slice(&kind.to_le_bytes());
        h[8..16].copy_from_slice(&flags.to_le_bytes());
        h[16..24].copy_from_slice(&offset.to_le_bytes());
        h[24..32].copy_from_slice(&offset.to_le_bytes());
        h[32..40].copy_from_slice(&size.to_le_bytes());
        h[48..56].copy_from_slice(&8u64.to_le_bytes());
        h
    };
    let mut tail = names.as_bytes().to_vec();
    tail.resize((shoff - names_at) as usize, 0);
    tail.extend_from_slice(&[0u8; 64]);
    tail.extend(section(1, 1, 2, data_at, size));
    tail.extend(section(name.len() as u32 + 2, 3, 0, names_at, names.len() as u64));
    let partial = path.with_extension("partial");
    let mut f = std::fs::File::create(&partial).with_context(|| format!("writing {}", partial.display()))?;
    f.write_all(&elf)?;
    f.write_all(data)?;
    f.seek(std::io::SeekFrom::Start(names_at))?;
    f.write_all(&tail)?;
    drop(f);
    std::fs::rename(&partial, path).with_context(|| format!("renaming into {}", path.display()))?;
    Ok(())
}

/// How many bytes of strings the program shaped as JAX's plugin holds.
const STRINGS_BYTES: usize = 400 << 20;

/// A program of 419 MB made here, the same bytes every time, shaped as JAX's
/// `xla_cuda_plugin.so` (411 MB, CUDA 13): no fatbin, and one allocated section of strings
/// (NUL-ended, as C++ writes them) dense with `cu` words: the CUDA libraries' own names
/// (`cuDNN`, `cuBLASLt`, `cudnnConvolutionForward`, `cuda::std::`), C++ names run together
/// with them, and every name of the registry now and then, as XLA's tables of driver functions
/// hold them. Kept under target/bench/ once made.
fn strings_program(dir: &std::path::Path, registry: &std::path::Path) -> Result<PathBuf> {
    let path = dir.join(format!("min-driver-synthetic-strings-{}MiB.so", STRINGS_BYTES >> 20));
    if std::fs::metadata(&path).is_ok_and(|m| m.len() >= STRINGS_BYTES as u64) {
        return Ok(path);
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let text = std::fs::read_to_string(registry).with_context(|| format!("reading {}", registry.display()))?;
    // Each entry's exported name (`"exported": "cuCtxCreate_v4"`).
    let names: Vec<&str> = text
        .split("\"exported\": \"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .filter(|n| n.starts_with("cu"))
        .collect();
    let words: &[&str] = &[
        "cuDNN",
        "cuBLASLt",
        "cuBLAS",
        "cuFFT",
        "cuSPARSE",
        "cuSOLVER",
        "cuTENSOR",
        "cudnnConvolutionForward",
        "cudaStreamSynchronize",
        "cuda::std::__4::tuple",
        "_ZN3xla3gpu17CudnnFusedConvRewriter",
        "CUDA_ERROR_OUT_OF_MEMORY",
        "cuDnnFusedMHAThunk",
        "cuMemAllocAsyncHandle",
        "cuCtxCreateWrapper",
        "cuLaunchKernelExWithAttributes",
        "xla_gpu_enable_cublaslt",
        "stream_executor::gpu::GpuDriver::",
    ];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut data = Vec::with_capacity(STRINGS_BYTES + 256);
    while data.len() < STRINGS_BYTES {
        let r = next();
        // One string of 1 to 4 words run together; one in 64 a registry name.
        for k in 0..=(r & 3) {
            let pick = (r >> (8 + 8 * k)) as usize;
            if pick % 64 == 0 && !names.is_empty() {
                data.extend_from_slice(names[(pick >> 6) % names.len()].as_bytes());
            } else {
                data.extend_from_slice(words[pick % words.len()].as_bytes());
            }
        }
        data.push(0);
    }
    write_elf(&path, ".rodata", &data, 0)?;
    Ok(path)
}

/// A 4 GiB program of about 1 MB of data: a fatbin (the synthetic program's first 8
/// containers), then a hole of 4 GiB in the same section. Its holes are never read or searched:
/// time and memory follow its data, not its size.
fn sparse_program(dir: &std::path::Path, synthetic: &std::path::Path) -> Result<PathBuf> {
    let path = dir.join("min-driver-sparse-4GiB.so");
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > 4 << 30) {
        return Ok(path);
    }
    let bytes = std::fs::read(synthetic).with_context(|| format!("reading {}", synthetic.display()))?;
    // The containers of the synthetic program's section, up to about 1 MB.
    let mut end = 0x1000usize;
    while end < 0x1000 + (1 << 20) {
        let size = bytes.get(end + 8..end + 16).map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])));
        end += 16 + size as usize;
    }
    write_elf(&path, ".nv_fatbin", &bytes[0x1000..end], 4 << 30)?;
    Ok(path)
}

/// min-driver's peak resident memory over `program`, in a process of its own, against the
/// file's size and its largest section.
fn peak_memory(registry: &std::path::Path, program: &std::path::Path) -> Result<String> {
    let exe = std::env::current_exe().context("this executable's path")?;
    let out = std::process::Command::new(exe)
        .arg("bench-min-driver")
        .arg("--registry")
        .arg(registry)
        .arg(program)
        .output()
        .context("running min-driver in a process of its own")?;
    anyhow::ensure!(
        out.status.success(),
        "min-driver over {}: {}",
        program.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    // The child prints its floor and its own VmHWM ("414668 kB").
    let text = String::from_utf8_lossy(&out.stdout);
    let peak_kib: f64 = text.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0.0);
    let meta = std::fs::metadata(program)?;
    let size = meta.len();
    // The bytes the file holds on disk (a sparse file's holes take none): its one section's data.
    #[cfg(unix)]
    let data = std::os::unix::fs::MetadataExt::blocks(&meta).saturating_mul(512).min(size);
    #[cfg(not(unix))]
    let data = size;
    let peak = peak_kib * 1024.0;
    // What a process of this binary holds before it reads anything (the registry, the code).
    let base = 64e6;
    let met = peak <= 2.0 * data as f64 + base;
    Ok(format!(
        "min-driver's peak memory over {} ({:.0} MB, one section of about that size, {:.1} MB of it data): {:.0} MB \
         (its process's VmHWM); goal: under 2x the section's data + 64 MB: {}",
        program.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        size as f64 / 1e6,
        data as f64 / 1e6,
        peak / 1e6,
        if met { "met" } else { "NOT met" }
    ))
}

/// A release binary of 50 MB or more that is on every machine that builds this: rustc's own
/// `librustc_driver-*.so` (or `.dll`), in the sysroot's `lib` (`bin` on Windows).
fn large_release_binary() -> Option<PathBuf> {
    let out = std::process::Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
        .args(["--print", "sysroot"])
        .output()
        .ok()?;
    let sysroot = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    ["lib", "bin"]
        .iter()
        .filter_map(|d| std::fs::read_dir(sysroot.join(d)).ok())
        .flatten()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            name.starts_with("librustc_driver") && std::fs::metadata(p).is_ok_and(|m| m.len() >= 50_000_000)
        })
}

/// min-driver over a compiled program against the object crate's bare parse of it (both read
/// the file), alternately.
fn over_binary(registry: &std::path::Path, program: &std::path::Path, runs: usize) -> Result<Row> {
    let size = std::fs::metadata(program)?.len();
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    for i in 0..runs {
        let t = Instant::now();
        let floor = cuda_sys_gen::min_driver::floor_of_programs(registry, &[program.to_owned()])?;
        ours.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        let data = std::fs::read(program)?;
        std::hint::black_box(cuda_sys_gen::min_driver::object_bare_parse(&data)?);
        base.push(t.elapsed().as_secs_f64() * 1000.0);
        progress!(
            "min-driver over a binary, run {}/{runs}: {:.0} ms, object {:.0} ms ({} entries)",
            i + 1,
            ours[i],
            base[i],
            floor.uses.len()
        );
    }
    Ok(Paired {
        metric: format!(
            "min-driver over a compiled program ({}, {:.0} MB)",
            program.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            size as f64 / 1e6
        ),
        baseline_name: "object's bare parse of the same file",
        unit: "ms",
        digits: 0,
        ours,
        base,
        // Within 2x of the object crate's bare parse (which reads the whole file: for a sparse
        // one, its holes too).
        target: Target::Ratio(2.0),
    }
    .row())
}

fn collect(dir: &std::path::Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for e in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let p = e?.path();
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if p.is_dir() {
            collect(&p, out)?;
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
    Ok(())
}
