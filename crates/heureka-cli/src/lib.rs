//! The `heureka` binary's subcommands: read and operate the registry of any Eureka server
//! (Heureka or Netflix/Spring Cloud Eureka) over its REST API, in either wire format.
//!
//! `heureka apps`, `app NAME`, `instance ID`, `status set|clear`, `metadata set`, `deregister`,
//! `drain`, `regions`, `watch` and `sidecar` (docs/cli.md). The server binary calls [`run`] when its first argument is one of
//! [`SUBCOMMANDS`]; anything else starts the server as before.
//!
//! Output is an aligned table (or a key/value listing) for people and, with `--json`, Eureka's
//! own JSON documents (or one JSON object per line for `watch`) for scripts. The exit code says
//! what happened (see [`error::CliError::exit_code`]).

mod args;
mod commands;
mod drain;
mod error;
mod eureka;
mod regions;
mod render;
mod sidecar;
mod target;
mod tls;
mod watch;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;

pub use error::CliError;

/// The first arguments that select the command line rather than the server.
pub const SUBCOMMANDS: [&str; 10] = [
    "apps",
    "app",
    "instance",
    "status",
    "metadata",
    "deregister",
    "drain",
    "regions",
    "watch",
    "sidecar",
];

/// Whether `heureka FIRST …` is a subcommand (rather than the server's `--key=value` flags).
pub fn is_subcommand(first: &str) -> bool {
    SUBCOMMANDS.contains(&first)
}

/// Runs one subcommand. `args` are the arguments after the program name, the subcommand first;
/// the environment supplies the server URL and credentials when the flags do not.
pub fn run(args: Vec<String>) -> ExitCode {
    // The sidecar's Spring keys (`--eureka.instance.x=y`) are not clap flags: take them out.
    let (spring, args): (Vec<String>, Vec<String>) = if args.first().is_some_and(|a| a == "sidecar")
    {
        args.into_iter()
            .partition(|arg| sidecar::is_spring_key(arg))
    } else {
        (Vec::new(), args)
    };
    let cli = match args::Cli::try_parse_from(std::iter::once("heureka".to_owned()).chain(args)) {
        Ok(mut cli) => {
            if let args::Command::Sidecar(sidecar) = &mut cli.command {
                sidecar.spring = spring;
                init_sidecar_logging();
            }
            cli
        }
        Err(error) => {
            // `--help` lands here too, with exit code 0; a real usage error gets 2.
            let _ = error.print();
            return ExitCode::from(error.exit_code() as u8);
        }
    };
    let env = |name: &str| std::env::var(name).ok();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return fail(CliError::Unreachable(format!("no async runtime: {error}"))),
    };
    match runtime.block_on(commands::run(cli, &env)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => fail(error),
    }
}

/// The sidecar runs for a long time: its registrations, health changes and failures go to
/// stderr (`RUST_LOG` refines, as for the server).
fn init_sidecar_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .init();
}

fn fail(error: CliError) -> ExitCode {
    eprintln!("heureka: {error}");
    ExitCode::from(error.exit_code())
}
