//! End-to-end tests of the `heureka` binary: the real process over real sockets on 127.0.0.1.
//!
//! `hostile` and `shutdown` run the server as a process (`process`), for what only a process
//! shows: memory, open files, how it exits; `start_together` starts a cluster of processes at
//! the same moment; `cli` runs the subcommands against a server started
//! in-process, as a script would. The HTTP contract itself is `heureka-server`'s tests/it.

mod cli;
mod cli_tls;
mod hostile;
mod logs;
mod persistence;
mod process;
mod rebinding_and_probes;
mod restore_sync;
mod shutdown;
mod start_together;
mod support;
mod tls;
