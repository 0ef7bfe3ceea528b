//! An hfkit table from an HBase table or snapshot (`hfkit table clone-hbase`): the live
//! regions become the table's regions; every store file becomes a table file, HFiles (found
//! through links) hard-linked or copied as they are, reference halves rewritten as the half
//! through the HFile writer with the family's settings. Files are attached in HBase's sequence
//! id order, one attach per sequence id, so newer HBase files stay newer. Spec:
//! `formats/hbase-layout.md` §"Clone into an hfkit table".

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::manifest::Manifest;
use super::store::{open_store_file, OpenedStoreFile, ResolvedFile};
use super::{HBaseError, Result};
use hfkit_format::writer::write_file_atomically;
use hfkit_table::directory::Table;
use hfkit_table::manifest::FamilyEntry;

/// What a clone did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CloneReport {
    pub table: PathBuf,
    pub regions: usize,
    /// HFiles linked (or copied) as they are.
    pub files_linked: usize,
    /// Reference halves rewritten.
    pub halves_written: usize,
    /// Halves that held no cell (nothing to attach).
    pub empty_halves: usize,
    /// Store files of MOB families rewritten with their reference cells resolved (an hfkit
    /// table has no MOB files: the values go into its store files).
    pub mob_files_resolved: usize,
    /// Manifest version of the new table (one attach per HBase sequence id).
    pub version: u64,
}

/// One store file to carry over.
struct Input {
    family: String,
    resolved: ResolvedFile,
    opened: OpenedStoreFile,
}

/// A sibling of `dest` named `.<dest name>.<what>-<unique>`.
fn sibling(dest: &Path, what: &str) -> Result<PathBuf> {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| HBaseError::Invalid(format!("{}: not a directory name", dest.display())))?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    Ok(dest.with_file_name(format!(".{name}.{what}-{nanos:x}-{}", std::process::id())))
}

/// Clones the live regions of `m` into a new table at `dest` (absent or empty), named
/// `table_name` (default: the HBase table's name). All or nothing: the table is built in a
/// sibling directory and renamed to `dest` when complete; on failure nothing is left.
pub fn clone_to_table(
    m: &Manifest,
    dest: &Path,
    table_name: Option<&str>,
    now_ms: i64,
) -> Result<CloneReport> {
    if dest.exists()
        && std::fs::read_dir(dest)
            .map_err(|e| HBaseError::io(dest, e))?
            .next()
            .is_some()
    {
        return Err(HBaseError::Invalid(format!(
            "{} exists and is not empty",
            dest.display()
        )));
    }
    let families = m.family_entries()?;
    for f in &families {
        f.writer_options(now_ms)?;
    }
    let live = m.live_regions();
    let splits: Vec<Vec<u8>> = live
        .iter()
        .skip(1)
        .map(|r| r.info.start_key.clone())
        .collect();
    // Resolve and open everything first: a missing or unreadable file fails the clone before
    // anything is written.
    let mut by_seq: BTreeMap<u64, Vec<Input>> = BTreeMap::new();
    for r in &live {
        for ff in &r.families {
            let family = String::from_utf8_lossy(&ff.family).into_owned();
            m.family(r, &ff.family)?;
            for f in &ff.files {
                let resolved = m.resolve(r, &family, f)?;
                let opened = open_store_file(&resolved)?;
                by_seq.entry(opened.seq_id).or_default().push(Input {
                    family: family.clone(),
                    resolved,
                    opened,
                });
            }
        }
    }
    let name = table_name
        .map(str::to_string)
        .unwrap_or_else(|| m.table().full_name());
    let staging = sibling(dest, "hfkit-clone")?;
    let bulk = sibling(dest, "hfkit-clone-bulk")?;
    let mob = super::mob::MobResolver::of(m);
    let result = build(
        (&staging, &bulk),
        &name,
        families,
        &splits,
        &by_seq,
        mob.as_ref(),
        now_ms,
    );
    let _ = std::fs::remove_dir_all(&bulk);
    let mut report = match result {
        Ok(r) => r,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e);
        }
    };
    let placed = std::fs::rename(&staging, dest).map_err(|e| HBaseError::io(dest, e));
    if let Err(e) = placed {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    if let Some(parent) = dest.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::File::open(parent)
            .and_then(|d| d.sync_all())
            .map_err(|e| HBaseError::io(parent, e))?;
    }
    report.table = dest.to_path_buf();
    report.regions = live.len();
    Table::open(dest)?;
    Ok(report)
}

fn build(
    (staging, bulk): (&Path, &Path),
    name: &str,
    families: Vec<FamilyEntry>,
    splits: &[Vec<u8>],
    by_seq: &BTreeMap<u64, Vec<Input>>,
    mob: Option<&super::mob::MobResolver>,
    now_ms: i64,
) -> Result<CloneReport> {
    let opts: BTreeMap<String, _> = families
        .iter()
        .map(|f| Ok((f.name.clone(), f.writer_options(now_ms)?)))
        .collect::<Result<_>>()?;
    let table = Table::create(staging, name, families, splits)?;
    let mut report = CloneReport::default();
    let total = by_seq.values().map(|v| v.len() as u64).sum();
    hfkit_table::progress::phase("copying", hfkit_table::progress::Unit::Files, total);
    for (seq, inputs) in by_seq {
        let dir = bulk.join(seq.to_string());
        let mut any = false;
        for (i, input) in inputs.iter().enumerate() {
            hfkit_table::check_interrupt()?;
            let fam_dir = dir.join(&input.family);
            std::fs::create_dir_all(&fam_dir).map_err(|e| HBaseError::io(&fam_dir, e))?;
            let to = fam_dir.join(format!("{i:05}"));
            let mob_family = mob.filter(|r| r.is_mob_family(input.family.as_bytes()));
            match (&input.resolved.reference, mob_family) {
                (None, None) => {
                    if let Some(object) = &input.resolved.object {
                        // A root on object storage: the bytes, not the mirror's placeholder.
                        super::remote::download(object, &to)?;
                    } else if std::fs::hard_link(&input.resolved.path, &to).is_err() {
                        std::fs::copy(&input.resolved.path, &to)
                            .map_err(|e| HBaseError::io(&to, e))?;
                    }
                    report.files_linked += 1;
                    any = true;
                }
                (reference, mob_family) => {
                    // A half (of a reference), and a MOB family's file with its references
                    // resolved: rewritten with the family's settings.
                    let o = opts[&input.family].clone();
                    let reader = &input.opened.reader;
                    let summary = write_file_atomically(&to, o, |w| {
                        let mut s = reader.scanner()?;
                        while let Some(c) = s.next()? {
                            let resolved = match mob_family {
                                Some(r) => r.resolve(&c).map_err(|e| {
                                    hfkit_format::FormatError::Invalid(e.to_string())
                                })?,
                                None => None,
                            };
                            match &resolved {
                                Some(cell) => w.append(&cell.as_ref())?,
                                None => w.append(&c)?,
                            }
                        }
                        Ok::<_, hfkit_format::FormatError>(())
                    })
                    .map_err(|e| {
                        HBaseError::Invalid(format!(
                            "rewriting {} of {}: {e}",
                            match reference {
                                Some(_) => "the half",
                                None => "the MOB family's file",
                            },
                            input.resolved.path.display()
                        ))
                    })?;
                    if mob_family.is_some() {
                        report.mob_files_resolved += 1;
                    }
                    if summary.entry_count == 0 {
                        let _ = std::fs::remove_file(&to);
                        report.empty_halves += usize::from(reference.is_some());
                    } else {
                        report.halves_written += usize::from(reference.is_some());
                        any = true;
                    }
                }
            }
            hfkit_table::progress::done(1);
        }
        if any {
            report.version = hfkit_table::progress::nested(|| table.attach(&dir))?.version;
        }
    }
    Ok(report)
}
