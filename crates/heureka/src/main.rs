//! The `heureka` binary: reads Spring-style configuration, sets up logging, serves. When the
//! first argument is a subcommand (`heureka apps`, `heureka watch`…) it is the command line of
//! `heureka-cli` instead, against any Eureka server.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Instant;

use heureka_server::config::{self, Config, Loaded};

/// The one line `--help` adds about the command line; the server's own text is unchanged.
/// The line `--help` ends with, listing every subcommand from the CLI's own table so that a
/// new one is never missing.
fn subcommands_help() -> String {
    format!(
        "Subcommands against any Eureka server: heureka {} ... (heureka apps --help, docs/cli.md).",
        heureka_cli::SUBCOMMANDS.join("|")
    )
}

mod logging;

#[cfg(all(feature = "mimalloc", feature = "jemalloc"))]
compile_error!("features `mimalloc` and `jemalloc` both choose the global allocator: pick one");

/// The allocator, when a feature chooses one other than the system's: jemalloc by default
/// (ARCHITECTURE.md, "Dependencies"; `bench/allocators.py` measured the three).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(feature = "jemalloc")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    let started = Instant::now();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args
        .first()
        .is_some_and(|first| heureka_cli::is_subcommand(first))
    {
        return heureka_cli::run(args);
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| ".".into());
    let config = match config::load(&args, &|name| std::env::var(name).ok(), &cwd) {
        Ok(Loaded::Run(config)) => config,
        Ok(Loaded::Help(text)) => {
            println!("{text}");
            println!("{}", subcommands_help());
            return ExitCode::SUCCESS;
        }
        Ok(Loaded::Version(text)) => {
            println!("{text}");
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("heureka: {error}");
            return ExitCode::from(2);
        }
    };
    // Certificates are read before the port is bound: a bad one is a configuration error,
    // never a server answering plain HTTP or failing every handshake.
    let tls = match &config.server.ssl {
        Some(ssl) => {
            match heureka_server::tls::ServerTls::load(ssl, std::time::SystemTime::now()) {
                Ok(tls) => Some(tls),
                Err(error) => {
                    eprintln!("heureka: {error}");
                    return ExitCode::from(2);
                }
            }
        }
        None => None,
    };
    if let Err(error) = heureka_server::tls::check_client(&config) {
        eprintln!("heureka: {error}");
        return ExitCode::from(2);
    }
    // Held to the end of `main`: dropping it writes out the lines still queued, so the last
    // lines of a shutdown are never lost.
    let _flush_logs_on_exit = logging::init(&config);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("heureka: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let reload: heureka_server::ConfigReload = std::sync::Arc::new(move || {
        match config::load(&args, &|name| std::env::var(name).ok(), &cwd) {
            Ok(Loaded::Run(config)) => Some(config),
            _ => None,
        }
    });
    match runtime.block_on(run(config, tls, started, reload)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("heureka: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(
    config: Config,
    tls: Option<heureka_server::tls::ServerTls>,
    started: Instant,
    reload: heureka_server::ConfigReload,
) -> std::io::Result<()> {
    let address = SocketAddr::new(config.server.address, config.server.port);
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|error| {
            std::io::Error::new(error.kind(), format!("cannot listen on {address}: {error}"))
        })?;
    // With port 0 the system picks one; log the address actually bound.
    let address = listener.local_addr().unwrap_or(address);
    let open_files = raise_open_file_limit(config.connections.max_connections);
    // The process's limits; the start-up line itself (auth, peers) is the library's.
    tracing::info!(
        %address,
        open_files,
        max_connections = config.connections.max_connections,
        startup_ms = started.elapsed().as_millis() as u64,
        "listening"
    );
    heureka_server::serve_with_reload(config, listener, tls, shutdown_signal(), Some(reload)).await
}

/// Raises the soft limit on open files to the hard limit, as the JVM does by default
/// (`-XX:+MaxFDLimit`), so that `server.tomcat.max-connections` rather than a default of 1024
/// files is what caps connections. Returns the limit now in force (0 if unknown).
fn raise_open_file_limit(max_connections: usize) -> u64 {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => {
            if limit < max_connections as u64 {
                tracing::warn!(
                    open_files = limit,
                    max_connections,
                    "the open-file limit is below server.tomcat.max-connections: past it, new \
                     connections close the ones that have waited longest for a request"
                );
            }
            limit
        }
        Err(error) => {
            tracing::warn!(%error, "cannot read the open-file limit");
            0
        }
    }
}

/// Completes on Ctrl-C or SIGTERM; then in-flight requests get the grace period to finish.
async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(signal) => signal,
                Err(_) => return ctrl_c.await.unwrap_or(()),
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    ctrl_c.await.unwrap_or(());
    tracing::info!("shutting down");
}
