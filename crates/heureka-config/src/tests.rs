//! Tests of the generic layer on its own, with a made-up application's keys. The server's
//! and the client's tests cover the same machinery through their own keys.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::values::{self, DurationUnit};
use super::*;

/// A temporary working directory, removed on drop.
struct Dir {
    path: PathBuf,
}

impl Dir {
    fn new() -> Dir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "heureka-config-crate-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Dir { path }
    }

    fn write(&self, relative: &str, text: &str) -> &Dir {
        let path = self.path.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        self
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

fn schema() -> Schema {
    Schema::new(
        Names::new(&["app.labels"]),
        ["app.pool-size".to_owned(), "app.name".to_owned()],
    )
}

fn load_in(dir: &Dir, args: &[&str], env: &[(&str, &str)]) -> Sources {
    let args: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
    let env: BTreeMap<String, String> = env
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
    let command_line = parse_args(&args).unwrap();
    load(
        &schema(),
        command_line,
        &|name| env.get(name).cloned(),
        &dir.path,
    )
    .unwrap()
}

fn value(sources: &Sources, key: &str) -> Option<String> {
    sources.properties.get(key).map(|p| p.value.clone())
}

fn binder_value(sources: &Sources, key: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let fallback = |_: &str| None;
    let defaults = |_: &str| String::new();
    let binder = Binder::new(
        Resolver {
            properties: &sources.properties,
            env,
            fallback: &fallback,
        },
        &defaults,
    );
    binder.setting(key).unwrap().value
}

#[test]
fn relaxed_spellings_are_one_key() {
    let names = Names::default();
    let canonical = names.canonical("app.poolSize");
    for spelling in [
        "app.pool-size",
        "app.pool_size",
        "APP.POOL-SIZE",
        "app.poolsize",
    ] {
        assert_eq!(names.canonical(spelling), canonical, "{spelling}");
    }
}

#[test]
fn map_keys_keep_their_case() {
    let names = Names::new(&["app.labels"]);
    assert_eq!(names.canonical("App.Labels.myZone"), "app.labels.myZone");
    assert!(names.is_map_entry("app.labels.myZone"));
    assert!(!names.is_map_entry("app.labelsx.a"));
    assert!(!names.is_map_entry("app.labels"));
}

#[test]
fn env_names_are_springs_uniform_then_legacy_forms() {
    let names = Names::new(&["app.labels"]);
    assert_eq!(
        names.env_names("app.pool-size"),
        ["APP_POOLSIZE", "APP_POOL_SIZE"]
    );
    assert_eq!(
        names.env_names("app.labels.my-zone"),
        ["APP_LABELS_MY_ZONE"]
    );
}

#[test]
fn command_line_beats_environment_beats_files() {
    let dir = Dir::new();
    dir.write(
        "application.yml",
        "app:\n  pool-size: 1\n  name: file\n  other: x\n",
    );
    let sources = load_in(
        &dir,
        &["--app.poolSize=3"],
        &[("APP_POOL_SIZE", "2"), ("APP_NAME", "env")],
    );
    assert_eq!(value(&sources, "app.pool-size").as_deref(), Some("3"));
    assert_eq!(value(&sources, "app.name").as_deref(), Some("env"));
    assert_eq!(value(&sources, "app.other").as_deref(), Some("x"));
    assert_eq!(sources.read.len(), 3, "{:?}", sources.read);
}

#[test]
fn environment_is_asked_for_map_entries_a_file_names() {
    let dir = Dir::new();
    dir.write("application.properties", "app.labels.zone=a\n");
    let sources = load_in(&dir, &[], &[("APP_LABELS_ZONE", "b")]);
    assert_eq!(value(&sources, "app.labels.zone").as_deref(), Some("b"));
}

#[test]
fn profile_file_and_profile_document_apply_when_active() {
    let dir = Dir::new();
    dir.write(
        "application.yml",
        "app.name: base\n---\nspring.config.activate.on-profile: blue\napp.other: doc\n",
    );
    dir.write("config/application-blue.properties", "app.name=blue\n");
    let plain = load_in(&dir, &[], &[]);
    assert_eq!(value(&plain, "app.name").as_deref(), Some("base"));
    assert_eq!(value(&plain, "app.other"), None);
    let blue = load_in(&dir, &[], &[(ENV_SPRING_PROFILES_ACTIVE, "blue")]);
    assert_eq!(value(&blue, "app.name").as_deref(), Some("blue"));
    assert_eq!(value(&blue, "app.other").as_deref(), Some("doc"));
}

#[test]
fn yaml_lists_become_one_comma_list() {
    let dir = Dir::new();
    dir.write("application.yaml", "app:\n  hosts:\n    - a\n    - b\n");
    let sources = load_in(&dir, &[], &[]);
    assert_eq!(value(&sources, "app.hosts").as_deref(), Some("a,b"));
}

#[test]
fn placeholders_resolve_from_properties_environment_and_defaults() {
    let dir = Dir::new();
    dir.write(
        "application.properties",
        "app.url=http://${app.host:localhost}:${APP_PORT}/${app.name}\napp.name=demo\n",
    );
    let sources = load_in(&dir, &[], &[]);
    let env = |name: &str| (name == "APP_PORT").then(|| "8080".to_owned());
    assert_eq!(
        binder_value(&sources, "app.url", &env),
        "http://localhost:8080/demo"
    );
}

#[test]
fn an_unresolvable_placeholder_names_key_and_source() {
    let dir = Dir::new();
    let sources = load_in(&dir, &["--app.name=${nowhere}"], &[]);
    let fallback = |_: &str| None;
    let defaults = |_: &str| String::new();
    let binder = Binder::new(
        Resolver {
            properties: &sources.properties,
            env: &|_| None,
            fallback: &fallback,
        },
        &defaults,
    );
    let message = binder.setting("app.name").unwrap_err().to_string();
    assert_eq!(
        message,
        "could not resolve placeholder '${nowhere}' in value '${nowhere}' of app.name (command line)"
    );
}

#[test]
fn binder_reads_lists_and_maps() {
    let dir = Dir::new();
    dir.write(
        "application.yml",
        "app:\n  hosts: ' a, ,b '\n  labels:\n    Zone: z1\n    rack: r${app.n:7}\n",
    );
    let sources = load_in(&dir, &[], &[]);
    let fallback = |_: &str| None;
    let defaults = |_: &str| String::new();
    let binder = Binder::new(
        Resolver {
            properties: &sources.properties,
            env: &|_| None,
            fallback: &fallback,
        },
        &defaults,
    );
    assert_eq!(binder.list("app.hosts").unwrap(), ["a", "b"]);
    let labels: Vec<(String, String)> = binder
        .map("app.labels")
        .unwrap()
        .into_iter()
        .map(|(key, setting)| (key, setting.value))
        .collect();
    assert_eq!(
        labels,
        [
            ("Zone".to_owned(), "z1".to_owned()),
            ("rack".to_owned(), "r7".to_owned())
        ]
    );
}

#[test]
fn arguments_are_key_value_pairs_with_two_dashes() {
    let args = ["--a.b=1", "--flag", "--c=x=y"].map(String::from);
    let properties = parse_args(&args).unwrap();
    let pairs: Vec<(&str, &str)> = properties
        .iter()
        .map(|p| (p.name.as_str(), p.value.as_str()))
        .collect();
    assert_eq!(pairs, [("a.b", "1"), ("flag", "true"), ("c", "x=y")]);
    assert_eq!(
        parse_args(&["plain".to_owned()]),
        Err(ArgumentError::NotAnOption("plain".to_owned()))
    );
    assert_eq!(
        parse_args(&["--=1".to_owned()]),
        Err(ArgumentError::MissingName("--=1".to_owned()))
    );
}

#[test]
fn durations_read_a_bare_number_in_the_keys_unit() {
    assert_eq!(
        values::parse_duration("30", DurationUnit::Seconds),
        Some(Duration::from_secs(30))
    );
    assert_eq!(
        values::parse_duration("30", DurationUnit::Millis),
        Some(Duration::from_millis(30))
    );
    assert_eq!(
        values::parse_duration("0", DurationUnit::Seconds),
        Some(Duration::ZERO)
    );
    assert_eq!(
        values::parse_duration("PT1M30S", DurationUnit::Millis),
        Some(Duration::from_secs(90))
    );
    for bad in ["", "-1s", "1.5s", "PT", "10 years"] {
        assert_eq!(
            values::parse_duration(bad, DurationUnit::Millis),
            None,
            "{bad}"
        );
    }
}

#[test]
fn data_sizes_are_binary_multiples() {
    assert_eq!(values::parse_data_size("0"), Some(0));
    assert_eq!(values::parse_data_size("2KB"), Some(2048));
    assert_eq!(values::parse_data_size("99999999999999TB"), None);
}

#[test]
fn booleans_take_springs_spellings() {
    for yes in ["true", "ON", "yes", "1"] {
        assert_eq!(values::parse_bool(yes), Some(true), "{yes}");
    }
    for no in ["false", "off", "No", "0"] {
        assert_eq!(values::parse_bool(no), Some(false), "{no}");
    }
    assert_eq!(values::parse_bool("maybe"), None);
}
