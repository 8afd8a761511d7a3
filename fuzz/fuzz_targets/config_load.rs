//! Any command line, environment and `application.yml` / `application.properties` for the
//! configuration loader: it answers a configuration, help, a version or an error, and never
//! panics or hangs (placeholders that refer to each other, deep YAML, huge numbers…).
//!
//! The input is split at NUL bytes: the YAML file, the properties file, then arguments (those
//! starting with `-`) and environment variables (`NAME=value`). Settings that choose which
//! files to read (`spring.config.*`) are dropped, so the fuzzer cannot point the loader at
//! `/dev/zero` or the rest of the machine.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use heureka_server::config;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let text = String::from_utf8_lossy(input);
    let mut parts = text.split('\0');
    let yaml = parts.next().unwrap_or("");
    let properties = parts.next().unwrap_or("");
    let mut args = Vec::new();
    let mut env = Vec::new();
    for part in parts.filter(|part| !chooses_files(part)) {
        if part.starts_with('-') {
            args.push(part.to_owned());
        } else if let Some((name, value)) = part.split_once('=') {
            env.push((name.to_owned(), value.to_owned()));
        }
    }
    let dir = work_dir();
    std::fs::write(dir.join("application.yml"), yaml).expect("writes the YAML file");
    std::fs::write(dir.join("application.properties"), properties).expect("writes properties");
    let lookup = |name: &str| {
        env.iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, value)| value.clone())
    };
    // Every outcome is fine; only a panic, a hang or a blown memory limit is a finding.
    let _ = config::load(&args, &lookup, dir);
});

/// `spring.config.location` and friends in any relaxed spelling.
fn chooses_files(part: &str) -> bool {
    let name = part.split('=').next().unwrap_or("");
    let canonical: String = name
        .chars()
        .filter(|c| !matches!(c, '-' | '_' | '.'))
        .flat_map(char::to_lowercase)
        .collect();
    canonical.contains("springconfig")
}

/// One directory per fuzzing process, holding nothing but the two files; in memory where the
/// machine has `/dev/shm`, since rewriting files on disk costs twenty times the loading.
fn work_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let shm = PathBuf::from("/dev/shm");
        let base = if shm.is_dir() {
            shm
        } else {
            std::env::temp_dir()
        };
        let dir = base.join(format!("heureka-fuzz-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("creates the fuzzing directory");
        dir
    })
}
