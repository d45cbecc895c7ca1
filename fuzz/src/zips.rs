//! Archives built from fuzzed entries: hostile names, symlinks, folders, odd unix modes,
//! stored or deflated data up to a few hundred KB (past the fuzz limits), and byte patches
//! applied afterwards (declared sizes that lie, broken headers).

use std::io::Write;

use arbitrary::Arbitrary;

const NAMES: &[&str] = &[
    "nvidia/include/cuda.h",
    "nvidia/include/cudaTypedefs.h",
    "nvidia/include/.sha256",
    "nvidia/include/../x.h",
    "/etc/x.h",
    "nvidia/include/CUDA.h",
    "nvidia/include/a/b.h",
    "nvidia/include/a",
    "nvidia/include/./cuda.h",
    "nvidia/include//cuda.h",
    "nvidia/include/con.h",
    "nvidia/include/x:y",
    "C:/nvidia/include/x.h",
    "nvidia/include/x\\y.h",
    "nvidia/include/x\0y.h",
    "nvidia/include",
    "nvidia/include/",
    "nvidia/includes/x.h",
    "other/x.h",
    "nvidia/include/\u{1}.h",
    "nvidia/include/aux",
    "nvidia/include/x.",
    "nvidia/include/\u{e4}.h",
    "./nvidia/include/y.h",
    "nvidia/include/a/",
    "nvidia/include/a/b.h/c.h",
];
const PARTS: &[&str] = &["a", "b", "..", ".", "cuda.h", "CUDA.H", "", ".sha256", "con", "x ", "lpt1", "A"];

#[derive(Arbitrary, Debug)]
pub struct Archive {
    pub entries: Vec<Entry>,
    pub patches: Vec<(u16, u8)>,
}

#[derive(Arbitrary, Debug)]
pub struct Entry {
    pub name: Name,
    pub kind: Kind,
    pub data: Data,
    pub deflate: bool,
}

#[derive(Arbitrary, Debug)]
pub enum Name {
    Pool(u8),
    Under(Vec<u8>),
    Raw(String),
}

#[derive(Arbitrary, Debug)]
pub enum Kind {
    File,
    Dir,
    Symlink(Name),
    Mode(u32),
}

#[derive(Arbitrary, Debug)]
pub enum Data {
    Bytes(Vec<u8>),
    /// `(n % 96) * 1024` zero bytes (past the 64 KiB file limit): compresses to almost nothing.
    Zeros(u16),
}

impl Name {
    fn render(&self) -> String {
        match self {
            Name::Pool(i) => NAMES[*i as usize % NAMES.len()].to_owned(),
            Name::Under(parts) => {
                let p: Vec<&str> = parts.iter().map(|i| PARTS[*i as usize % PARTS.len()]).collect();
                format!("nvidia/include/{}", p.join("/"))
            }
            Name::Raw(s) => s.clone(),
        }
    }
}

impl Archive {
    /// The archive's bytes. Entries the zip writer will not take are left out.
    pub fn build(&self) -> Vec<u8> {
        let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for e in self.entries.iter().take(24) {
            let method = if e.deflate { zip::CompressionMethod::Deflated } else { zip::CompressionMethod::Stored };
            let opts = zip::write::SimpleFileOptions::default().compression_method(method);
            let name = e.name.render();
            let data: Vec<u8> = match &e.data {
                Data::Bytes(b) => b.clone(),
                Data::Zeros(n) => vec![0; (*n as usize % 96) * 1024],
            };
            let ok = match &e.kind {
                Kind::File => z.start_file(name, opts).is_ok() && z.write_all(&data).is_ok(),
                Kind::Dir => z.add_directory(name, opts).is_ok(),
                Kind::Symlink(target) => z.add_symlink(name, target.render(), opts).is_ok(),
                Kind::Mode(m) => z.start_file(name, opts.unix_permissions(*m)).is_ok() && z.write_all(&data).is_ok(),
            };
            if !ok {
                // A refused entry can leave the writer mid-file; start over without it.
                let _ = z.abort_file();
            }
        }
        let mut bytes = match z.finish() {
            Ok(c) => c.into_inner(),
            Err(_) => return Vec::new(),
        };
        if !bytes.is_empty() {
            for (at, b) in &self.patches {
                let i = *at as usize % bytes.len();
                bytes[i] = *b;
            }
        }
        bytes
    }
}
