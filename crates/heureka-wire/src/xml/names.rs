//! XStream's "XML-friendly" name coding (`XmlFriendlyNameCoder`), which turns any string into an
//! element name and back. The Java server writes and reads every element name through it, so
//! metadata keys travel in XML coded this way.
//!
//! Writing, one UTF-16 code unit at a time, as XStream looks at names:
//!
//! * `$` is `_-` and `_` is `__`, wherever they stand;
//! * a unit that is not an XML 1.0 (fourth edition) name character at its place is `_.` and four
//!   lower-case hex digits (`a b` → `a_.0020b`, `1abc` → `_.0031abc`); the first unit must be a
//!   name start, the others name characters ([`super::name_chars`]). A character outside the
//!   Basic Multilingual Plane is two escapes, one per surrogate (`😀` → `_.d83d_.de00`);
//! * every other unit is written as it is.
//!
//! One deliberate difference: XStream counts `:` a name character and writes it raw, which makes
//! a document that namespace-aware parsers (Python's, roxmltree) refuse as an unbound prefix. We
//! write it as `_.003a`, which XStream's reader decodes back to `:`. With that, every non-empty
//! string codes to a name that every parser accepts; only the empty name cannot be written.
//!
//! Reading undoes each escape: `__` → `_`, `_-` → `$`, `_.` and four hex digits of either case →
//! that code unit (an escaped surrogate pair → one character). Anything else stays as written,
//! including an `_.` without four hex digits after it and an escaped lone surrogate, which a
//! Rust string cannot hold: XStream would fail the request on the first and store the second,
//! and clients that do not code their names (fargo) send a lone `_` as they mean it.

use std::borrow::Cow;

use super::name_chars::{is_name_char, is_name_start};

/// Whether a metadata key can be written as an XML element name after XStream's coding: every
/// key but the empty one, which XStream writes as `<>`. XML documents leave such a key out; JSON
/// keeps it.
pub fn metadata_key_fits_xml(key: &str) -> bool {
    !key.is_empty()
}

/// Appends `name` in XStream's coding. `name` must not be empty.
pub(crate) fn push_encoded_name(out: &mut Vec<u8>, name: &str) {
    // Nearly every real key (`management.port`, `zone`) needs no coding; the full fetch writes
    // one per metadata entry, so that case is one copy.
    let bytes = name.as_bytes();
    if bytes.first().is_some_and(u8::is_ascii_alphabetic)
        && bytes
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
    {
        out.extend_from_slice(bytes);
        return;
    }
    for (at, c) in name.char_indices() {
        match c {
            '$' => out.extend_from_slice(b"_-"),
            '_' => out.extend_from_slice(b"__"),
            c if c.is_ascii_alphabetic() || (at > 0 && matches!(c, '0'..='9' | '.' | '-')) => {
                out.push(c as u8);
            }
            ':' => push_escape(out, u16::from(b':')),
            c => {
                let mut units = [0; 2];
                let units = c.encode_utf16(&mut units);
                match units {
                    [unit] if fits(*unit, at == 0) => {
                        let mut utf8 = [0; 4];
                        out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
                    }
                    _ => units.iter().for_each(|&unit| push_escape(out, unit)),
                }
            }
        }
    }
}

/// Reverses [`push_encoded_name`]; see the module documentation for what is left as written.
pub(crate) fn decode_name(name: &str) -> Cow<'_, str> {
    if !name.contains('_') {
        return Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(at) = rest.find('_') {
        out.push_str(&rest[..at]);
        let coded = &rest[at..];
        let (decoded, len) = match coded.as_bytes().get(1) {
            Some(b'_') => ('_', 2),
            Some(b'-') => ('$', 2),
            Some(b'.') => hex_escape(coded).unwrap_or(('_', 1)),
            _ => ('_', 1),
        };
        out.push(decoded);
        rest = &coded[len..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// Whether XStream writes this code unit unescaped at the start of a name or after it.
fn fits(unit: u16, first: bool) -> bool {
    if first {
        is_name_start(unit)
    } else {
        is_name_char(unit)
    }
}

/// `_.` and the unit as four lower-case hex digits (Java's `Integer.toHexString`, zero-padded).
fn push_escape(out: &mut Vec<u8>, unit: u16) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(b"_.");
    for shift in [12, 8, 4, 0] {
        out.push(HEX[usize::from((unit >> shift) & 0xf)]);
    }
}

/// The character an `_.XXXX` escape at the start of `coded` stands for, and the escape's length:
/// 6 bytes, or 12 for an escaped surrogate pair.
fn hex_escape(coded: &str) -> Option<(char, usize)> {
    let first = escaped_unit(coded)?;
    if let Some(c) = char::from_u32(u32::from(first)) {
        return Some((c, 6));
    }
    let second = escaped_unit(&coded[6..])?;
    let mut pair = char::decode_utf16([first, second]);
    match (pair.next(), pair.next()) {
        (Some(Ok(c)), None) => Some((c, 12)),
        _ => None,
    }
}

fn escaped_unit(coded: &str) -> Option<u16> {
    let digits = coded.strip_prefix("_.")?.get(..4)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u16::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

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
        assert_eq!(encoded("_"), "__");
        assert_eq!(encoded("$"), "_-");
    }

    #[test]
    fn characters_that_are_not_name_characters_are_hex_escaped() {
        assert_eq!(encoded("prometheus.io/scrape"), "prometheus.io_.002fscrape");
        assert_eq!(encoded("a b"), "a_.0020b");
        assert_eq!(encoded("a\u{1}b\u{FFFE}"), "a_.0001b_.fffe");
        assert_eq!(encoded("x\u{00AA}"), "x_.00aa");
    }

    #[test]
    fn the_first_character_must_start_a_name() {
        assert_eq!(encoded("1abc"), "_.0031abc");
        assert_eq!(encoded("-x"), "_.002dx");
        assert_eq!(encoded(".x"), "_.002ex");
        assert_eq!(encoded("x1-.y"), "x1-.y");
    }

    #[test]
    fn non_ascii_name_characters_are_written_as_they_are() {
        assert_eq!(encoded("été"), "été");
        assert_eq!(encoded("中文"), "中文");
        assert_eq!(encoded("a·b"), "a·b");
        assert_eq!(encoded("·b"), "_.00b7b");
    }

    #[test]
    fn characters_beyond_the_basic_plane_are_escaped_per_surrogate() {
        assert_eq!(encoded("a😀"), "a_.d83d_.de00");
    }

    #[test]
    fn colons_are_escaped_where_xstream_writes_them_raw() {
        assert_eq!(encoded("ns:key"), "ns_.003akey");
    }

    #[test]
    fn decoding_reverses_every_escape() {
        assert_eq!(decode_name("a_.0020b"), "a b");
        assert_eq!(
            decode_name("prometheus.io_.002fscrape"),
            "prometheus.io/scrape"
        );
        assert_eq!(decode_name("_.0031abc"), "1abc");
        assert_eq!(decode_name("a_-b__c"), "a$b_c");
        assert_eq!(decode_name("a_.d83d_.de00"), "a😀");
        assert_eq!(decode_name("X_.002F_.002f"), "X//");
    }

    #[test]
    fn uncoded_underscores_are_kept_when_decoding() {
        for kept in [
            "a_b", "a_", "a_.b", "a_.00", "a_.00g1", "a_.d800", "a_.de00x", "_.+041",
        ] {
            assert_eq!(decode_name(kept), kept);
        }
    }

    #[test]
    fn names_without_underscores_are_not_copied() {
        assert!(matches!(decode_name("plain.key"), Cow::Borrowed(_)));
    }

    #[test]
    fn only_the_empty_key_cannot_be_written() {
        assert!(!metadata_key_fits_xml(""));
        for ok in ["management.port", "1st", "a b", "a/b", "ns:key", "\u{FFFF}"] {
            assert!(metadata_key_fits_xml(ok), "{ok}");
        }
    }

    proptest! {
        #[test]
        fn every_name_survives_coding(name in any::<String>()) {
            let coded = encoded(&name);
            prop_assert_eq!(decode_name(&coded), name);
        }

        #[test]
        fn every_coded_name_is_an_xml_name(name in ".+") {
            let element = format!("<{}/>", encoded(&name));
            prop_assert!(roxmltree::Document::parse(&element).is_ok(), "{}", element);
        }
    }
}
