//! Acknowledging what the push delivered: `POST {base}/push/ack?version=V` to the server the
//! stream came from, after the copy holds `V`, so that the server books this client as a
//! consumer holding it (docs/push.md). At most one acknowledgement is in flight; versions that
//! arrive meanwhile are coalesced into the newest, sent once the one in flight returns. The
//! stream only leaves the newest version here, and never waits for an acknowledgement.

use std::sync::Arc;

use reqwest::StatusCode;
use tokio::sync::watch;

use crate::events::ClientEvent;
use crate::registry_copy::RegistryCopy;
use crate::transport::Transport;

/// What to acknowledge next: the base URL of the server that pushed it and the version.
type Due = Option<(String, u64)>;

/// The stream's end: leaves the newest version to acknowledge.
pub(crate) struct Acks(watch::Sender<Due>);

/// The acknowledging end, run by [`Acker::run`].
pub(crate) struct Acker(watch::Receiver<Due>);

/// The two ends.
pub(crate) fn channel() -> (Acks, Acker) {
    let (sender, receiver) = watch::channel(None);
    (Acks(sender), Acker(receiver))
}

impl Acks {
    /// The copy holds `version` of the registry of the server at `base`: acknowledge it once the
    /// acknowledgement in flight (if any) returns, unless a newer one comes first.
    pub(crate) fn holds(&self, base: &str, version: u64) {
        self.0.send_replace(Some((base.to_owned(), version)));
    }
}

impl Acker {
    /// Sends the acknowledgements, one at a time, until the stream's end is dropped.
    pub(crate) async fn run(mut self, transport: Arc<Transport>, copy: Arc<RegistryCopy>) {
        while self.0.changed().await.is_ok() {
            let due = self.0.borrow_and_update().clone();
            if let Some((base, version)) = due {
                acknowledge(&transport, &copy, &base, version).await;
            }
        }
    }
}

/// One acknowledgement. A failure is only logged: the next one says as much, and a fetch
/// books the client anyway.
async fn acknowledge(transport: &Transport, copy: &RegistryCopy, base: &str, version: u64) {
    let url = format!("{base}/push/ack?version={version}");
    match transport.http().post(&url).send().await {
        Ok(response) if response.status() == StatusCode::NO_CONTENT => {
            copy.emit(ClientEvent::Acknowledged { version });
        }
        Ok(response) => {
            tracing::debug!(%url, status = %response.status(), "push acknowledgement refused");
        }
        Err(error) => {
            tracing::debug!(%url, error = %crate::tls::failure(&error), "push acknowledgement failed");
        }
    }
}
