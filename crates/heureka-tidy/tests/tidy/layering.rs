//! Every crate's files stand in layers: no file imports, directly or through others, a file
//! that imports it back. A circle of imports is a set of files that can only be read, changed
//! and tested together; a layered crate can be read from the bottom up.
//!
//! An arrow runs from a file to every module it declares (`mod x;`, so a parent stands above
//! its children) and to the file of every module a `crate::`, `super::` or `self::` path in
//! its production code reaches (the deepest module of the path that is a file: `crate::a::B`
//! where `a` is a file points at `a`). Test code (`tests/`, `#[cfg(test)]` items and the
//! modules they declare) is left out: a test may import what it checks from anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use crate::workspace::{assert_rule, assert_still_pending, root, rust_files, Site, Source};

/// Crates whose files are not yet layered, tolerated while the refactor that layers them is
/// under way. Remove a crate once its files have no circle; `pending_circles_still_exist`
/// insists.
const PENDING_CRATES: &[&str] = &[];

/// A crate's production files by module path (`["a", "b"]` for `a/b.rs` or `a/b/mod.rs`).
struct Crate {
    name: String,
    files: BTreeMap<Vec<String>, Source>,
}

/// Every crate under `crates/` with its production files.
fn crates() -> Vec<Crate> {
    let mut names: Vec<String> = fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let src = format!("crates/{name}/src");
            let files = rust_files(&src)
                .into_iter()
                .filter(|file| !file.lines.iter().all(|line| line.in_test))
                .filter_map(|file| Some((module_path(&file.path, &src)?, file)))
                .collect();
            Crate { name, files }
        })
        .collect()
}

/// `src/lib.rs` is the root; `src/a.rs` and `src/a/mod.rs` are `a`; `src/a/b.rs` is `a::b`.
/// Files outside the module tree (`src/bin/`) have none.
fn module_path(path: &str, src: &str) -> Option<Vec<String>> {
    let inner = path.strip_prefix(src)?.trim_start_matches('/');
    if inner.starts_with("bin/") {
        return None;
    }
    let mut parts: Vec<String> = inner
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_owned)
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("lib" | "main" | "mod")
    ) {
        parts.pop();
    }
    Some(parts)
}

/// The production code of a file as one string, comments and test lines blanked out, so a
/// `use` spread over several lines reads as one statement.
fn code(file: &Source) -> String {
    file.lines
        .iter()
        .map(|line| {
            if line.in_test {
                return String::new();
            }
            let text = line.text.as_str();
            let text = text.split("//").next().unwrap_or(text);
            text.to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths a file names: each `use` statement's tree expanded into whole paths, and every
/// `crate::`/`super::`/`self::` path written inline.
fn named_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    for statement in use_statements(code) {
        expand(&statement, &mut Vec::new(), &mut paths);
    }
    paths.extend(inline_paths(code));
    paths
}

/// The bodies of `use` statements (`use a::{b, c::d};` gives `a::{b, c::d}`), white space
/// folded.
fn use_statements(code: &str) -> Vec<String> {
    let mut statements = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before = rest[..at].chars().last();
        let after_start = &rest[at + 4..];
        rest = after_start;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let Some(end) = after_start.find(';') else {
            break;
        };
        let body = after_start[..end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        statements.push(body);
        rest = &after_start[end..];
    }
    statements
}

/// Expands a use tree (`a::{b,c::{d,e}}`) into its leaf paths, after `prefix`.
fn expand(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let tree = tree.trim().trim_matches(',').trim();
    if tree.is_empty() {
        return;
    }
    match tree.find('{') {
        Some(open) if tree.ends_with('}') => {
            let head = &tree[..open];
            let depth = prefix.len();
            prefix.extend(segments(head));
            for branch in split_top_level(&tree[open + 1..tree.len() - 1]) {
                expand(branch, prefix, out);
            }
            prefix.truncate(depth);
        }
        _ => {
            let leaf = tree.split(" as ").next().unwrap_or(tree);
            let mut path = prefix.clone();
            path.extend(segments(leaf));
            out.push(path);
        }
    }
}

/// The `::`-separated segments of a path, without empty ones.
fn segments(path: &str) -> impl Iterator<Item = String> + '_ {
    path.split("::")
        .map(str::trim)
        .filter(|segment| !segment.is_empty())
        .map(str::to_owned)
}

/// The comma-separated branches of a brace group, braces nested inside kept whole.
fn split_top_level(group: &str) -> Vec<&str> {
    let mut branches = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (index, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                branches.push(&group[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    branches.push(&group[start..]);
    branches
}

/// `crate::a::b`, `super::super::x`, `self::y` written in code outside `use` statements.
fn inline_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    for start in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(start) {
            let begin = from + at;
            from = begin + start.len();
            let before = code[..begin].chars().last();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let path: String = code[begin..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            // `crate::{a, b}` opens a use tree, which `use_statements` reads whole.
            if !path.ends_with("::") {
                paths.push(segments(&path).collect());
            }
        }
    }
    paths
}

/// The modules `mod x;` declares in a file's production code.
fn declared_modules(code: &str) -> Vec<String> {
    code.lines()
        .filter_map(|line| {
            let line = line.trim();
            let line = line.strip_prefix("pub(crate) ").unwrap_or(line);
            let line = line.strip_prefix("pub ").unwrap_or(line);
            let name = line.strip_prefix("mod ")?.strip_suffix(';')?;
            Some(name.to_owned())
        })
        .collect()
}

/// Where a path starts: `crate`, `super`, `self`, or (2018 paths) a child module of `here`.
/// `None` for paths into other crates or the standard library.
fn start(path: &[String], here: &[String], krate: &Crate) -> Option<(Vec<String>, usize)> {
    let mut module = here.to_vec();
    let mut used = 0;
    for segment in path {
        match segment.as_str() {
            "crate" if used == 0 => module.clear(),
            "super" => {
                module.pop()?;
            }
            "self" => {}
            _ => break,
        }
        used += 1;
    }
    if used == 0 {
        let mut child = here.to_vec();
        child.push(path.first()?.clone());
        if !krate.files.contains_key(&child) {
            return None;
        }
    }
    Some((module, used))
}

/// The file a path reaches from module `here`: its deepest module that is a file of the crate.
/// A name taken through a re-export (`crate::Name` where `lib.rs` re-exports it) reaches the
/// file that re-exports it: the importer depends on that file's list of names. `None` for
/// paths into other crates or the standard library.
fn target(path: &[String], here: &[String], krate: &Crate) -> Option<Vec<String>> {
    let (mut module, used) = start(path, here, krate)?;
    for segment in &path[used..] {
        let mut deeper = module.clone();
        deeper.push(segment.clone());
        if !krate.files.contains_key(&deeper) {
            break;
        }
        module = deeper;
    }
    Some(module)
}

/// The arrows between a crate's files: file -> (file it imports -> a name that ties them).
fn arrows(krate: &Crate) -> BTreeMap<Vec<String>, BTreeMap<Vec<String>, String>> {
    let mut arrows: BTreeMap<_, BTreeMap<_, _>> = BTreeMap::new();
    for (here, file) in &krate.files {
        let code = code(file);
        let out = arrows.entry(here.clone()).or_default();
        for child in declared_modules(&code) {
            let mut module = here.clone();
            module.push(child.clone());
            if krate.files.contains_key(&module) {
                out.insert(module, format!("mod {child}"));
            }
        }
        for path in named_paths(&code) {
            if let Some(there) = target(&path, here, krate) {
                if &there != here {
                    out.entry(there).or_insert_with(|| path.join("::"));
                }
            }
        }
    }
    arrows
}

/// The circles of a crate: its strongly connected sets of more than one file (Tarjan's
/// algorithm, written iteratively over the small graphs a crate makes).
fn circles(arrows: &BTreeMap<Vec<String>, BTreeMap<Vec<String>, String>>) -> Vec<Vec<Vec<String>>> {
    let nodes: Vec<&Vec<String>> = arrows.keys().collect();
    let index_of: BTreeMap<&Vec<String>, usize> =
        nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let next: Vec<Vec<usize>> = nodes
        .iter()
        .map(|n| {
            arrows[*n]
                .keys()
                .filter_map(|t| index_of.get(t).copied())
                .collect()
        })
        .collect();
    let mut tarjan = Tarjan {
        next: &next,
        index: vec![None; nodes.len()],
        low: vec![0; nodes.len()],
        on_stack: vec![false; nodes.len()],
        stack: Vec::new(),
        counter: 0,
        found: Vec::new(),
    };
    for node in 0..nodes.len() {
        if tarjan.index[node].is_none() {
            tarjan.visit(node);
        }
    }
    tarjan
        .found
        .into_iter()
        .filter(|set| set.len() > 1)
        .map(|set| set.into_iter().map(|i| nodes[i].clone()).collect())
        .collect()
}

struct Tarjan<'a> {
    next: &'a [Vec<usize>],
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    counter: usize,
    found: Vec<Vec<usize>>,
}

impl Tarjan<'_> {
    fn visit(&mut self, start: usize) {
        // (node, position in its arrow list): an explicit stack instead of recursion.
        let mut work = vec![(start, 0)];
        self.open(start);
        while let Some(&mut (node, ref mut position)) = work.last_mut() {
            if let Some(&to) = self.next[node].get(*position) {
                *position += 1;
                match self.index[to] {
                    None => {
                        self.open(to);
                        work.push((to, 0));
                    }
                    Some(to_index) if self.on_stack[to] => {
                        self.low[node] = self.low[node].min(to_index);
                    }
                    Some(_) => {}
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                self.low[parent] = self.low[parent].min(self.low[node]);
            }
            if Some(self.low[node]) == self.index[node] {
                let mut set = Vec::new();
                while let Some(member) = self.stack.pop() {
                    self.on_stack[member] = false;
                    set.push(member);
                    if member == node {
                        break;
                    }
                }
                self.found.push(set);
            }
        }
    }

    fn open(&mut self, node: usize) {
        self.index[node] = Some(self.counter);
        self.low[node] = self.counter;
        self.counter += 1;
        self.stack.push(node);
        self.on_stack[node] = true;
    }
}

/// One site per arrow inside a circle, named by the crate and the files it ties.
fn circle_sites() -> Vec<Site> {
    let mut sites = Vec::new();
    for krate in crates() {
        let arrows = arrows(&krate);
        for circle in circles(&arrows) {
            let members: BTreeSet<&Vec<String>> = circle.iter().collect();
            for from in &circle {
                for (to, name) in &arrows[from] {
                    if members.contains(to) {
                        sites.push(Site {
                            path: format!("crates/{}", krate.name),
                            line: 0,
                            text: format!(
                                "{} -> {} ({name})",
                                krate.files[from].path, krate.files[to].path
                            ),
                        });
                    }
                }
            }
        }
    }
    sites
}

#[test]
fn every_crate_stands_in_layers() {
    assert_rule(
        circle_sites(),
        PENDING_CRATES,
        "no import circle among a crate's files",
        "a file that imports, through others, a file that imports it back cannot be read, \
         changed or tested without the whole circle. Move what both sides need into a file \
         below them (for a type a parent module defines and its children use, a leaf file the \
         parent re-exports).",
    );
}

#[test]
fn pending_circles_still_exist() {
    assert_still_pending(PENDING_CRATES, &circle_sites(), "PENDING_CRATES");
}
