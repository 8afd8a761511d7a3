//! Namespace names: what a path segment or an `x-namespace` header may name. Like a DNS
//! label, so a name is safe in a path, a directory name, a metric label and a log line:
//! 1 to 63 characters, ASCII letters, digits, `-`, `_` and `.`, starting with a letter or
//! digit. Matched ignoring case, kept lower-case.

/// The namespace of the unprefixed API: every registry before namespaces existed.
pub(crate) const DEFAULT: &str = "default";

/// Longest name, as a DNS label.
const MAX_LENGTH: usize = 63;

/// `text` as a namespace name, lower-cased, or why it cannot be one.
pub(crate) fn parse(text: &str) -> Result<String, &'static str> {
    check(text).map(|()| text.to_ascii_lowercase())
}

/// `text` as a namespace name, borrowed when it is already lower-case (as clients write it),
/// so that routing a request allocates nothing for its name.
pub(crate) fn parse_borrowed(text: &str) -> Result<std::borrow::Cow<'_, str>, &'static str> {
    check(text)?;
    Ok(if text.bytes().any(|byte| byte.is_ascii_uppercase()) {
        std::borrow::Cow::Owned(text.to_ascii_lowercase())
    } else {
        std::borrow::Cow::Borrowed(text)
    })
}

fn check(text: &str) -> Result<(), &'static str> {
    if text.is_empty() || text.len() > MAX_LENGTH {
        return Err("a namespace name has 1 to 63 characters");
    }
    if !text.as_bytes()[0].is_ascii_alphanumeric() {
        return Err("a namespace name starts with a letter or digit");
    }
    if !text
        .bytes()
        .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.'))
    {
        return Err("a namespace name holds only letters, digits, '-', '_' and '.'");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_kept_lower_case() {
        assert_eq!(parse("Team-A").as_deref(), Ok("team-a"));
    }

    #[test]
    fn a_lower_case_name_is_borrowed_and_another_lower_cased() {
        assert!(matches!(
            parse_borrowed("team-a"),
            Ok(std::borrow::Cow::Borrowed("team-a"))
        ));
        assert_eq!(parse_borrowed("Team-A").as_deref(), Ok("team-a"));
    }

    #[test]
    fn letters_digits_dashes_underscores_and_dots_are_allowed() {
        assert_eq!(parse("a1_b-c.d").as_deref(), Ok("a1_b-c.d"));
    }

    #[test]
    fn an_empty_or_overlong_name_is_refused() {
        assert!(parse("").is_err());
        assert!(parse(&"a".repeat(64)).is_err());
        assert!(parse(&"a".repeat(63)).is_ok());
    }

    #[test]
    fn a_name_starting_with_a_dot_or_dash_is_refused() {
        assert!(parse(".hidden").is_err());
        assert!(parse("-x").is_err());
    }

    #[test]
    fn slashes_spaces_and_percent_signs_are_refused() {
        for name in ["a/b", "a b", "a%2Fb", "..", "ä"] {
            assert!(parse(name).is_err(), "{name}");
        }
    }
}
