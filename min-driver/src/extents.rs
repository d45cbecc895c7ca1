//! The bytes of one section (or segment) of a file, read where the file holds data: a hole of a
//! sparse file is left as zeros that are never written (no memory is taken for them) and never
//! searched. Every search over a section goes through [`Bytes::data`].

use std::fs::File;
use std::ops::Range;

/// One section's bytes and the ranges of them that hold the file's data.
#[derive(Debug, Default)]
pub struct Bytes {
    /// The section's bytes: its holes are zero pages never written.
    pub bytes: Vec<u8>,
    /// Where the data lies, in order, each range within `bytes`; holes lie between them.
    pub data: Vec<Range<usize>>,
}

/// The `len` bytes at `offset` of `file`. Where they are all data, they are read into `reuse`
/// (a buffer of an earlier section, given back through [`Bytes::bytes`]): no new memory, no
/// zeroing. Where the file has holes there, the buffer is allocated zeroed (pages the system
/// maps on first write), and only the ranges that hold data are read into it.
pub fn read(file: &File, offset: u64, len: u64, reuse: Vec<u8>) -> std::io::Result<Bytes> {
    let size =
        usize::try_from(len).map_err(|_| std::io::Error::other("a section larger than this machine's memory"))?;
    let end = offset.checked_add(len).ok_or_else(|| std::io::Error::other("a section past any file's end"))?;
    // A header may claim any size: what lies past the file's end is no byte of it (and is never
    // allocated for), and memory the system refuses is an error, never an abort.
    if end > file.metadata()?.len() {
        return Err(std::io::Error::other("a section past the file's end"));
    }
    let refused = || std::io::Error::other("a section larger than the memory this machine gives");
    let ranges = data_ranges(file, offset, end);
    if ranges.len() == 1 && ranges[0] == (offset, end) {
        let mut bytes = reuse;
        bytes.clear();
        let mapped = bytes.capacity();
        bytes.try_reserve_exact(size).map_err(|_| refused())?;
        read_whole(file, offset, size, &mut bytes, mapped)?;
        return Ok(Bytes { bytes, data: vec![0..size] });
    }
    let mut bytes = zeroed(size).ok_or_else(refused)?;
    let mut data = Vec::new();
    for (from, to) in ranges {
        let (a, b) = ((from - offset) as usize, (to - offset) as usize);
        read_at(file, &mut bytes[a..b], from)?;
        data.push(a..b);
    }
    Ok(Bytes { bytes, data })
}

/// `n` zero bytes in pages the system maps only where they are written (`vec![0u8; n]`'s
/// allocation), or `None` where it refuses so much memory (`vec!` would abort).
fn zeroed(n: usize) -> Option<Vec<u8>> {
    if n == 0 {
        return Some(Vec::new());
    }
    let layout = std::alloc::Layout::array::<u8>(n).ok()?;
    // SAFETY: the layout is not empty; a null pointer is a refusal, said as `None`.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `ptr` was allocated by the global allocator for exactly `n` bytes of `u8`
    // (alignment 1), all initialised (zeroed), and is owned by the vector from here on.
    Some(unsafe { Vec::from_raw_parts(ptr, n, n) })
}

/// Below this many bytes a section is read by one thread.
const PARALLEL_READ: usize = 16 << 20;

/// Reads the `size` bytes at `offset` of `file`, all data, into `bytes` (empty, with room for
/// them; its first `mapped` bytes of room were written by an earlier section), never zeroed
/// first. A large section is read in parts by several threads at once (positioned reads of
/// one descriptor), each part of whole pages: copying out of the page cache, and mapping the
/// pages the buffer has not used yet, are most of a large file's reading, and they go as fast
/// as there are cores.
fn read_whole(file: &File, offset: u64, size: usize, bytes: &mut Vec<u8>, mapped: usize) -> std::io::Result<()> {
    let spare = &mut bytes.spare_capacity_mut()[..size];
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(8).min(size / PARALLEL_READ).max(1);
    let part = size.div_ceil(threads).next_multiple_of(4096).max(1);
    let read_part = |i: usize, chunk: &mut [std::mem::MaybeUninit<u8>]| {
        let start = i * part;
        if let Some(fresh) = chunk.get_mut(mapped.saturating_sub(start)..) {
            populate(fresh);
        }
        read_uninit_at(file, chunk, offset + start as u64)
    };
    if threads == 1 {
        read_part(0, spare)?;
    } else {
        std::thread::scope(|s| {
            let parts: Vec<_> =
                spare.chunks_mut(part).enumerate().map(|(i, c)| s.spawn(move || read_part(i, c))).collect();
            parts
                .into_iter()
                .try_for_each(|p| p.join().unwrap_or_else(|_| Err(std::io::Error::other("a reading thread failed"))))
        })?;
    }
    // SAFETY: every one of the first `size` bytes was written by a read that returned its whole
    // part (`read_uninit_at` fails otherwise, and then this is not reached).
    unsafe { bytes.set_len(size) };
    Ok(())
}

/// Fills `buf` from `file` at `offset` by positioned reads, or fails (a file shorter than that
/// is `UnexpectedEof`): on return `Ok`, every byte of `buf` is written.
#[cfg(target_os = "linux")]
fn read_uninit_at(file: &File, buf: &mut [std::mem::MaybeUninit<u8>], mut offset: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let mut at = 0;
    while at < buf.len() {
        let want = (buf.len() - at).min(1 << 30);
        let off = libc::off_t::try_from(offset).map_err(|_| std::io::Error::other("an offset past any file's end"))?;
        // SAFETY: `buf[at..at + want]` is memory of ours, writable, not read by anyone while the
        // call writes into it; `pread` writes at most `want` bytes there.
        let n = unsafe { libc::pread(file.as_raw_fd(), buf[at..].as_mut_ptr().cast(), want, off) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        at += n as usize;
        offset += n as u64;
    }
    Ok(())
}

/// Elsewhere: the part zeroed first, then read.
#[cfg(not(target_os = "linux"))]
fn read_uninit_at(file: &File, buf: &mut [std::mem::MaybeUninit<u8>], offset: u64) -> std::io::Result<()> {
    buf.fill(std::mem::MaybeUninit::new(0));
    // SAFETY: every byte was just written.
    let buf = unsafe { &mut *(buf as *mut [std::mem::MaybeUninit<u8>] as *mut [u8]) };
    read_at(file, buf, offset)
}

/// Asks the system to map the pages of `fresh` (room in the read buffer no earlier section
/// wrote) in one call (Linux's `MADV_POPULATE_WRITE`, 5.14 and later), rather than a page fault
/// per page as the read first writes each page: a section of hundreds of MB is a hundred
/// thousand pages. Pages already mapped are not asked for again (walking them cost more than
/// it saved). Only advice: the bytes are the same either way, and an older system refuses it
/// harmlessly. Never for a buffer with holes (the zeros around the data would take memory).
#[cfg(target_os = "linux")]
fn populate(fresh: &mut [std::mem::MaybeUninit<u8>]) {
    const PAGE: usize = 4096;
    let (start, len) = (fresh.as_mut_ptr() as usize, fresh.len());
    if len < 1 << 20 {
        return;
    }
    let from = start.next_multiple_of(PAGE);
    let to = (start + len) / PAGE * PAGE;
    if to > from {
        // SAFETY: the range lies within memory of the buffer's room (writable), and populating
        // it changes no byte the program reads; a refusal is no error to the caller.
        unsafe {
            libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_POPULATE_WRITE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn populate(_: &mut [std::mem::MaybeUninit<u8>]) {}

/// The ranges of `start..end` of `file` that hold data, by `lseek`'s `SEEK_DATA` and
/// `SEEK_HOLE`; where the file system does not say, the whole range.
#[cfg(target_os = "linux")]
fn data_ranges(file: &File, start: u64, end: u64) -> Vec<(u64, u64)> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    let whole = vec![(start, end)];
    let mut out = Vec::new();
    let mut at = start;
    while at < end {
        let Ok(from) = i64::try_from(at) else { return whole };
        // SAFETY: lseek reads no memory of ours; the descriptor is open for `file`'s life. Its
        // position is not used: reads are positioned.
        let d = unsafe { libc::lseek(fd, from, libc::SEEK_DATA) };
        if d < 0 {
            // ENXIO: no data past `at`; anything else: the file system cannot say.
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::ENXIO) {
                break;
            }
            return whole;
        }
        let d = d as u64;
        if d >= end {
            break;
        }
        // SAFETY: as above.
        let h = unsafe { libc::lseek(fd, d as i64, libc::SEEK_HOLE) };
        let h = if h < 0 { end } else { (h as u64).min(end) };
        if h <= d {
            return whole;
        }
        out.push((d, h));
        at = h;
    }
    out
}

#[cfg(not(target_os = "linux"))]
fn data_ranges(_file: &File, start: u64, end: u64) -> Vec<(u64, u64)> {
    vec![(start, end)]
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
fn read_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        let n = std::os::windows::fs::FileExt::seek_read(file, buf, offset)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf = &mut buf[n..];
        offset += n as u64;
    }
    Ok(())
}

#[cfg(not(any(unix, windows)))]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = file;
    f.seek(SeekFrom::Start(offset))?;
    f.read_exact(buf)
}

/// Every place `needle` (which holds no NUL byte: no match spans a hole) starts in `bytes`'
/// data ranges, in order.
pub fn find_iter<'a>(
    bytes: &'a [u8],
    data: &'a [Range<usize>],
    finder: &'a memchr::memmem::Finder<'a>,
) -> impl Iterator<Item = usize> + 'a {
    data.iter().flat_map(move |r| {
        let r = r.start.min(bytes.len())..r.end.min(bytes.len());
        finder.find_iter(&bytes[r.clone()]).map(move |at| r.start + at)
    })
}

/// `data` less `spans` (sorted by start, possibly overlapping): the ranges left to search.
pub fn minus(data: &[Range<usize>], spans: &[(usize, usize)]) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    for r in data {
        let mut at = r.start;
        for &(s, e) in spans {
            if e <= at || s >= r.end {
                continue;
            }
            if s > at {
                out.push(at..s);
            }
            at = at.max(e);
        }
        if at < r.end {
            out.push(at..r.end);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_taken_out_of_the_data() {
        assert_eq!(minus(&[0..100], &[(10, 20), (15, 30), (90, 200)]), vec![0..10, 30..90]);
        assert_eq!(minus(&[0..10, 20..30], &[(5, 25)]), vec![0..5, 25..30]);
        assert_eq!(minus(&[0..10], &[]), vec![0..10]);
    }

    #[test]
    fn a_large_section_read_in_parts_is_the_file_s_bytes() {
        use std::io::Write;
        let dir = std::env::temp_dir().join(format!("min-driver-extents-parts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("large");
        // Not a multiple of a page or of a part, every byte telling where it lies.
        let len = 3 * PARALLEL_READ + 12_345;
        let data: Vec<u8> = (0..len as u64).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
        std::fs::File::create(&path).unwrap().write_all(&data).unwrap();
        let f = File::open(&path).unwrap();
        // A buffer given back from an earlier section, with bytes of its own in it, smaller and
        // larger than what is read.
        for reuse in [vec![0xAAu8; 1000], vec![0x55u8; len + 4096]] {
            for (offset, size) in [(0, len), (777, len - 777), (5, PARALLEL_READ * 2 + 1), (len - 10, 10)] {
                let b = read(&f, offset as u64, size as u64, reuse.clone()).unwrap();
                assert_eq!(b.data, vec![0..size]);
                assert!(b.bytes == data[offset..offset + size], "offset {offset}, {size} bytes");
            }
        }
        // More than the file holds: an error, never bytes that were not read.
        assert!(read(&f, 100, len as u64, Vec::new()).is_err());
        let mut room = Vec::with_capacity(len);
        let short = read_whole(&f, 100, len, &mut room, 0);
        assert!(matches!(&short, Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof), "{short:?}");
        assert!(room.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_hole_is_neither_read_nor_searched() {
        use std::io::{Seek, Write};
        let dir = std::env::temp_dir().join(format!("min-driver-extents-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("sparse");
        let mut f = File::create(&path).unwrap();
        f.write_all(b"head.version").unwrap();
        f.seek(std::io::SeekFrom::Start(64 << 20)).unwrap();
        f.write_all(b".versiontail").unwrap();
        drop(f);
        let f = File::open(&path).unwrap();
        let b = read(&f, 0, (64 << 20) + 12, Vec::new()).unwrap();
        let finder = memchr::memmem::Finder::new(b".version");
        let found: Vec<usize> = find_iter(&b.bytes, &b.data, &finder).collect();
        assert_eq!(found, [4, 64 << 20]);
        assert_eq!(&b.bytes[(64 << 20) + 8..], b"tail");
        // Where the file system knows holes, the 64 MiB between are not data.
        let held: usize = b.data.iter().map(|r| r.len()).sum();
        assert!(held <= (64 << 20) + 12);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
