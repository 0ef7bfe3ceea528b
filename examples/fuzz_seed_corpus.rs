//! Writes the seed corpus of the cargo-fuzz target `read_hfile` (`fuzz/`): the base files of
//! the reader's garbage test (`tests/it/common/seed_files.rs`, every codec and checksum type,
//! multi-level indexes, an empty file), one `<name>.hfile` each.
//!
//! Usage: cargo run --example fuzz_seed_corpus -- [DIR] (default `fuzz/corpus/read_hfile`)

// A bench or probe, not a library path: a failed unwrap stops it with the reason.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/it/common/seed_files.rs"]
mod seed_files;

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("fuzz/corpus/read_hfile"));
    let n = seed_files::write_corpus(&dir)?;
    println!("{n} seed files written to {}", dir.display());
    Ok(())
}
