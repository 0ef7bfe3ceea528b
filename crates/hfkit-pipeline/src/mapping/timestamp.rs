//! Timestamps read from input fields: epoch milliseconds, epoch seconds, or a strftime format.
//! One parser for every place a field is read as a point in time: a cell's `timestamp` field
//! (`[[column]] timestamp_format`) and the inputs of the rowkey functions `reverse_ts` and
//! `bucket` (`[rowkey] timestamp_format`). Prose: `formats/schema.md` §"Timestamps".
//!
//! ```text
//! epoch_ms (default)   decimal i64 milliseconds              1700000000123
//! epoch_s              decimal seconds, optional fraction     1700000000 | 1700000000.5
//!                      (fraction digits past the 3rd are truncated)
//! anything else        a chrono strftime format               %Y-%m-%d %H:%M:%S%.f
//!                      UTC unless the format reads an offset (%z, %:z, %#z);
//!                      no time fields = midnight; an hour without minutes = minute 0;
//!                      %s (epoch seconds) is a complete timestamp
//! ```
//!
//! Surrounding ASCII whitespace of the field is ignored in every form. A format is checked
//! once, when compiled ([`TimestampFormat::parse`]): an unknown specifier, or a format that
//! cannot determine a date (say `%H:%M`), is refused before any record is read.
//!
//! Dates of day counts ([`civil_from_days`], for the rowkey's `bucket` and Parquet dates) are
//! chrono's proleptic Gregorian calendar.

use std::fmt::Write as _;

use chrono::format::{Item, ParseError, ParseErrorKind, Parsed, StrftimeItems};
use chrono::{DateTime, Datelike, NaiveDate, Utc};

use crate::quote::quote;

/// The names of the two numeric forms, as written in a schema.
pub const EPOCH_MS: &str = "epoch_ms";
pub const EPOCH_S: &str = "epoch_s";

/// A format string that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("timestamp format '{format}': {reason}")]
pub struct TimestampFormatError {
    pub format: String,
    pub reason: String,
}

/// A field value that is not a timestamp in the expected form.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TimestampError {
    #[error("'{value}' is not {expected}")]
    NotANumber {
        value: String,
        expected: &'static str,
    },
    #[error("'{value}' does not match the format '{format}': {reason}")]
    NoMatch {
        value: String,
        format: String,
        reason: Mismatch,
    },
    #[error("'{value}' is out of range: more than 64 bits of epoch milliseconds")]
    OutOfRange { value: String },
}

/// Why a value does not read in a format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Mismatch {
    #[error("the value is not UTF-8")]
    NotUtf8,
    /// chrono's reason: a field out of range, too short or too long, an invalid character...
    #[error("{0}")]
    Parse(ParseError),
    /// A time past what 64 bits of epoch milliseconds hold.
    #[error("out of range")]
    OutOfRange,
}

/// How a field's text becomes epoch milliseconds.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum TimestampFormat {
    /// Decimal epoch milliseconds.
    #[default]
    EpochMillis,
    /// Decimal epoch seconds, optionally with a fraction.
    EpochSeconds,
    /// A strftime format, compiled.
    Strftime {
        text: String,
        items: Vec<Item<'static>>,
    },
}

/// A fixed instant every usable format can write and read back: 2023-11-14T22:13:20.123Z.
const PROBE_MS: i64 = 1_700_000_000_123;

impl TimestampFormat {
    /// `epoch_ms`, `epoch_s`, or a strftime format (anything containing `%`).
    pub fn parse(spec: &str) -> Result<TimestampFormat, TimestampFormatError> {
        let err = |reason: String| TimestampFormatError {
            format: spec.to_string(),
            reason,
        };
        match spec {
            EPOCH_MS => return Ok(TimestampFormat::EpochMillis),
            EPOCH_S => return Ok(TimestampFormat::EpochSeconds),
            _ => {}
        }
        if !spec.contains('%') {
            return Err(err(format!(
                "expected {EPOCH_MS}, {EPOCH_S} or a strftime format such as '%Y-%m-%d %H:%M:%S'"
            )));
        }
        let items = StrftimeItems::new(spec)
            .parse_to_owned()
            .map_err(|_| err("unknown or incomplete % specifier".into()))?;
        let format = TimestampFormat::Strftime {
            text: spec.to_string(),
            items,
        };
        // The format must be able to read what it writes, and what it reads must be a date.
        let probe = format.render(PROBE_MS).ok_or_else(|| {
            err("cannot be written (a specifier chrono cannot format)".to_string())
        })?;
        format.to_millis(probe.as_bytes()).map_err(|e| {
            err(match e {
                TimestampError::NoMatch {
                    reason: Mismatch::Parse(p),
                    ..
                } if p.kind() == ParseErrorKind::NotEnough => {
                    "does not determine a date (it needs year, month and day, or %s)".into()
                }
                other => format!("cannot read back what it writes ({other})"),
            })
        })?;
        Ok(format)
    }

    /// The format as a schema writes it.
    pub fn name(&self) -> &str {
        match self {
            TimestampFormat::EpochMillis => EPOCH_MS,
            TimestampFormat::EpochSeconds => EPOCH_S,
            TimestampFormat::Strftime { text, .. } => text,
        }
    }

    /// `ms` written in this format (UTC), `None` if it cannot be.
    pub fn render(&self, ms: i64) -> Option<String> {
        match self {
            TimestampFormat::EpochMillis => Some(ms.to_string()),
            TimestampFormat::EpochSeconds => {
                let sign = if ms < 0 { "-" } else { "" };
                let a = ms.unsigned_abs();
                Some(format!("{sign}{}.{:03}", a / 1000, a % 1000))
            }
            TimestampFormat::Strftime { items, .. } => {
                let dt: DateTime<Utc> = DateTime::from_timestamp_millis(ms)?;
                let mut s = String::new();
                write!(s, "{}", dt.format_with_items(items.iter())).ok()?;
                Some(s)
            }
        }
    }

    /// Parses a field's text as epoch milliseconds.
    pub fn to_millis(&self, text: &[u8]) -> Result<i64, TimestampError> {
        let s = std::str::from_utf8(text)
            .map(|s| s.trim_matches(|c: char| c.is_ascii_whitespace()))
            .map_err(|_| self.mismatch(text, Mismatch::NotUtf8))?;
        match self {
            TimestampFormat::EpochMillis => {
                s.parse::<i64>().map_err(|_| TimestampError::NotANumber {
                    value: quote(text),
                    expected: "epoch milliseconds (a 64-bit decimal integer)",
                })
            }
            TimestampFormat::EpochSeconds => epoch_seconds(s).ok_or_else(|| {
                if is_decimal(s) {
                    TimestampError::OutOfRange { value: quote(text) }
                } else {
                    TimestampError::NotANumber {
                        value: quote(text),
                        expected: "epoch seconds (decimal, optionally with a fraction)",
                    }
                }
            }),
            TimestampFormat::Strftime { items, .. } => {
                let mut p = Parsed::new();
                chrono::format::parse(&mut p, s, items.iter())
                    .map_err(|e| self.mismatch(text, Mismatch::Parse(e)))?;
                strftime_millis(&mut p).map_err(|e| self.mismatch(text, e))
            }
        }
    }

    fn mismatch(&self, text: &[u8], reason: Mismatch) -> TimestampError {
        TimestampError::NoMatch {
            value: quote(text),
            format: self.name().to_string(),
            reason,
        }
    }
}

/// `[-]digits[.digits]`.
fn is_decimal(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    !int.is_empty()
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.bytes().all(|b| b.is_ascii_digit())
}

/// Decimal seconds with an optional fraction, as milliseconds (the fraction truncated to 3
/// digits, toward zero). `None` if not decimal or out of range.
fn epoch_seconds(s: &str) -> Option<i64> {
    if !is_decimal(s) {
        return None;
    }
    let (negative, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let secs: i64 = int.parse().ok()?;
    let mut ms_part = 0i64;
    for (i, b) in frac.bytes().take(3).enumerate() {
        ms_part += i64::from(b - b'0') * [100, 10, 1][i];
    }
    let ms = secs.checked_mul(1000)?.checked_add(ms_part)?;
    Some(if negative { -ms } else { ms })
}

/// Resolves parsed strftime fields to epoch milliseconds: UTC unless an offset was read,
/// midnight when no time was read, minute 0 when only the hour was.
fn strftime_millis(p: &mut Parsed) -> Result<i64, Mismatch> {
    let no_hour = p.hour_div_12().is_none() && p.hour_mod_12().is_none();
    if p.timestamp().is_none() {
        if no_hour && p.minute().is_none() {
            p.set_hour(0).map_err(Mismatch::Parse)?;
        }
        if p.minute().is_none() {
            p.set_minute(0).map_err(Mismatch::Parse)?;
        }
    }
    let offset = p.offset().unwrap_or(0);
    let local = p
        .to_naive_datetime_with_offset(offset)
        .map_err(Mismatch::Parse)?;
    local
        .and_utc()
        .timestamp_millis()
        .checked_sub(i64::from(offset) * 1000)
        .ok_or(Mismatch::OutOfRange)
}

/// Days in 400 Gregorian years, after which the calendar repeats.
const DAYS_PER_400_YEARS: i64 = 146_097;

/// Year, month (1-12) and day (1-31) of a count of days from 1970-01-01, in the proleptic
/// Gregorian calendar (chrono's), for any count: chrono dates the day's place in its 400-year
/// cycle, counted from 1970 (one `NaiveDate::from_num_days_from_ce_opt`, no date arithmetic
/// per value: Parquet dates are rendered through here), and the cycles add 400 years each.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    /// 1970-01-01's number counted from 0001-01-01 as day 1, as chrono counts.
    const EPOCH_FROM_CE: i32 = 719_163;
    let cycles = days.div_euclid(DAYS_PER_400_YEARS);
    // 0..146_097: always a date chrono holds.
    let in_cycle = days.rem_euclid(DAYS_PER_400_YEARS) as i32;
    match NaiveDate::from_num_days_from_ce_opt(EPOCH_FROM_CE + in_cycle) {
        Some(date) => (
            i64::from(date.year()) + 400 * cycles,
            date.month(),
            date.day(),
        ),
        // Not reached: chrono holds every date of years -262,143..262,142.
        None => (1970 + 400 * cycles, 1, 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(format: &str, text: &str) -> Result<i64, String> {
        TimestampFormat::parse(format)
            .map_err(|e| e.to_string())?
            .to_millis(text.as_bytes())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn epoch_millis() {
        assert_eq!(ms("epoch_ms", "1700000000123"), Ok(1_700_000_000_123));
        assert_eq!(ms("epoch_ms", " -5 "), Ok(-5));
        assert_eq!(
            ms("epoch_ms", "yesterday"),
            Err("'yesterday' is not epoch milliseconds (a 64-bit decimal integer)".into())
        );
        assert!(ms("epoch_ms", "1.5").is_err());
        assert!(ms("epoch_ms", "").is_err());
        assert!(ms("epoch_ms", "9223372036854775808").is_err());
        assert_eq!(TimestampFormat::default(), TimestampFormat::EpochMillis);
    }

    #[test]
    fn epoch_seconds() {
        assert_eq!(ms("epoch_s", "1700000000"), Ok(1_700_000_000_000));
        assert_eq!(ms("epoch_s", "1700000000.5"), Ok(1_700_000_000_500));
        assert_eq!(ms("epoch_s", "1700000000.123999"), Ok(1_700_000_000_123));
        assert_eq!(ms("epoch_s", "-1.5"), Ok(-1_500));
        assert_eq!(ms("epoch_s", "+2"), Ok(2_000));
        assert_eq!(ms("epoch_s", "0."), Ok(0));
        assert_eq!(
            ms("epoch_s", "12:00"),
            Err("'12:00' is not epoch seconds (decimal, optionally with a fraction)".into())
        );
        assert!(ms("epoch_s", ".5").is_err());
        assert_eq!(
            ms("epoch_s", "9223372036854775"),
            Ok(9_223_372_036_854_775_000)
        );
        let e = ms("epoch_s", "9223372036854776").unwrap_err();
        assert!(e.contains("out of range"), "{e}");
    }

    #[test]
    fn strftime_utc_and_offsets() {
        let f = "%Y-%m-%d %H:%M:%S";
        // 2023-11-14T22:13:20Z = 1700000000 s.
        assert_eq!(ms(f, "2023-11-14 22:13:20"), Ok(1_700_000_000_000));
        assert_eq!(ms(f, " 2023-11-14 22:13:20\t"), Ok(1_700_000_000_000));
        assert_eq!(
            ms("%Y-%m-%d %H:%M:%S%.f", "2023-11-14 22:13:20.123456"),
            Ok(1_700_000_000_123)
        );
        // With an offset the value is that local time: 23:13:20+01:00 = 22:13:20Z.
        assert_eq!(
            ms("%Y-%m-%d %H:%M:%S %z", "2023-11-14 23:13:20 +0100"),
            Ok(1_700_000_000_000)
        );
        assert_eq!(
            ms("%Y-%m-%dT%H:%M:%S%:z", "2023-11-14T17:13:20-05:00"),
            Ok(1_700_000_000_000)
        );
        // Date only: midnight UTC. Hour only: minute 0.
        assert_eq!(ms("%Y-%m-%d", "2023-11-14"), Ok(1_699_920_000_000));
        assert_eq!(ms("%Y%m%d%H", "2023111422"), Ok(1_699_999_200_000));
        assert_eq!(ms("%d/%m/%Y", "01/01/1970"), Ok(0));
        assert_eq!(ms("%Y-%m-%d", "1969-12-31"), Ok(-86_400_000));
        // %s is a timestamp by itself.
        assert_eq!(ms("%s", "1700000000"), Ok(1_700_000_000_000));
        // Leap day.
        assert_eq!(ms("%Y-%m-%d", "2000-02-29"), Ok(951_782_400_000));
    }

    #[test]
    fn strftime_mismatches_say_why() {
        let f = "%Y-%m-%d %H:%M:%S";
        assert_eq!(
            ms(f, "2023-13-01 00:00:00"),
            Err("'2023-13-01 00:00:00' does not match the format '%Y-%m-%d %H:%M:%S': input is out of range".into())
        );
        let e = ms(f, "2023-11-14").unwrap_err();
        assert!(e.contains("premature end of input"), "{e}");
        let e = ms(f, "2023-11-14 22:13:20 UTC").unwrap_err();
        assert!(e.contains("trailing input"), "{e}");
        let e = ms(f, "yesterday").unwrap_err();
        assert!(e.contains("'yesterday'") && e.contains("invalid"), "{e}");
        let e = ms("%Y-%m-%d", "2023-02-29").unwrap_err();
        assert!(e.contains("2023-02-29"), "{e}");
    }

    #[test]
    fn formats_are_checked_once() {
        let e = TimestampFormat::parse("%Y-%m-%Q").unwrap_err().to_string();
        assert_eq!(
            e,
            "timestamp format '%Y-%m-%Q': unknown or incomplete % specifier"
        );
        let e = TimestampFormat::parse("%H:%M").unwrap_err().to_string();
        assert!(e.contains("does not determine a date"), "{e}");
        let e = TimestampFormat::parse("%Y").unwrap_err().to_string();
        assert!(e.contains("does not determine a date"), "{e}");
        let e = TimestampFormat::parse("epoch_us").unwrap_err().to_string();
        assert!(e.contains("expected epoch_ms, epoch_s"), "{e}");
        assert_eq!(
            TimestampFormat::parse("%Y-%m-%d").unwrap().name(),
            "%Y-%m-%d"
        );
        assert_eq!(TimestampFormat::parse("epoch_s").unwrap().name(), "epoch_s");
    }

    #[test]
    fn days_are_dated_by_chronos_calendar_in_every_cycle() {
        // Within chrono's range, the date of the day itself.
        for days in (-800_000..800_000)
            .step_by(97)
            .chain([-1, 0, 1, 11_016, 11_017])
        {
            let d = chrono::NaiveDate::from_epoch_days(days).unwrap();
            let want = (i64::from(d.year()), d.month(), d.day());
            assert_eq!(civil_from_days(i64::from(days)), want, "{days}");
        }
        // Beyond it, the calendar's 400-year cycle.
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(-719_468), (0, 3, 1));
        assert_eq!(civil_from_days(146_097 * 1_000_000), (400_001_970, 1, 1));
        assert_eq!(
            civil_from_days(-146_097 * 1_000_000 - 1),
            (-399_998_031, 12, 31)
        );
        assert_eq!(civil_from_days(i64::MAX / 86_400_000), (292_278_994, 8, 17));
    }

    #[test]
    fn render_reads_back() {
        for f in ["epoch_ms", "epoch_s", "%Y-%m-%d %H:%M:%S%.3f", "%s%.3f"] {
            let t = TimestampFormat::parse(f).unwrap();
            for v in [0, 1_700_000_000_123, 951_782_400_000, -1_500] {
                if v < 0 && f.starts_with("%s") {
                    continue; // chrono's %s reads no sign
                }
                let text = t.render(v).unwrap();
                assert_eq!(t.to_millis(text.as_bytes()), Ok(v), "{f}: {text}");
            }
        }
    }
}
