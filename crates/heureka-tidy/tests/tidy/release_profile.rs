//! Release builds read the committed profile of a trained server (`pgo/README.md`): cargo runs
//! every compilation through `pgo/rustc-wrapper`, which adds `-Cprofile-use` to the optimised
//! ones only. These run the wrapper around `echo`, which prints the command line it was given.

use std::fs;
use std::process::Command;

use crate::workspace::root;

/// The arguments the wrapper hands on when cargo asks it to run `echo` with `args`.
fn passed_on(args: &[&str]) -> String {
    let wrapper = root().join("pgo/rustc-wrapper");
    let output = Command::new(&wrapper)
        .arg("echo")
        .args(args)
        .output()
        .unwrap_or_else(|error| panic!("cannot run {}: {error}", wrapper.display()));
    assert!(output.status.success(), "{wrapper:?} failed: {output:?}");
    String::from_utf8(output.stdout)
        .unwrap()
        .trim_end()
        .to_owned()
}

fn profile_flag() -> String {
    format!(
        "-Cprofile-use={}",
        root().join("pgo/heureka.profdata").display()
    )
}

#[test]
fn cargo_runs_every_compilation_through_the_wrapper() {
    let config = fs::read_to_string(root().join(".cargo/config.toml")).unwrap();
    assert!(
        config
            .lines()
            .any(|line| line.trim() == r#"rustc-wrapper = "pgo/rustc-wrapper""#),
        ".cargo/config.toml must name pgo/rustc-wrapper as cargo's rustc wrapper, or release \
         builds lose the profile without a word"
    );
}

#[test]
fn the_profile_is_committed() {
    let profile = root().join("pgo/heureka.profdata");
    let size = fs::metadata(&profile).map(|meta| meta.len()).unwrap_or(0);
    assert!(
        size > 0,
        "{} is missing or empty: every release build reads it (pgo/train.sh makes it)",
        profile.display()
    );
}

#[test]
fn an_optimised_compilation_reads_the_profile() {
    let line = passed_on(&["--crate-name", "hyper", "-C", "opt-level=3"]);
    assert_eq!(
        line,
        format!("--crate-name hyper -C opt-level=3 {}", profile_flag())
    );
}

#[test]
fn a_debug_compilation_passes_through_unchanged() {
    let line = passed_on(&["--crate-name", "hyper", "-C", "opt-level=0"]);
    assert_eq!(line, "--crate-name hyper -C opt-level=0");
}

#[test]
fn a_question_to_rustc_passes_through_unchanged() {
    assert_eq!(passed_on(&["-vV"]), "-vV");
}

#[test]
fn an_instrumented_compilation_keeps_its_own_flags() {
    for flag in [
        "-Cprofile-generate=/tmp/counts",
        "-Cpasses=sancov-module",
        "-Cinstrument-coverage",
        "-Cprofile-use=/elsewhere.profdata",
    ] {
        let line = passed_on(&["-C", "opt-level=3", flag]);
        assert_eq!(line, format!("-C opt-level=3 {flag}"));
    }
}
