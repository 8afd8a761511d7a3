//! Decode, encode, decode again: the first byte picks the format and the document kind (instance,
//! application, registry), the rest is the body. Whatever the reader accepts, the writer's
//! document must parse with a strict parser and read back as the same value.
#![no_main]

use heureka_fuzz as check;
use heureka_wire::{
    decode_application, decode_applications, decode_instance, encode_application,
    encode_applications, encode_instance, Format,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let Some((&selector, body)) = input.split_first() else {
        return;
    };
    let format = if selector & 1 == 0 {
        Format::Json
    } else {
        Format::Xml
    };
    match (selector >> 1) % 3 {
        0 => {
            let Ok(first) = decode_instance(body, format, check::NOW) else {
                return;
            };
            let document = encode_instance(&first, format);
            check::parses_strictly(&document, format);
            let second = decode_instance(&document, format, check::NOW).expect("re-reads");
            assert_eq!(check::normalised(second), check::normalised(first));
        }
        1 => {
            let Ok(first) = decode_application(body, format) else {
                return;
            };
            let document = encode_application(&first, format);
            check::parses_strictly(&document, format);
            let second = decode_application(&document, format).expect("re-reads");
            assert_eq!(check::normalised_app(second), check::normalised_app(first));
        }
        _ => {
            let Ok(first) = decode_applications(body, format) else {
                return;
            };
            let document = encode_applications(&first, format);
            check::parses_strictly(&document, format);
            let second = decode_applications(&document, format).expect("re-reads");
            assert_eq!(
                check::normalised_apps(second),
                check::normalised_apps(first)
            );
        }
    }
});
