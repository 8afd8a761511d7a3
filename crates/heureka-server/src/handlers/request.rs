//! What handlers read from a request beyond axum's extractors: the headers moved rather than
//! copied, the sender's address, the query string read in place, and the parameters Eureka
//! defines (`lastDirtyTimestamp`, a status), each refused with Eureka's meaning when malformed.

use std::borrow::Cow;
use std::convert::Infallible;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, Uri};
use heureka_core::{InstanceStatus, Millis};

use crate::http::error::ApiError;
use crate::http::scan;
use crate::namespaces::InNamespace;
use crate::state::SharedState;

/// The state of the request's namespace: the one `dispatch.rs` put in the request,
/// else the router's own, the default namespace's (which a request to it finds at no cost).
pub(crate) struct Ns(pub(crate) SharedState);

impl FromRequestParts<SharedState> for Ns {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &SharedState) -> Result<Ns, Infallible> {
        Ok(Ns(InNamespace::of(&parts.extensions)
            .unwrap_or(state)
            .clone()))
    }
}

/// The request's headers, moved out of the request instead of copied (axum's `HeaderMap`
/// extractor clones the map, an allocation per request on the heartbeat path). Handlers take
/// it after every other parts extractor; nothing after it reads headers.
#[derive(Debug)]
pub(crate) struct Headers(pub(crate) HeaderMap);

impl<S: Send + Sync> FromRequestParts<S> for Headers {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Headers, Infallible> {
        Ok(Headers(std::mem::take(&mut parts.headers)))
    }
}

/// The address the request came from, when it crossed a socket (`connection::Sender`): peer
/// batches are traced to their sender.
#[derive(Debug)]
pub(crate) struct SenderAddress(pub(crate) Option<std::net::SocketAddr>);

impl<S: Send + Sync> FromRequestParts<S> for SenderAddress {
    type Rejection = Infallible;

    async fn from_request_parts(
        parts: &mut Parts,
        _state: &S,
    ) -> Result<SenderAddress, Infallible> {
        Ok(SenderAddress(
            parts
                .extensions
                .get::<crate::connection::Sender>()
                .map(|sender| sender.0),
        ))
    }
}

impl std::fmt::Display for SenderAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(address) => address.ip().fmt(f),
            None => f.write_str("unknown"),
        }
    }
}

/// The query string, read in place: the same pairs, decoded the same way, as axum's
/// `Query<Vec<(String, String)>>` (both use `form_urlencoded`), without building a `Vec` and a
/// `String` per name and value on every heartbeat. Keeps the URI (a reference count, no copy).
#[derive(Debug)]
pub(crate) struct QueryParams(Uri);

impl<S: Send + Sync> FromRequestParts<S> for QueryParams {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<QueryParams, Infallible> {
        Ok(QueryParams(parts.uri.clone()))
    }
}

impl QueryParams {
    /// The parameters of `uri`, as the extractor takes them (the fast lane's fetches).
    pub(crate) fn new(uri: Uri) -> QueryParams {
        QueryParams(uri)
    }

    /// The request's URI.
    pub(crate) fn uri(&self) -> &Uri {
        &self.0
    }

    /// Every pair, in order, percent-decoded.
    pub(crate) fn pairs(&self) -> form_urlencoded::Parse<'_> {
        form_urlencoded::parse(self.0.query().unwrap_or_default().as_bytes())
    }

    /// The first value of `key` (Eureka's `getFirst`), percent-decoded as `pairs` decodes it.
    /// Only a name or value holding an escape is decoded: a heartbeat's plain
    /// `status=UP&lastDirtyTimestamp=…` is compared and returned in place (decoding every
    /// pair for each of the three parameters a heartbeat reads was a tenth of its cost).
    pub(crate) fn first(&self, key: &str) -> Option<Cow<'_, str>> {
        first_in(self.0.query()?, key)
    }

    /// The query as sent, undecoded.
    pub(crate) fn query(&self) -> Option<&str> {
        self.0.query()
    }
}

/// The first value of `key` in `query` (see [`QueryParams::first`]): a scan of the bytes,
/// since the separators are ASCII (a `str` searcher per pair cost as much as the rest).
pub(crate) fn first_in<'q>(query: &'q str, key: &str) -> Option<Cow<'q, str>> {
    let [value] = firsts_in(query, [key]);
    value
}

/// The first value of each of `keys` (distinct) in `query`, in one scan (a heartbeat reads
/// two).
pub(crate) fn firsts_in<'q, const N: usize>(
    query: &'q str,
    keys: [&str; N],
) -> [Option<Cow<'q, str>>; N] {
    let mut found: [Option<Cow<'q, str>>; N] = [const { None }; N];
    let mut missing = N;
    let mut rest = query;
    while !rest.is_empty() && missing > 0 {
        let pair = Pair::first_of(rest);
        rest = rest.get(pair.text.len() + 1..).unwrap_or_default();
        // An empty pair (`a=1&&b=2`) is no parameter, as `form_urlencoded` skips it.
        if pair.text.is_empty() {
            continue;
        }
        let name = pair.name();
        for (key, slot) in keys.iter().zip(found.iter_mut()) {
            if slot.is_none() && name == *key {
                *slot = Some(pair.value());
                missing -= 1;
                break;
            }
        }
    }
    found
}

/// The first `name=value` pair of a query, found in one pass over its bytes (a pass to find
/// its end, one for its `=` and one per part for escapes cost a heartbeat as much again): its
/// text, where its `=` is, and whether its name or value holds an escape to decode.
struct Pair<'q> {
    text: &'q str,
    equals: Option<usize>,
    escaped_name: bool,
    escaped_value: bool,
}

/// What ends a pair (`&`), splits it (`=`) or escapes a byte of it (`%`, `+`).
const QUERY_MARKS: [u8; 4] = [b'&', b'=', b'%', b'+'];

impl<'q> Pair<'q> {
    fn first_of(query: &'q str) -> Pair<'q> {
        let (mut equals, mut escaped_name, mut escaped_value) = (None, false, false);
        let bytes = query.as_bytes();
        let mut end = bytes.len();
        let mut at = 0;
        while let Some(found) = scan::next_mark(bytes, at, QUERY_MARKS) {
            match bytes[found] {
                b'&' => {
                    end = found;
                    break;
                }
                b'=' if equals.is_none() => equals = Some(found),
                b'=' => {}
                _ if equals.is_none() => escaped_name = true,
                _ => escaped_value = true,
            }
            at = found + 1;
        }
        // `&` and `=` are ASCII: the cuts fall on character boundaries.
        Pair {
            text: &query[..end],
            equals,
            escaped_name,
            escaped_value,
        }
    }

    fn name(&self) -> Cow<'q, str> {
        let raw = &self.text[..self.equals.unwrap_or(self.text.len())];
        match self.escaped_name {
            true => decode(raw),
            false => Cow::Borrowed(raw),
        }
    }

    /// Empty for a bare name (`a&b=2`), as `form_urlencoded` has it.
    fn value(&self) -> Cow<'q, str> {
        let Some(at) = self.equals else {
            return Cow::Borrowed("");
        };
        let raw = &self.text[at + 1..];
        match self.escaped_value {
            true => decode(raw),
            false => Cow::Borrowed(raw),
        }
    }
}

/// A name or value of a query holding an escape, as `form_urlencoded` decodes it (`+` a
/// space, `%XX` a byte, invalid UTF-8 replaced).
fn decode(raw: &str) -> Cow<'_, str> {
    let spaced = raw.replace('+', " ");
    Cow::Owned(
        percent_encoding::percent_decode_str(&spaced)
            .decode_utf8_lossy()
            .into_owned(),
    )
}

/// Query parameters in order, first value per key (Eureka's `getFirst`).
pub(crate) fn first<'a>(query: &'a [(String, String)], key: &str) -> Option<&'a str> {
    query
        .iter()
        .find(|(name, _)| name == key)
        .map(|(_, value)| value.as_str())
}

/// `lastDirtyTimestamp` must be a number when present; Eureka would throw a 500 here.
pub(crate) fn last_dirty_timestamp(query: &[(String, String)]) -> Result<Option<Millis>, ApiError> {
    parse_last_dirty_timestamp(first(query, "lastDirtyTimestamp"))
}

/// The `lastDirtyTimestamp` of a heartbeat's query shaped as Eureka's clients send it,
/// `status={status}&lastDirtyTimestamp={digits}`, which is what nearly every heartbeat carries;
/// `None` for any other query, which the general reading takes ([`firsts_in`]). For a query of
/// that shape both read the same: the timestamp, and no `overriddenstatus` (a renewal does not
/// read `status`). A tenth of a heartbeat's work went into finding its pairs.
pub(crate) fn heartbeat_as_clients_send(query: &str) -> Option<Millis> {
    let rest = query.strip_prefix("status=")?;
    let end = scan::next_mark(rest.as_bytes(), 0, QUERY_MARKS)?;
    let digits = rest[end..].strip_prefix("&lastDirtyTimestamp=")?;
    if digits.is_empty() {
        return None;
    }
    bare_millis(digits)
}

/// The value of a `lastDirtyTimestamp` parameter, if one was given.
pub(crate) fn parse_last_dirty_timestamp(value: Option<&str>) -> Result<Option<Millis>, ApiError> {
    let Some(value) = value.filter(|value| !value.is_empty()) else {
        return Ok(None);
    };
    if let Some(millis) = bare_millis(value) {
        return Ok(Some(millis));
    }
    value.trim().parse().map(Some).map_err(|_| {
        ApiError::BadRequest(format!(
            "lastDirtyTimestamp '{value}' is not a number of milliseconds"
        ))
    })
}

/// `value` read as clients send it, bare digits, without the general parse's checks: up to 18
/// digits cannot overflow. `None` for anything else, which the general parse reads; callers
/// rule out the empty value first (it would read as 0). A client's timestamp has 13 digits:
/// its last eight are read at once ([`eight_digits`]).
fn bare_millis(value: &str) -> Option<Millis> {
    let bytes = value.as_bytes();
    if bytes.len() > 18 {
        return None;
    }
    let (head, tail) = bytes.split_at(bytes.len().saturating_sub(8));
    let millis = digit_by_digit(head, 0)?;
    match <[u8; 8]>::try_from(tail) {
        Ok(last) => Some(millis * 100_000_000 + Millis::from(eight_digits(last)?)),
        // Fewer than eight digits in all (`head` is empty).
        Err(_) => digit_by_digit(tail, millis),
    }
}

/// `millis` followed by the ASCII digits `bytes`; `None` if one is not a digit.
fn digit_by_digit(bytes: &[u8], mut millis: Millis) -> Option<Millis> {
    for &byte in bytes {
        let digit = byte.wrapping_sub(b'0');
        if digit > 9 {
            return None;
        }
        millis = millis * 10 + Millis::from(digit);
    }
    Some(millis)
}

/// Eight ASCII digits as a number, in a few multiplications (pairs, then fours, then the
/// eight); `None` if any byte is not a digit.
fn eight_digits(bytes: [u8; 8]) -> Option<u32> {
    let word = u64::from_le_bytes(bytes);
    // Every byte 0x30..=0x39: its high nibble 3, and adding 6 leaves it 3 (no carry).
    let high = 0xF0F0_F0F0_F0F0_F0F0;
    let threes = 0x3030_3030_3030_3030;
    if word & high != threes || word.wrapping_add(0x0606_0606_0606_0606) & high != threes {
        return None;
    }
    let digits = word & 0x0F0F_0F0F_0F0F_0F0F;
    // Little-endian, the first digit is the lowest byte: each step multiplies the earlier
    // part of a group by its weight and adds the later part. What overflows past the top lane
    // is thrown away.
    let pairs = (digits.wrapping_mul(10 << 8 | 1) >> 8) & 0x00FF_00FF_00FF_00FF;
    let fours = (pairs.wrapping_mul(100 << 16 | 1) >> 16) & 0x0000_FFFF_0000_FFFF;
    let eight = fours.wrapping_mul(10_000 << 32 | 1) >> 32;
    Some(eight as u32)
}

/// A status named in a query parameter: exact enum names only, as Eureka's `valueOf`.
pub(crate) fn status_param(name: &str, value: &str) -> Result<InstanceStatus, ApiError> {
    InstanceStatus::from_name(value).ok_or_else(|| {
        ApiError::BadRequest(format!(
            "{name} '{value}' is not one of UP, DOWN, STARTING, OUT_OF_SERVICE, UNKNOWN"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What `first` must answer: the first pair `form_urlencoded` finds under `key`.
    fn reference(query: &str, key: &str) -> Option<String> {
        form_urlencoded::parse(query.as_bytes())
            .find(|(name, _)| name == key)
            .map(|(_, value)| value.into_owned())
    }

    #[test]
    fn a_heartbeats_parameters_are_read_in_place() {
        let query = "status=UP&lastDirtyTimestamp=1714550399000";
        assert!(matches!(
            first_in(query, "status"),
            Some(Cow::Borrowed("UP"))
        ));
        assert_eq!(
            first_in(query, "lastDirtyTimestamp").unwrap(),
            "1714550399000"
        );
        assert_eq!(first_in(query, "overriddenstatus"), None);
    }

    #[test]
    fn escaped_names_and_values_are_decoded_as_form_urlencoded_decodes_them() {
        let query = "over%72iddenstatus=OUT_OF+SERVICE&x=%E2%82%AC%ff";
        assert_eq!(
            first_in(query, "overriddenstatus").unwrap(),
            "OUT_OF SERVICE"
        );
        assert_eq!(
            first_in(query, "x").unwrap(),
            reference(query, "x").unwrap()
        );
    }

    #[test]
    fn the_first_of_repeated_names_wins_and_a_bare_name_is_empty() {
        assert_eq!(first_in("a=1&a=2", "a").unwrap(), "1");
        assert_eq!(first_in("&&a&b=2", "a").unwrap(), "");
    }

    #[test]
    fn a_heartbeat_as_clients_send_it_is_read_and_any_other_shape_is_left_to_the_general_reading() {
        let read = heartbeat_as_clients_send;
        assert_eq!(
            read("status=UP&lastDirtyTimestamp=1714550399000"),
            Some(1_714_550_399_000)
        );
        assert_eq!(read("status=DOWN&lastDirtyTimestamp=7"), Some(7));
        for other in [
            "lastDirtyTimestamp=1714550399000&status=UP",
            "status=UP&lastDirtyTimestamp=1714550399000&overriddenstatus=DOWN",
            "status=UP&lastDirtyTimestamp=",
            "status=UP&lastDirtyTimestamp=+17",
            "status=U%50&lastDirtyTimestamp=17",
            "status=UP&lastDirty%54imestamp=17",
            "status=UP",
            "",
        ] {
            assert_eq!(read(other), None, "{other}");
        }
    }

    #[test]
    fn eight_digits_read_as_their_number() {
        assert_eq!(eight_digits(*b"12345678"), Some(12_345_678));
        assert_eq!(eight_digits(*b"00000000"), Some(0));
        assert_eq!(eight_digits(*b"99999999"), Some(99_999_999));
        for bad in [*b"1234567:", *b"/2345678", *b"1234 678", *b"12345\xe978"] {
            assert_eq!(eight_digits(bad), None);
        }
    }

    proptest! {
        #[test]
        fn first_answers_as_form_urlencoded(
            query in "[a-c=&%+0-9A-F\u{e9}]{0,48}",
            key in "[a-c+%0-9 ]{0,3}",
        ) {
            prop_assert_eq!(first_in(&query, &key).map(Cow::into_owned), reference(&query, &key));
        }

        #[test]
        fn firsts_answer_each_key_as_first_does(
            query in "[a-c=&%+0-9A-F\u{e9}]{0,48}",
            one in "[a-c+%0-9 ]{0,3}",
            other in "[a-c+%0-9 ]{0,3}",
        ) {
            // Distinct keys, as every caller names them.
            let other = if one == other { format!("{other}b") } else { other };
            let [a, b] = firsts_in(&query, [one.as_str(), other.as_str()]);
            prop_assert_eq!(a.map(Cow::into_owned), reference(&query, &one));
            prop_assert_eq!(b.map(Cow::into_owned), reference(&query, &other));
        }

        #[test]
        fn a_heartbeat_shaped_as_clients_send_it_reads_as_the_general_reading_reads_it(
            status in "[A-Za-z_=&%+0-9]{0,12}",
            joint in prop_oneof![
                Just("&lastDirtyTimestamp=".to_owned()),
                "[&a-zA-Z=%+]{0,22}",
            ],
            digits in "[0-9]{0,20}|[ +0-9a-f%&=-]{0,6}",
            tail in prop_oneof![Just(String::new()), "[&a-z=0-9]{0,20}"],
        ) {
            let query = format!("status={status}{joint}{digits}{tail}");
            if let Some(fast) = heartbeat_as_clients_send(&query) {
                let [dirty, overridden] =
                    firsts_in(&query, ["lastDirtyTimestamp", "overriddenstatus"]);
                let general = parse_last_dirty_timestamp(dirty.as_deref()).ok().flatten();
                prop_assert_eq!(Some(fast), general);
                prop_assert!(overridden.is_none());
            }
        }

        #[test]
        fn a_last_dirty_timestamp_reads_as_the_general_parse_reads_it(
            value in "[ +-]?[0-9]{1,20}[ \u{2003}]?",
        ) {
            let general = value.trim().parse::<Millis>().ok();
            let read = parse_last_dirty_timestamp(Some(&value)).ok().flatten();
            prop_assert_eq!(read, general);
        }
    }
}
