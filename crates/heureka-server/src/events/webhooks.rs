//! Webhooks (`heureka.webhooks[<n>].*`): each configured URL gets the events it asked for as
//! `POST`s of the event's JSON, from its own task.
//!
//! The task holds a broadcast receiver, which is its bounded queue: while it retries a slow or
//! failing endpoint, newer events wait there, and if it falls more than the channel's capacity
//! behind, the oldest are dropped for it (logged, and sent on as a `lagged` event when that
//! type is wanted). The registry never waits for a webhook.

use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;

use super::feed::{Published, Subscription};
use crate::config::WebhookConfig;

/// Attempts per event before it is given up (logged).
const MAX_ATTEMPTS: u32 = 6;
/// The pause after the first failure, doubled after each further one, at most 30 s.
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
const TIMEOUT: Duration = Duration::from_secs(10);

/// Whether `webhook` wants events named `name`: the ones listed, or all but `renewals`.
pub(crate) fn wants(webhook: &WebhookConfig, name: &str) -> bool {
    if webhook.events.is_empty() {
        name != "renewals"
    } else {
        webhook.events.iter().any(|wanted| wanted == name)
    }
}

/// Starts one delivery task per configured webhook.
pub(crate) fn spawn_all(
    events: &super::feed::Events,
    webhooks: &[WebhookConfig],
    tasks: &mut tokio::task::JoinSet<()>,
) {
    for webhook in webhooks {
        tracing::info!(url = %webhook.url, events = ?webhook.events, "sending events to webhook");
        // Subscribed now, not when the task first runs: no event after start-up is missed.
        let subscription = events.subscribe();
        tasks.spawn(deliver_all(webhook.clone(), subscription));
    }
}

async fn deliver_all(webhook: WebhookConfig, subscription: Subscription) {
    let Subscription {
        mut receiver,
        token: _subscribed,
    } = subscription;
    // An https:// webhook is verified against the public roots, as a browser would.
    let built = crate::tls::client_config(None)
        .map_err(|error| error.to_string())
        .and_then(|tls| {
            reqwest::Client::builder()
                .timeout(TIMEOUT)
                .use_preconfigured_tls(tls)
                .build()
                .map_err(|error| error.to_string())
        });
    let client = match built {
        Ok(client) => client,
        Err(error) => {
            tracing::error!(url = %webhook.url, %error, "webhook client cannot start");
            return;
        }
    };
    loop {
        match receiver.recv().await {
            Ok(published) => {
                if wants(&webhook, published.event.name()) {
                    deliver(&client, &webhook, &published).await;
                }
            }
            Err(RecvError::Lagged(missed)) => {
                tracing::warn!(url = %webhook.url, missed, "webhook fell behind: events dropped for it");
                if wants(&webhook, "lagged") {
                    let lagged = Published::new(heureka_wire::Event {
                        seq: 0,
                        at: 0,
                        body: heureka_wire::EventBody::Lagged { missed },
                    });
                    deliver(&client, &webhook, &lagged).await;
                }
            }
            Err(RecvError::Closed) => return,
        }
    }
}

/// POSTs one event, retrying with back-off until it is accepted (2xx) or the attempts run out.
async fn deliver(client: &reqwest::Client, webhook: &WebhookConfig, published: &Published) {
    let name = published.event.name();
    for attempt in 1..=MAX_ATTEMPTS {
        let result = client
            .post(&webhook.url)
            .header("Content-Type", "application/json")
            .header("X-Heureka-Event", name)
            .body(published.json().clone())
            .send()
            .await;
        let failure = match result {
            Ok(response) if response.status().is_success() => return,
            Ok(response) => format!("answered {}", response.status().as_u16()),
            Err(error) => error.to_string(),
        };
        if attempt == MAX_ATTEMPTS {
            tracing::warn!(url = %webhook.url, event = name, seq = published.event.seq, attempts = attempt, %failure, "webhook gave up on an event");
            return;
        }
        let pause = FIRST_BACKOFF
            .saturating_mul(1 << (attempt - 1).min(16))
            .min(MAX_BACKOFF);
        tracing::debug!(url = %webhook.url, event = name, attempt, %failure, ?pause, "webhook delivery failed: retrying");
        tokio::time::sleep(pause).await;
    }
}
