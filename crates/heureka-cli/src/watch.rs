//! `heureka watch`: registry changes as they happen, one line each. Heureka has an event
//! stream (`GET {base}/events`, docs/events.md), which is used when present; a server without
//! one (the Java server answers 404) is polled for `apps/delta` instead, as its own clients
//! do. Both paths print the same [`Change`](change::Change)s, so a script does not care which
//! it got.

mod change;
mod poll;
mod sse;

use crate::args::WatchArgs;
use crate::error::CliError;
use crate::eureka::Eureka;
use change::Printer;

pub(crate) async fn run(eureka: &Eureka, args: &WatchArgs, json: bool) -> Result<(), CliError> {
    let mut printer = Printer {
        json,
        left: args.count,
    };
    let app = args.app.as_deref().map(str::to_uppercase);
    if !args.poll {
        match sse::watch(eureka, app.as_deref(), &mut printer).await? {
            sse::Outcome::Done => return Ok(()),
            sse::Outcome::NoStream(url) => {
                eprintln!("heureka: no event stream at {url}: polling apps/delta instead");
            }
        }
    }
    poll::watch(eureka, app.as_deref(), args.interval, &mut printer).await
}
