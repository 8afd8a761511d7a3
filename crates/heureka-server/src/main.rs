//! The `heureka` binary.
fn main() {}
