//! The storage layer: where hfkit's inputs, outputs and tables live. One set of operations over
//! local files (std::fs: today's behaviour and speed) and S3-compatible object stores (through
//! the `object_store` crate), so that the pipeline and table layers above can read, write and
//! commit without caring which. Spec: `formats/storage.md`.
//!
//! | module | owns |
//! |---|---|
//! | [`answer`] | what a failed request is reported as: the store's error code and message, or where credentials were looked for |
//! | [`interrupt`] | a request to stop (SIGINT, SIGTERM) that writers check at safe points |
//! | [`location`] | [`Location`]: `s3://bucket/prefix`, `file://path`, plain paths |
//! | [`config`] | [`StorageConfig`]: endpoint, region and credentials (AWS variables and files, `--s3-endpoint`), retries |
//! | [`store`] | [`Store`]: read (whole, range, streaming), head, list, put (overwrite, create-only, if-match), delete, copy |
//! | [`shared`] | the process's settings ([`configure`]) and one store per bucket ([`store_for`]) |
//! | [`upload`] | [`Upload`]: a streaming multipart upload with bounded memory, completed or aborted |
//! | [`pending`] | [`PendingUpload`]: multipart uploads in progress (a dead writer's), listed and aborted |
//!
//! Only S3 is compiled in (`object_store`'s `aws-base`, over reqwest with rustls and `ring`:
//! [`config::install_tls_provider`]). GCS and Azure are not: each brings
//! its own credential chain and HTTP client configuration that nothing here tests, and every
//! protocol in `formats/table.md` relies on conditional writes whose semantics differ per
//! store (GCS generation preconditions, Azure ETags on blobs). They are one feature and one
//! `Backend` variant away, behind a cargo feature, once a test server for them runs in CI.
//!
//! Every error names the operation and the URL; no error, log line or report ever holds a
//! credential (they are read into `object_store`'s builder and never formatted).

pub mod answer;
pub mod config;
pub mod interrupt;
pub mod location;
pub mod pending;
pub mod shared;
pub mod store;
pub mod upload;

pub use config::StorageConfig;
pub use location::Location;
pub use pending::PendingUpload;
pub use shared::{configure, store_for, total_stats};
pub use store::{ObjectInfo, PutCondition, Store, StoreStats};
pub use upload::Upload;

/// Errors of the storage layer: each names the operation and the location.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("{location}: not a valid location: {why}")]
    BadLocation { location: String, why: String },
    #[error("{location}: {op}: not found")]
    NotFound { op: &'static str, location: String },
    /// A create-only write found the object there (`If-None-Match: *` answered 412).
    #[error("{location}: {op}: already exists")]
    AlreadyExists { op: &'static str, location: String },
    /// An `If-Match` write found another version of the object.
    #[error("{location}: {op}: the object changed (precondition failed)")]
    Precondition { op: &'static str, location: String },
    #[error("{location}: {op}: {source}")]
    Io {
        op: &'static str,
        location: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{location}: {op}: {}", answer::explain(source))]
    Object {
        op: &'static str,
        location: String,
        #[source]
        source: Box<object_store::Error>,
    },
    #[error("{0}")]
    Config(String),
}

impl StorageError {
    /// True for a missing object or file.
    pub fn is_not_found(&self) -> bool {
        matches!(self, StorageError::NotFound { .. })
    }

    /// True when a conditional write lost (create-only on an existing object, or if-match on
    /// a changed one).
    pub fn is_conflict(&self) -> bool {
        matches!(
            self,
            StorageError::AlreadyExists { .. } | StorageError::Precondition { .. }
        )
    }
}
