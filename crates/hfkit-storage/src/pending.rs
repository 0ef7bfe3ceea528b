//! Multipart uploads in progress on S3: listed (`ListMultipartUploads`, which `object_store`
//! does not offer: sent here as a request signed by the store's own signer) and aborted
//! (`object_store`'s `MultipartStore::abort_multipart`). A writer killed during an upload
//! leaves one; the next writer finds it by its prefix and its start time and aborts it, so its
//! parts do not stay stored (and billed) until a bucket lifecycle rule runs. Locally there are
//! none: a local upload is a file. Spec: `formats/storage.md` §"Uploads in progress".

use std::time::Duration;

use object_store::client::{ClientOptions, HttpConnector, ReqwestConnector};
use object_store::multipart::MultipartStore;
use object_store::path::Path as ObjectPath;
use object_store::signer::{SignedUrlOptions, Signer};

use super::store::{object_error, runtime, Backend, Store};
use super::{Location, StorageError};

/// A multipart upload started and neither completed nor aborted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingUpload {
    /// Where it would appear if completed.
    pub location: Location,
    pub upload_id: String,
    /// When it started: seconds since the epoch, by the store's clock.
    pub initiated: i64,
}

impl Store {
    /// The multipart uploads in progress whose key starts with `prefix` (none locally).
    pub fn pending_uploads(&self, prefix: &Location) -> Result<Vec<PendingUpload>, StorageError> {
        const OP: &str = "list uploads";
        let (Backend::S3 { client, .. }, Location::S3 { bucket, key }) = (&self.backend, prefix)
        else {
            self.target(OP, prefix)?;
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        let mut markers: Option<(String, String)> = None;
        loop {
            let mut query = vec![
                ("uploads".to_string(), String::new()),
                ("prefix".to_string(), key.clone()),
            ];
            if let Some((k, u)) = &markers {
                query.push(("key-marker".to_string(), k.clone()));
                query.push(("upload-id-marker".to_string(), u.clone()));
            }
            let mut opts = SignedUrlOptions::default();
            opts.extra_query = query;
            let body = runtime()
                .block_on(async {
                    let url = client
                        .signed_url_opts(
                            http::Method::GET,
                            &ObjectPath::from(""),
                            Duration::from_secs(600),
                            &opts,
                        )
                        .await?;
                    let http = ReqwestConnector::default()
                        .connect(&ClientOptions::new().with_allow_http(true))?;
                    let request = http::Request::get(url.as_str())
                        .body(object_store::client::HttpRequestBody::empty())
                        .map_err(|e| generic(e.to_string()))?;
                    let answer = http
                        .execute(request)
                        .await
                        .map_err(|e| generic(e.to_string()))?;
                    let status = answer.status();
                    let bytes = answer
                        .into_body()
                        .bytes()
                        .await
                        .map_err(|e| generic(e.to_string()))?;
                    let text = String::from_utf8_lossy(&bytes).into_owned();
                    if !status.is_success() {
                        return Err(generic(format!("HTTP {status}: {text}")));
                    }
                    Ok(text)
                })
                .map_err(|e| object_error(OP, prefix, e))?;
            self.counters.request(body.len() as u64, 0);
            for u in elements(&body, "Upload") {
                let (Some(k), Some(id)) = (element(u, "Key"), element(u, "UploadId")) else {
                    continue;
                };
                let initiated = element(u, "Initiated")
                    .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
                    .map_or(0, |t| t.timestamp());
                out.push(PendingUpload {
                    location: Location::S3 {
                        bucket: bucket.clone(),
                        key: unescape(k),
                    },
                    upload_id: unescape(id),
                    initiated,
                });
            }
            if element(&body, "IsTruncated") != Some("true") {
                return Ok(out);
            }
            let next = (
                element(&body, "NextKeyMarker").map(unescape),
                element(&body, "NextUploadIdMarker").map(unescape),
            );
            match next {
                (Some(k), Some(u)) if markers.as_ref() != Some(&(k.clone(), u.clone())) => {
                    markers = Some((k, u));
                }
                _ => return Ok(out),
            }
        }
    }

    /// Aborts an upload in progress: its parts are discarded; one already gone is fine.
    pub fn abort_pending(&self, upload: &PendingUpload) -> Result<(), StorageError> {
        const OP: &str = "abort upload";
        let Some((_, key)) = self.target(OP, &upload.location)? else {
            return Ok(());
        };
        let Backend::S3 { client, .. } = &self.backend else {
            return Ok(());
        };
        let got = runtime().block_on(client.abort_multipart(&key, &upload.upload_id));
        self.counters.request(0, 0);
        match got {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(object_error(OP, &upload.location, e)),
        }
    }
}

fn generic(source: String) -> object_store::Error {
    object_store::Error::Generic {
        store: "S3",
        source: source.into(),
    }
}

/// The text of the first `<name>` element of `xml`.
fn element<'a>(xml: &'a str, name: &str) -> Option<&'a str> {
    elements(xml, name).into_iter().next()
}

/// The texts of every `<name>` element of `xml` (no attributes, not nested in itself).
fn elements<'a>(xml: &'a str, name: &str) -> Vec<&'a str> {
    let (open, close) = (format!("<{name}>"), format!("</{name}>"));
    xml.split(open.as_str())
        .skip(1)
        .filter_map(|s| s.split_once(close.as_str()).map(|(t, _)| t))
        .collect()
}

/// XML's five predefined entities replaced.
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}
