//! The server's register path without sockets: `Content-Type` negotiation, decoding,
//! validation against the path's app name, registration. The first byte picks the content
//! type, the next bytes up to a NUL are the path's app name, the rest is the body. Whatever is
//! accepted, every document a reader can then fetch must parse strictly, in both formats.
#![no_main]

use heureka_fuzz as check;
use libfuzzer_sys::fuzz_target;

const CONTENT_TYPES: [Option<&[u8]>; 6] = [
    None,
    Some(b"application/json"),
    Some(b"application/xml"),
    Some(b"application/json; charset=utf-8"),
    Some(b"text/plain"),
    Some(b"*/*"),
];

fuzz_target!(|input: &[u8]| {
    let Some((&selector, rest)) = input.split_first() else {
        return;
    };
    let content_type = CONTENT_TYPES[usize::from(selector) % CONTENT_TYPES.len()];
    let (app, body) = match rest.iter().position(|&b| b == 0) {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (&b""[..], rest),
    };
    let app = String::from_utf8_lossy(app);
    match heureka_server::fuzzing::register_then_read(content_type, &app, body) {
        Ok(documents) => {
            for (format, document) in documents {
                check::parses_strictly(&document, format);
            }
        }
        Err(status) => assert!((400..500).contains(&status), "refused with {status}"),
    }
});
