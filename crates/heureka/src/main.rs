//! The `heureka` binary: reads Spring-style configuration, sets up logging, serves. When the
//! first argument is a subcommand (`heureka apps`, `heureka watch`…) it is the command line of
//! `heureka-cli` instead, against any Eureka server.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Instant;

use heureka_server::config::{self, Config, Loaded};
use tracing_subscriber::EnvFilter;

/// The one line `--help` adds about the command line; the server's own text is unchanged.
const SUBCOMMANDS_HELP: &str =
    "Subcommands against any Eureka server: heureka apps|app|instance|status|metadata|\
deregister|watch|sidecar ... (heureka apps --help, docs/cli.md).";

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
            println!("{SUBCOMMANDS_HELP}");
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
    // Held to the end of `main`: dropping it writes out the lines still queued, so the last
    // lines of a shutdown are never lost.
    let _flush_logs_on_exit = init_logging(&config);
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
    let reload: heureka_server::ConfigReload =
        Box::new(
            move || match config::load(&args, &|name| std::env::var(name).ok(), &cwd) {
                Ok(Loaded::Run(config)) => Some(config),
                _ => None,
            },
        );
    match runtime.block_on(run(config, started, reload)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("heureka: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(
    config: Config,
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
    heureka_server::serve_with_reload(config, listener, shutdown_signal(), Some(reload)).await
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

/// `logging.level.root` sets the default; `logging.level.<target>` refines one target.
/// `RUST_LOG`, when set, wins, as it does for every Rust program.
///
/// Lines go to stdout through a queue and a thread of their own (`tracing-appender`), so a
/// request never waits on a `write` to a pipe or a file: Eureka logs every registration at
/// INFO, and writing that line unbuffered on the request's thread was about a tenth of a
/// registration's cost. The writer thread batches whatever queued up into one write. The
/// queue is not lossy: when it is full (a stalled reader of stdout), logging waits, as a plain
/// `write` would, rather than drop lines or grow without bound.
fn init_logging(config: &Config) -> tracing_appender::non_blocking::WorkerGuard {
    let mut directives = vec!["info".to_owned()];
    for (target, level) in &config.logging_levels {
        let level = level.to_ascii_lowercase();
        if target.eq_ignore_ascii_case("root") {
            directives[0] = level;
        } else {
            let target = match target.as_str() {
                "heureka" => "heureka_server".to_owned(),
                other => other.replace('.', "::"),
            };
            directives.push(format!("{target}={level}"));
        }
    }
    let filter = std::env::var("RUST_LOG")
        .ok()
        .and_then(|value| EnvFilter::try_new(value).ok())
        .unwrap_or_else(|| EnvFilter::new(directives.join(",")));
    let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .lossy(false)
        .buffered_lines_limit(LOG_QUEUE_LINES)
        .thread_name("heureka-log")
        .finish(std::io::BufWriter::with_capacity(
            LOG_BUFFER_BYTES,
            std::io::stdout(),
        ));
    // Colour codes only on a terminal: redirected logs stay plain text.
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(std::io::stdout().is_terminal())
        .with_writer(writer)
        .init();
    guard
}

/// How much the log thread gathers into one write; it also writes whenever its queue runs dry,
/// so a quiet server's lines appear at once.
const LOG_BUFFER_BYTES: usize = 64 * 1024;

/// How many lines may wait for the log thread before a logging request waits for it (nothing is
/// dropped). The queue's slots are allocated up front: tracing-appender's default of 128,000
/// lines cost about 4 MiB of an idle server's memory; a burst of registrations fills 8,192 in
/// a fraction of a second only if the terminal cannot keep up anyway.
const LOG_QUEUE_LINES: usize = 8_192;
