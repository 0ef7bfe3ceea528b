//! Lines to stderr that never panic: the `note!` macro and [`stderr_line`], which warnings,
//! progress and notes of every command go through. Spec: no `formats/` section (the CLI's own
//! output; the module doc of `cli` says why a closed stderr or pipe must not end a run with 101).

use std::io::{self, Write};

/// `eprintln!` that never panics: warnings, progress and notes go through [`stderr_line`],
/// which drops the line when stderr cannot take it (closed, a closed pipe, a full disk),
/// where `eprintln!` would panic and end the run with 101 after its work is done.
macro_rules! note {
    ($($arg:tt)*) => {
        $crate::cli::stderr::stderr_line(format_args!($($arg)*))
    };
}

/// Writes one line to stderr, or nothing when stderr cannot take it; see [`note!`].
pub(crate) fn stderr_line(args: std::fmt::Arguments<'_>) {
    let mut err = io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.write_all(b"\n"));
}
