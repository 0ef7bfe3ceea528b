//! What a failed request to object storage is reported as (formats/storage.md
//! §"Configuration"): the store's own error code and message, read from its XML answer with a
//! real XML parser, not the raw XML; and, when the request could not be signed because no
//! credentials were found (the last place looked is the EC2 instance metadata service, whose
//! refusal is all `object_store` reports), which places were looked in. Also the reader of
//! S3's other XML answers ([`leaves`]: the listing of uploads in progress, `pending`).

use quick_xml::events::Event;
use quick_xml::Reader;

/// The text an error of `object_store` is reported as.
pub fn explain(e: &object_store::Error) -> String {
    let text = e.to_string();
    if is_credentials_probe(&text) {
        return no_credentials(&text);
    }
    match text.find("<?xml").or_else(|| text.find("<Error>")) {
        Some(at) => {
            let head = text[..at].trim_end().trim_end_matches(':');
            match error_answer(&text[at..]) {
                Some((code, message)) => format!("{}: {code}: {message}", short_head(head)),
                None => format!(
                    "{}: (an answer that is not S3's error XML)",
                    short_head(head)
                ),
            }
        }
        None => match root_cause(e) {
            // A request that got no answer says why only in its causes (a refused
            // connection, a certificate not trusted: `invalid peer certificate: UnknownIssuer`).
            Some(cause) if !text.contains(&cause) => format!("{text}: {cause}"),
            _ => text,
        },
    }
}

/// The innermost error of `e`'s chain of sources, as text; `None` when it has none.
fn root_cause(e: &object_store::Error) -> Option<String> {
    let mut cause = std::error::Error::source(e)?;
    while let Some(next) = cause.source() {
        cause = next;
    }
    Some(cause.to_string())
}

/// The `Code` and `Message` of S3's error answer `<Error><Code>..</Code><Message>..</Message>`.
pub fn error_answer(xml: &str) -> Option<(String, String)> {
    let leaves = leaves(xml)?;
    if leaves.first().is_some_and(|l| l.path[0] != "Error") {
        return None;
    }
    let field = |name: &str| {
        leaves
            .iter()
            .find(|l| l.path.len() == 2 && l.path[0] == "Error" && l.path[1] == name)
            .map(|l| l.text.clone())
    };
    Some((field("Code")?, field("Message").unwrap_or_default()))
}

/// An element of an XML answer that holds text: its path of element names from the root,
/// its text (entities, character references and CDATA resolved), and which child of the
/// root it is in (`group`: the n-th element at depth 2, counted from 0; a leaf of the root
/// itself has the group of the child before it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leaf {
    pub path: Vec<String>,
    pub text: String,
    pub group: usize,
}

/// Every text-holding element of the XML answer `xml`, in document order, read with a real
/// XML parser; `None` for an answer that is not well-formed or is cut short (an element left
/// open at its end).
pub fn leaves(xml: &str) -> Option<Vec<Leaf>> {
    let mut reader = Reader::from_str(xml);
    let mut path: Vec<String> = Vec::new();
    let mut out: Vec<Leaf> = Vec::new();
    // The text of the element now open, if any was read; the group counter.
    let mut text: Option<String> = None;
    let mut group = 0usize;
    let mut groups_seen = 0usize;
    let mut root_closed = false;
    loop {
        let piece: Option<String> = match reader.read_event().ok()? {
            Event::Start(s) => {
                path.push(String::from_utf8_lossy(s.name().as_ref()).into_owned());
                if path.len() == 2 {
                    group = groups_seen;
                    groups_seen += 1;
                }
                text = None;
                None
            }
            Event::End(_) => {
                if let Some(t) = text.take() {
                    out.push(Leaf {
                        path: path.clone(),
                        text: t,
                        group,
                    });
                }
                path.pop()?;
                root_closed |= path.is_empty();
                None
            }
            Event::Text(t) => Some(t.decode().ok()?.into_owned()),
            Event::CData(c) => Some(c.decode().ok()?.into_owned()),
            // An entity or character reference (`&amp;`, `&#233;`).
            Event::GeneralRef(r) => Some(match r.resolve_char_ref().ok()? {
                Some(c) => c.to_string(),
                None => match r.decode().ok()?.as_ref() {
                    "amp" => "&".into(),
                    "lt" => "<".into(),
                    "gt" => ">".into(),
                    "quot" => "\"".into(),
                    "apos" => "'".into(),
                    other => format!("&{other};"),
                },
            }),
            Event::Eof => break,
            _ => None,
        };
        if let Some(p) = piece.filter(|_| !path.is_empty()) {
            text.get_or_insert_with(String::new).push_str(&p);
        }
    }
    (root_closed && path.is_empty()).then_some(out)
}

/// `Generic S3 error: Error performing GET http://... in 6ms - Server returned non-2xx status
/// code: 404 Not Found` → `GET http://...: 404 Not Found`.
fn short_head(head: &str) -> String {
    let head = head.rsplit("Error performing ").next().unwrap_or(head);
    match head
        .split_once(" in ")
        .zip(head.rsplit_once("status code: "))
    {
        Some(((request, _), (_, status))) => format!("{request}: {status}"),
        None => head.to_string(),
    }
}

/// The address of the EC2 instance metadata service, asked for credentials last.
const METADATA: &str = "169.254.169.254";

/// True for a failed request to the instance metadata service (at its address, or at
/// `$AWS_METADATA_ENDPOINT`): its token and credential paths.
fn is_credentials_probe(text: &str) -> bool {
    text.contains(METADATA)
        || text.contains("/latest/api/token")
        || text.contains("/latest/meta-data/iam")
}

fn no_credentials(text: &str) -> String {
    let answer = match text.rsplit_once("status code: ") {
        Some((_, s)) => s.lines().next().unwrap_or(s).to_string(),
        None => text.rsplit(" - ").next().unwrap_or("no answer").to_string(),
    };
    format!(
        "no AWS credentials found: none in the environment (AWS_ACCESS_KEY_ID and \
         AWS_SECRET_ACCESS_KEY, AWS_WEB_IDENTITY_TOKEN_FILE, AWS_CONTAINER_CREDENTIALS_*), \
         none in ~/.aws/credentials or ~/.aws/config (profile $AWS_PROFILE, else default), and \
         the EC2 instance metadata service ({METADATA}, or $AWS_METADATA_ENDPOINT), asked \
         last, gave none ({answer})"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_error_answers_are_read_as_xml() {
        let xml = r#"<?xml version="1.0" encoding="utf-8"?>
<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message><BucketName>nobucket</BucketName><RequestId>Ik</RequestId></Error>"#;
        assert_eq!(
            error_answer(xml),
            Some((
                "NoSuchBucket".into(),
                "The specified bucket does not exist".into()
            ))
        );
        // Entities and numeric references are resolved; CDATA is text; other elements with
        // a Message of their own are not the error's.
        let xml = "<Error><Code>A&amp;B</Code><Detail><Message>no</Message></Detail>\
                   <Message>caf&#233; &lt;x&gt; <![CDATA[&raw]]></Message></Error>";
        assert_eq!(
            error_answer(xml),
            Some(("A&B".into(), "café <x> &raw".into()))
        );
        assert_eq!(error_answer("<Other/>"), None);
        assert_eq!(error_answer("<Error><Code>X"), None);
    }

    #[test]
    fn heads_keep_the_request_and_status() {
        assert_eq!(
            short_head(
                "Generic S3 error: Error performing list request: Error performing GET \
                 http://127.0.0.1:5055/nobucket?list-type=2 in 6.4ms - Server returned non-2xx \
                 status code: 404 Not Found"
            ),
            "GET http://127.0.0.1:5055/nobucket?list-type=2: 404 Not Found"
        );
    }
}
