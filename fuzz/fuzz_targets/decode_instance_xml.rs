//! Any bytes as an XML register body: the reader answers an instance or a one-line error, never
//! panics or expands an entity, and whatever it accepts every encoder can write as a well-formed
//! document.
#![no_main]

use heureka_fuzz as check;
use heureka_wire::{decode_instance, Format};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|body: &[u8]| {
    match decode_instance(body, Format::Xml, check::NOW) {
        Ok(instance) => check::writes_well_formed(&instance),
        Err(error) => check::one_line(&error),
    }
});
