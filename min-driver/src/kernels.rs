//! The kernels a program embeds: PTX text (its `.version` and `.target`), cubins (ELF for
//! `EM_CUDA`, the architecture in `e_flags`) and fatbins (a container of PTX and cubins).

use object::read::elf::{ElfFile64, FileHeader};
use object::Endianness;

/// What one kernel image needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Need {
    /// PTX ISA `X.Y` (its `.version`).
    PtxIsa(String),
    /// A GPU architecture (`sm_90a`), from PTX's `.target` or a cubin's header.
    Arch(String),
    /// A cubin built by this CUDA release's ptxas (`13.5`): drivers of its major version load
    /// it (NVIDIA's minor version compatibility), older majors do not.
    Toolkit(String),
}

/// What could be read of one image, and what could not.
#[derive(Debug, Default)]
pub(super) struct Image {
    pub needs: Vec<(Need, String)>,
    /// Per need, the fatbin entry it comes from (`None`: not from a fatbin).
    pub tags: Vec<Option<Tag>>,
    /// Parts that could not be read, and why.
    pub unreadable: Vec<String>,
    /// The fatbin entry being read, and how many containers were read.
    current: Option<Tag>,
    containers: usize,
}

/// A fatbin entry: its container, its index in it, and whether it is PTX.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Tag {
    pub container: usize,
    pub entry: usize,
    pub ptx: bool,
}

impl Image {
    fn push_need(&mut self, need: (Need, String)) {
        self.needs.push(need);
        self.tags.push(self.current);
    }
}

/// `sm_90a` as (90, 'a'); `sm_90` as (90, ' ').
fn arch_parts(arch: &str) -> Option<(u32, char)> {
    let rest = arch.strip_prefix("sm_")?;
    let suffix = rest.chars().last().filter(char::is_ascii_alphabetic);
    let digits = rest.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    Some((digits.parse().ok()?, suffix.unwrap_or(' ')))
}

/// Whether an entry for `arch` runs on a GPU of compute capability `gpu` (90 for sm_90): a
/// cubin on its own GPU or a later one of the same major version (`a`: its own only); PTX on
/// its target or any later GPU (`a`: its own; `f`: its major's later ones).
pub(super) fn runs_on(arch: &str, ptx: bool, gpu: u32) -> bool {
    let Some((n, suffix)) = arch_parts(arch) else { return false };
    match (ptx, suffix) {
        (_, 'a') => n == gpu,
        (false, _) | (true, 'f') => n / 10 == gpu / 10 && n <= gpu,
        (true, _) => n <= gpu,
    }
}

/// The needs of `image` on a GPU of compute capability `gpu`: of each fatbin container, only
/// the entry the driver loads there (the best cubin for it, else the PTX of the highest target
/// it runs), the others listed as unused; a container with no entry for it is unreadable there.
pub(super) fn for_gpu(image: Image, gpu: u32) -> (Image, Vec<String>) {
    use std::collections::BTreeMap;
    // Per container, per entry: its architecture and kind.
    let mut entries: BTreeMap<usize, BTreeMap<usize, (String, bool)>> = BTreeMap::new();
    for ((need, _), tag) in image.needs.iter().zip(&image.tags) {
        if let (Need::Arch(a), Some(t)) = (need, tag) {
            entries.entry(t.container).or_default().insert(t.entry, (a.clone(), t.ptx));
        }
    }
    let mut chosen: BTreeMap<usize, usize> = BTreeMap::new();
    let mut out = Image { unreadable: image.unreadable, ..Image::default() };
    for (&c, list) in &entries {
        let key = |(a, ptx): &(String, bool)| (!*ptx, arch_parts(a).map_or(0, |(n, _)| n));
        match list.iter().filter(|(_, (a, ptx))| runs_on(a, *ptx, gpu)).max_by_key(|(_, e)| key(e)) {
            Some((&e, _)) => {
                chosen.insert(c, e);
            }
            None => out.unreadable.push(format!(
                "fatbin container {c}: no entry runs on sm_{gpu} ({}), whatever the driver",
                list.values()
                    .map(|(a, p)| format!("{} {a}", if *p { "PTX" } else { "cubin" }))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
    let mut unused = Vec::new();
    for (need, tag) in image.needs.into_iter().zip(image.tags) {
        match tag {
            Some(t) if chosen.get(&t.container) != Some(&t.entry) => {
                if matches!(need.0, Need::Arch(_)) {
                    unused.push(format!("{} (not loaded on sm_{gpu})", need.1));
                }
            }
            _ => out.push_need(need),
        }
    }
    (out, unused)
}

/// PTX's tokens, as ptxas reads them: whitespace of any kind (a line end is `\n`, `\r\n` or a
/// lone `\r`, and a module may be one line) separates them, `//` and `/* */` comments are
/// skipped, and a comma is a token of its own.
fn tokens(text: &str) -> impl Iterator<Item = &str> {
    let b = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || loop {
        // A byte-order mark (U+FEFF, a zero-width space) separates as whitespace does.
        while at < b.len() && (space(b[at]) || b[at..].starts_with(BOM)) {
            at += if b[at] == BOM[0] { BOM.len() } else { 1 };
        }
        if at >= b.len() {
            return None;
        }
        if b[at..].starts_with(b"//") {
            while at < b.len() && b[at] != b'\n' && b[at] != b'\r' {
                at += 1;
            }
            continue;
        }
        if b[at..].starts_with(b"/*") {
            at = memchr::memmem::find(&b[at + 2..], b"*/").map_or(b.len(), |p| at + 2 + p + 2);
            continue;
        }
        let start = at;
        if b[at] == b',' {
            at += 1;
        } else {
            while at < b.len()
                && !space(b[at])
                && b[at] != b','
                && !b[at..].starts_with(b"//")
                && !b[at..].starts_with(b"/*")
            {
                at += 1;
            }
        }
        // Every cut is at an ASCII byte: a char boundary.
        return text.get(start..at);
    })
}

/// Whether a byte separates PTX's tokens: ASCII whitespace, the vertical tab too, and NUL (a
/// file or entry padded with zeros after its text).
fn space(b: u8) -> bool {
    b.is_ascii_whitespace() || b == 0x0b || b == 0
}

/// UTF-8's byte-order mark.
const BOM: &[u8] = b"\xef\xbb\xbf";

/// Whether `text` holds a PTX module: its first tokens `.version X.Y` and then `.target`, as
/// ptxas requires, on lines or not. A string that only mentions `.version` is not one.
pub(super) fn is_ptx(text: &str) -> bool {
    let mut t = tokens(text);
    t.next() == Some(".version") && t.next().is_some_and(|v| isa(v).is_some()) && t.next() == Some(".target")
}

/// Whether a file's first bytes `head` (a prefix of it, `whole`: or all of it) start a PTX
/// module: past comments, whitespace and a byte-order mark, `.version X.Y`. Nothing else starts
/// so (no Rust file can), so a PTX file is known whatever its name. A prefix cut inside the
/// comments before it says no.
pub(super) fn starts_ptx(head: &[u8], whole: bool) -> bool {
    let keep = if whole { head.len() } else { head.iter().rposition(|&b| space(b)).unwrap_or(0) };
    let text = String::from_utf8_lossy(&head[..keep]);
    let mut t = tokens(&text);
    t.next() == Some(".version") && t.next().is_some_and(|v| isa(v).is_some())
}

/// A `.version`'s number as ptxas reads it: a major and a minor, each a decimal integer
/// (`9.00` is 9.0, `08.05` is 8.5, `9.01` is 9.1), written here as `9.0`.
fn isa(token: &str) -> Option<String> {
    let (major, minor) = token.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.len() <= 9 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(major) || !digits(minor) {
        return None;
    }
    let text = format!("{}.{}", major.parse::<u32>().ok()?, minor.parse::<u32>().ok()?);
    super::releases::cuda_number(&text).map(|_| text)
}

/// How many bytes past a `.version` found in a program's data [`ptx_candidate`] looks at: each
/// `.version` is looked at on its own (one that begins no module does not hide a later one), so
/// each look is bounded to keep the search linear.
const PTX_LOOK: usize = 256;

/// Whether the `.version` at `at` of `bytes` may begin a PTX module: `.version`, then a version
/// number, then `.target`, as ptxas requires, with whitespace and comments between. Where the
/// text goes on past [`PTX_LOOK`] bytes before these are seen (a long comment between), it is
/// taken to be one: its `.version` is read, never dropped.
fn ptx_candidate(bytes: &[u8], at: usize) -> bool {
    let to = bytes.len().min(at.saturating_add(PTX_LOOK));
    let (end, cut) = match memchr::memchr(0, &bytes[at..to]) {
        Some(p) => (at + p, false),
        None => (to, to < bytes.len()),
    };
    let text = String::from_utf8_lossy(&bytes[at..end]);
    // A token that reaches the end of a window cut short may go on past it.
    let open = |tok: &str| cut && tok.as_ptr() as usize + tok.len() == text.as_ptr() as usize + text.len();
    let mut t = tokens(&text);
    match t.next() {
        Some(".version") => {}
        _ => return false,
    }
    match t.next() {
        Some(v) if isa(v).is_some() => {}
        Some(v) if open(v) => return true,
        Some(_) => return false,
        None => return cut,
    }
    match t.next() {
        Some(".target") => true,
        Some(tok) => open(tok) && ".target".starts_with(tok),
        None => cut,
    }
}

/// The kernel images embedded in one section of a compiled program: fatbins (by their magic
/// and a header of the known version and size), cubins (ELF of machine `EM_CUDA`) and PTX
/// text. Every search advances; what a fatbin or a cubin holds is not read twice, and each cubin
/// is read within its own extent: linear in the section's size, whatever it holds.
#[cfg(test)]
pub(super) fn embedded(bytes: &[u8], section: &str, image: &mut Image) {
    let whole = [0..bytes.len()];
    embedded_in(bytes, &whole, section, image);
}

/// [`embedded`] searching only `data` (ranges of `bytes`: a sparse file's holes are left out),
/// though what a fatbin or cubin found there holds is read wherever it lies. Returns the spans
/// of `bytes` that the fatbins and cubins found cover, sorted by start.
pub(super) fn embedded_in(
    bytes: &[u8],
    data: &[std::ops::Range<usize>],
    section: &str,
    image: &mut Image,
) -> Vec<(usize, usize)> {
    use super::extents::find_iter;
    use memchr::memmem;
    let fatbin_magic = FATBIN_MAGIC.to_le_bytes();
    let (fatbin_finder, elf_finder, version_finder) =
        (memmem::Finder::new(&fatbin_magic), memmem::Finder::new(b"\x7fELF"), memmem::Finder::new(b".version"));
    let mut fatbins: Vec<(usize, usize)> = Vec::new();
    let mut jobs = Vec::new();
    let mut next = 0;
    for at in find_iter(bytes, data, &fatbin_finder) {
        if at < next {
            continue;
        }
        let h = &bytes[at..];
        let (Some(version), Some(header), Some(size)) = (
            h.get(4..6).map(|b| u16::from_le_bytes([b[0], b[1]])),
            h.get(6..8).map(|b| u16::from_le_bytes([b[0], b[1]])),
            h.get(8..16).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8]))),
        ) else {
            // The area ends inside the header: a container may begin here and go on in the
            // bytes that follow (the next section: the loader maps them together), where its
            // entries are not read as its. Said, never dropped.
            image.unreadable.push(format!(
                "a fatbin at {section}+{at:#x}: its header is cut by the end of {section} (what follows it is not \
                 read as its entries)"
            ));
            break;
        };
        if version != 1 || header < 16 {
            // A fatbin's magic with a layout this reader does not know. Where it may still be a
            // container of another version, it is said, never dropped, so the floor is "at
            // least" rather than lower than what it holds. A container of any version has a
            // version a new layout would count up to (every fatbin so far is version 1: one
            // below 256), a header that holds at least the 16 bytes read here and at most a
            // page, and what the header says follows it within the bytes that follow. Where
            // none of that holds (machine code holding the magic as a constant, the next
            // instruction's bytes read as its version and sizes), no container begins there:
            // no kernel image.
            let follows = usize::try_from(size)
                .ok()
                .and_then(|s| s.checked_add(usize::from(header)))
                .and_then(|n| n.checked_add(at));
            let may_be = version == 1
                || (version < 256 && (16..=4096).contains(&header) && follows.is_some_and(|e| e <= bytes.len()));
            next = at + 1;
            if !may_be {
                continue;
            }
            image.unreadable.push(format!(
                "a fatbin at {section}+{at:#x}: version {version}, a header of {header} bytes (this reader knows \
                 version 1, 16 bytes or more)"
            ));
            continue;
        }
        let end = usize::try_from(size)
            .ok()
            .and_then(|s| (at + usize::from(header)).checked_add(s))
            .map_or(bytes.len(), |e| e.min(bytes.len()));
        fatbin(&bytes[at..end], &[0..end - at], &format!("a fatbin at {section}+{at:#x}"), image, &mut jobs);
        fatbins.push((at, end));
        next = end.max(at + 1);
    }
    decompress_all(jobs, image);
    // Cubins and PTX are looked for outside the fatbins (whose entries were read as theirs):
    // a section of fatbins is not searched again. Neither needle can run into a fatbin, whose
    // first byte (0x50) is in neither.
    let rest = if fatbins.is_empty() { data.to_vec() } else { super::extents::minus(data, &fatbins) };
    let data = &rest[..];
    let mut in_fatbin = Cursor::new(&fatbins);
    let mut cubins: Vec<(usize, usize)> = Vec::new();
    let mut cubins_end = 0;
    for at in find_iter(bytes, data, &elf_finder) {
        let h = &bytes[at..];
        if at < cubins_end || in_fatbin.covers(at) || h.len() < 52 || u16::from_le_bytes([h[18], h[19]]) != EM_CUDA {
            continue;
        }
        if h[4] != 2 {
            // A 32-bit cubin (CUDA before 10 made them for 32-bit hosts): said, never dropped.
            image
                .unreadable
                .push(format!("a cubin at {section}+{at:#x}: a 32-bit ELF file, which this reader does not read"));
            continue;
        }
        if h.len() < 64 {
            continue;
        }
        let end = at + cubin_extent(h);
        cubin(&bytes[at..end], &format!("a cubin at {section}+{at:#x}"), image);
        cubins.push((at, end));
        cubins_end = end;
    }
    let mut both = fatbins;
    both.extend(cubins);
    both.sort_unstable();
    let mut covered = Cursor::new(&both);
    let mut done = 0;
    for at in find_iter(bytes, data, &version_finder) {
        // A `.version` that begins no module (in a comment, in other text) is passed over on
        // its own: the next `.version` is looked at, even in the same string.
        if at < done || covered.covers(at) || !ptx_candidate(bytes, at) {
            continue;
        }
        // From `.version` (what comes before it, comments or another string run together with
        // it as rustc places `&str`s, says nothing of its needs) to the NUL after.
        let start = at;
        let end = memchr::memchr(0, &bytes[at..]).map_or(bytes.len(), |p| at + p);
        done = end.max(at + 1);
        let text = String::from_utf8_lossy(&bytes[start..end]);
        ptx(&text, &format!("PTX at {section}+{start:#x}"), image);
    }
    both
}

/// How far before and after the end of one area read (a section, or a segment's bytes in no
/// section) [`across`] looks: a PTX module's `.version` and `.target` lie within [`PTX_LOOK`]
/// bytes of each other.
pub(super) const SEAM: usize = 2 * PTX_LOOK;

/// The kernels that begin in `before` (the last bytes of one area read) and go on in `after`
/// (the bytes that follow it in the file): each area alone holds only a part of them. A PTX
/// module whose `.version` or `.target` is cut by the seam is read from both parts (its text
/// reaches the seam: no NUL between); a cubin whose ELF header is cut, and a fatbin whose magic
/// is cut, are said. A fatbin whose header or entries the seam cuts is said by the reader of
/// the part holding its magic.
pub(super) fn across(before: &[u8], after: &[u8], what: &str, image: &mut Image) {
    let seam = before.len();
    let mut joined = Vec::with_capacity(seam + after.len());
    joined.extend_from_slice(before);
    joined.extend_from_slice(after);
    let magic = FATBIN_MAGIC.to_le_bytes();
    if (1..4).any(|k| seam >= k && joined.get(seam - k..seam - k + 4) == Some(&magic[..])) {
        image.unreadable.push(format!(
            "a fatbin across {what}: its magic is cut by the end of the area holding its start: its container \
             is read in neither part"
        ));
    }
    let finder = memchr::memmem::Finder::new(b".version");
    // Only a `.version` that begins in `before` and whose text reaches the seam.
    let from = memchr::memrchr(0, before).map_or(0, |p| p + 1);
    for at in finder.find_iter(&joined[from..]).map(|p| from + p).take_while(|&p| p < seam) {
        // Read by `before`'s reader where its `.version` and its `.target` line are all there.
        let target = memchr::memmem::find(&before[at..], b".target").map(|t| at + t);
        let whole = ptx_candidate(before, at) && target.is_some_and(|t| before[t..].contains(&b'\n'));
        if whole {
            break;
        }
        if ptx_candidate(&joined, at) {
            let end = memchr::memchr(0, &joined[at..]).map_or(joined.len(), |p| at + p);
            let text = String::from_utf8_lossy(&joined[at..end]);
            ptx(&text, &format!("PTX across {what}"), image);
            break;
        }
    }
    let elf = memchr::memmem::Finder::new(b"\x7fELF");
    for at in elf.find_iter(&joined[seam.saturating_sub(63)..]).map(|p| seam.saturating_sub(63) + p) {
        if at >= seam {
            break;
        }
        if joined.get(at + 18..at + 20) == Some(&EM_CUDA.to_le_bytes()[..]) {
            image
                .unreadable
                .push(format!("a cubin across {what}: its ELF header is cut, and it is read in neither part"));
        }
    }
}

/// Spans sorted by start, asked about at offsets that only grow.
struct Cursor<'a> {
    spans: &'a [(usize, usize)],
    /// The spans before it end at or before the last offset asked about.
    next: usize,
    /// The furthest end of the spans passed.
    reach: usize,
}

impl<'a> Cursor<'a> {
    fn new(spans: &'a [(usize, usize)]) -> Self {
        Cursor { spans, next: 0, reach: 0 }
    }

    /// Whether a span holds `at` (not less than every offset asked before).
    fn covers(&mut self, at: usize) -> bool {
        while let Some(&(_, end)) = self.spans.get(self.next).filter(|&&(start, _)| start <= at) {
            self.reach = self.reach.max(end);
            self.next += 1;
        }
        at < self.reach
    }
}

/// How far the cubin at the start of `h` (64-bit little-endian, by its ELF header) reaches:
/// the furthest of its program header table, its section header table and its sections'
/// bytes; at least its 64-byte header, at most `h`. Its toolkit note lies within.
fn cubin_extent(h: &[u8]) -> usize {
    let u16_at = |o: u64| {
        usize::try_from(o)
            .ok()
            .and_then(|o| h.get(o..o.checked_add(2)?))
            .map_or(0, |b| u64::from(u16::from_le_bytes([b[0], b[1]])))
    };
    let u32_at = |o: u64| {
        usize::try_from(o)
            .ok()
            .and_then(|o| h.get(o..o.checked_add(4)?))
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let u64_at = |o: u64| {
        usize::try_from(o)
            .ok()
            .and_then(|o| h.get(o..o.checked_add(8)?))
            .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    };
    let len = h.len() as u64;
    let (phoff, shoff) = (u64_at(32), u64_at(40));
    let (phentsize, phnum, shentsize, shnum) = (u16_at(54), u16_at(56), u16_at(58), u16_at(60));
    let mut end = 64u64.max(phoff.saturating_add(phentsize * phnum)).max(shoff.saturating_add(shentsize * shnum));
    // Each section header read lies within the extent: the next cubin looked for starts past it.
    if shentsize >= 64 {
        for i in 0..shnum {
            let at = shoff.saturating_add(i * shentsize);
            if at.saturating_add(64) > len {
                break;
            }
            if u32_at(at + 4) != object::elf::SHT_NOBITS {
                end = end.max(u64_at(at + 24).saturating_add(u64_at(at + 32)));
            }
        }
    }
    usize::try_from(end.min(len)).unwrap_or(h.len())
}

/// `.version X.Y` and `.target sm_NN[a|f][, ...]` of every PTX module in `text` (a file or a
/// string may hold several), by ptxas' tokens. `what` names the module in the report.
pub(super) fn ptx(text: &str, what: &str, image: &mut Image) {
    let mut found_version = false;
    let mut t = tokens(text).peekable();
    while let Some(tok) = t.next() {
        if tok == ".version" {
            let Some(number) = t.peek().copied().and_then(isa) else { continue };
            let v = t.next().unwrap_or_default();
            found_version = true;
            image.push_need((Need::PtxIsa(number), format!("{what}: .version {v}")));
        } else if tok == ".target" {
            // `.target sm_90a, texmode_independent`: a list of comma-separated names.
            while let Some(name) = t.next() {
                if name.starts_with("sm_") || name.starts_with("compute_") {
                    let arch = name.replacen("compute_", "sm_", 1);
                    image.push_need((Need::Arch(arch), format!("{what}: .target {name}")));
                }
                if t.peek() != Some(&",") {
                    break;
                }
                t.next();
            }
        }
    }
    if !found_version {
        image.unreadable.push(format!("{what}: PTX without a `.version` line"));
    }
}

/// `EM_CUDA`: the ELF machine of NVIDIA's cubins.
const EM_CUDA: u16 = 190;
/// The fatbin container's magic number (little-endian u32 at offset 0).
const FATBIN_MAGIC: u32 = 0xBA55_ED50;

/// A binary image: a cubin, a fatbin, or (when it is text) PTX.
pub(super) fn binary(bytes: &[u8], what: &str, image: &mut Image) {
    binary_in(bytes, &[0..bytes.len()], what, image)
}

/// [`binary`] of bytes whose data lies in `data` (a sparse file's holes between): the next
/// fatbin of a section is looked for only there.
pub(super) fn binary_in(bytes: &[u8], data: &[std::ops::Range<usize>], what: &str, image: &mut Image) {
    if bytes.starts_with(b"\x7fELF") {
        cubin(bytes, what, image);
    } else if bytes.len() >= 4 && u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) == FATBIN_MAGIC {
        let mut jobs = Vec::new();
        fatbin(bytes, data, what, image, &mut jobs);
        decompress_all(jobs, image);
    } else if let Ok(text) = std::str::from_utf8(bytes) {
        if is_ptx(text) {
            ptx(text, what, image);
        }
    }
}

/// The architecture of a cubin, and the toolkit that built it. `e_flags`' layout depends on the
/// ELF ABI version in `e_ident[EI_ABIVERSION]`, as measured on ptxas 11.8 to 13.5
/// (cuda-releases.toml names the measurement): 7 and older, the SM number in bits 0-7 and
/// `0x800` for the `a` suffix (12.x's sm_90a: `0x5a0d5a`); 8 (ptxas 12.8 for sm_100 on, 13.x
/// for every target), the SM number in bits 8-15 and `0x8` for `a` (12.8's sm_100a:
/// `0x600640a`; 13.x leaves it out). Cubins of ABI 8 name their toolkit in a note
/// (`.note.nv.tkinfo`: "Cuda compilation tools, release 13.5, ..."); older ones do not.
fn cubin(bytes: &[u8], what: &str, image: &mut Image) {
    cubin_in_entry(bytes, what, "", image)
}

/// [`cubin`] of a fatbin entry whose header names the architecture's suffix (`a`, `f`, or
/// none): 13.x cubins' `e_flags` do not carry it, the entry's flags do.
fn cubin_in_entry(bytes: &[u8], what: &str, suffix: &str, image: &mut Image) {
    let elf = match ElfFile64::<Endianness>::parse(bytes) {
        Ok(elf) => elf,
        // What min-driver needs is in the ELF header and the note (ptxas 13.5 writes cubins
        // whose program headers the object crate refuses): read by hand.
        Err(_) => return cubin_header(bytes, what, suffix, image),
    };
    let header = elf.elf_header();
    let endian = elf.endian();
    if header.e_machine(endian) != EM_CUDA {
        // A host library, not a kernel: nothing the driver JIT-compiles or loads.
        return;
    }
    let flags = header.e_flags(endian);
    let abi = header.e_ident().abi_version;
    cubin_needs(flags, abi, toolkit_note(bytes), what, suffix, image);
}

/// The needs of a cubin of `e_flags` `flags`, ELF ABI version `abi` and toolkit `note`.
fn cubin_needs(flags: u32, abi: u8, note: Option<String>, what: &str, suffix: &str, image: &mut Image) {
    let (sm, a) = if abi >= 8 { ((flags >> 8) & 0xff, flags & 0x8 != 0) } else { (flags & 0xff, flags & 0x800 != 0) };
    let suffix = if suffix.is_empty() && a { "a" } else { suffix };
    if sm == 0 {
        image.unreadable.push(format!("{what}: a cubin whose e_flags ({flags:#x}) name no architecture"));
        return;
    }
    let arch = format!("sm_{sm}{suffix}");
    image.push_need((Need::Arch(arch.clone()), format!("{what}: cubin for {arch}")));
    match note {
        Some(release) => {
            image.push_need((Need::Toolkit(release.clone()), format!("{what}: built by CUDA {release}'s ptxas")))
        }
        None => image.unreadable.push(format!(
            "{what}: a cubin for {arch} that does not say which CUDA built it (ptxas before 12.8 does not): drivers \
             older than that toolkit's major version may refuse it"
        )),
    }
}

/// The most a compressed fatbin entry is inflated to: no kernel image is this large.
const MAX_INFLATED: u64 = 1 << 28;

/// Whether a compressed payload is zstd (the magic `28 b5 2f fd`), which [`zstd_prefix`] reads.
fn inflated_ok(payload: &[u8]) -> bool {
    payload.starts_with(&[0x28, 0xb5, 0x2f, 0xfd])
}

/// What of a decompressed entry is read: its first bytes, until `enough` says they hold what
/// is needed (a PTX module's `.version` and `.target`; a cubin's ELF header and, where it
/// has one, its toolkit note), never the whole image unless that is where it lies.
#[derive(Clone, Copy)]
enum Want {
    Ptx,
    Cubin,
}

impl Want {
    /// Whether `out` (a prefix, `whole`: or all of it) holds what is needed.
    fn enough(self, out: &[u8]) -> bool {
        match self {
            // `.target` and the rest of its directive (a list of names, 256 bytes is more than
            // any holds); a module on one line has no line end to wait for.
            // `.target` after the `.version` (a comment before may mention either).
            Want::Ptx => memchr::memmem::find(out, b".version")
                .and_then(|v| memchr::memmem::find(&out[v..], b".target").map(|t| v + t))
                .is_some_and(|at| out.len() >= at + 256),
            Want::Cubin => {
                let Some(h) = out.get(..64) else { return false };
                // ELF ABI 7 and older (ptxas before 12.8, and 12.x below sm_100) write no note.
                h[8] < 8
                    || memchr::memmem::find(out, NOTE_MARK).is_some_and(|at| out.len() >= at + NOTE_MARK.len() + 64)
            }
        }
    }

    /// The prefix cut where a token may have been cut in two (PTX: at its last whitespace).
    fn trim(self, mut out: Vec<u8>, whole: bool) -> Vec<u8> {
        if matches!(self, Want::Ptx) && !whole {
            let keep = out.iter().rposition(|&b| space(b)).unwrap_or(0);
            out.truncate(keep);
        }
        out
    }
}

/// A zstd payload decompressed until [`Want::enough`] (or to its end, at most `expected`
/// bytes): one pass, in chunks, each output byte looked at a bounded number of times.
fn zstd_prefix(payload: &[u8], expected: Option<u64>, want: Want) -> Option<Vec<u8>> {
    use zstd::stream::raw::{DParameter, Decoder, InBuffer, Operation, OutBuffer};
    thread_local! {
        // One decoder per thread, reset for each entry: a new one per entry allocated (and
        // the system mapped, then unmapped) its window of up to a block each time.
        static DECODER: std::cell::RefCell<Option<Decoder<'static>>> = const { std::cell::RefCell::new(None) };
    }
    if !inflated_ok(payload) {
        return None;
    }
    let cap = usize::try_from(expected.unwrap_or(MAX_INFLATED).min(MAX_INFLATED)).ok()?;
    // libzstd (the `zstd` crate) decodes a block about four times as fast as `ruzstd` did here,
    // and its stream stops at the block the prefix needs. A frame that asks for a window of more
    // than 32 MiB (no cubin's does) is not decompressed: each thread's memory stays bounded.
    DECODER.with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.is_none() {
            let mut d = Decoder::new().ok()?;
            d.set_parameter(DParameter::WindowLogMax(25)).ok()?;
            *slot = Some(d);
        }
        let decoder = slot.as_mut()?;
        // A new frame; the window limit stays.
        decoder.reinit().ok()?;
        let mut input = InBuffer::around(payload);
        let mut out: Vec<u8> = Vec::new();
        let mut pos = 0usize;
        let mut step = 4usize << 10;
        loop {
            // Doubling reads: the predicate is asked O(log n) times, so its searches stay linear.
            let target = pos.saturating_add(step).min(cap);
            out.resize(target, 0);
            while pos < target {
                let mut o = OutBuffer::around_pos(&mut out[..target], pos);
                let read = input.pos();
                let left = decoder.run(&mut input, &mut o).ok()?;
                let (was, now) = (pos, o.pos());
                pos = now;
                if left == 0 {
                    // The frame's end.
                    out.truncate(pos);
                    return Some(want.trim(out, true));
                }
                if now == was && input.pos() == read {
                    // No progress: the payload ends inside the frame.
                    return None;
                }
            }
            if pos >= cap {
                out.truncate(pos);
                return Some(want.trim(out, true));
            }
            if want.enough(&out[..pos]) {
                out.truncate(pos);
                return Some(want.trim(out, false));
            }
            step = step.saturating_mul(2);
        }
    })
}

/// The first bytes of one LZ4 block, decoded sequence by sequence until [`Want::enough`] (or
/// the block's end, at most `expected` bytes): a prefix needs no more of the block than the
/// sequences that make it. `None` where the block is damaged (an offset before the start).
/// The flag: whether the whole block was decoded.
fn lz4_prefix(block: &[u8], expected: usize, want: Want) -> Option<(Vec<u8>, bool)> {
    let mut out: Vec<u8> = Vec::with_capacity(expected.min(64 << 10));
    let mut i = 0;
    let mut next_check = 4usize << 10;
    let length = |i: &mut usize, mut n: usize| -> Option<usize> {
        if n == 15 {
            loop {
                let b = *block.get(*i)?;
                *i += 1;
                n = n.saturating_add(usize::from(b));
                if b != 255 {
                    break;
                }
            }
        }
        Some(n)
    };
    while i < block.len() && out.len() < expected {
        let token = block[i];
        i += 1;
        let lit = length(&mut i, usize::from(token >> 4))?;
        let lits = block.get(i..i.checked_add(lit)?)?;
        out.extend_from_slice(&lits[..lit.min(expected - out.len())]);
        i += lit;
        if i >= block.len() || out.len() >= expected {
            break;
        }
        let offset = usize::from(u16::from_le_bytes([block[i], *block.get(i + 1)?]));
        i += 2;
        if offset == 0 || offset > out.len() {
            return None;
        }
        let mut m = length(&mut i, usize::from(token & 15))?.saturating_add(4).min(expected - out.len());
        // A match may make megabytes from a few bytes: copied up to each check, not past it.
        while m > 0 {
            let n = m.min(next_check.saturating_sub(out.len()).max(1));
            let from = out.len() - offset;
            for k in 0..n {
                let b = out[from + k];
                out.push(b);
            }
            m -= n;
            if out.len() >= next_check {
                if want.enough(&out) {
                    return Some((out, false));
                }
                next_check = next_check.saturating_mul(2);
            }
        }
    }
    // Bytes left past the size the header gives: not the block it says.
    if i < block.len() && out.len() >= expected {
        return None;
    }
    Some((out, true))
}

/// An entry compressed by NVIDIA's older scheme (flag 0x2000: the default of CUDA 11 and 12's
/// `--compress-all`, and 13.x's `--compress-mode=speed`): one LZ4 block, as measured on
/// fatbinary 13.5's output (its first `size` bytes; the rest of the payload is padding), that
/// decompresses to exactly `expected` bytes (the header's size, at most [`MAX_INFLATED`]).
/// `None` where the header gives no size or the block does not decompress to it.
fn inflate_lz4(payload: &[u8], size: Option<u64>, expected: Option<u64>, want: Want) -> Option<Vec<u8>> {
    let block = match size.and_then(|s| usize::try_from(s).ok()) {
        Some(s) if s > 0 && s <= payload.len() => &payload[..s],
        _ => payload,
    };
    // An LZ4 block yields at most about 255 bytes per byte (a match's length grows by 255 per
    // byte): a larger size is refused.
    let most = (block.len() as u64).saturating_mul(256).saturating_add(64);
    let expected = usize::try_from(expected.filter(|&e| e > 0 && e <= MAX_INFLATED && e <= most)?).ok()?;
    let (out, whole) = lz4_prefix(block, expected, want)?;
    // Decoded to its end, the block must make exactly the size the header gives.
    (!whole || out.len() == expected).then(|| want.trim(out, whole))
}

/// [`cubin`] from the first bytes of one (a decompressed prefix): its ELF header, read by
/// hand, and its toolkit note where the bytes hold it.
fn cubin_header(bytes: &[u8], what: &str, suffix: &str, image: &mut Image) {
    cubin_prefix(bytes, toolkit_note(bytes), what, suffix, image)
}

/// [`cubin_header`] of a cubin's first bytes, its toolkit note already found.
fn cubin_prefix(bytes: &[u8], note: Option<String>, what: &str, suffix: &str, image: &mut Image) {
    let Some(h) = bytes.get(..64).filter(|h| h.starts_with(b"\x7fELF") && h[4] == 2 && h[5] == 1) else {
        image.unreadable.push(format!("{what}: not a 64-bit little-endian ELF file"));
        return;
    };
    if u16::from_le_bytes([h[18], h[19]]) != EM_CUDA {
        return;
    }
    let flags = u32::from_le_bytes([h[48], h[49], h[50], h[51]]);
    cubin_needs(flags, h[8], note, what, suffix, image);
}

/// What a cubin's toolkit note says before its release.
const NOTE_MARK: &[u8] = b"Cuda compilation tools, release ";

/// "release X.Y" in a cubin's toolkit note.
fn toolkit_note(bytes: &[u8]) -> Option<String> {
    const MARK: &[u8] = NOTE_MARK;
    let at = memchr::memmem::find(bytes, MARK)? + MARK.len();
    let rest = &bytes[at..bytes.len().min(at + 16)];
    let end = rest.iter().position(|&b| b == b',' || b == 0)?;
    let release = std::str::from_utf8(&rest[..end]).ok()?;
    super::releases::cuda_number(release).map(|_| release.to_owned())
}

/// A fatbin: a 16-byte header (magic, version, header size, size of what follows), then
/// entries, each with a header naming its kind (1: PTX, 2: cubin), payload size, flags
/// (compressed or not) and architecture. Every length is checked against the file.
fn fatbin<'a>(
    bytes: &'a [u8],
    data: &[std::ops::Range<usize>],
    what: &str,
    image: &mut Image,
    jobs: &mut Vec<Job<'a>>,
) {
    fatbin_entries(bytes, data, what, image, jobs);
    image.current = None;
}

/// A compressed fatbin entry, read once every entry of a section is found: decompressing is
/// most of the work, and is shared among threads ([`decompress_all`]).
struct Job<'a> {
    tag: Tag,
    part: String,
    codec: &'static str,
    kind: u16,
    payload: &'a [u8],
    /// The LZ4 block's length (entry offset 16) and the decompressed size (offset 56).
    block: Option<u64>,
    expected: Option<u64>,
    arch: u32,
    suffix: &'static str,
}

/// What a compressed entry's prefix says.
enum Decoded {
    Ptx(String),
    Cubin(Vec<u8>, Option<String>),
    Failed,
}

fn decode(job: &Job<'_>) -> Decoded {
    let want = if job.kind == 2 { Want::Cubin } else { Want::Ptx };
    let out = if job.codec == "LZ4" {
        inflate_lz4(job.payload, job.block, job.expected, want)
    } else {
        zstd_prefix(job.payload, job.expected, want)
    };
    match (out, want) {
        (None, _) => Decoded::Failed,
        (Some(text), Want::Ptx) => Decoded::Ptx(String::from_utf8_lossy(&text).trim_end_matches('\0').to_owned()),
        (Some(elf), Want::Cubin) => {
            let note = toolkit_note(&elf);
            Decoded::Cubin(elf.get(..64).unwrap_or(&elf).to_vec(), note)
        }
    }
}

/// Decompresses the entries of `jobs` (on every core where there are many: each is independent)
/// and reads them in order, so that the image is the same whatever the number of threads.
fn decompress_all(jobs: Vec<Job<'_>>, image: &mut Image) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(jobs.len() / 8).max(1);
    let decoded: Vec<Decoded> = if threads == 1 {
        jobs.iter().map(decode).collect()
    } else {
        let per = jobs.len().div_ceil(threads);
        std::thread::scope(|s| {
            let handles: Vec<_> =
                jobs.chunks(per).map(|chunk| s.spawn(move || chunk.iter().map(decode).collect::<Vec<_>>())).collect();
            // A thread that panicked (it cannot: decoding returns `None` on bad input) reads as
            // entries that did not decompress.
            handles
                .into_iter()
                .zip(jobs.chunks(per))
                .flat_map(|(h, chunk)| h.join().unwrap_or_else(|_| chunk.iter().map(|_| Decoded::Failed).collect()))
                .collect()
        })
    };
    for (job, d) in jobs.iter().zip(decoded) {
        image.current = Some(job.tag);
        let (part, codec, arch, suffix) = (&job.part, job.codec, job.arch, job.suffix);
        match (job.kind, d) {
            (1, Decoded::Ptx(text)) => ptx(&text, &format!("{part} ({codec})"), image),
            (2, Decoded::Cubin(head, note)) => cubin_prefix(&head, note, &format!("{part} ({codec})"), suffix, image),
            (1, _) => {
                image.unreadable.push(format!("{part}: compressed PTX (its .version cannot be read)"));
                if arch != 0 {
                    image.push_need((
                        Need::Arch(format!("sm_{arch}{suffix}")),
                        format!("{part}: PTX for sm_{arch}{suffix}"),
                    ));
                }
            }
            _ => {
                if arch != 0 {
                    image.push_need((
                        Need::Arch(format!("sm_{arch}{suffix}")),
                        format!("{part}: cubin for sm_{arch}{suffix}"),
                    ));
                }
                image.unreadable.push(format!(
                    "{part}: a compressed cubin (which CUDA built it cannot be read; build the fatbin without \
                     compression to let min-driver read it)"
                ));
            }
        }
    }
    image.current = None;
}

fn fatbin_entries<'a>(
    bytes: &'a [u8],
    data: &[std::ops::Range<usize>],
    what: &str,
    image: &mut Image,
    jobs: &mut Vec<Job<'a>>,
) {
    let u16_at = |o: usize| bytes.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let u32_at = |o: usize| bytes.get(o..o + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let u64_at = |o: usize| bytes.get(o..o + 8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])));
    let mut at = 0usize;
    // Several fatbins may be concatenated (one per translation unit).
    let mut containers = 0;
    while let (Some(FATBIN_MAGIC), Some(header_size), Some(fat_size)) = (u32_at(at), u16_at(at + 6), u64_at(at + 8)) {
        containers += 1;
        image.containers += 1;
        let container = image.containers;
        if header_size < 16 {
            image.unreadable.push(format!("{what}: fatbin container {containers} has a header of {header_size} bytes"));
            return;
        }
        let start = at + usize::from(header_size);
        let Some(end) = usize::try_from(fat_size).ok().and_then(|s| start.checked_add(s)).filter(|&e| e <= bytes.len())
        else {
            image.unreadable.push(format!(
                "{what}: fatbin container {containers} runs past the end of the section or file holding it"
            ));
            return;
        };
        let mut e = start;
        let mut n = 0;
        // Each entry ends past its start (its header is 64 bytes or more), or the loop stops.
        while e + 64 <= end {
            n += 1;
            let (Some(kind), Some(entry_header), Some(size), Some(arch), Some(flags)) =
                (u16_at(e), u32_at(e + 4), u64_at(e + 8), u32_at(e + 28), u64_at(e + 40))
            else {
                break;
            };
            if entry_header < 64 {
                image.unreadable.push(format!("{what}: fatbin entry {} has a header of {entry_header} bytes", n));
                return;
            }
            let payload = e + entry_header as usize;
            let Some(payload_end) =
                usize::try_from(size).ok().and_then(|s| payload.checked_add(s)).filter(|&p| p <= end)
            else {
                image.unreadable.push(format!("{what}: fatbin entry {n} runs past its container"));
                return;
            };
            let part = format!("{what} (fatbin entry {n})");
            image.current = Some(Tag { container, entry: n, ptx: kind == 1 });
            // 0x2000: NVIDIA's older compression, an LZ4 block (the default of CUDA 11 and
            // 12, and 13.x's --compress-mode=speed); 0x8000: zstd (13.x), as measured on
            // fatbinary 13.5's --compress-all and nvcc 13.0's default PTX. Either is
            // decompressed (to at most the size its header gives, at offset 56) and read.
            let compressed = flags & 0xa000 != 0;
            // The architecture's suffix is the entry's (flag 0x100000: `a`, 0x200000: `f`, as
            // fatbinary 13.0 writes them): a 13.x cubin's `e_flags` do not say it.
            let suffix = if flags & 0x10_0000 != 0 {
                "a"
            } else if flags & 0x20_0000 != 0 {
                "f"
            } else {
                ""
            };
            let codec = if flags & 0x8000 != 0 { "zstd" } else { "LZ4" };
            match (kind, compressed) {
                (1 | 2, true) => jobs.push(Job {
                    tag: Tag { container, entry: n, ptx: kind == 1 },
                    part,
                    codec,
                    kind,
                    payload: &bytes[payload..payload_end],
                    block: u32_at(e + 16).map(u64::from),
                    expected: u64_at(e + 56),
                    arch,
                    suffix,
                }),
                (1, false) => {
                    let text = String::from_utf8_lossy(&bytes[payload..payload_end]);
                    ptx(text.trim_end_matches('\0'), &part, image);
                }
                (2, false) => cubin_in_entry(&bytes[payload..payload_end], &part, suffix, image),
                (other, _) => image.unreadable.push(format!("{part}: an entry of unknown kind {other}")),
            }
            image.current = None;
            if payload_end <= e {
                break;
            }
            e = payload_end;
        }
        // The next container, past any padding between them (in the data: not in a hole).
        let magic = FATBIN_MAGIC.to_le_bytes();
        let next = data.iter().filter(|r| r.end > end).find_map(|r| {
            let from = r.start.max(end).min(bytes.len());
            memchr::memmem::find(&bytes[from..r.end.min(bytes.len())], &magic).map(|p| from + p)
        });
        match next {
            Some(p) => at = p,
            None => break,
        }
    }
    if containers == 0 {
        image.unreadable.push(format!("{what}: a fatbin header that cannot be read"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cubin's ELF header for sm_90 (ELF ABI 7), with its section header table where given.
    fn cubin_header_bytes(shoff: u64, shnum: u16) -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2;
        h[5] = 1;
        h[6] = 1;
        h[8] = 7;
        h[16] = 2;
        h[18..20].copy_from_slice(&EM_CUDA.to_le_bytes());
        h[20] = 1;
        h[40..48].copy_from_slice(&shoff.to_le_bytes());
        h[48..52].copy_from_slice(&0x5au32.to_le_bytes());
        h[52] = 64;
        h[58] = 64;
        h[60..62].copy_from_slice(&shnum.to_le_bytes());
        h
    }

    /// A cubin with one section, a toolkit note of `release`.
    fn cubin_with_note(release: &str) -> Vec<u8> {
        let note = format!("{}{release}, V{release}.1\0", String::from_utf8_lossy(NOTE_MARK));
        let mut c = cubin_header_bytes(0, 2);
        c.extend_from_slice(note.as_bytes());
        while c.len() % 8 != 0 {
            c.push(0);
        }
        let shoff = c.len() as u64;
        c[40..48].copy_from_slice(&shoff.to_le_bytes());
        c.extend_from_slice(&[0u8; 64]);
        let mut s = vec![0u8; 64];
        s[4..8].copy_from_slice(&object::elf::SHT_NOTE.to_le_bytes());
        s[24..32].copy_from_slice(&64u64.to_le_bytes());
        s[32..40].copy_from_slice(&(note.len() as u64).to_le_bytes());
        c.extend_from_slice(&s);
        c
    }

    fn toolkits(image: &Image) -> Vec<String> {
        image
            .needs
            .iter()
            .filter_map(|(n, _)| match n {
                Need::Toolkit(t) => Some(t.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_cubin_without_a_note_does_not_take_the_next_ones() {
        let mut bytes = vec![0u8; 16];
        bytes.extend(cubin_header_bytes(0, 0));
        bytes.extend([0u8; 32]);
        bytes.extend(cubin_with_note("13.5"));
        let mut image = Image::default();
        embedded(&bytes, "t", &mut image);
        assert_eq!(toolkits(&image), ["13.5"], "{image:?}");
        let archs = image.needs.iter().filter(|(n, _)| matches!(n, Need::Arch(_))).count();
        assert_eq!(archs, 2, "{image:?}");
        assert_eq!(image.unreadable.len(), 1, "{image:?}");
        assert!(image.unreadable[0].contains("t+0x10") && image.unreadable[0].contains("does not say"), "{image:?}");
    }

    #[test]
    fn an_lz4_block_decompresses_to_exactly_its_size() {
        // One sequence of 5 literals, then padding past the block's length.
        let payload = [0x50, b'h', b'e', b'l', b'l', b'o', 0, 0];
        assert_eq!(inflate_lz4(&payload, Some(6), Some(5), Want::Cubin).as_deref(), Some(&b"hello"[..]));
        // Not the size the header gives, no size, a size no block of 6 bytes can reach, the
        // padding taken for the block: nothing, and no panic.
        assert_eq!(inflate_lz4(&payload, Some(6), Some(6), Want::Cubin), None);
        assert_eq!(inflate_lz4(&payload, Some(6), None, Want::Cubin), None);
        assert_eq!(inflate_lz4(&payload, Some(6), Some(1 << 20), Want::Cubin), None);
        assert_eq!(inflate_lz4(&payload, Some(8), Some(5), Want::Cubin), None);
        assert_eq!(inflate_lz4(&[], None, Some(5), Want::Cubin), None);
    }

    /// A compressed PTX module of 8 MiB: only its first KiBs are decompressed, and its
    /// `.version` and `.target` read from them; LZ4 and zstd alike. A damaged block: nothing,
    /// no panic.
    #[test]
    fn only_a_prefix_of_a_compressed_entry_is_decompressed() {
        let mut text = b"//\n// Generated by NVIDIA NVVM Compiler\n\n.version 9.1\n.target sm_100a\n".to_vec();
        text.extend(b".visible .entry k() { ret; }\n".iter().copied().cycle().take(8 << 20));
        let lz4 = lz4_flex::block::compress(&text);
        let out = inflate_lz4(&lz4, Some(lz4.len() as u64), Some(text.len() as u64), Want::Ptx).unwrap();
        assert!(out.len() < 64 << 10 && text.starts_with(&out), "{}", out.len());
        let zstd = zstd::bulk::compress(&text, 1).unwrap();
        let out = zstd_prefix(&zstd, Some(text.len() as u64), Want::Ptx).unwrap();
        assert!(out.len() < 1 << 20 && text.starts_with(&out), "{}", out.len());
        let mut image = Image::default();
        ptx(&String::from_utf8_lossy(&out), "t", &mut image);
        let needs: Vec<_> = image.needs.iter().map(|(n, _)| n.clone()).collect();
        assert_eq!(needs, [Need::PtxIsa("9.1".into()), Need::Arch("sm_100a".into())]);
        // An offset before the start, a cut block: nothing.
        assert_eq!(lz4_prefix(&[0x10, b'x', 9, 0], 100, Want::Ptx), None);
        for cut in 0..lz4.len() {
            let out = inflate_lz4(&lz4[..cut], None, Some(text.len() as u64), Want::Ptx);
            assert!(out.is_none_or(|o| text.starts_with(&o)), "cut at {cut}");
        }
        assert_eq!(zstd_prefix(&zstd[..8], Some(text.len() as u64), Want::Ptx), None);
    }

    /// The fatbin magic as machine code holds it (an immediate, the next instruction's bytes
    /// read as version and sizes) is no kernel image; a container of another version whose
    /// layout may be real, and a version 1 container cut short, are each said (the floor is
    /// then "at least"), never dropped.
    #[test]
    fn a_fatbin_magic_is_a_kernel_only_where_a_container_can_begin() {
        let magic = FATBIN_MAGIC.to_le_bytes();
        let header = |version: u16, size: u16, follows: u64| {
            let mut h = magic.to_vec();
            h.extend(version.to_le_bytes());
            h.extend(size.to_le_bytes());
            h.extend(follows.to_le_bytes());
            h
        };
        let read = |bytes: &[u8]| {
            let mut image = Image::default();
            embedded(bytes, "t", &mut image);
            image
        };
        // `movl $0xba55ed50, ...; movq $0x5c0, ...`, as cuda-sys-gen's own code holds it.
        let mut code = vec![0xc7, 0x84, 0x24, 0x4c, 0x01, 0, 0];
        code.extend(magic);
        code.extend([0x48, 0xc7, 0x84, 0x24, 0xc0, 0x05, 0, 0, 0, 0, 0, 0]);
        code.resize(4096, 0x90);
        assert!(read(&code).unreadable.is_empty() && read(&code).needs.is_empty());
        // A header shorter than its own 16 bytes, or a size past the bytes that follow: no
        // container of any version.
        for bytes in [header(2, 8, 16), header(2, 16, 1 << 40), header(700, 16, 16)] {
            let mut b = bytes.clone();
            b.resize(64, 0);
            let image = read(&b);
            assert!(image.unreadable.is_empty(), "{bytes:?}: {image:?}");
        }
        // Version 2 with a layout that holds: said.
        let mut v2 = header(2, 16, 32);
        v2.resize(64, 0);
        let image = read(&v2);
        assert_eq!(image.unreadable.len(), 1, "{image:?}");
        assert!(image.unreadable[0].contains("version 2"), "{image:?}");
        // A real container cut short (its size past the end), and one with a short header, in
        // version 1: said.
        let real = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/kernels/sm90_ptx95.fatbin")).unwrap();
        for bytes in [&real[..real.len() / 2], &header(1, 8, 16)[..]] {
            let image = read(bytes);
            assert!(!image.unreadable.is_empty(), "{image:?}");
        }
        let image = read(&real);
        assert!(image.unreadable.is_empty() && !image.needs.is_empty(), "{image:?}");
    }

    /// Each `.version` is looked at on its own: one that begins no module (in a comment, glued
    /// to a word, followed by other text) does not hide the module after it; one followed by a
    /// long comment is taken as a module, never dropped; PTX with a byte-order mark and
    /// comments inside its directives is read.
    #[test]
    fn every_ptx_module_is_found_after_false_starts() {
        let isa = |bytes: &[u8]| {
            let mut image = Image::default();
            embedded(bytes, "t", &mut image);
            image
                .needs
                .iter()
                .filter_map(|(n, _)| match n {
                    Need::PtxIsa(v) => Some(v.clone()),
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(isa(b"// .version 1.0 old\n.version 9.5\n.target sm_90\0"), ["9.5"]);
        assert_eq!(isa(b".version.version 9.5 .target sm_90\0"), ["9.5"]);
        assert_eq!(isa(b"a .version of 2 .version 9.5/*x*/.target sm_90\0"), ["9.5"]);
        assert!(isa(b"print .version 1.2 and more\0").is_empty());
        let mut long = b".version 9.5 /*".to_vec();
        long.extend([b' '; 1000]);
        long.extend(b"*/ .target sm_90\0");
        assert_eq!(isa(&long), ["9.5"]);
        // A `.version` every few bytes in a long comment: each looked at within its bound.
        let many: Vec<u8> = b".version /* ".iter().copied().cycle().take(1 << 20).collect();
        let _ = isa(&many);
        // A vertical tab between tokens, NUL padding after the text (a kernel file's).
        let mut image = Image::default();
        ptx(".version\x0b9.5\x0b.target sm_90\0\0\0", "t", &mut image);
        let needs: Vec<_> = image.needs.iter().map(|(n, _)| n.clone()).collect();
        assert_eq!(needs, [Need::PtxIsa("9.5".into()), Need::Arch("sm_90".into())]);
        // A compressed module whose header comment mentions `.target` before its `.version`:
        // the prefix read goes on to the module's own.
        let mut text = b"// .target sm_50, in a comment\n".to_vec();
        text.extend([b'/'; 6000]);
        text.extend(b"\n.version 9.5\n.target sm_90\n");
        text.extend(b".visible .entry k() { ret; }\n".iter().copied().cycle().take(4 << 20));
        let zstd = zstd::bulk::compress(&text, 1).unwrap();
        let out = zstd_prefix(&zstd, Some(text.len() as u64), Want::Ptx).unwrap();
        assert!(memchr::memmem::find(&out, b".version 9.5").is_some(), "{}", out.len());
        assert!(starts_ptx(b"\xef\xbb\xbf// header\n/* c */ .version 9.5\n.target sm_90\n", true));
        assert!(!starts_ptx(b"// a Rust file\nfn main() {}\n", true));
        assert!(!starts_ptx(b"// cut in the comments", false));
    }

    /// A 32-bit cubin (ELF class 1 for `EM_CUDA`) embedded in a section is said, never dropped.
    #[test]
    fn a_32_bit_cubin_is_said() {
        let mut h = cubin_header_bytes(0, 0);
        h[4] = 1;
        let mut bytes = vec![0u8; 8];
        bytes.extend(h);
        let mut image = Image::default();
        embedded(&bytes, "t", &mut image);
        assert_eq!(image.unreadable.len(), 1, "{image:?}");
        assert!(image.unreadable[0].contains("32-bit"), "{image:?}");
    }

    #[test]
    fn the_extent_of_a_cubin_is_its_own() {
        let c = cubin_with_note("12.8");
        let mut two = c.clone();
        two.extend(cubin_header_bytes(0, 0));
        assert_eq!(cubin_extent(&two), c.len());
        assert_eq!(cubin_extent(&cubin_header_bytes(0, 0)), 64);
        // Tables past the end, or sizes that overflow: the rest of the bytes, no panic.
        assert_eq!(cubin_extent(&cubin_header_bytes(u64::MAX, 65535)), 64);
        assert_eq!(cubin_extent(&c[..70]), 70);
    }

    /// 16 MiB of cubin headers, none with a note and each pointing nowhere: every header is
    /// read once, within its own 64 bytes (before, each was searched to the end of the section,
    /// which never finished).
    #[test]
    fn a_section_full_of_cubin_headers_is_read_once_each() {
        let one = cubin_header_bytes(0, 0);
        let bytes: Vec<u8> = one.iter().copied().cycle().take(16 << 20).collect();
        let mut image = Image::default();
        embedded(&bytes, "t", &mut image);
        assert_eq!(image.needs.len(), (16 << 20) / 64);
        assert!(toolkits(&image).is_empty());
    }
}
