//! Any request target (path and query, raw bytes: percent-encoding, `..`, odd UTF-8, repeated
//! or empty parameters) with any of the methods the API knows, through the server's real
//! service (the namespaces' dispatcher, the fast lane, the router) over an in-memory state
//! holding two instances. The first byte picks the method, the `Accept` header and the
//! read-back format; the rest is the target.
//!
//! Checked: nothing panics; no answer is a 5xx (where Eureka throws and answers 500, on a
//! malformed `lastDirtyTimestamp` or an unknown status name, Heureka answers a 4xx with a
//! reason); a JSON or XML body parses strictly (HEAD answers have none); after a method that
//! may write, the full registry, read through the same service in the read-back format, parses,
//! carries the `apps__hashcode` of its own statuses and shows exactly what the registry holds,
//! and only a DELETE has removed a seeded instance.
#![no_main]

use std::cell::RefCell;

use heureka_core::InstanceStatus;
use heureka_fuzz as check;
use heureka_server::fuzzing::{self, SEEDED};
use heureka_wire::Format;
use libfuzzer_sys::fuzz_target;

const METHODS: [&str; 8] = [
    "GET", "PUT", "POST", "DELETE", "HEAD", "OPTIONS", "PATCH", "GET",
];
const ACCEPTS: [Option<Format>; 3] = [None, Some(Format::Json), Some(Format::Xml)];

fuzz_target!(|input: &[u8]| {
    let Some((&selector, target)) = input.split_first() else {
        return;
    };
    let method = METHODS[usize::from(selector) % METHODS.len()];
    let accept = ACCEPTS[usize::from(selector >> 3) % ACCEPTS.len()];
    // The top bit picks the format the registry is read back in after a write.
    let read_back = if selector & 0x80 == 0 {
        Format::Json
    } else {
        Format::Xml
    };
    let Some(exchange) = fuzzing::request(method, target, accept, read_back) else {
        return;
    };
    let shown = || {
        format!(
            "{method} {} answered {}: {}",
            String::from_utf8_lossy(target),
            exchange.status,
            String::from_utf8_lossy(&exchange.body)
        )
    };
    assert!(exchange.status < 500, "{}", shown());
    // A HEAD answer carries the GET answer's headers and no body.
    if let Some(content_type) = exchange.content_type.as_ref().filter(|_| method != "HEAD") {
        if content_type.contains("json") {
            check::parses_strictly(&exchange.body, Format::Json);
        } else if content_type.contains("xml") {
            check::parses_strictly(&exchange.body, Format::Xml);
        }
    }

    let mut held = exchange.registry.clone();
    held.sort();
    for (format, status, document) in &exchange.full_fetch {
        assert_eq!(*status, 200, "full fetch after {}", shown());
        let fetched = verified_full_fetch(document, *format, &shown);
        assert_eq!(
            fetched,
            held,
            "full fetch against the registry after {}",
            shown()
        );
    }
    if method != "DELETE" && !exchange.full_fetch.is_empty() {
        for (app, id) in SEEDED {
            assert!(
                held.iter().any(|(a, i, _)| a == app && i == id),
                "{app}/{id} gone after {}",
                shown()
            );
        }
    }
});

type Held = Vec<(String, String, InstanceStatus)>;

thread_local! {
    /// The last full-fetch document checked in each format, and what it holds. A request that
    /// changed nothing is answered from the server's cache with the very same bytes, so their
    /// checks need not run again.
    static VERIFIED: RefCell<[Option<(Vec<u8>, Held)>; 2]> = const { RefCell::new([None, None]) };
}

/// `(app, id, status)` of every instance in a full-fetch `document`, sorted, once it has
/// passed the checks: it parses strictly, decodes, and carries the `apps__hashcode` of its own
/// statuses.
fn verified_full_fetch(document: &[u8], format: Format, shown: &dyn Fn() -> String) -> Held {
    let slot = usize::from(format == Format::Xml);
    let known = VERIFIED.with_borrow(|verified| {
        verified[slot]
            .as_ref()
            .filter(|(bytes, _)| bytes == document)
            .map(|(_, held)| held.clone())
    });
    if let Some(held) = known {
        return held;
    }
    check::parses_strictly(document, format);
    let apps = heureka_wire::decode_applications(document, format)
        .unwrap_or_else(|error| panic!("full fetch does not decode ({error}) after {}", shown()));
    let instances: Vec<_> = apps
        .applications
        .iter()
        .flat_map(|app| &app.instances)
        .collect();
    let hashcode = heureka_core::apps_hashcode(instances.iter().map(|i| &i.status));
    assert_eq!(apps.apps_hashcode, hashcode, "after {}", shown());
    let mut fetched: Held = instances
        .iter()
        .map(|i| (i.app.clone(), i.id().to_owned(), i.status))
        .collect();
    fetched.sort();
    VERIFIED
        .with_borrow_mut(|verified| verified[slot] = Some((document.to_vec(), fetched.clone())));
    fetched
}
