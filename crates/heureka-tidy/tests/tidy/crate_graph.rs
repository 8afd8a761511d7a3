//! The crate graph is layered: each crate depends only on the crates below it, so the graph is
//! a picture of the design (core at the bottom, the binary at the top), a service embedding the
//! client pulls in no server, and no test builds two copies of a crate.

use std::collections::BTreeSet;
use std::fs;

use crate::workspace::{assert_no_sites, root, Site};

/// The Heureka crates (those under `crates/`) each crate may depend on, normally (build
/// dependencies count as normal: they are linked into the build too). A crate without a row
/// fails the test, so a new crate's place in the layers is decided when it is added.
const LAYERS: &[(&str, &[&str])] = &[
    ("heureka-core", &[]),
    ("heureka-wire", &["heureka-core"]),
    ("heureka-config", &[]),
    // TLS material and rustls configurations: the server serves HTTPS, the client calls it.
    ("heureka-tls", &[]),
    (
        "heureka-server",
        &[
            "heureka-core",
            "heureka-wire",
            "heureka-config",
            "heureka-tls",
        ],
    ),
    (
        "heureka-client",
        &[
            "heureka-core",
            "heureka-wire",
            "heureka-config",
            "heureka-tls",
        ],
    ),
    (
        "heureka-cli",
        &[
            "heureka-core",
            "heureka-wire",
            "heureka-client",
            "heureka-config",
            "heureka-tls",
        ],
    ),
    // The binary: links the server and the CLI into one `heureka`.
    (
        "heureka",
        &[
            "heureka-server",
            "heureka-cli",
            "heureka-config",
            "heureka-core",
        ],
    ),
    ("heureka-tidy", &[]),
];

/// Crates that may depend on anything but only ever as other crates' dev-dependency: shared
/// test support, which must never reach a build that ships.
const TEST_SUPPORT: &[&str] = &["heureka-testkit"];

/// Core's only external dependencies: no I/O, no clock, no async, no serde (ARCHITECTURE.md).
const CORE_EXTERNAL: &[&str] = &["foldhash", "hashbrown"];

/// Edges that break the layers, `(from, to)`, tolerated while a change is under way (issue 17
/// emptied it). Remove an edge once it is gone; `pending_edges_still_exist` insists.
const PENDING_EDGES: &[(&str, &str)] = &[];

/// Dev-dependencies that close a cycle, `(from, to)`, tolerated while a change is under way
/// (issue 17 emptied it: the client's tests start a server, which used to reach the client
/// through the CLI).
const PENDING_DEV_CYCLES: &[(&str, &str)] = &[];

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Normal,
    Dev,
}

struct Dependency {
    name: String,
    kind: Kind,
    line: usize,
}

struct Manifest {
    /// `crates/heureka-core/Cargo.toml`.
    path: String,
    name: String,
    dependencies: Vec<Dependency>,
}

impl Manifest {
    fn normal(&self) -> impl Iterator<Item = &Dependency> {
        self.dependencies
            .iter()
            .filter(|dependency| dependency.kind == Kind::Normal)
    }

    fn site(&self, dependency: &Dependency, what: &str) -> Site {
        Site {
            path: self.path.clone(),
            line: dependency.line,
            text: format!("{} -> {} ({what})", self.name, dependency.name),
        }
    }
}

/// The workspace's members, from the root manifest's `members` (a `dir/*` entry is every
/// directory under `dir` with a `Cargo.toml`).
fn members() -> Vec<Manifest> {
    let text = fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let start = text
        .find("members = [")
        .expect("the root manifest lists its members");
    let list = &text[start + "members = [".len()..];
    let list = &list[..list.find(']').unwrap()];
    let list: Vec<&str> = list
        .lines()
        .map(|line| line.split('#').next().unwrap())
        .collect();
    let mut dirs = Vec::new();
    for entry in list
        .concat()
        .split(',')
        .map(|entry| entry.trim().trim_matches('"'))
    {
        match entry.strip_suffix("/*") {
            Some(parent) => {
                for child in fs::read_dir(root().join(parent)).unwrap() {
                    let child = child.unwrap().file_name().to_string_lossy().into_owned();
                    dirs.push(format!("{parent}/{child}"));
                }
            }
            None if !entry.is_empty() => dirs.push(entry.to_owned()),
            None => {}
        }
    }
    dirs.sort();
    dirs.iter()
        .filter(|dir| root().join(dir).join("Cargo.toml").is_file())
        .map(|dir| read_manifest(&format!("{dir}/Cargo.toml")))
        .collect()
}

/// Reads a package's name and dependencies, line by line: a dependency is a key in a
/// `[dependencies]`, `[dev-dependencies]` or `[build-dependencies]` table (target-specific
/// ones too) or a `[dependencies.NAME]` table; its package is its `package = "..."` if it
/// renames one. Inline tables are one line, as TOML 1.0 requires.
fn read_manifest(path: &str) -> Manifest {
    let text = fs::read_to_string(root().join(path)).unwrap();
    let mut manifest = Manifest {
        path: path.to_owned(),
        name: String::new(),
        dependencies: Vec::new(),
    };
    let mut table = String::new();
    for (index, line) in text.lines().enumerate() {
        // A comment is no key (and `#` appears in no value these manifests use).
        let line = line.split('#').next().unwrap().trim();
        if line.starts_with('[') {
            table = line.trim_matches(['[', ']']).to_owned();
            if let Some((kind, name)) = dependency_table(&table) {
                manifest.dependencies.push(Dependency {
                    name: name.to_owned(),
                    kind,
                    line: index + 1,
                });
            }
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim().trim_matches('"');
        let value = value.trim();
        if table == "package" && key == "name" {
            manifest.name = value.trim_matches('"').to_owned();
        } else if let Some(kind) = dependency_kind(&table) {
            // `name.workspace = true` is the dependency `name`.
            let name = key.split('.').next().unwrap();
            manifest.dependencies.push(Dependency {
                name: package_of(value).unwrap_or(name).to_owned(),
                kind,
                line: index + 1,
            });
        } else if key == "package" && dependency_table(&table).is_some() {
            let renamed = manifest.dependencies.last_mut().unwrap();
            renamed.name = value.trim_matches('"').to_owned();
        }
    }
    manifest
}

/// The kind of dependency a table lists, if it lists dependencies.
fn dependency_kind(table: &str) -> Option<Kind> {
    let last = table.rsplit('.').next().unwrap();
    match last {
        "dependencies" | "build-dependencies" => Some(Kind::Normal),
        "dev-dependencies" => Some(Kind::Dev),
        _ => None,
    }
}

/// `[dependencies.NAME]` (or dev-, build-): one dependency written as a table.
fn dependency_table(table: &str) -> Option<(Kind, &str)> {
    let (head, name) = table.rsplit_once('.')?;
    Some((dependency_kind(head)?, name.trim_matches('"')))
}

/// The `package = "..."` of an inline table, for a dependency under another name.
fn package_of(value: &str) -> Option<&str> {
    let after = &value[value.find("package")? + "package".len()..];
    let after = after
        .trim_start()
        .strip_prefix('=')?
        .trim_start()
        .strip_prefix('"')?;
    Some(&after[..after.find('"')?])
}

/// The members under `crates/`: the crates the layers are about.
fn heureka_crates(members: &[Manifest]) -> BTreeSet<String> {
    members
        .iter()
        .filter(|member| member.path.starts_with("crates/"))
        .map(|member| member.name.clone())
        .collect()
}

#[test]
fn crates_depend_only_on_the_layers_below() {
    let members = members();
    let crates = heureka_crates(&members);
    let mut sites = Vec::new();
    for member in members
        .iter()
        .filter(|member| member.path.starts_with("crates/"))
    {
        if TEST_SUPPORT.contains(&member.name.as_str()) {
            continue;
        }
        let Some((_, allowed)) = LAYERS.iter().find(|(name, _)| *name == member.name) else {
            sites.push(Site {
                path: member.path.clone(),
                line: 1,
                text: format!("{} has no row in LAYERS", member.name),
            });
            continue;
        };
        for dependency in member
            .normal()
            .filter(|dependency| crates.contains(&dependency.name))
        {
            let pending = PENDING_EDGES.contains(&(member.name.as_str(), dependency.name.as_str()));
            if !allowed.contains(&dependency.name.as_str()) && !pending {
                sites.push(member.site(dependency, "not in its row of LAYERS"));
            }
        }
    }
    assert_no_sites(
        &sites,
        "the crate graph is layered (each crate depends only on the crates its row of LAYERS \
         names: core and config on none, wire on core, server and client on core, wire and \
         config, the CLI also on the client, the binary on server, CLI, config and core)",
        "the layers keep what ships small and each rule in one place: the server must not link \
         the CLI or the client, a client user must not link the server, and core stays free of \
         I/O. Move the code that needs the upper crate up, or give the new crate its row.",
    );
}

#[test]
fn core_depends_only_on_its_hash_map_crates() {
    let members = members();
    let core = members
        .iter()
        .find(|member| member.name == "heureka-core")
        .unwrap();
    let sites: Vec<Site> = core
        .normal()
        .filter(|dependency| !CORE_EXTERNAL.contains(&dependency.name.as_str()))
        .map(|dependency| {
            core.site(
                dependency,
                "core's only dependencies are foldhash and hashbrown",
            )
        })
        .collect();
    assert_no_sites(
        &sites,
        "core depends on foldhash and hashbrown only (normal dependencies)",
        "core is the registry's rules and nothing else: no I/O, no clock, no async, no serde, \
         so every rule is tested with `now` passed in and every other crate can build on it. \
         Put the code that needs the dependency in the crate that does that work.",
    );
}

#[test]
fn test_support_is_only_a_dev_dependency() {
    let members = members();
    let sites: Vec<Site> = members
        .iter()
        .flat_map(|member| {
            member
                .normal()
                .filter(|dependency| TEST_SUPPORT.contains(&dependency.name.as_str()))
                .map(|dependency| member.site(dependency, "a normal dependency on test support"))
        })
        .collect();
    assert_no_sites(
        &sites,
        "test support (heureka-testkit) is only ever a dev-dependency",
        "test helpers start servers, poll and make temp dirs; none of that may ship in a \
         binary or a library a service embeds. Move it under [dev-dependencies].",
    );
}

/// Every dev-dependency edge `(member, dependency)` whose dependency reaches the member back
/// through normal dependencies: cargo then builds the member twice (the one under test and the
/// one the dependency links), and types from the two copies do not match.
fn dev_cycles(members: &[Manifest]) -> Vec<(String, String, Site)> {
    let reaches = |from: &str, target: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_owned()];
        while let Some(name) = stack.pop() {
            if name == target {
                return true;
            }
            if !seen.insert(name.clone()) {
                continue;
            }
            if let Some(member) = members.iter().find(|member| member.name == name) {
                stack.extend(member.normal().map(|dependency| dependency.name.clone()));
            }
        }
        false
    };
    let mut cycles = Vec::new();
    for member in members {
        for dependency in member.dependencies.iter().filter(|d| d.kind == Kind::Dev) {
            if reaches(&dependency.name, &member.name) {
                let site = member.site(dependency, "a dev-dependency that depends back on it");
                cycles.push((member.name.clone(), dependency.name.clone(), site));
            }
        }
    }
    cycles
}

#[test]
fn dev_dependencies_close_no_cycle() {
    let sites: Vec<Site> = dev_cycles(&members())
        .into_iter()
        .filter(|(from, to, _)| !PENDING_DEV_CYCLES.contains(&(from.as_str(), to.as_str())))
        .map(|(_, _, site)| site)
        .collect();
    assert_no_sites(
        &sites,
        "dev-dependencies close no cycle (no crate dev-depends on a crate that depends on it, \
         directly or through others)",
        "cargo builds the crate twice, the copy under test and the copy its dev-dependency \
         links, so tests compile twice as much and a value of one copy's type is not the \
         other's. Put the shared test support in heureka-testkit, which depends on the crates \
         below it and on nothing that depends on the crate under test.",
    );
}

#[test]
fn pending_edges_still_exist() {
    let members = members();
    let stale: Vec<&(&str, &str)> = PENDING_EDGES
        .iter()
        .filter(|(from, to)| {
            let member = members.iter().find(|member| member.name == *from);
            !member.is_some_and(|member| member.normal().any(|dependency| dependency.name == *to))
        })
        .collect();
    assert!(
        stale.is_empty(),
        "\nRULE: PENDING_EDGES holds only edges that still exist\nno longer there: {stale:?}\n\
         WHY: an edge that stays exempt after it is removed can come back unnoticed; remove it \
         from PENDING_EDGES\n"
    );
}

#[test]
fn pending_dev_cycles_still_exist() {
    let cycles = dev_cycles(&members());
    let stale: Vec<&(&str, &str)> = PENDING_DEV_CYCLES
        .iter()
        .filter(|(from, to)| !cycles.iter().any(|(f, t, _)| f == from && t == to))
        .collect();
    assert!(
        stale.is_empty(),
        "\nRULE: PENDING_DEV_CYCLES holds only cycles that still exist\nno longer there: \
         {stale:?}\nWHY: a cycle that stays exempt after it is broken can close again \
         unnoticed; remove it from PENDING_DEV_CYCLES\n"
    );
}
