//! Every source file says what it is: its first line is a `//!` comment, so a reader who opens
//! any file (or skims `head -1` of a directory) learns its purpose before its code.

use crate::workspace::{assert_rule, assert_still_pending, rust_files, Site};

/// Files without their `//!` line today. Remove a file once it has one;
/// `pending_undocumented_files_still_lack_their_line` insists.
const PENDING_UNDOCUMENTED: &[&str] = &[];

/// Every `.rs` file in the repository (crates, tests, examples, build scripts, bench, fuzz
/// targets) whose very first line is not `//!`. Line one, not the first after blank lines or
/// attributes: rustfmt keeps it there, and it is the line a listing shows.
fn undocumented() -> Vec<Site> {
    rust_files("")
        .into_iter()
        .filter(|file| {
            !file
                .lines
                .first()
                .is_some_and(|line| line.text.starts_with("//!"))
        })
        .map(|file| Site {
            path: file.path,
            line: 1,
            text: "(no `//!` line)".to_owned(),
        })
        .collect()
}

#[test]
fn every_source_file_says_what_it_is() {
    assert_rule(
        undocumented(),
        PENDING_UNDOCUMENTED,
        "every source file says what it is (its first line is a `//!` comment)",
        "the map (ARCHITECTURE.md) names files, and a reader arriving at one learns what it is \
         for from its first line; write one or two sentences on what the file holds and why.",
    );
}

#[test]
fn pending_undocumented_files_still_lack_their_line() {
    assert_still_pending(
        PENDING_UNDOCUMENTED,
        &undocumented(),
        "PENDING_UNDOCUMENTED",
    );
}
