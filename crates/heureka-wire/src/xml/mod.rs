//! Eureka's XML, as XStream writes and reads it, including XStream's "XML-friendly" name coding.
//!
//! XStream writes a `_` in an element name as `__` and a `$` as `_-` (`XmlFriendlyNameCoder`),
//! which is why the registry's elements are `versions__delta` and `apps__hashcode`, and why a
//! metadata key `my_key` travels as `<my__key>`.

use std::borrow::Cow;

pub(crate) mod decode;
pub(crate) mod encode;

/// Whether a metadata key can be written as an XML element name (after XStream's name coding).
///
/// Java writes such keys verbatim and produces a document no client can parse (a key with a
/// space, a `/`, a leading digit…). We leave those entries out of XML output instead, so one bad
/// key cannot break every Python or fargo client's fetch; the JSON output keeps them. The server
/// may call this to warn when an instance registers such a key. `:` is refused too: parsers read
/// it as an undeclared namespace prefix.
pub fn metadata_key_fits_xml(key: &str) -> bool {
    let mut chars = key.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    let start_ok = first.is_ascii_alphabetic()
        || first == '_'
        || first == '$'
        || (!first.is_ascii() && first.is_alphabetic());
    start_ok
        && chars.all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '-' | '.' | '_' | '$')
                || (!c.is_ascii() && c.is_alphanumeric())
        })
}

/// Appends `name` with XStream's coding: `_` → `__`, `$` → `_-`.
pub(crate) fn push_encoded_name(out: &mut Vec<u8>, name: &str) {
    for &b in name.as_bytes() {
        match b {
            b'_' => out.extend_from_slice(b"__"),
            b'$' => out.extend_from_slice(b"_-"),
            _ => out.push(b),
        }
    }
}

/// Reverses XStream's coding: `__` → `_`, `_-` → `$`; a lone `_` stays.
pub(crate) fn decode_name(name: &str) -> Cow<'_, str> {
    if !name.contains('_') {
        return Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len());
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('_', Some('_')) => {
                chars.next();
                out.push('_');
            }
            ('_', Some('-')) => {
                chars.next();
                out.push('$');
            }
            _ => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(name: &str) -> String {
        let mut out = Vec::new();
        push_encoded_name(&mut out, name);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn underscores_and_dollars_are_coded_like_xstream() {
        assert_eq!(encoded("versions_delta"), "versions__delta");
        assert_eq!(encoded("a$b_c"), "a_-b__c");
    }

    #[test]
    fn decoding_reverses_the_coding() {
        for name in ["versions_delta", "a$b_c", "$x", "plain", "x__y"] {
            assert_eq!(decode_name(&encoded(name)), name);
        }
    }

    #[test]
    fn a_lone_underscore_is_kept_when_decoding() {
        assert_eq!(decode_name("a_b"), "a_b");
    }

    #[test]
    fn keys_that_are_not_xml_names_are_recognised() {
        for ok in ["management.port", "zone", "my_key", "$x", "a-b", "été"] {
            assert!(metadata_key_fits_xml(ok), "{ok}");
        }
        for bad in ["", "1st", "a b", "a/b", "ns:key", "-x", ".x", "a<b"] {
            assert!(!metadata_key_fits_xml(bad), "{bad}");
        }
    }
}
