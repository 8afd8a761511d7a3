//! What the replication tests share: a configuration made from command-line arguments alone.

use crate::config::{self, Config, Loaded};

/// The configuration `args` make, with no configuration file (the directory searched for
/// them does not exist).
pub(super) fn config(args: &[&str]) -> Config {
    let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
    let dir = std::env::temp_dir().join("heureka-replication-tests-no-config-here");
    match config::load(&args, &|_| None, &dir).expect("config loads") {
        Loaded::Run(config) => config,
        _ => panic!("expected a runnable config"),
    }
}
