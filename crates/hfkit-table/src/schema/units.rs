//! HBase's value syntaxes for durations and sizes (`PrettyPrinter.valueOf` with
//! `TIME_INTERVAL` and `BYTE`): `TTL` as seconds, `FOREVER` or `7 DAYS 12 HOURS`; sizes as bytes
//! or `64KB`, `1 GB 512 MB`. Prose: `formats/schema.md` §"Family attributes" (`TTL`,
//! `BLOCKSIZE`) and §"Table attributes" (sizes).

/// `HConstants.FOREVER`: a TTL of `Integer.MAX_VALUE` seconds means "never expires".
pub const TTL_FOREVER: i64 = i32::MAX as i64;

/// A duration or size HBase's shell would not read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("'{0}' is not FOREVER, a number of seconds or e.g. '7 DAYS 12 HOURS'")]
    Interval(String),
    #[error("'{0}' is not a number of bytes or e.g. '64KB', '1 GB 512 MB'")]
    Size(String),
}

/// `PrettyPrinter.valueOf(s, TIME_INTERVAL)`: `FOREVER`, a number of seconds, or
/// `[N SECONDS (] [d DAYS] [h HOURS] [m MINUTES] [s SECONDS] [)]` (case-insensitive, singular or
/// plural); with the `N SECONDS (` prefix the parts must add up to N.
pub fn parse_interval_seconds(s: &str) -> Result<i64, UnitError> {
    const UNITS: &[(&str, i64)] = &[
        ("DAY", 86_400),
        ("HOUR", 3_600),
        ("MINUTE", 60),
        ("SECOND", 1),
    ];
    if s.trim().eq_ignore_ascii_case("FOREVER") {
        return Ok(TTL_FOREVER);
    }
    if let Ok(n) = s.trim().parse::<i64>() {
        return Ok(n);
    }
    let up = s.to_ascii_uppercase();
    parse_units(&up, "SECOND", UNITS, |unit, rest| {
        // Words: the unit, then an optional plural 'S'.
        let r = rest.strip_prefix(unit)?;
        Some(r.strip_prefix('S').unwrap_or(r))
    })
    .ok_or_else(|| UnitError::Interval(s.to_string()))
}

/// `PrettyPrinter.format(s, TIME_INTERVAL)`, the inverse of [`parse_interval_seconds`]:
/// `FOREVER`, `30 SECONDS`, `1 SECOND`, `90061 SECONDS (1 DAY 1 HOUR 1 MINUTE 1 SECOND)`.
pub fn format_interval_seconds(secs: u64) -> String {
    let plural = |n: u64, unit: &str| format!("{n} {unit}{}", if n == 1 { "" } else { "S" });
    if secs >= TTL_FOREVER as u64 {
        return "FOREVER".into();
    }
    if secs < 60 {
        return plural(secs, "SECOND");
    }
    let parts: Vec<String> = [
        (secs / 86_400, "DAY"),
        (secs % 86_400 / 3_600, "HOUR"),
        (secs % 3_600 / 60, "MINUTE"),
        (secs % 60, "SECOND"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, unit)| plural(n, unit))
    .collect();
    format!("{secs} SECONDS ({})", parts.join(" "))
}

/// `PrettyPrinter.valueOf(s, BYTE)`: a number of bytes, or `[N B (] [t TB] [g GB] [m MB] [k KB]
/// [b B] [)]` (case-insensitive; `T`, `G`, `M`, `K` without the `B` too).
pub fn parse_size_bytes(s: &str) -> Result<i64, UnitError> {
    const UNITS: &[(&str, i64)] = &[
        ("T", 1 << 40),
        ("G", 1 << 30),
        ("M", 1 << 20),
        ("K", 1 << 10),
        ("", 1),
    ];
    if let Ok(n) = s.trim().parse::<i64>() {
        return Ok(n);
    }
    let up = s.to_ascii_uppercase();
    parse_units(&up, "", UNITS, |unit, rest| {
        let r = rest.strip_prefix(unit)?;
        Some(r.strip_prefix('B').unwrap_or(r))
    })
    .ok_or_else(|| UnitError::Size(s.to_string()))
}

/// The shared shape of HBase's interval and size patterns: an optional `N <prefix_unit> (`,
/// then `number unit` parts in the order of `units` (each at most once), then an optional `)`.
fn parse_units(
    s: &str,
    prefix_unit: &str,
    units: &[(&str, i64)],
    strip_unit: impl for<'s> Fn(&str, &'s str) -> Option<&'s str>,
) -> Option<i64> {
    fn number(s: &str) -> Option<(i64, &str)> {
        let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        if end == 0 {
            return None;
        }
        Some((s[..end].parse().ok()?, s[end..].trim_start()))
    }
    let mut rest = s.trim();
    let mut expected = None;
    // Optional "N SECONDS (" / "N B (" prefix.
    if let Some((n, r)) = number(rest) {
        if let Some(r) = strip_unit(prefix_unit, r) {
            if let Some(r) = r.trim_start().strip_prefix('(') {
                expected = Some(n);
                rest = r.trim_start();
            }
        }
    }
    let mut total: i64 = 0;
    let mut next_unit = 0;
    let mut parts = 0;
    while let Some((n, r)) = number(rest) {
        let mut matched = None;
        for (i, (unit, mult)) in units.iter().enumerate().skip(next_unit) {
            if let Some(after) = strip_unit(unit, r) {
                // An empty unit (plain bytes) only matches at the end or before ')'.
                if unit.is_empty() && !(after.trim().is_empty() || after.trim() == ")") {
                    continue;
                }
                matched = Some((i, *mult, after));
                break;
            }
        }
        let (i, mult, after) = matched?;
        total = total.checked_add(n.checked_mul(mult)?)?;
        next_unit = i + 1;
        rest = after.trim_start();
        parts += 1;
    }
    let rest = rest.strip_prefix(')').unwrap_or(rest).trim();
    if !rest.is_empty() || parts == 0 {
        return None;
    }
    match expected {
        Some(n) if n != total => None,
        _ => Some(total),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_and_sizes() {
        assert_eq!(parse_interval_seconds("FOREVER"), Ok(TTL_FOREVER));
        assert_eq!(parse_interval_seconds("forever"), Ok(TTL_FOREVER));
        assert_eq!(parse_interval_seconds("86400"), Ok(86400));
        assert_eq!(parse_interval_seconds("1 DAY"), Ok(86400));
        assert_eq!(
            parse_interval_seconds("7 days 12 hours"),
            Ok(7 * 86400 + 12 * 3600)
        );
        assert_eq!(parse_interval_seconds("1 HOUR 1 MINUTE 1 SECOND"), Ok(3661));
        assert_eq!(parse_interval_seconds("2MINUTES"), Ok(120));
        assert_eq!(
            parse_interval_seconds("90061 SECONDS (1 DAY 1 HOUR 1 MINUTE 1 SECOND)"),
            Ok(90061)
        );
        assert!(parse_interval_seconds("90000 SECONDS (1 DAY 1 HOUR 1 MINUTE 1 SECOND)").is_err());
        assert!(
            parse_interval_seconds("1 HOUR 1 DAY").is_err(),
            "units out of order"
        );
        assert!(parse_interval_seconds("1 WEEK").is_err());
        assert!(parse_interval_seconds("").is_err());
        assert_eq!(parse_size_bytes("65536"), Ok(65536));
        assert_eq!(parse_size_bytes("64KB"), Ok(65536));
        assert_eq!(parse_size_bytes("64k"), Ok(65536));
        assert_eq!(parse_size_bytes("1 GB 512 MB"), Ok(1536 << 20));
        assert_eq!(parse_size_bytes("1 KB 10"), Ok(1034));
        assert_eq!(parse_size_bytes("1034 B (1KB 10B)"), Ok(1034));
        assert!(parse_size_bytes("64 XB").is_err());
    }

    #[test]
    fn intervals_print_as_hbase_prints_them_and_parse_back() {
        assert_eq!(format_interval_seconds(1), "1 SECOND");
        assert_eq!(format_interval_seconds(59), "59 SECONDS");
        assert_eq!(format_interval_seconds(604_800), "604800 SECONDS (7 DAYS)");
        assert_eq!(
            format_interval_seconds(90_061),
            "90061 SECONDS (1 DAY 1 HOUR 1 MINUTE 1 SECOND)"
        );
        assert_eq!(format_interval_seconds(TTL_FOREVER as u64), "FOREVER");
        for secs in [1u64, 60, 61, 3_600, 86_399, 86_400, 2_592_000, 123_456_789] {
            let text = format_interval_seconds(secs);
            assert_eq!(parse_interval_seconds(&text), Ok(secs as i64), "{text}");
        }
    }
}
