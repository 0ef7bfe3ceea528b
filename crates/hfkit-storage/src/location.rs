//! Where a file or directory is: a local path or an object in an S3 bucket, parsed from what a
//! user types (`s3://bucket/prefix`, `file:///path`, a plain path). Spec: `formats/storage.md`
//! §"Locations".

use std::fmt;
use std::path::{Path, PathBuf};

use super::StorageError;

/// A parsed location. An S3 key never starts or ends with `/`; the empty key is the bucket's
/// root.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Location {
    Local(PathBuf),
    S3 { bucket: String, key: String },
}

impl Location {
    /// Parses `s3://bucket/key`, `s3a://bucket/key` (Hadoop's name for the same), `file://path`
    /// and plain paths. Other `scheme://` prefixes are an error, not a relative path.
    pub fn parse(s: &str) -> Result<Location, StorageError> {
        let bad = |why: &str| StorageError::BadLocation {
            location: s.to_string(),
            why: why.to_string(),
        };
        if let Some(rest) = s.strip_prefix("s3://").or_else(|| s.strip_prefix("s3a://")) {
            let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
            if !valid_bucket(bucket) {
                return Err(bad(
                    "the bucket name must be 3 to 63 characters of a-z, 0-9, '.' and '-'",
                ));
            }
            let key = key.trim_matches('/');
            if key
                .split('/')
                .any(|p| p.is_empty() || p == "." || p == "..")
                && !key.is_empty()
            {
                return Err(bad("the key has an empty, '.' or '..' part"));
            }
            return Ok(Location::S3 {
                bucket: bucket.to_string(),
                key: key.to_string(),
            });
        }
        if let Some(rest) = s.strip_prefix("file://") {
            if rest.is_empty() {
                return Err(bad("no path after file://"));
            }
            return Ok(Location::Local(PathBuf::from(rest)));
        }
        if let Some((scheme, _)) = s.split_once("://") {
            if is_scheme(scheme) {
                let lower = scheme.to_ascii_lowercase();
                if lower != scheme && ["s3", "s3a", "file"].contains(&lower.as_str()) {
                    return Err(bad(&format!(
                        "the scheme is written in lower case: '{lower}://'"
                    )));
                }
                return Err(bad(&format!(
                    "unsupported scheme '{scheme}://' (supported: s3://, file://, a plain path)"
                )));
            }
        }
        // A URL missing a slash (`s3:/bucket/key`, `gs:bucket`) is a typo, not a relative
        // path: refused for the schemes of storage systems.
        if let Some((scheme, _)) = s.split_once(':') {
            if STORAGE_SCHEMES.contains(&scheme.to_ascii_lowercase().as_str()) {
                return Err(bad(&format!(
                    "not a URL: '{scheme}:' must be followed by '//' ({}://bucket/key)",
                    scheme.to_ascii_lowercase()
                )));
            }
        }
        Ok(Location::Local(PathBuf::from(s)))
    }

    /// [`Location::parse`] of a path argument (clap hands paths over as `PathBuf`).
    pub fn from_path(p: &Path) -> Result<Location, StorageError> {
        match p.to_str() {
            Some(s) => Location::parse(s),
            None => Ok(Location::Local(p.to_path_buf())),
        }
    }

    /// True for an object-store location.
    pub fn is_remote(&self) -> bool {
        !matches!(self, Location::Local(_))
    }

    /// True when `p` names an object-store location (`s3://`, `s3a://`).
    pub fn is_remote_path(p: &Path) -> bool {
        p.to_str()
            .is_some_and(|s| s.starts_with("s3://") || s.starts_with("s3a://"))
    }

    /// The local path, if local.
    pub fn local_path(&self) -> Option<&Path> {
        match self {
            Location::Local(p) => Some(p),
            Location::S3 { .. } => None,
        }
    }

    /// The bucket, if on object storage.
    pub fn bucket(&self) -> Option<&str> {
        match self {
            Location::Local(_) => None,
            Location::S3 { bucket, .. } => Some(bucket),
        }
    }

    /// `name` (one or more `/`-separated parts) below this location.
    pub fn join(&self, name: &str) -> Location {
        match self {
            Location::Local(p) => Location::Local(p.join(name)),
            Location::S3 { bucket, key } => {
                let name = name.trim_matches('/');
                Location::S3 {
                    bucket: bucket.clone(),
                    key: if key.is_empty() {
                        name.to_string()
                    } else if name.is_empty() {
                        key.clone()
                    } else {
                        format!("{key}/{name}")
                    },
                }
            }
        }
    }

    /// The last part of the location (a file or object name); empty for a bucket's root.
    pub fn file_name(&self) -> String {
        match self {
            Location::Local(p) => p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            Location::S3 { key, .. } => key.rsplit('/').next().unwrap_or_default().to_string(),
        }
    }

    /// The part of `self` below `base` (`/`-separated), if `self` is below it.
    pub fn relative_to(&self, base: &Location) -> Option<String> {
        match (self, base) {
            (Location::Local(p), Location::Local(b)) => p
                .strip_prefix(b)
                .ok()
                .map(|r| r.to_string_lossy().replace('\\', "/")),
            (
                Location::S3 { bucket, key },
                Location::S3 {
                    bucket: b2,
                    key: k2,
                },
            ) if bucket == b2 => {
                if k2.is_empty() {
                    Some(key.clone())
                } else if key == k2 {
                    Some(String::new())
                } else {
                    key.strip_prefix(k2.as_str())?
                        .strip_prefix('/')
                        .map(String::from)
                }
            }
            _ => None,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Local(p) => write!(f, "{}", p.display()),
            Location::S3 { bucket, key } if key.is_empty() => write!(f, "s3://{bucket}"),
            Location::S3 { bucket, key } => write!(f, "s3://{bucket}/{key}"),
        }
    }
}

/// The schemes of storage systems and URLs: a path starting `<one of them>:` is a mistyped
/// URL, never a local path.
const STORAGE_SCHEMES: [&str; 21] = [
    "s3", "s3a", "s3n", "gs", "gcs", "az", "abfs", "abfss", "wasb", "wasbs", "adl", "hdfs",
    "webhdfs", "viewfs", "http", "https", "ftp", "sftp", "file", "oss", "cos",
];

/// True for a URL scheme (RFC 3986: a letter, then letters, digits, `+`, `-`, `.`).
fn is_scheme(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// S3's bucket naming rules (the subset that matters here).
fn valid_bucket(b: &str) -> bool {
    (3..=63).contains(&b.len())
        && b.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-')
        && b.starts_with(|c: char| c.is_ascii_alphanumeric())
        && b.ends_with(|c: char| c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_forms() {
        assert_eq!(
            Location::parse("s3://bucket1/a/b/").unwrap(),
            Location::S3 {
                bucket: "bucket1".into(),
                key: "a/b".into()
            }
        );
        assert_eq!(
            Location::parse("s3a://bucket1").unwrap(),
            Location::S3 {
                bucket: "bucket1".into(),
                key: "".into()
            }
        );
        assert_eq!(
            Location::parse("file:///tmp/x").unwrap(),
            Location::Local("/tmp/x".into())
        );
        assert_eq!(
            Location::parse("rel/dir").unwrap(),
            Location::Local("rel/dir".into())
        );
        // A colon is no scheme unless a storage system's name stands before it.
        for local in ["a:b/c", "dir/s3:/x", "./s3:/b", "2026-12-07T03:00"] {
            assert_eq!(
                Location::parse(local).unwrap(),
                Location::Local(local.into()),
                "{local}"
            );
        }
    }

    #[test]
    fn rejects_bad_buckets_keys_and_schemes() {
        for bad in [
            "s3://b/x",
            "s3://Bucket/x",
            "s3://bucket1/a//b",
            "gs://bucket/x",
            "file://",
            "S3://bucket1/x",
            "s3:/bucket1/x",
            "s3:bucket1",
            "hdfs://nn:8020/x",
            "HTTP://host/x",
            "webhdfs://nn/x",
            "abfs+x://c/x",
        ] {
            let e = Location::parse(bad).unwrap_err().to_string();
            assert!(e.contains(bad), "{e}");
        }
    }

    #[test]
    fn join_display_and_relative() {
        let base = Location::parse("s3://bucket1/t").unwrap();
        let f = base.join("data/r/f");
        assert_eq!(f.to_string(), "s3://bucket1/t/data/r/f");
        assert_eq!(f.relative_to(&base).as_deref(), Some("data/r/f"));
        assert_eq!(f.file_name(), "f");
        assert_eq!(
            Location::parse("s3://bucket1/tt/x")
                .unwrap()
                .relative_to(&base),
            None
        );
        let root = Location::parse("s3://bucket1").unwrap();
        assert_eq!(root.join("k").to_string(), "s3://bucket1/k");
    }
}
