//! Records the commit the binary is built from, for `/actuator/info`: `HEUREKA_GIT_SHA` when
//! the build environment sets it (a container build without `.git`), else `git rev-parse`.
//! Without either, info simply has no `git` section.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=HEUREKA_GIT_SHA");
    let from_env = std::env::var("HEUREKA_GIT_SHA")
        .ok()
        .filter(|sha| !sha.trim().is_empty());
    let sha = from_env.or_else(|| git(&["rev-parse", "--short=12", "HEAD"]));
    if let Some(sha) = sha {
        println!("cargo:rustc-env=HEUREKA_GIT_SHA={}", sha.trim());
    }
    // A new commit moves HEAD's reflog; rebuild then so the sha stays true.
    if let Some(reflog) = git(&["rev-parse", "--git-path", "logs/HEAD"]) {
        println!("cargo:rerun-if-changed={}", reflog.trim());
    }
}

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}
