//! How hfkit reaches an object store: endpoint, region and credentials from the usual AWS
//! environment variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
//! `AWS_REGION`/`AWS_DEFAULT_REGION`, `AWS_ENDPOINT_URL`, ...), else the shared files
//! (`~/.aws/credentials` and `~/.aws/config`, profile `$AWS_PROFILE` or `default`), else the
//! instance's role; `--s3-endpoint` overrides the endpoint. Retries with exponential backoff.
//! Spec: `formats/storage.md` §"Configuration".

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use object_store::aws::AmazonS3Builder;
use object_store::{BackoffConfig, ClientOptions, RetryConfig};

/// Settings for opening a [`crate::Store`]. Holds no secret: credentials are read when a
/// store is built, straight into `object_store`'s builder.
#[derive(Clone, Debug)]
pub struct StorageConfig {
    /// The S3 endpoint (`--s3-endpoint`): for S3-compatible stores (MinIO, Ceph, moto).
    /// `http://` endpoints are allowed (loopback test servers).
    pub s3_endpoint: Option<String>,
    /// Most retries of one request (throttling, 5xx, connection errors).
    pub max_retries: usize,
    /// No retry starts later than this after the first attempt.
    pub retry_timeout: Duration,
    /// First backoff; doubled per retry up to `max_backoff`.
    pub init_backoff: Duration,
    pub max_backoff: Duration,
}

impl Default for StorageConfig {
    fn default() -> Self {
        StorageConfig {
            s3_endpoint: None,
            max_retries: 6,
            retry_timeout: Duration::from_secs(60),
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
        }
    }
}

impl StorageConfig {
    /// The defaults with `--s3-endpoint`'s value.
    pub fn with_endpoint(endpoint: Option<String>) -> StorageConfig {
        StorageConfig {
            s3_endpoint: endpoint,
            ..StorageConfig::default()
        }
    }

    /// The `object_store` builder for `bucket`.
    pub(crate) fn s3_builder(&self, bucket: &str) -> AmazonS3Builder {
        install_tls_provider();
        let mut b = AmazonS3Builder::from_env().with_bucket_name(bucket);
        if std::env::var_os("AWS_ACCESS_KEY_ID").is_none() {
            let profile = std::env::var("AWS_PROFILE").unwrap_or_else(|_| "default".into());
            let creds = shared_file("AWS_SHARED_CREDENTIALS_FILE", "credentials", &profile);
            if let (Some(k), Some(s)) = (
                creds.get("aws_access_key_id"),
                creds.get("aws_secret_access_key"),
            ) {
                b = b.with_access_key_id(k).with_secret_access_key(s);
                if let Some(t) = creds.get("aws_session_token") {
                    b = b.with_token(t);
                }
            }
            let conf = shared_file("AWS_CONFIG_FILE", "config", &profile);
            if std::env::var_os("AWS_REGION").is_none()
                && std::env::var_os("AWS_DEFAULT_REGION").is_none()
            {
                if let Some(r) = conf.get("region") {
                    b = b.with_region(r);
                }
            }
            if let Some(e) = conf.get("endpoint_url") {
                b = b.with_endpoint(e);
            }
        }
        if let Some(e) = &self.s3_endpoint {
            b = b.with_endpoint(e);
        }
        let endpoint = self
            .s3_endpoint
            .clone()
            .or_else(|| std::env::var("AWS_ENDPOINT_URL_S3").ok())
            .or_else(|| std::env::var("AWS_ENDPOINT_URL").ok())
            .or_else(|| std::env::var("AWS_ENDPOINT").ok());
        // Client options hold allow-http too: set them whole, once.
        let mut client = ClientOptions::new().with_connect_timeout(Duration::from_secs(10));
        if endpoint.is_some_and(|e| e.starts_with("http://")) {
            client = client.with_allow_http(true);
        }
        // Without a region the signature uses us-east-1, which S3-compatible stores accept.
        if std::env::var_os("AWS_REGION").is_none()
            && std::env::var_os("AWS_DEFAULT_REGION").is_none()
        {
            b = b.with_region("us-east-1");
        }
        b.with_retry(RetryConfig {
            backoff: BackoffConfig {
                init_backoff: self.init_backoff,
                max_backoff: self.max_backoff,
                base: 2.0,
            },
            max_retries: self.max_retries,
            retry_timeout: self.retry_timeout,
        })
        .with_client_options(client)
    }
}

/// Makes `ring` the process's TLS crypto provider (rustls), once, before any HTTPS client is
/// built: reqwest is compiled without a provider of its own (`rustls-no-provider`), so that
/// no C crypto library is built (Cargo.toml). Certificates are checked against the system's
/// roots (`rustls-platform-verifier`; `SSL_CERT_FILE` names other roots). A provider installed
/// earlier by the embedding process (Python's, say) is kept.
pub(crate) fn install_tls_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Err only when a provider is already installed: that one serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// The `profile`'s keys in an AWS shared file (`~/.aws/<name>`, or the file `$var` names).
/// In `config`, profiles other than `default` are headed `[profile NAME]`.
fn shared_file(var: &str, name: &str, profile: &str) -> HashMap<String, String> {
    let path = match std::env::var_os(var) {
        Some(p) => PathBuf::from(p),
        None => match std::env::var_os("HOME") {
            Some(h) => PathBuf::from(h).join(".aws").join(name),
            None => return HashMap::new(),
        },
    };
    let Ok(text) = std::fs::read_to_string(path) else {
        return HashMap::new();
    };
    parse_profile(&text, profile)
}

/// The keys of section `[profile]` (or `[profile profile]`) of an INI-style AWS file.
fn parse_profile(text: &str, profile: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let section = section.trim();
            let section = section.strip_prefix("profile ").unwrap_or(section).trim();
            inside = section == profile;
            continue;
        }
        if inside {
            if let Some((k, v)) = line.split_once('=') {
                out.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_named_profile() {
        let text = "[default]\naws_access_key_id = A\n\n[profile other]\nregion = eu-west-1\n# c\n[x]\nregion=no\n";
        assert_eq!(parse_profile(text, "default")["aws_access_key_id"], "A");
        assert_eq!(parse_profile(text, "other")["region"], "eu-west-1");
        assert!(parse_profile(text, "missing").is_empty());
    }
}
