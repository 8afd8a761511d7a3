//! Times a full-registry encode of 10,000 instances in both formats, and the decode back.
//!
//! `cargo run --release -p heureka-wire --example encode_timing`. A manual check of the server's
//! hottest path, not a test: no assertion depends on the machine's speed.

use std::time::Instant;

use heureka_core::{Application, Applications};
use heureka_wire::{decode_applications, encode_applications, Format};

#[path = "../tests/support/spring.rs"]
mod spring;
use spring::spring_instance;

fn registry(apps: usize, per_app: usize) -> Applications {
    let applications = (0..apps)
        .map(|a| {
            let name = format!("SERVICE-{a:03}");
            let instances = (0..per_app)
                .map(|n| {
                    let host = format!("10.{}.{}.{}", a / 250, a % 250, n);
                    let id = format!("{host}:service-{a:03}:8080");
                    let mut i = spring_instance(&name, &id, &host, &name.to_lowercase());
                    i.metadata
                        .insert("zone".to_owned(), "eu-west-1a".to_owned());
                    i
                })
                .collect();
            Application { name, instances }
        })
        .collect();
    Applications {
        versions_delta: 1,
        apps_hashcode: format!("UP_{}_", apps * per_app),
        applications,
    }
}

fn main() {
    let apps = registry(200, 50);
    for format in [Format::Json, Format::Xml] {
        let mut body = encode_applications(&apps, format);
        const ROUNDS: u32 = 20;
        let start = Instant::now();
        for _ in 0..ROUNDS {
            body = std::hint::black_box(encode_applications(&apps, format));
        }
        let encode = start.elapsed() / ROUNDS;
        let start = Instant::now();
        let back = decode_applications(&body, format).expect("own output decodes");
        let decode = start.elapsed();
        assert_eq!(back, apps);
        println!(
            "{format:?}: 10,000 instances, {:.1} MB (buffer {:.1} MB), encode {encode:?}, decode {decode:?}",
            body.len() as f64 / 1e6,
            body.capacity() as f64 / 1e6
        );
    }
}
