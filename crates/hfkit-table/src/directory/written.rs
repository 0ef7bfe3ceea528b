//! Files this process wrote itself, checked against what their writer recorded as it wrote
//! them instead of decoded again in full: an import's output attached by `import --table`, a
//! compaction's output before its commit. Spec: `formats/table.md` §"Checks before data is
//! replaced, deleted or handed out" and §"Attach of files this process wrote".

use std::path::PathBuf;

use crate::TableError;
use hfkit_format::checksum::crc32c_append;
use hfkit_format::reader::HFileReader;

/// What this process recorded of a file it wrote itself, as it wrote it (`import --table`'s
/// output, a compaction's): the file on disk is checked against it instead of verified in
/// full (`formats/table.md` §"Attach of files this process wrote").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrittenFile {
    /// Where it was written (for an import: `DIR/<family>/<name>` of the bulk-load directory
    /// attached).
    pub path: PathBuf,
    /// Its length in bytes.
    pub size: u64,
    /// The cells written (its trailer's entry count).
    pub cells: u64,
    /// CRC32C (Castagnoli) of every byte written, in order.
    pub crc32c: u32,
}

/// Read buffer of the CRC32C pass over a [`WrittenFile`]: the check holds this much, however
/// large the file.
const CRC_BUFFER: usize = 256 * 1024;

/// Why [`check_written`] refused a file.
#[derive(Debug, thiserror::Error)]
pub enum WrittenFileError {
    /// It could not be read, or does not open as an HFile.
    #[error(transparent)]
    Table(#[from] TableError),
    /// It is not what its writer wrote: what differs.
    #[error("changed after it was written: {0}")]
    Changed(String),
}

/// Checks a file this process wrote against what its writer recorded: its length, the CRC32C
/// of its bytes on disk (read through a [`CRC_BUFFER`]-byte buffer, not mapped), and — once
/// opened, which cross-checks its trailer against the load-on-open section — its cell count.
pub fn check_written(w: &WrittenFile) -> Result<HFileReader, WrittenFileError> {
    use std::io::Read;
    let path = &w.path;
    let mut file = std::fs::File::open(path).map_err(|e| TableError::io(path, e))?;
    let size = file.metadata().map_err(|e| TableError::io(path, e))?.len();
    if size != w.size {
        return Err(WrittenFileError::Changed(format!(
            "{size} bytes, {} written",
            w.size
        )));
    }
    let mut buf = vec![0u8; CRC_BUFFER];
    let (mut crc, mut read) = (0u32, 0u64);
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(TableError::io(path, e).into()),
        };
        crc = crc32c_append(crc, &buf[..n]);
        read += n as u64;
    }
    if read != w.size || crc != w.crc32c {
        return Err(WrittenFileError::Changed(format!(
            "CRC32C {crc:08x} of {read} bytes, {:08x} of {} written",
            w.crc32c, w.size
        )));
    }
    let reader = HFileReader::open(path)
        .map_err(|e| TableError::Invalid(format!("{}: {e}", path.display())))?;
    if reader.entry_count() != w.cells {
        return Err(WrittenFileError::Changed(format!(
            "{} cells in its trailer, {} written",
            reader.entry_count(),
            w.cells
        )));
    }
    Ok(reader)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hfkit_format::cell::Cell;
    use hfkit_format::checksum::Crc32cWriter;
    use hfkit_format::writer::{HFileWriter, WriterOptions};

    /// A file written through a [`Crc32cWriter`], as a compaction writes its output, and
    /// what its writer recorded.
    fn written(dir: &std::path::Path) -> WrittenFile {
        let path = dir.join("f");
        let file = Crc32cWriter::new(std::fs::File::create(&path).unwrap());
        let mut w = HFileWriter::new(file, WriterOptions::default()).unwrap();
        for i in 0..100u32 {
            let row = format!("r{i:04}");
            w.append(&Cell::put(row.as_bytes(), b"f", b"q", 1, b"v").as_ref())
                .unwrap();
        }
        let (f, summary) = w.finish().unwrap();
        WrittenFile {
            path,
            size: f.written(),
            cells: summary.entry_count,
            crc32c: f.crc32c(),
        }
    }

    #[test]
    fn a_written_file_passes_and_any_change_to_it_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let w = written(dir.path());
        let r = check_written(&w).unwrap();
        assert_eq!(r.entry_count(), 100);
        drop(r);
        // Another cell count than the writer's.
        let fewer = WrittenFile {
            cells: 99,
            ..w.clone()
        };
        let e = check_written(&fewer).unwrap_err().to_string();
        assert!(e.contains("100 cells in its trailer, 99 written"), "{e}");
        // A byte changed on disk.
        let mut bytes = std::fs::read(&w.path).unwrap();
        bytes[10] ^= 1;
        std::fs::write(&w.path, &bytes).unwrap();
        let e = check_written(&w).unwrap_err().to_string();
        assert!(e.starts_with("changed after it was written: CRC32C"), "{e}");
        // Cut short.
        bytes[10] ^= 1;
        std::fs::write(&w.path, &bytes[..bytes.len() - 1]).unwrap();
        let e = check_written(&w).unwrap_err().to_string();
        assert!(e.contains("bytes, ") && e.contains("written"), "{e}");
    }
}
