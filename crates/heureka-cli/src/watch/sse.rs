//! Watching through Heureka's event stream: `GET {base}/events[?app=APP]`, read as
//! Server-Sent Events, each instance event printed as a [`Change`].

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
    let mut parser = Parser::default();
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
fn handle(message: &Message, printer: &mut Printer) -> Result<bool, CliError> {
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

/// One SSE message: its `event:` name (`message` by default) and its `data:` lines joined.
#[derive(Debug, PartialEq, Eq)]
struct Message {
    event: String,
    data: String,
}

/// The SSE line protocol, fed bytes as they arrive: a message ends at a blank line; comment
/// lines (`:` keep-alives) and fields other than `event` and `data` are skipped.
#[derive(Default)]
struct Parser {
    pending: Vec<u8>,
    event: Option<String>,
    data: Option<String>,
}

impl Parser {
    fn feed(&mut self, bytes: &[u8]) -> Vec<Message> {
        self.pending.extend_from_slice(bytes);
        let mut messages = Vec::new();
        while let Some(end) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if let Some(data) = self.data.take() {
                    messages.push(Message {
                        event: self.event.take().unwrap_or_else(|| "message".to_owned()),
                        data,
                    });
                }
                self.event = None;
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value).to_owned();
            match field {
                "event" => self.event = Some(value),
                "data" => match &mut self.data {
                    Some(data) => {
                        data.push('\n');
                        data.push_str(&value);
                    }
                    None => self.data = Some(value),
                },
                _ => {}
            }
        }
        messages
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_end_at_a_blank_line_however_the_bytes_are_split() {
        let stream = b": keep-alive\n\nevent: registered\r\nid: 1\r\ndata: {\"a\":1}\r\n\r\nda";
        let mut parser = Parser::default();
        let mut messages = Vec::new();
        for byte in stream.iter() {
            messages.extend(parser.feed(std::slice::from_ref(byte)));
        }
        assert_eq!(
            messages,
            [Message {
                event: "registered".into(),
                data: "{\"a\":1}".into()
            }]
        );
        assert_eq!(
            parser.feed(b"ta: x\ndata: y\n\n"),
            [Message {
                event: "message".into(),
                data: "x\ny".into()
            }]
        );
    }
}
