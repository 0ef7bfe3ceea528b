//! An import's identity, recorded in a table's manifest when its output is attached so that
//! the same import run again is refused (`formats/import.md` §"Reruns"): a user-given job id,
//! or a SHA-256 digest of everything that decides the import's cells — the schema file's
//! bytes, the options that change cells, and each input's name, size and content.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::ImportError;

/// The file in an `import --out` directory that holds the import's identity, for `hfkit
/// attach` to record (a name starting with `_`, which attach and `completebulkload` do not
/// load, as MapReduce's `_SUCCESS`).
pub const IDENTITY_FILE: &str = "_hfkit-import-id";

/// The identity of an import: `job:<id>` for a user-given `--job-id`, else `sha256:<hex>` of
/// `schema` (the schema file's bytes), `options` (name and value of each option that changes
/// cells, in a fixed order) and each input's file name, size and content, in input order.
pub fn import_identity(
    job_id: Option<&str>,
    schema: &[u8],
    options: &[(&str, String)],
    inputs: &[PathBuf],
) -> Result<String, ImportError> {
    if let Some(j) = job_id {
        return Ok(format!("job:{j}"));
    }
    let mut h = Sha256::new();
    let field = |h: &mut Sha256, bytes: &[u8]| {
        h.update((bytes.len() as u64).to_be_bytes());
        h.update(bytes);
    };
    field(&mut h, b"hfkit-import-identity-1");
    field(&mut h, schema);
    for (name, value) in options {
        field(&mut h, name.as_bytes());
        field(&mut h, value.as_bytes());
    }
    // Progress: every input is read once to its end (an object's size counts as it streams).
    let total = inputs
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    hfkit_table::progress::phase(
        "hashing the inputs (the import's identity: a rerun is refused)",
        hfkit_table::progress::Unit::Bytes,
        total,
    );
    for path in inputs {
        let name = path.file_name().unwrap_or(path.as_os_str());
        field(&mut h, name.as_encoded_bytes());
        let (size, digest) = file_digest(path)?;
        h.update(size.to_be_bytes());
        h.update(digest);
    }
    hfkit_table::progress::end();
    let mut hex = String::with_capacity(64);
    for b in h.finalize() {
        hex.push_str(&format!("{b:02x}"));
    }
    Ok(format!("sha256:{hex}"))
}

/// A file's size and the SHA-256 of its bytes (an object on object storage is streamed).
fn file_digest(path: &Path) -> Result<(u64, [u8; 32]), ImportError> {
    let io = |source| ImportError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut f: Box<dyn Read> = if crate::source::remote::is_remote(path) {
        crate::source::remote::stream(path)?.0
    } else {
        Box::new(std::fs::File::open(path).map_err(io)?)
    };
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = f.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        size += n as u64;
        h.update(&buf[..n]);
        hfkit_table::progress::done(n as u64);
    }
    Ok((size, h.finalize().into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_changes_with_each_part_and_only_with_them() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.csv");
        std::fs::write(&a, "id\n1\n").unwrap();
        let id = |schema: &[u8], opts: &[(&str, String)], inputs: &[PathBuf]| {
            import_identity(None, schema, opts, inputs).unwrap()
        };
        let base = id(b"s", &[], std::slice::from_ref(&a));
        assert!(
            base.starts_with("sha256:") && base.len() == 7 + 64,
            "{base}"
        );
        assert_eq!(base, id(b"s", &[], std::slice::from_ref(&a)));
        assert_ne!(base, id(b"t", &[], std::slice::from_ref(&a)));
        assert_ne!(
            base,
            id(b"s", &[("timestamp", "5".into())], std::slice::from_ref(&a))
        );
        std::fs::write(&a, "id\n2\n").unwrap();
        assert_ne!(
            base,
            id(b"s", &[], std::slice::from_ref(&a)),
            "same size, other bytes"
        );
        std::fs::write(&a, "id\n1\n").unwrap();
        let b = dir.path().join("b.csv");
        std::fs::copy(&a, &b).unwrap();
        assert_ne!(base, id(b"s", &[], &[b]), "another name");
        assert_eq!(
            import_identity(Some("day-2026-12-04"), b"s", &[], &[a]).unwrap(),
            "job:day-2026-12-04"
        );
    }
}
