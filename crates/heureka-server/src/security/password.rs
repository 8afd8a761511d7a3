//! A configured password, read as Spring Security stores it: plain, `{noop}plain` or
//! `{bcrypt}$2a$…`. The configuration's rules parse it to refuse a malformed one at start-up;
//! the users (`users.rs`) check presented passwords against it.

use std::fmt;
use std::str::FromStr;

/// A configured password.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Password {
    /// Plain text (or `{noop}`'s): compared in constant time.
    Plain(String),
    /// A bcrypt hash (`{bcrypt}`'s).
    Bcrypt(String),
}

impl Password {
    /// Reads a password as Spring Security's delegating encoder does: a leading `{id}` names
    /// the encoding. Heureka has `bcrypt` and `noop`; without an `{id}` it is plain text.
    pub(crate) fn parse(written: &str) -> Result<Password, String> {
        let Some((id, rest)) = written
            .strip_prefix('{')
            .and_then(|rest| rest.split_once('}'))
        else {
            return Ok(Password::Plain(written.to_owned()));
        };
        match id {
            "noop" => Ok(Password::Plain(rest.to_owned())),
            "bcrypt" if bcrypt::HashParts::from_str(rest).is_ok() => {
                Ok(Password::Bcrypt(rest.to_owned()))
            }
            "bcrypt" => Err(
                "{bcrypt} must be followed by a bcrypt hash ($2a$10$ and 53 \
                 characters), such as `htpasswd -bnBC 10 \"\" password | tr -d ':\\n'` prints"
                    .to_owned(),
            ),
            other => Err(format!(
                "{{{other}}} is not an encoding Heureka reads: use {{bcrypt}}, {{noop}} or \
                 plain text"
            )),
        }
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Password::Plain(_) => "Plain(<redacted>)",
            Password::Bcrypt(_) => "Bcrypt(<redacted>)",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_without_an_encoding_is_plain() {
        assert_eq!(
            Password::parse("s3cret"),
            Ok(Password::Plain("s3cret".into()))
        );
    }

    #[test]
    fn noop_is_plain_text_after_it() {
        assert_eq!(
            Password::parse("{noop}s3cret"),
            Ok(Password::Plain("s3cret".into()))
        );
    }

    #[test]
    fn bcrypt_needs_a_well_formed_hash() {
        let hash = "$2a$04$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy";
        assert_eq!(
            Password::parse(&format!("{{bcrypt}}{hash}")),
            Ok(Password::Bcrypt(hash.into()))
        );
        assert!(Password::parse("{bcrypt}s3cret").is_err());
    }

    #[test]
    fn an_encoding_heureka_lacks_is_refused() {
        let error = Password::parse("{sha256}abc").unwrap_err();
        assert!(error.contains("{sha256}"), "{error}");
    }
}
