//! The `examples!` macro: the `Examples (...):` section each command's `--help` ends with, one
//! indented command per line, run as written by `tests/it/cli/help.rs`. Spec: no `formats/`
//! section (the CLI's help text; `hfkit --help` says how the examples build on each other).

/// A command's `--help` examples: `Examples (...):` and one indented command per line. They
/// run as written from a checkout of hfkit (`tests/it/cli/help.rs` runs every one), so they use the
/// bundled data and build on each other as `hfkit --help` says.
macro_rules! examples {
    ($($line:literal),+ $(,)?) => {
        concat!(
            "Examples (from a checkout of hfkit; see `hfkit --help`):",
            $("\n  ", $line),+
        )
    };
}
