//! `heureka watch`: registry changes as they happen, one line each. Heureka pushes them
//! (`GET {base}/push`, docs/push.md), which is followed when present; else its event stream
//! (`GET {base}/events`, docs/events.md); a server with neither (the Java server answers 404)
//! is polled for `apps/delta` instead, as its own clients do. Every path prints the same
//! [`Change`](change::Change)s, so a script does not care which it got.

mod change;
mod copy;
mod poll;
mod push;
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
        match push::watch(eureka, app.as_deref(), &mut printer).await? {
            sse::Outcome::Done => return Ok(()),
            sse::Outcome::NoStream(url) => {
                eprintln!("heureka: no push stream at {url}: reading the event stream instead");
            }
        }
        match sse::watch(eureka, app.as_deref(), &mut printer).await? {
            sse::Outcome::Done => return Ok(()),
            sse::Outcome::NoStream(url) => {
                eprintln!("heureka: no event stream at {url}: polling apps/delta instead");
            }
        }
    }
    poll::watch(eureka, app.as_deref(), args.interval, &mut printer).await
}
