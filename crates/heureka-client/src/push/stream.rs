//! One push stream: `GET {base}/push` on the first service URL that answers (failing over as
//! every request of the client does), resumed from `Last-Event-ID` when the client has one,
//! then read message by message until it ends, breaks or goes silent.

use std::time::Duration;

use reqwest::header::{ACCEPT, RETRY_AFTER};
use reqwest::{Response, StatusCode};
use tokio::time::timeout;

use crate::error::ClientError;
use crate::sse::{SseMessage, SseParser};
use crate::transport::Transport;

/// The longest a stream is read before the client connects again (and resumes): above the
/// server's own limit (`heureka.push.max-stream-age`, 10 min), so that normally the server ends
/// it, and a bound on a stream that a proxy keeps open but no longer feeds.
const LONGEST_STREAM: Duration = Duration::from_secs(15 * 60);

/// How long the stream may stay silent before it counts as broken: the server writes a
/// keep-alive every 15 s (`heureka.push.keep-alive-interval`), so this is three of them missed
/// and more.
const SILENCE: Duration = Duration::from_secs(60);

/// How the server answered the request for a stream.
pub(crate) enum Opened {
    /// `200`: the stream, from the server at this base URL.
    Stream(Box<Stream>),
    /// `404`: this server has no push (the Java server, or `heureka.push.enabled=false`).
    Absent,
    /// Another answer (`429` when the server has too many streams, `401`, `403`…) from the
    /// server at `base`, with the wait its `Retry-After` asks for, if any.
    Refused {
        base: String,
        status: StatusCode,
        retry_after: Option<Duration>,
    },
}

/// An open stream and the server it comes from.
pub(crate) struct Stream {
    /// The base URL of the server (no trailing `/`), where its acknowledgements go.
    pub(crate) base: String,
    response: Response,
    parser: SseParser,
}

/// Why a stream stopped.
#[derive(Debug)]
pub(crate) enum Stopped {
    /// The server ended it (its age limit, a shutdown, or this client fell too far behind).
    Ended,
    /// The connection broke or went silent.
    Broke(String),
}

/// Asks for a stream, resuming after `last_id` when given. A server that takes the connection
/// but does not answer within [`SILENCE`] counts as failed: the request's own timeout is the
/// stream's, far longer.
pub(crate) async fn open(
    transport: &Transport,
    last_id: Option<&str>,
) -> Result<Opened, ClientError> {
    let asked = transport.send_at("push", |http, url| {
        let request = http
            .get(url)
            .header(ACCEPT, "text/event-stream")
            .timeout(LONGEST_STREAM);
        match last_id {
            Some(id) => request.header("Last-Event-ID", id),
            None => request,
        }
    });
    let (response, base) = timeout(SILENCE, asked).await.map_err(|_| {
        ClientError::AllServersFailed(format!("no answer within {}s", SILENCE.as_secs()))
    })??;
    Ok(match response.status() {
        StatusCode::OK => Opened::Stream(Box::new(Stream {
            base,
            response,
            parser: SseParser::default(),
        })),
        StatusCode::NOT_FOUND => Opened::Absent,
        status => Opened::Refused {
            base,
            status,
            retry_after: response
                .headers()
                .get(RETRY_AFTER)
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.trim().parse().ok())
                .map(Duration::from_secs),
        },
    })
}

impl Stream {
    /// The messages the next bytes complete (possibly none: a keep-alive), or why the stream
    /// stopped.
    pub(crate) async fn next(&mut self) -> Result<Vec<SseMessage>, Stopped> {
        match timeout(SILENCE, self.response.chunk()).await {
            Err(_) => Err(Stopped::Broke(format!("silent for {}s", SILENCE.as_secs()))),
            Ok(Err(error)) => Err(Stopped::Broke(crate::tls::failure(&error))),
            Ok(Ok(None)) => Err(Stopped::Ended),
            Ok(Ok(Some(chunk))) => Ok(self.parser.feed(&chunk)),
        }
    }
}
