//! Reading the workspace with std alone: its Rust files line by line (knowing which lines are
//! test code), the sites where a rule is broken, and the failure message that lists them.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

/// The workspace root: this crate lives in `crates/heureka-tidy`.
pub fn root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.ancestors().nth(2).unwrap().to_path_buf()
}

/// One line of a Rust file.
pub struct Line {
    /// 1-based, as editors and compilers count.
    pub number: usize,
    pub text: String,
    /// In a `tests/` directory, in the test-support crate, in a module declared under
    /// `#[cfg(test)]`, or inside an item marked `#[cfg(test)]`.
    pub in_test: bool,
}

impl Line {
    /// A line that is only a comment: rules look at code, and comments are free to name what
    /// the code must not do.
    pub fn is_comment(&self) -> bool {
        self.text.trim_start().starts_with("//")
    }
}

/// A Rust file, with its path relative to the root (`/`-separated, as the allow-lists write it).
pub struct Source {
    pub path: String,
    pub lines: Vec<Line>,
}

/// Every `.rs` file under `dir` (relative to the root), sorted; none if `dir` does not exist.
/// Build output (`target/`), `node_modules/` and hidden directories are skipped.
pub fn rust_files(dir: &str) -> Vec<Source> {
    let mut paths = Vec::new();
    collect(&root().join(dir), &mut paths);
    paths.sort();
    paths.iter().map(|path| read(&relative(path))).collect()
}

fn collect(dir: &Path, paths: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy();
        if path.is_dir() {
            if !matches!(name.as_ref(), "target" | "node_modules") && !name.starts_with('.') {
                collect(&path, paths);
            }
        } else if name.ends_with(".rs") {
            paths.push(path);
        }
    }
}

fn relative(path: &Path) -> String {
    let relative = path.strip_prefix(root()).unwrap();
    let parts: Vec<_> = relative.iter().map(|part| part.to_string_lossy()).collect();
    parts.join("/")
}

fn read(path: &str) -> Source {
    let text = fs::read_to_string(root().join(path)).unwrap();
    let texts: Vec<&str> = text.lines().collect();
    let whole_file = is_test_file(path);
    let marked = cfg_test_lines(&texts);
    let lines = texts
        .iter()
        .zip(marked)
        .enumerate()
        .map(|(index, (text, marked))| Line {
            number: index + 1,
            text: (*text).to_owned(),
            in_test: whole_file || marked,
        })
        .collect();
    Source {
        path: path.to_owned(),
        lines,
    }
}

/// Whether a whole file is test code: under a crate's `tests/`, in the test-support crate, or
/// a module its parent declares under `#[cfg(test)]` (or whose parent is test code itself).
fn is_test_file(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    if parts.len() > 2
        && parts[0] == "crates"
        && (parts[1] == "heureka-testkit" || parts[2] == "tests")
    {
        return true;
    }
    let (dir, file) = path.rsplit_once('/').unwrap_or(("", path));
    let stem = file.trim_end_matches(".rs");
    if matches!(stem, "lib" | "main" | "build") {
        return false; // a crate root has no parent module
    }
    // `a/b.rs` and `a/b/mod.rs` are both module `b`, declared in `a.rs`, `a/mod.rs` or the
    // crate root beside them.
    let (container, name) = match stem {
        "mod" => dir.rsplit_once('/').unwrap_or(("", dir)),
        _ => (dir, stem),
    };
    let parents = [
        format!("{container}.rs"),
        format!("{container}/mod.rs"),
        format!("{container}/lib.rs"),
        format!("{container}/main.rs"),
    ];
    parents
        .iter()
        .filter(|parent| parent.as_str() != path)
        .any(|parent| {
            let Ok(text) = fs::read_to_string(root().join(parent)) else {
                return false;
            };
            let texts: Vec<&str> = text.lines().collect();
            let declaration = format!("mod {name};");
            let marked = cfg_test_lines(&texts);
            texts.iter().zip(marked).any(|(line, marked)| {
                let line = line.trim();
                let declares = line == declaration || line.ends_with(&format!(" {declaration}"));
                declares && (marked || is_test_file(parent))
            })
        })
}

/// Marks the lines of every item written after a `#[cfg(test)]` attribute: the item runs to
/// the first `}` at its own indentation (rustfmt's layout), or is one line if it ends there.
fn cfg_test_lines(lines: &[&str]) -> Vec<bool> {
    let mut marked = vec![false; lines.len()];
    let mut index = 0;
    while index < lines.len() {
        if lines[index].trim() != "#[cfg(test)]" {
            index += 1;
            continue;
        }
        let mut item = index + 1;
        while item < lines.len() && lines[item].trim_start().starts_with("#[") {
            item += 1;
        }
        let end = item_end(lines, item);
        marked[index..=end].fill(true);
        index = end + 1;
    }
    marked
}

fn item_end(lines: &[&str], start: usize) -> usize {
    let Some(first) = lines.get(start) else {
        return lines.len() - 1;
    };
    if first.trim_end().ends_with([';', ',', '}']) {
        return start;
    }
    let indent = indentation(first);
    (start + 1..lines.len())
        .find(|&end| indentation(lines[end]) == indent && lines[end].trim_start().starts_with('}'))
        .unwrap_or(lines.len() - 1)
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// Whether `path` is on a list of files and directories (entries ending in `/`).
pub fn listed(path: &str, list: &[&str]) -> bool {
    list.iter()
        .any(|entry| path == *entry || (entry.ends_with('/') && path.starts_with(entry)))
}

/// A place in the tree where a rule is broken (or, for a count, where a thing is).
pub struct Site {
    pub path: String,
    pub line: usize,
    pub text: String,
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.path, self.line, self.text.trim())
    }
}

/// The code lines of `files` (comments skipped; test code only if `tests` says so) for which
/// `matches` holds.
pub fn lines_matching(
    files: &[Source],
    tests: Tests,
    matches: impl Fn(&Source, &Line) -> bool,
) -> Vec<Site> {
    let mut sites = Vec::new();
    for file in files {
        for line in &file.lines {
            let wanted = match tests {
                Tests::Included => true,
                Tests::Excluded => !line.in_test,
                Tests::Only => line.in_test,
            };
            if wanted && !line.is_comment() && matches(file, line) {
                sites.push(Site {
                    path: file.path.clone(),
                    line: line.number,
                    text: line.text.clone(),
                });
            }
        }
    }
    sites
}

/// Which lines a rule looks at.
#[derive(Clone, Copy)]
pub enum Tests {
    /// Test code too: the rule binds tests as well.
    Included,
    /// Production code only: the rule is about what ships.
    Excluded,
    /// Test code only: the rule is about how tests are written.
    Only,
}

/// The Rust files under each of `dirs`.
pub fn rust_files_under(dirs: &[&str]) -> Vec<Source> {
    dirs.iter().flat_map(|dir| rust_files(dir)).collect()
}

/// Whether `line` calls `name` as a function: `name(` not preceded by an identifier character
/// (so `sleep(` matches `tokio::time::sleep(` but not `oversleep(`).
pub fn calls(line: &str, name: &str) -> bool {
    let call = format!("{name}(");
    line.match_indices(&call).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// Passes if `sites` is empty; otherwise fails naming the rule, every site, and why the rule
/// holds, so the message alone tells the reader what to do.
pub fn assert_no_sites(sites: &[Site], rule: &str, why: &str) {
    if sites.is_empty() {
        return;
    }
    let list: String = sites.iter().map(|site| format!("  {site}\n")).collect();
    panic!("\nRULE: {rule}\nbroken at:\n{list}WHY: {why}\n");
}

/// A rule's one assertion: fails with every offender not on `pending` (the files, or for
/// crate-wide rules the crates, allowed to break it while the change that fixes them lands).
pub fn assert_rule(offenders: Vec<Site>, pending: &[&str], rule: &str, why: &str) {
    let outside: Vec<Site> = offenders
        .into_iter()
        .filter(|site| !listed(&site.path, pending))
        .collect();
    assert_no_sites(&outside, rule, why);
}

/// Fails if a pending entry (a file allowed to break a rule until it is fixed) no longer
/// breaks it: a fixed file must leave the list, or it could slip back unnoticed.
pub fn assert_still_pending(pending: &[&str], offenders: &[Site], list_name: &str) {
    let stale: Vec<&&str> = pending
        .iter()
        .filter(|entry| !offenders.iter().any(|site| listed(&site.path, &[**entry])))
        .collect();
    assert!(
        stale.is_empty(),
        "\nRULE: {list_name} holds only files that still break its rule\nno longer offending: \
         {stale:?}\nWHY: a fixed file that stays exempt can break the rule again unnoticed; \
         remove it from {list_name}\n"
    );
}
