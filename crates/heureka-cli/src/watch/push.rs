//! Watching through Heureka's push (docs/push.md): `GET {base}/push[?app=APP]`, a `snapshot`
//! and then one `delta` per write, each one of Eureka's own documents. The watcher keeps a copy
//! (`copy.rs`): the first snapshot is the copy it starts from, each delta and any later snapshot
//! prints what it changed in it, as the polling watch prints what changed between two polls.
//!
//! A stream that breaks or ends is resumed with `Last-Event-ID`, so no change is lost: the
//! server sends the deltas missed, or a snapshot (whose difference from the copy is printed)
//! when it cannot. Watching every application, a delta that leaves the copy with another
//! `apps__hashcode` than the server's means the copy missed something: the watcher asks for a
//! new snapshot (a stream without `Last-Event-ID`).

use std::time::Duration;

use heureka_client::sse::{SseMessage, SseParser};
use heureka_core::Applications;
use heureka_wire::Format;
use reqwest::StatusCode;

use super::change::Printer;
use super::copy::{apply, changes, hashcode, Copy};
use super::sse::Outcome;
use crate::error::CliError;
use crate::eureka::{reason, Call, Eureka};
use crate::render;

/// The wait before connecting again after a stream that worked; it doubles while attempts
/// fail, up to [`LONGEST_WAIT`].
const FIRST_WAIT: Duration = Duration::from_secs(1);
const LONGEST_WAIT: Duration = Duration::from_secs(30);

pub(super) async fn watch(
    eureka: &Eureka,
    app: Option<&str>,
    printer: &mut Printer,
) -> Result<Outcome, CliError> {
    let query: Vec<(&str, &str)> = app.iter().map(|app| ("app", *app)).collect();
    let call = Call {
        method: reqwest::Method::GET,
        path: &["push"],
        query: &query,
        what: "no push stream".to_owned(),
    };
    let mut watcher = Watcher {
        known: None,
        last_id: None,
        every_app: app.is_none(),
    };
    let mut wait = FIRST_WAIT;
    while !printer.done() {
        let headers: Vec<(&str, &str)> = watcher
            .last_id
            .as_deref()
            .map(|id| ("Last-Event-ID", id))
            .into_iter()
            .collect();
        let answer = match eureka.send_with(&call, true, &headers).await {
            Ok(answer) => answer,
            // Once watching, a server restart or a network blip is waited out.
            Err(error @ (CliError::Unreachable(_) | CliError::Server(_)))
                if watcher.known.is_some() =>
            {
                eprintln!("heureka: {error}; trying again");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(LONGEST_WAIT);
                continue;
            }
            Err(error) => return Err(error),
        };
        if answer.status() == StatusCode::NOT_FOUND {
            return Ok(Outcome::NoStream(answer.url));
        }
        match answer.check(&call.what) {
            Ok(()) => {}
            // Once watching, a server refusing for a while (429: too many streams) is waited out.
            Err(error @ CliError::Server(_)) if watcher.known.is_some() => {
                eprintln!("heureka: {error}; trying again");
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(LONGEST_WAIT);
                continue;
            }
            Err(error) => return Err(error),
        }
        let url = answer.url;
        let mut response = answer.response;
        let mut parser = SseParser::default();
        // Why the stream stopped; `None` when the copy needs a new snapshot.
        let stopped = loop {
            let chunk = match response.chunk().await {
                // Anything the server sends (a keep-alive too) shows the stream works: a quiet
                // registry's stream that reaches its age is followed by one at the first wait.
                Ok(Some(chunk)) => {
                    wait = FIRST_WAIT;
                    chunk
                }
                Ok(None) => break Some("the push stream ended".to_owned()),
                Err(error) => break Some(format!("the push stream broke: {}", reason(&error))),
            };
            let mut resnapshot = false;
            for message in parser.feed(&chunk) {
                match watcher.take(&message, &url, printer)? {
                    Step::Go => {}
                    Step::Done => return Ok(Outcome::Done),
                    Step::Resnapshot => {
                        resnapshot = true;
                        break;
                    }
                }
            }
            if resnapshot {
                break None;
            }
        };
        // A new snapshot at once: the copy is wrong until it comes.
        let Some(why) = stopped else { continue };
        eprintln!("heureka: {url}: {why}; resuming");
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(LONGEST_WAIT);
    }
    Ok(Outcome::Done)
}

/// The watcher's state across streams.
struct Watcher {
    /// The copy, from the first snapshot on.
    known: Option<Copy>,
    /// The `id` of the last message taken: where the next stream resumes.
    last_id: Option<String>,
    /// Whether every application is watched, so that a delta's hash checks the copy.
    every_app: bool,
}

/// What to do after a message.
enum Step {
    Go,
    /// `--count` changes were printed.
    Done,
    /// The copy missed something: a stream without `Last-Event-ID`.
    Resnapshot,
}

impl Watcher {
    fn take(
        &mut self,
        message: &SseMessage,
        url: &str,
        printer: &mut Printer,
    ) -> Result<Step, CliError> {
        let snapshot = match message.event.as_str() {
            "snapshot" => true,
            "delta" => false,
            _ => return Ok(Step::Go),
        };
        let document = decode(message)?;
        let before = self.known.take();
        let mut after = if snapshot {
            Copy::new()
        } else {
            before.clone().unwrap_or_default()
        };
        apply(&mut after, &document);
        let consistent = snapshot || !self.every_app || hashcode(&after) == document.apps_hashcode;
        self.last_id = if consistent { message.id.clone() } else { None };
        let printed = match &before {
            // The first snapshot is where the watch starts: the line a script waits for.
            None if snapshot => {
                eprintln!("heureka: watching {url} (Ctrl-C to stop)");
                true
            }
            before => {
                let before = before.clone().unwrap_or_default();
                changes(&before, &after, render::now_ms())
                    .iter()
                    .all(|change| printer.print(change))
            }
        };
        self.known = Some(after);
        Ok(if !printed || printer.done() {
            Step::Done
        } else if consistent {
            Step::Go
        } else {
            Step::Resnapshot
        })
    }
}

fn decode(message: &SseMessage) -> Result<Applications, CliError> {
    heureka_wire::decode_applications(message.data.as_bytes(), Format::Json).map_err(|error| {
        CliError::Server(format!(
            "a pushed {} does not decode: {error}",
            message.event
        ))
    })
}
