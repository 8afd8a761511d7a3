//! Watching through Heureka's event stream: `GET {base}/events[?app=APP]`, read as
//! Server-Sent Events (the client crate's parser), each instance event printed as a
//! [`Change`].

use heureka_client::sse::{SseMessage, SseParser};
use heureka_wire::{EventBody, InstanceEventKind};
use reqwest::StatusCode;

use super::change::{Action, Change, Printer};
use crate::error::CliError;
use crate::eureka::{reason, Call, Eureka};

pub(super) enum Outcome {
    /// `--count` changes were printed.
    Done,
    /// The server has no event stream (404 at this URL): poll instead.
    NoStream(String),
}

pub(super) async fn watch(
    eureka: &Eureka,
    app: Option<&str>,
    printer: &mut Printer,
) -> Result<Outcome, CliError> {
    let query: Vec<(&str, &str)> = app.iter().map(|app| ("app", *app)).collect();
    let call = Call {
        method: reqwest::Method::GET,
        path: &["events"],
        query: &query,
        what: "no event stream".to_owned(),
    };
    let answer = eureka.send(&call, true).await?;
    if answer.status() == StatusCode::NOT_FOUND {
        return Ok(Outcome::NoStream(answer.url));
    }
    answer.check(&call.what)?;
    // The server subscribes this stream before it sends the headers, so from here on no
    // change is missed; saying so lets a script (or a test) start changing things.
    eprintln!("heureka: watching {} (Ctrl-C to stop)", answer.url);
    let url = answer.url;
    let mut response = answer.response;
    let mut parser = SseParser::default();
    while !printer.done() {
        let chunk = response
            .chunk()
            .await
            .map_err(|error| CliError::Unreachable(format!("{url}: {}", reason(&error))))?;
        let Some(chunk) = chunk else {
            return Err(CliError::Unreachable(format!(
                "{url}: the event stream ended"
            )));
        };
        for message in parser.feed(&chunk) {
            if !handle(&message, printer)? {
                return Ok(Outcome::Done);
            }
        }
    }
    Ok(Outcome::Done)
}

/// Prints the message if it is an instance event; `false` once `--count` is reached.
fn handle(message: &SseMessage, printer: &mut Printer) -> Result<bool, CliError> {
    if message.event == "lagged" {
        eprintln!(
            "heureka: the server dropped events this watcher was too slow for: {}",
            message.data
        );
        return Ok(true);
    }
    let event = heureka_wire::decode_instance_event(message.data.as_bytes())
        .map_err(|error| CliError::Server(format!("an event does not decode: {error}")))?;
    let Some(event) = event else {
        return Ok(true);
    };
    let EventBody::Instance(instance) = event.body else {
        return Ok(true);
    };
    let action = match instance.kind {
        InstanceEventKind::Registered => Action::Added,
        InstanceEventKind::StatusChanged
        | InstanceEventKind::MetadataChanged
        | InstanceEventKind::HealthCheckFailed
        | InstanceEventKind::HealthCheckRecovered => Action::Modified,
        InstanceEventKind::Cancelled | InstanceEventKind::Evicted => Action::Deleted,
    };
    Ok(printer.print(&Change {
        at: event.at,
        action,
        app: instance.app,
        id: instance.id,
        status: instance.status,
        overridden_status: instance.overridden_status,
        event: Some(instance.kind.name()),
    }))
}
