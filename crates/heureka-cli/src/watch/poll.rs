//! Watching by polling: a full fetch, then `apps/delta` every interval, applied to a local
//! copy exactly as Eureka's clients do (and checked against `apps__hashcode`, with a full
//! fetch when it differs). What is printed is the difference between two consecutive copies,
//! so the overlapping deltas a server hands out (each holds about three minutes of changes)
//! print every change once, and changes between two polls are coalesced.

use std::time::Duration;

use reqwest::StatusCode;

use super::change::Printer;
use super::copy::{apply, changes, hashcode, Copy};
use crate::error::CliError;
use crate::eureka::Eureka;
use crate::render;

pub(super) async fn watch(
    eureka: &Eureka,
    app: Option<&str>,
    interval: f64,
    printer: &mut Printer,
) -> Result<(), CliError> {
    let mut known = full(eureka).await?;
    eprintln!("heureka: watching by polling apps/delta every {interval}s (Ctrl-C to stop)");
    while !printer.done() {
        tokio::time::sleep(Duration::from_secs_f64(interval)).await;
        let next = match next(eureka, &known).await {
            Ok(next) => next,
            // A watcher outlives a server restart or a network blip: say so and poll again.
            Err(error @ (CliError::Unreachable(_) | CliError::Server(_))) => {
                eprintln!("heureka: {error}; trying again");
                continue;
            }
            Err(error) => return Err(error),
        };
        for change in changes(&known, &next, render::now_ms()) {
            if app.is_some_and(|app| app != change.app) {
                continue;
            }
            if !printer.print(&change) {
                return Ok(());
            }
        }
        known = next;
    }
    Ok(())
}

async fn full(eureka: &Eureka) -> Result<Copy, CliError> {
    let mut copy = Copy::new();
    apply(&mut copy, &eureka.applications(&["apps", ""]).await?);
    Ok(copy)
}

/// The next copy: the last one patched with the delta when the result's hash matches the
/// server's; otherwise (or when the server refuses deltas, 403) a full fetch.
async fn next(eureka: &Eureka, known: &Copy) -> Result<Copy, CliError> {
    let call = eureka.get(&["apps", "delta"], "no delta endpoint".to_owned());
    let answer = eureka.send(&call, false).await?;
    if answer.status() == StatusCode::FORBIDDEN {
        return full(eureka).await;
    }
    answer.check(&call.what)?;
    let (format, body) = answer.body(eureka.format()).await?;
    let delta = heureka_wire::decode_applications(&body, format)
        .map_err(|error| CliError::Server(format!("the delta does not decode: {error}")))?;
    let mut next = known.clone();
    apply(&mut next, &delta);
    if hashcode(&next) == delta.apps_hashcode {
        Ok(next)
    } else {
        full(eureka).await
    }
}
