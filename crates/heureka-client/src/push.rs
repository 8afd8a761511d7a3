//! Following the server's push (docs/push.md): a task that keeps a stream of
//! `GET {service url}push` open, for every application (no `?app=`, so that each delta's
//! `apps__hashcode` checks the whole copy), and applies what it carries to the local copy as
//! it happens: a `snapshot` replaces the copy, a `delta` patches it as a fetched delta does
//! (`push/apply.rs`). Then it acknowledges the version the copy holds (`push/ack.rs`).
//!
//! * A stream that ends or breaks is resumed with `Last-Event-ID`: the server sends what was
//!   missed, or a snapshot when it cannot. The waits between attempts are `push/backoff.rs`'s.
//! * A delta whose hash differs from the copy's means the copy missed something: the task
//!   connects again without `Last-Event-ID`, for a snapshot.
//! * A server without push answers 404 (the Java server, `heureka.push.enabled=false`): the
//!   client then keeps to its periodic fetch, says so once, and asks again every 5 minutes.
//!
//! The periodic fetch goes on beside the push, as the backstop (`registry_copy.rs` keeps the
//! two from undoing each other).

mod ack;
mod apply;
mod backoff;
mod stream;

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use tokio::time::sleep;

use crate::registry_copy::RegistryCopy;
use crate::streak::Streak;
use crate::transport::Transport;
use ack::Acks;
use apply::Applied;
use backoff::Backoff;
use stream::{Opened, Stopped, Stream};

/// How long a client whose server has no push waits before it asks for a stream again.
const ABSENT_RETRY: Duration = Duration::from_secs(5 * 60);

/// Follows the push until the task is aborted (the client's shutdown).
pub(crate) async fn follow(copy: Arc<RegistryCopy>, transport: Arc<Transport>) {
    let (acks, acker) = ack::channel();
    let streams = Follower {
        copy: copy.clone(),
        transport: transport.clone(),
        acks,
        last_id: None,
        failing: Streak::default(),
        told_absent: false,
    };
    tokio::join!(streams.run(), acker.run(transport, copy));
}

/// The stream side's state across connections.
struct Follower {
    copy: Arc<RegistryCopy>,
    transport: Arc<Transport>,
    acks: Acks,
    /// The `id` of the last message applied: where a new stream resumes.
    last_id: Option<String>,
    failing: Streak,
    /// Whether the log has said that the server has no push.
    told_absent: bool,
}

/// How one connection ended, for the wait before the next.
enum Outcome {
    /// The stream ended or broke; `worked` when the server sent anything on it first (a
    /// message or a keep-alive: a quiet registry's stream that reaches its age is no failure).
    Lost { worked: bool },
    /// The copy missed something: connect again without `Last-Event-ID`.
    Inconsistent,
    /// No push here (404).
    Absent,
    /// The request failed or was refused; `retry_after` as the server asked.
    Failed { retry_after: Option<Duration> },
}

impl Follower {
    async fn run(mut self) {
        let mut backoff = Backoff::default();
        let mut was_inconsistent = false;
        loop {
            let outcome = self.connection().await;
            let wait = match outcome {
                Outcome::Lost { worked } => {
                    if worked {
                        backoff.reset();
                    }
                    backoff.next()
                }
                // At once the first time; a copy that keeps disagreeing is backed off.
                Outcome::Inconsistent if !was_inconsistent => Duration::ZERO,
                Outcome::Inconsistent => backoff.next(),
                Outcome::Absent => {
                    backoff.reset();
                    ABSENT_RETRY
                }
                Outcome::Failed { retry_after } => {
                    let wait = backoff.next();
                    retry_after.map_or(wait, |asked| asked.clamp(wait, ABSENT_RETRY))
                }
            };
            was_inconsistent = matches!(outcome, Outcome::Inconsistent);
            sleep(wait).await;
        }
    }

    /// One connection, from the request to the stream's end.
    async fn connection(&mut self) -> Outcome {
        let opened = stream::open(&self.transport, self.last_id.as_deref()).await;
        let stream = match opened {
            Ok(Opened::Stream(stream)) => stream,
            Ok(Opened::Absent) => {
                self.absent();
                return Outcome::Absent;
            }
            Ok(Opened::Refused {
                base,
                status,
                retry_after,
            }) => {
                if status == StatusCode::TOO_MANY_REQUESTS {
                    // This server has streams enough: the next attempt starts at another.
                    self.transport.quarantine(&base);
                }
                let error = crate::error::ClientError::UnexpectedStatus {
                    what: "push stream",
                    status: status.as_u16(),
                };
                self.failing.failed("push stream", &error);
                return Outcome::Failed { retry_after };
            }
            Err(error) => {
                self.failing.failed("push stream", &error);
                return Outcome::Failed { retry_after: None };
            }
        };
        self.failing.succeeded("push stream");
        if self.told_absent {
            tracing::info!("the server pushes registry changes now; following them");
            self.told_absent = false;
        }
        self.read(stream).await
    }

    /// Applies the stream's messages until it stops.
    async fn read(&mut self, mut stream: Box<Stream>) -> Outcome {
        let mut worked = false;
        loop {
            let messages = match stream.next().await {
                Ok(messages) => {
                    worked = true;
                    messages
                }
                Err(stopped) => {
                    match stopped {
                        Stopped::Ended => tracing::debug!("push stream ended; resuming"),
                        Stopped::Broke(why) => {
                            tracing::debug!(%why, "push stream broke; resuming");
                        }
                    }
                    return Outcome::Lost { worked };
                }
            };
            for message in messages {
                match apply::apply(&self.copy, &message) {
                    Applied::Holds { version } => {
                        if let Some(id) = message.id {
                            self.last_id = Some(id);
                        }
                        self.acks.holds(&stream.base, version);
                    }
                    Applied::Inconsistent => {
                        tracing::debug!("the pushed delta leaves another hash; new snapshot");
                        self.last_id = None;
                        return Outcome::Inconsistent;
                    }
                    Applied::Skipped => {}
                }
            }
        }
    }

    fn absent(&mut self) {
        if self.told_absent {
            tracing::debug!("still no push stream (404)");
        } else {
            tracing::info!(
                "the server has no push stream (404): refreshing by the periodic fetch only, \
                 asking again every {} minutes",
                ABSENT_RETRY.as_secs() / 60
            );
            self.told_absent = true;
        }
    }
}

#[cfg(test)]
mod tests;
