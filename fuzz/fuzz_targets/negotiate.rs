//! Content negotiation of response formats: any `Accept` header picks a format for both of
//! Eureka's rules without panicking, and a header naming only JSON gets JSON from both.
#![no_main]

use heureka_wire::Format;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|accept: &[u8]| {
    let (collection, instance) = heureka_server::fuzzing::negotiate(accept);
    if accept == b"application/json" {
        assert_eq!((collection, instance), (Format::Json, Format::Json));
    }
});
