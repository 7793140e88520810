//! Dates of timestamps (UTC, the proleptic Gregorian calendar): what `runlog judges` groups
//! scores by (ISO weeks) and filters them with (`--since DATE`).

use crate::ids::Timestamp;

const DAY_MS: u64 = 86_400_000;

/// The civil date of a day counted from 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Days from 1970-01-01 to a civil date (`days_from_civil`).
fn days(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `YYYY-MM-DD` of a timestamp.
pub fn date(at: Timestamp) -> String {
    let (y, m, d) = civil((at.0 / DAY_MS) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` of a timestamp (RFC 3339, UTC).
pub fn rfc3339(at: Timestamp) -> String {
    let ms = at.0 % DAY_MS;
    format!(
        "{}T{:02}:{:02}:{:02}.{:03}Z",
        date(at),
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1_000 % 60,
        ms % 1_000
    )
}

/// The ISO week of a timestamp, as `YYYY-Www` (weeks begin on Monday; week 1 holds the
/// year's first Thursday).
pub fn iso_week(at: Timestamp) -> String {
    let day = (at.0 / DAY_MS) as i64;
    // 1970-01-01 was a Thursday: Monday is 0.
    let weekday = (day + 3).rem_euclid(7);
    let thursday = day - weekday + 3;
    let (year, _, _) = civil(thursday);
    let week = (thursday - days(year, 1, 1)) / 7 + 1;
    format!("{year:04}-W{week:02}")
}

/// The start (00:00 UTC) of a `YYYY-MM-DD` date; none for anything else.
pub fn parse_date(text: &str) -> Option<Timestamp> {
    let mut parts = text.trim().splitn(3, '-');
    let y: i64 = parts.next()?.parse().ok()?;
    let m: u32 = parts.next()?.parse().ok()?;
    let d: u32 = parts.next()?.parse().ok()?;
    if !(1970..=9999).contains(&y) || !(1..=12).contains(&m) || d == 0 {
        return None;
    }
    let day = days(y, m, d);
    // 2026-02-30 is not a date: it would be read as a day in March.
    (civil(day) == (y, m, d)).then(|| Timestamp(day as u64 * DAY_MS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_in_rfc_3339() {
        assert_eq!(
            rfc3339(Timestamp(1_700_000_000_123)),
            "2023-11-14T22:13:20.123Z"
        );
    }

    #[test]
    fn dates_and_weeks_are_the_calendars() {
        let at = parse_date("2026-11-29").unwrap();
        assert_eq!(date(at), "2026-11-29");
        assert_eq!(iso_week(at), "2026-W48"); // a Sunday
        assert_eq!(iso_week(parse_date("2026-11-30").unwrap()), "2026-W49");
        assert_eq!(iso_week(parse_date("2021-01-03").unwrap()), "2020-W53");
        assert_eq!(iso_week(parse_date("2024-12-30").unwrap()), "2025-W01");
        assert_eq!(date(Timestamp(0)), "1970-01-01");
        assert_eq!(parse_date("2026-02-30"), None);
        assert_eq!(parse_date("yesterday"), None);
    }
}
