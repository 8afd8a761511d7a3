//! A register body in the shape every Eureka client sends, read without serde: one root key
//! `instance` holding an object whose values are strings without escapes, non-negative integers,
//! `true`, `false`, `null`, and the objects `port`, `securePort`, `leaseInfo`, `metadata` and
//! `dataCenterInfo` (with its `metadata`) holding such values.
//!
//! Reading a registration's body through serde's visitors took about two fifths of the
//! registration's CPU, most of it in the layers between the tokens and the rules. This reader
//! feeds each value to the same [`InstanceBuilder`] rules, in document order, as
//! [`super::instance`]'s general reader does. Everything else — an escape, a float, a negative
//! number, an array, an unknown object, another root key, a field the rules refuse, a syntax
//! error — makes it answer `None` at once, and the general reader reads the body again from the
//! start and gives the answer, error and message included. So it only ever has to be right about
//! what it accepts; the stream tests hold it to the tree reader, the oracle both other readers
//! answer to, on real clients' bodies and on generated ones.

use std::collections::BTreeMap;

use heureka_core::{Instance, Millis};

use crate::fields::{self, InstanceBuilder, Scalar};
use crate::json::decode::fill_instance_id_from_metadata;

/// The instance in `body` (as `prepare` leaves it: without a byte-order mark), or `None` where
/// the body leaves the plain shape or a field breaks a rule.
pub(super) fn instance(body: &[u8], now: Millis) -> Option<Instance> {
    let text = std::str::from_utf8(body).ok()?;
    let mut reader = Reader { text, at: 0 };
    reader.eat(b'{')?;
    reader.eat(b'"')?;
    if reader.string()? != "instance" {
        return None;
    }
    reader.eat(b':')?;
    reader.object()?;
    let mut b = InstanceBuilder::new(now);
    reader.entries(|reader, key| instance_field(reader, &mut b, key))?;
    reader.eat(b'}')?;
    reader.whitespace();
    if reader.at != text.len() {
        return None;
    }
    let mut instance = b.finish();
    fill_instance_id_from_metadata(&mut instance);
    Some(instance)
}

/// One field of the instance object, as the general reader's `InstanceObject` dispatches it.
fn instance_field(reader: &mut Reader<'_>, b: &mut InstanceBuilder, key: &str) -> Option<()> {
    match key {
        "port" | "securePort" => match reader.value()? {
            Token::Null => Some(()),
            Token::Scalar(value) => b.scalar(key, value).ok(),
            Token::Object => reader.entries(|reader, part| match (part, reader.scalar()?) {
                ("$", Some(value)) => b.port_number(key, value).ok(),
                ("@enabled", Some(value)) => {
                    b.port_enabled(key, value.boolean());
                    Some(())
                }
                _ => Some(()),
            }),
        },
        "leaseInfo" => reader.optional_object(|reader| {
            reader.entries(|reader, field| match reader.scalar()? {
                Some(value) => b.lease(field, value).ok(),
                None => Some(()),
            })
        }),
        "metadata" => reader.optional_object(|reader| metadata(reader, b.metadata_mut())),
        "dataCenterInfo" => reader.optional_object(|reader| data_center(reader, b)),
        _ => match reader.scalar()? {
            Some(value) => b.scalar(key, value).ok(),
            None => Some(()),
        },
    }
}

/// The entries of a metadata object: text by key, `null` skipped.
fn metadata(reader: &mut Reader<'_>, map: &mut BTreeMap<String, String>) -> Option<()> {
    reader.entries(|reader, key| {
        if let Some(value) = reader.scalar()? {
            fields::put_metadata(map, key, value);
        }
        Some(())
    })
}

/// `dataCenterInfo`'s entries: its `@class`, `name` and `metadata`; other scalars are skipped,
/// another object leaves the shape.
fn data_center(reader: &mut Reader<'_>, b: &mut InstanceBuilder) -> Option<()> {
    let mut class = None;
    let mut name = None;
    let mut metadata_map = BTreeMap::new();
    reader.entries(|reader, key| match key {
        "@class" => reader.text_into(&mut class),
        "name" => reader.text_into(&mut name),
        "metadata" => reader.optional_object(|reader| metadata(reader, &mut metadata_map)),
        _ => reader.scalar().map(drop),
    })?;
    let dc = fields::data_center(class.as_deref(), name, metadata_map).ok()?;
    b.set_data_center(dc);
    Some(())
}

/// A value as the plain shape allows it.
enum Token<'a> {
    Null,
    Scalar(Scalar<'a>),
    /// An object's `{`, read; its entries come next.
    Object,
}

/// A cursor over the body; every method that reads a part of it answers `None` where the text
/// leaves the plain shape.
struct Reader<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Reader<'a> {
    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    fn next_byte(&self) -> Option<u8> {
        self.bytes().get(self.at).copied()
    }

    fn whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.next_byte() {
            self.at += 1;
        }
    }

    /// `byte`, after any whitespace.
    fn eat(&mut self, byte: u8) -> Option<()> {
        self.whitespace();
        (self.next_byte()? == byte).then(|| self.at += 1)
    }

    /// The rest of a string whose opening quote was read. Inlined: a body holds about ninety
    /// strings, and a call apiece cost a fifth of the reading.
    #[inline(always)]
    fn string(&mut self) -> Option<&'a str> {
        let start = self.at;
        let end = start + string_end(&self.bytes()[start..])?;
        self.at = end + 1;
        self.text.get(start..end)
    }

    /// A scalar or `null` (as `None`); an object or anything else leaves the shape.
    fn scalar(&mut self) -> Option<Option<Scalar<'a>>> {
        match self.value()? {
            Token::Null => Some(None),
            Token::Scalar(value) => Some(Some(value)),
            Token::Object => None,
        }
    }

    /// An object's `{` (true) or `null` (false); a scalar leaves the shape.
    fn object_or_null(&mut self) -> Option<bool> {
        match self.value()? {
            Token::Null => Some(false),
            Token::Object => Some(true),
            Token::Scalar(_) => None,
        }
    }

    fn object(&mut self) -> Option<()> {
        self.object_or_null()?.then_some(())
    }

    /// An object read by `read`, or `null`, which is absent; a scalar leaves the shape.
    fn optional_object(&mut self, read: impl FnOnce(&mut Self) -> Option<()>) -> Option<()> {
        if self.object_or_null()? {
            read(self)?;
        }
        Some(())
    }

    /// A scalar's text into `slot`; `null` leaves `slot` as it was.
    fn text_into(&mut self, slot: &mut Option<String>) -> Option<()> {
        if let Some(value) = self.scalar()? {
            *slot = Some(value.text().into_owned());
        }
        Some(())
    }

    fn value(&mut self) -> Option<Token<'a>> {
        self.whitespace();
        match self.next_byte()? {
            b'"' => {
                self.at += 1;
                self.string().map(|text| Token::Scalar(Scalar::Text(text)))
            }
            b'{' => {
                self.at += 1;
                Some(Token::Object)
            }
            b'0'..=b'9' => self.integer().map(|n| Token::Scalar(Scalar::Int(n))),
            b't' => self.literal("true", Token::Scalar(Scalar::Bool(true))),
            b'f' => self.literal("false", Token::Scalar(Scalar::Bool(false))),
            b'n' => self.literal("null", Token::Null),
            _ => None,
        }
    }

    fn literal(&mut self, word: &str, token: Token<'a>) -> Option<Token<'a>> {
        self.bytes()[self.at..]
            .starts_with(word.as_bytes())
            .then(|| {
                self.at += word.len();
                token
            })
    }

    /// A non-negative integer of at most 18 digits, so that it fits without a check; a leading
    /// zero leaves the shape (JSON forbids it). So do a fraction and an exponent, which the
    /// entries' `,` or `}` would refuse next anyway: said here, where numbers are read.
    fn integer(&mut self) -> Option<i64> {
        let rest = &self.bytes()[self.at..];
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let leading_zero = rest[0] == b'0' && digits > 1;
        let fraction = matches!(rest.get(digits), Some(b'.' | b'e' | b'E'));
        if digits > 18 || leading_zero || fraction {
            return None;
        }
        self.at += digits;
        Some(
            rest[..digits]
                .iter()
                .fold(0, |n, d| n * 10 + i64::from(d - b'0')),
        )
    }

    /// The entries of an object whose `{` was read, each handed to `entry` after its key; ends
    /// past the `}`.
    fn entries(&mut self, mut entry: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.whitespace();
        if self.next_byte()? == b'}' {
            self.at += 1;
            return Some(());
        }
        loop {
            self.eat(b'"')?;
            let key = self.string()?;
            self.eat(b':')?;
            entry(self, key)?;
            self.whitespace();
            match self.next_byte()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }
}

const ONES: u64 = u64::from_ne_bytes([1; 8]);
const HIGHS: u64 = ONES * 0x80;

/// Where the string in `bytes` ends (the index of its closing quote), or `None` at an escape, a
/// control character or the end of the body. Eight bytes at a time: register bodies are mostly
/// text.
#[inline(always)]
fn string_end(bytes: &[u8]) -> Option<usize> {
    let mut at = 0;
    while let Some(chunk) = bytes.get(at..).and_then(<[u8]>::first_chunk::<8>) {
        let stops = stops(u64::from_le_bytes(*chunk));
        if stops != 0 {
            at += (stops.trailing_zeros() / 8) as usize;
            return (bytes[at] == b'"').then_some(at);
        }
        at += 8;
    }
    let tail = bytes.get(at..)?;
    let stop = tail
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
    (tail[stop] == b'"').then_some(at + stop)
}

/// The high bit of every byte of `word` that is a quote, a backslash or a control character,
/// and possibly of bytes above the first such: a borrow only runs upwards from a byte that
/// matched, so the lowest flag is always a true one.
fn stops(word: u64) -> u64 {
    let zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGHS;
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
    zero(word ^ (ONES * u64::from(b'"'))) | zero(word ^ (ONES * u64::from(b'\\'))) | control
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::string_end;

    /// The byte-wise reading `string_end` must agree with.
    fn one_byte_at_a_time(bytes: &[u8]) -> Option<usize> {
        let stop = bytes
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
        (bytes[stop] == b'"').then_some(stop)
    }

    #[test]
    fn a_string_ends_at_its_quote_and_not_at_an_escape_or_a_control_character() {
        assert_eq!(string_end(b"abc\"def"), Some(3));
        assert_eq!(string_end(b"abcdefghijkl\"m"), Some(12));
        assert_eq!(string_end(b"abcdefghij\\\"kl"), None);
        assert_eq!(string_end(b"abc\x1fdefghij\"kl"), None);
        assert_eq!(string_end("grüße\"".as_bytes()), Some(7));
        assert_eq!(string_end(b"no quote at all"), None);
        assert_eq!(string_end(b""), None);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn eight_bytes_at_a_time_agrees_with_one_at_a_time(
            bytes in prop::collection::vec(prop_oneof![
                4 => 0x20u8..0x7f,
                1 => Just(b'"'),
                1 => Just(b'\\'),
                1 => 0u8..0x20,
                1 => 0x80u8..=0xff,
            ], 0..40),
        ) {
            prop_assert_eq!(string_end(&bytes), one_byte_at_a_time(&bytes));
        }
    }
}
