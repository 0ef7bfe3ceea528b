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

use super::answer::leaves;
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
                    crate::config::install_tls_provider();
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
            let page = ListPage::read(&body).ok_or_else(|| {
                object_error(
                    OP,
                    prefix,
                    generic(format!("not a ListMultipartUploadsResult: {body}")),
                )
            })?;
            for u in page.uploads {
                out.push(PendingUpload {
                    location: Location::S3 {
                        bucket: bucket.clone(),
                        key: u.key,
                    },
                    upload_id: u.upload_id,
                    initiated: u.initiated,
                });
            }
            if !page.truncated {
                return Ok(out);
            }
            let next = (page.next_key_marker, page.next_upload_id_marker);
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

/// One page of S3's `ListMultipartUploadsResult`.
#[derive(Debug, Default, PartialEq, Eq)]
struct ListPage {
    uploads: Vec<Upload>,
    truncated: bool,
    next_key_marker: Option<String>,
    next_upload_id_marker: Option<String>,
}

/// An `Upload` of a listing page; `initiated` in epoch seconds (0 if absent or unreadable).
#[derive(Debug, PartialEq, Eq)]
struct Upload {
    key: String,
    upload_id: String,
    initiated: i64,
}

impl ListPage {
    /// The page in the XML answer `xml` (`crate::answer::leaves`: a real XML parser, entities
    /// and character references resolved); `None` for an answer that is not one. An `Upload`
    /// without its `Key` or `UploadId` is left out.
    fn read(xml: &str) -> Option<ListPage> {
        let leaves = leaves(xml)?;
        if leaves
            .first()
            .is_some_and(|l| l.path[0] != "ListMultipartUploadsResult")
        {
            return None;
        }
        let top = |name: &str| {
            leaves
                .iter()
                .find(|l| l.path.len() == 2 && l.path[1] == name)
                .map(|l| l.text.clone())
        };
        let mut page = ListPage {
            truncated: top("IsTruncated").as_deref() == Some("true"),
            next_key_marker: top("NextKeyMarker"),
            next_upload_id_marker: top("NextUploadIdMarker"),
            uploads: Vec::new(),
        };
        let in_uploads = leaves
            .iter()
            .filter(|l| l.path.len() == 3 && l.path[1] == "Upload");
        let mut groups: Vec<usize> = in_uploads.clone().map(|l| l.group).collect();
        groups.dedup();
        for g in groups {
            let field = |name: &str| {
                in_uploads
                    .clone()
                    .find(|l| l.group == g && l.path[2] == name)
                    .map(|l| l.text.clone())
            };
            let (Some(key), Some(upload_id)) = (field("Key"), field("UploadId")) else {
                continue;
            };
            let initiated = field("Initiated")
                .and_then(|t| chrono::DateTime::parse_from_rfc3339(&t).ok())
                .map_or(0, |t| t.timestamp());
            page.uploads.push(Upload {
                key,
                upload_id,
                initiated,
            });
        }
        Some(page)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_pages_are_read_as_xml() {
        // S3's answer, keys with entities and a numeric reference, one upload without its id.
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<ListMultipartUploadsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Bucket>b</Bucket>
  <KeyMarker></KeyMarker>
  <NextKeyMarker>t/a&amp;b</NextKeyMarker>
  <NextUploadIdMarker>id&#50;</NextUploadIdMarker>
  <IsTruncated>true</IsTruncated>
  <Upload>
    <Key>t/a&amp;b</Key>
    <UploadId>id1</UploadId>
    <Initiated>2026-12-07T06:00:00.000Z</Initiated>
  </Upload>
  <Upload>
    <Key>t/caf&#233; &lt;x&gt;</Key>
    <UploadId><![CDATA[id&2]]></UploadId>
  </Upload>
  <Upload>
    <Key>t/no-id</Key>
  </Upload>
</ListMultipartUploadsResult>"#;
        let page = ListPage::read(xml).unwrap();
        assert_eq!(
            page,
            ListPage {
                uploads: vec![
                    Upload {
                        key: "t/a&b".into(),
                        upload_id: "id1".into(),
                        initiated: 1_796_623_200,
                    },
                    Upload {
                        key: "t/café <x>".into(),
                        upload_id: "id&2".into(),
                        initiated: 0,
                    },
                ],
                truncated: true,
                next_key_marker: Some("t/a&b".into()),
                next_upload_id_marker: Some("id2".into()),
            }
        );
        // An empty, last page.
        let page = ListPage::read(
            "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated>\
             </ListMultipartUploadsResult>",
        )
        .unwrap();
        assert_eq!(page, ListPage::default());
        // Not a listing, or one cut short: no page (the caller fails, naming the answer).
        assert_eq!(ListPage::read("<Error><Code>X</Code></Error>"), None);
        assert_eq!(
            ListPage::read("<ListMultipartUploadsResult><Upload><Key>a</Key>"),
            None
        );
    }
}
