//! The registry has one handle: only the store holds the registry's lock, so every write goes
//! through its one write path and every read through its read, and no other module can take
//! the lock in an order or for a length the store does not control.

use crate::workspace::{
    assert_rule, assert_still_pending, lines_matching, listed, rust_files, Line, Site, Source,
    Tests,
};

const SCOPE: &str = "crates/heureka-server/src";

/// The store: the only owner of the registry.
const STORE: &[&str] = &[
    "crates/heureka-server/src/store.rs",
    "crates/heureka-server/src/store/",
];

/// Files that hold or lock the registry themselves, tolerated while a change moves them onto
/// the store (issue 17 emptied it). Remove a file once it no longer does;
/// `pending_registry_holders_still_offend` insists.
const PENDING_REGISTRY_HOLDERS: &[&str] = &[];

/// Whether `line` holds the registry's mutex or locks it, including a lock rustfmt put on the
/// line after `registry` (`registry` / `.lock()`).
fn touches_the_lock(file: &Source, line: &Line) -> bool {
    let text = line.text.trim();
    let previous = file.lines.get(line.number.wrapping_sub(2));
    let chained_lock = text.starts_with(".lock()")
        && previous.is_some_and(|previous| previous.text.trim_end().ends_with("registry"));
    text.contains("Mutex<Registry>") || text.contains("registry.lock()") || chained_lock
}

/// The registry held or locked outside the store. Test code is not exempt: a test that locks
/// the registry itself can reach states the write path never makes, and tests should exercise
/// the handle production uses.
fn registry_holders() -> Vec<Site> {
    let files = rust_files(SCOPE);
    lines_matching(&files, Tests::Included, |file, line| {
        !listed(&file.path, STORE) && touches_the_lock(file, line)
    })
}

#[test]
fn the_registry_has_one_handle() {
    assert_rule(
        registry_holders(),
        PENDING_REGISTRY_HOLDERS,
        "the registry has one handle (`Mutex<Registry>` and `registry.lock()` appear in the \
         server only in store.rs)",
        "the store's write is the one write path: it books each change and hands it to every \
         sink (replication, events, metrics, caches). A module that locks the registry itself \
         can write around it, or hold the lock across work the store keeps outside it. Use \
         the store's `read` or `write`.",
    );
}

#[test]
fn pending_registry_holders_still_offend() {
    assert_still_pending(
        PENDING_REGISTRY_HOLDERS,
        &registry_holders(),
        "PENDING_REGISTRY_HOLDERS",
    );
}
