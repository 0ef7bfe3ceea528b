//! How an input value is quoted in an error message (`formats/import.md` §"Rejected
//! records"): lossy UTF-8, control characters escaped, shortened.

/// Longest excerpt of an offending value quoted in a message.
const MAX_QUOTED: usize = 64;

/// Quotes an input value for a message: lossy UTF-8, control characters escaped, shortened.
pub(crate) fn quote(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut s = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == MAX_QUOTED {
            s.push_str("...");
            break;
        }
        if c.is_control() {
            s.push_str(&c.escape_default().to_string());
        } else {
            s.push(c);
        }
    }
    s
}
