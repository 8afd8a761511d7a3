//! HTTP Basic credentials as Spring Security reads them (RFC 7617): the scheme in any case,
//! the base64 token with or without padding, the first `:` separating user from password, and
//! the user name matched ignoring case, as Spring Boot's in-memory user store matches it. Also
//! the header value configured credentials produce, which the server expects and replication
//! sends to peers.

use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;

/// The `Authorization` header value that the credentials produce, in the canonical form
/// (`Basic`, padded base64) that clients send.
pub(crate) fn basic_auth_header(user: &str, password: &str) -> String {
    let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    format!("Basic {token}")
}

/// A user name and password read from an `Authorization: Basic` header.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Credentials {
    user: String,
    password: String,
}

impl Credentials {
    /// Reads `Basic <token>`: scheme in any case, then spaces, then standard-alphabet base64,
    /// padded or not (Java's decoder, which Spring uses, accepts both). `None` for any other
    /// scheme, a token that is not base64, or one without a `:`.
    pub(crate) fn from_header(value: &[u8]) -> Option<Credentials> {
        let value = value.trim_ascii();
        let (scheme, token) = value.split_at_checked(5)?;
        if !scheme.eq_ignore_ascii_case(b"basic") || !token.first()?.is_ascii_whitespace() {
            return None;
        }
        let decoded = LENIENT_BASE64.decode(token.trim_ascii_start()).ok()?;
        // Spring decodes the credentials as UTF-8; bytes that are not cannot match anything
        // configured (which is UTF-8 text) once replaced.
        let decoded = String::from_utf8_lossy(&decoded);
        let (user, password) = decoded.split_once(':')?;
        Some(Credentials {
            user: user.to_owned(),
            password: password.to_owned(),
        })
    }

    /// The user name as presented.
    pub(crate) fn user(&self) -> &str {
        &self.user
    }

    /// The password as presented.
    pub(crate) fn password(&self) -> &str {
        &self.password
    }

    /// The user name ignoring case, the password exactly, both compared in constant time and
    /// both always compared, so the response time says nothing about which part was wrong.
    pub(crate) fn matches(&self, expected: &Credentials) -> bool {
        let user = constant_time_eq(
            self.user.to_lowercase().as_bytes(),
            expected.user.to_lowercase().as_bytes(),
        );
        let password = constant_time_eq(self.password.as_bytes(), expected.password.as_bytes());
        user & password
    }
}

/// Whether `presented` (an `Authorization` value) carries the credentials of `expected` (an
/// `Authorization` value [`basic_auth_header`] encoded); never when none are expected.
pub(crate) fn presents(expected: Option<&str>, presented: Option<&[u8]>) -> bool {
    let Some(expected) = expected else {
        return false;
    };
    let presented = presented.and_then(Credentials::from_header);
    // The expected value is this module's own encoding, so it always parses.
    let expected = Credentials::from_header(expected.as_bytes());
    matches!((presented, expected), (Some(presented), Some(expected)) if presented.matches(&expected))
}

/// Standard alphabet, padding optional, and trailing bits ignored as Java's decoder ignores
/// them.
const LENIENT_BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// Compares without an early exit, so response time does not leak how much of a guess matched.
/// (Only the lengths may differ in timing, which reveals nothing worth guarding.)
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(header: &str) -> Option<(String, String)> {
        Credentials::from_header(header.as_bytes()).map(|c| (c.user, c.password))
    }

    fn pair(user: &str, password: &str) -> Option<(String, String)> {
        Some((user.to_owned(), password.to_owned()))
    }

    #[test]
    fn canonical_header_round_trips() {
        assert_eq!(
            parse(&basic_auth_header("eureka", "s3cret")),
            pair("eureka", "s3cret")
        );
    }

    #[test]
    fn scheme_is_case_insensitive() {
        // base64("eureka:s3cret") = ZXVyZWthOnMzY3JldA==
        for scheme in ["basic", "BASIC", "bAsIc"] {
            assert_eq!(
                parse(&format!("{scheme} ZXVyZWthOnMzY3JldA==")),
                pair("eureka", "s3cret"),
                "{scheme}"
            );
        }
    }

    #[test]
    fn padding_is_optional() {
        assert_eq!(parse("Basic ZXVyZWthOnMzY3JldA"), pair("eureka", "s3cret"));
    }

    #[test]
    fn surrounding_and_separating_whitespace_is_allowed() {
        assert_eq!(
            parse("  Basic   ZXVyZWthOnMzY3JldA==  "),
            pair("eureka", "s3cret")
        );
    }

    #[test]
    fn password_may_contain_colons() {
        // base64("eureka:a:b") = ZXVyZWthOmE6Yg==
        assert_eq!(parse("Basic ZXVyZWthOmE6Yg=="), pair("eureka", "a:b"));
    }

    #[test]
    fn other_schemes_and_malformed_tokens_are_refused() {
        for header in [
            "Bearer ZXVyZWthOnMzY3JldA==",
            "BasicZXVyZWthOnMzY3JldA==",
            "Basic",
            "Basic ",
            "Basic not*base64",
            "Basic ZXVyZWth", // "eureka": no colon
        ] {
            assert_eq!(parse(header), None, "{header}");
        }
    }

    #[test]
    fn user_name_is_matched_ignoring_case_but_password_exactly() {
        let expected =
            Credentials::from_header(basic_auth_header("Eureka", "s3cret").as_bytes()).unwrap();
        let matches = |user: &str, password: &str| {
            Credentials::from_header(basic_auth_header(user, password).as_bytes())
                .unwrap()
                .matches(&expected)
        };
        assert!(matches("eureka", "s3cret"));
        assert!(matches("EUREKA", "s3cret"));
        assert!(!matches("eureka", "S3CRET"));
        assert!(!matches("eurekax", "s3cret"));
    }
}
