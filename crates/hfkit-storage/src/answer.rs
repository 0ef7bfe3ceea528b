//! What a failed request to object storage is reported as (formats/storage.md
//! §"Configuration"): the store's own error code and message, read from its XML answer with a
//! real XML parser, not the raw XML; and, when the request could not be signed because no
//! credentials were found (the last place looked is the EC2 instance metadata service, whose
//! refusal is all `object_store` reports), which places were looked in.

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
        None => text,
    }
}

/// The `Code` and `Message` of S3's error answer `<Error><Code>..</Code><Message>..</Message>`.
pub fn error_answer(xml: &str) -> Option<(String, String)> {
    let mut reader = Reader::from_str(xml);
    let (mut code, mut message) = (None::<String>, None::<String>);
    // The answer's `Error` element ended (an answer cut short is not read as one).
    let mut whole = false;
    let mut path: Vec<Vec<u8>> = Vec::new();
    loop {
        let event = reader.read_event().ok()?;
        // Text of the error's own `Code` and `Message` (not of elements nested deeper).
        let text: Option<String> = match &event {
            Event::Start(s) => {
                path.push(s.name().as_ref().to_vec());
                None
            }
            Event::End(_) => {
                if path.pop().is_some_and(|e| e == b"Error") && path.is_empty() {
                    whole = true;
                }
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
        let field = match (path.len(), path.first().map(Vec::as_slice), path.last()) {
            (2, Some(b"Error"), Some(f)) if f == b"Code" => &mut code,
            (2, Some(b"Error"), Some(f)) if f == b"Message" => &mut message,
            _ => continue,
        };
        if let Some(t) = text {
            field.get_or_insert_with(String::new).push_str(&t);
        }
    }
    if !whole {
        return None;
    }
    Some((code?, message.unwrap_or_default()))
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
