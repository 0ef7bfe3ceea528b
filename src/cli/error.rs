//! The CLI's exit codes ([`EXIT_OK`], [`EXIT_FAILURE`], [`EXIT_USAGE`],
//! [`EXIT_ALREADY_IMPORTED`]) and [`CliError`], the error every command reports: a message, its
//! exit code, and the kind of the I/O error behind it. Spec: the exit codes of `cli`'s module doc
//! and `hfkit --help`; 3 is formats/import.md §"Reruns", 128 + the signal of
//! [`CliError::interrupted`] formats/table.md §"Stopping a writer".

use std::io;

/// Exit code: success.
pub const EXIT_OK: i32 = 0;
/// Exit code: bad input data, a corrupt file, or a failed verification.
pub const EXIT_FAILURE: i32 = 1;
/// Exit code: the command line is wrong.
pub const EXIT_USAGE: i32 = 2;
/// Exit code: `import --table` refused an import the table already holds (nothing done).
pub const EXIT_ALREADY_IMPORTED: i32 = 3;

/// An error the CLI reports: a message, its exit code (failure or usage), and the kind of the
/// I/O error behind it, if one is.
#[derive(Debug)]
pub struct CliError {
    pub message: String,
    pub code: i32,
    /// Writing the output to a closed pipe is `BrokenPipe`: the run then ends quietly.
    pub io_kind: Option<io::ErrorKind>,
}

impl CliError {
    /// The error of a run stopped by `signal` before it committed anything.
    pub(crate) fn interrupted(signal: i32) -> CliError {
        CliError {
            message: format!(
                "interrupted by {}: stopped before committing; what this run staged was removed, \
                 and nothing was changed",
                crate::storage::interrupt::signal_name(signal)
            ),
            code: 128 + signal,
            io_kind: None,
        }
    }

    pub fn failure(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            code: EXIT_FAILURE,
            io_kind: None,
        }
    }
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            code: EXIT_USAGE,
            io_kind: None,
        }
    }
}

impl From<io::Error> for CliError {
    fn from(e: io::Error) -> Self {
        CliError {
            io_kind: Some(e.kind()),
            ..CliError::failure(e.to_string())
        }
    }
}

impl From<serde_json::Error> for CliError {
    /// JSON written to the output: an I/O error keeps its kind.
    fn from(e: serde_json::Error) -> Self {
        CliError {
            io_kind: e.io_error_kind(),
            ..CliError::failure(e.to_string())
        }
    }
}
