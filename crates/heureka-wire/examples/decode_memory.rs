//! How much memory and time a full-registry JSON decode takes: the start-up sync's read of a
//! peer's `GET /eureka/apps` (issue 10).
//!
//! `cargo run --release -p heureka-wire --example decode_memory -- write /tmp/apps.json 100000`
//! writes a generated registry; `… -- read /tmp/apps.json` decodes it and prints the time and
//! the process's peak memory (`VmHWM`) before and after, so that the body's own share is told
//! apart from the decode's. Run it under `/usr/bin/time -v` for the same from outside. A manual
//! measurement, not a test: the figures belong in bench/results.

use std::time::Instant;

use heureka_core::{Application, Applications, Instance};
use heureka_wire::{decode_applications, encode_applications, Format};

#[path = "../tests/support/spring.rs"]
mod spring;
use spring::spring_instance;

/// Instances per application, as in a large fleet of mid-sized services.
const PER_APP: usize = 100;

fn registry(instances: usize) -> Applications {
    let applications = (0..instances.div_ceil(PER_APP))
        .map(|a| {
            let name = format!("SERVICE-{a:05}");
            let instances = (0..PER_APP.min(instances - a * PER_APP))
                .map(|n| instance(&name, a, n))
                .collect();
            Application { name, instances }
        })
        .collect();
    Applications {
        versions_delta: 1,
        apps_hashcode: format!("UP_{instances}_"),
        applications,
    }
}

/// An instance the way Spring Cloud registers one: URLs, a lease, a little metadata.
fn instance(app: &str, a: usize, n: usize) -> Instance {
    let host = format!("10.{}.{}.{}", a / 250, a % 250, n);
    let id = format!("{host}:{}:8080", app.to_lowercase());
    let mut i = spring_instance(app, &id, &host, &app.to_lowercase());
    i.metadata.extend([
        ("zone".to_owned(), "eu-west-1a".to_owned()),
        ("version".to_owned(), format!("1.{}.{n}", a % 40)),
    ]);
    i.last_dirty_timestamp = 1_714_550_399_000;
    i
}

/// The process's peak resident memory so far, in MiB (Linux's `VmHWM`).
fn peak_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["write", path, count] => {
            let count: usize = count.parse().expect("an instance count");
            let body = encode_applications(&registry(count), Format::Json);
            std::fs::write(path, &body).expect("the file is writable");
            println!("{count} instances, {:.1} MB", body.len() as f64 / 1e6);
        }
        ["read", path] => {
            let body = std::fs::read(path).expect("the file is readable");
            let before = peak_mib();
            let start = Instant::now();
            let apps = decode_applications(&body, Format::Json).expect("the document decodes");
            let took = start.elapsed();
            let count: usize = apps.applications.iter().map(|a| a.instances.len()).sum();
            println!(
                "{count} instances, {:.1} MB body: decode {took:.2?}; peak {before:.0} MiB with \
                 the body read, {:.0} MiB after the decode",
                body.len() as f64 / 1e6,
                peak_mib()
            );
        }
        _ => eprintln!("usage: decode_memory write PATH COUNT | decode_memory read PATH"),
    }
}
