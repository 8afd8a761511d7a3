//! What this crate reads from a certificate: its validity, its key, its names, and dates shown
//! to an operator.

use std::time::{SystemTime, UNIX_EPOCH};

use rustls::pki_types::CertificateDer;
use x509_parser::certificate::X509Certificate;
use x509_parser::extensions::GeneralName;
use x509_parser::prelude::FromDer;

/// The parts of a certificate the identity checks use.
pub(crate) struct Parsed {
    pub subject: String,
    pub subject_raw: Vec<u8>,
    pub issuer_raw: Vec<u8>,
    pub spki: Vec<u8>,
    pub not_before: i64,
    pub not_after: i64,
}

pub(crate) fn parse(cert: &CertificateDer<'_>) -> Option<Parsed> {
    let (_, x509) = X509Certificate::from_der(cert.as_ref()).ok()?;
    Some(Parsed {
        subject: x509.subject().to_string(),
        subject_raw: x509.subject().as_raw().to_vec(),
        issuer_raw: x509.issuer().as_raw().to_vec(),
        spki: x509.public_key().raw.to_vec(),
        not_before: x509.validity().not_before.timestamp(),
        not_after: x509.validity().not_after.timestamp(),
    })
}

/// The subject's common names, then its alternative names that name a holder.
pub(crate) fn names(cert: &CertificateDer<'_>) -> Vec<String> {
    let Ok((_, x509)) = X509Certificate::from_der(cert.as_ref()) else {
        return Vec::new();
    };
    let mut names: Vec<String> = x509
        .subject()
        .iter_common_name()
        .filter_map(|cn| cn.as_str().ok().map(str::to_owned))
        .collect();
    if let Ok(Some(san)) = x509.subject_alternative_name() {
        for name in &san.value.general_names {
            match name {
                GeneralName::DNSName(name)
                | GeneralName::RFC822Name(name)
                | GeneralName::URI(name) => names.push((*name).to_owned()),
                _ => {}
            }
        }
    }
    names
}

/// Seconds since the epoch; times before it count as 0, which no certificate check minds.
pub(crate) fn unix_seconds(time: SystemTime) -> i64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |elapsed| {
        i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX)
    })
}

/// `2021-01-01 00:00:00 UTC`: certificates are dated in UTC, and an operator compares the date
/// with `openssl x509 -enddate` or keytool's listing.
pub(crate) fn utc(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let of_day = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01, by Howard Hinnant's
/// `civil_from_days` (eras of 400 years, years starting in March). Also dates the server's log
/// lines (`heureka/src/logging.rs`).
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::{civil_from_days, utc};

    #[test]
    fn dates_are_shown_in_utc_as_year_month_day() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(1_609_459_200), "2021-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400 + 3_723), "2000-02-29 01:02:03 UTC");
    }

    #[test]
    fn every_day_of_three_centuries_follows_the_one_before() {
        let leap = |y: i64| y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
        let (mut year, mut month, mut day) = (1970, 1, 1);
        for days in 0..(300 * 366) {
            assert_eq!(civil_from_days(days), (year, month, day), "day {days}");
            let month_days = match month {
                2 if leap(year) => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            day += 1;
            if day > month_days {
                (day, month) = (1, month + 1);
            }
            if month > 12 {
                (month, year) = (1, year + 1);
            }
        }
    }
}
