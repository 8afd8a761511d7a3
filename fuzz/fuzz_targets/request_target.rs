//! Any request target (path and query, raw bytes: percent-encoding, `..`, odd UTF-8, repeated
//! or empty parameters) with any of the methods the API knows, through the server's real
//! router over an in-memory state holding two instances. The first byte picks the method and
//! the `Accept` header, the rest is the target.
//!
//! Checked: nothing panics; no answer is a 5xx (where Eureka throws and answers 500, on a
//! malformed `lastDirtyTimestamp` or an unknown status name, Heureka answers a 4xx with a
//! reason); a JSON or XML body parses strictly (HEAD answers have none); after a method that
//! may write, the full registry, read through the router in both formats, parses, carries the
//! `apps__hashcode` of its own statuses and shows exactly what the registry holds, and only a
//! DELETE has removed a seeded instance.
#![no_main]

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
    let Some(exchange) = fuzzing::request(method, target, accept) else {
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
        check::parses_strictly(document, *format);
        let apps = heureka_wire::decode_applications(document, *format).unwrap_or_else(|error| {
            panic!("full fetch does not decode ({error}) after {}", shown())
        });
        let instances: Vec<_> = apps
            .applications
            .iter()
            .flat_map(|app| &app.instances)
            .collect();
        let hashcode = heureka_core::apps_hashcode(instances.iter().map(|i| &i.status));
        assert_eq!(apps.apps_hashcode, hashcode, "after {}", shown());
        let mut fetched: Vec<_> = instances
            .iter()
            .map(|i| (i.app.clone(), i.id().to_owned(), i.status))
            .collect();
        fetched.sort();
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
