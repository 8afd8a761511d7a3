//! How many streams of one kind may be open at once: in all and per client address. The event
//! streams (`heureka.events.max-streams`, `-per-client`) and the push streams
//! (`heureka.push.max-subscribers`, `-per-client`) each have a budget. A stream holds its
//! connection for as long as it lasts, so without a budget of their own streams could take
//! every connection the server has and starve heartbeats, fetches, replication and the probes.
//! A stream over budget is refused at once (429, `http/error.rs`) rather than queued: a queued
//! stream would hold its connection while it waits.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::config::{EventStreamConfig, PushConfig};

#[derive(Debug)]
pub(crate) struct StreamBudget {
    max_streams: usize,
    max_per_client: usize,
    /// What the streams are and the keys that limit them, for the reasons of refusals.
    names: Names,
    /// A blocking mutex: each critical section is a counter and a map entry, never an
    /// `.await`.
    open: Mutex<Open>,
}

#[derive(Debug, Default)]
struct Open {
    total: usize,
    /// Open streams per client address; an address leaves the map with its last stream, so
    /// the map is never larger than the budget.
    by_client: HashMap<IpAddr, usize>,
}

/// One admitted stream's place in the budget, given back when it is dropped (the stream
/// ended, or its connection closed).
#[derive(Debug)]
pub(crate) struct StreamPermit {
    budget: Arc<StreamBudget>,
    client: Option<IpAddr>,
}

/// What a budget's streams are called, and its keys.
#[derive(Debug)]
struct Names {
    streams: &'static str,
    total_key: &'static str,
    per_client_key: &'static str,
}

impl StreamBudget {
    /// The budget of the event streams.
    pub(crate) fn for_events(config: &EventStreamConfig) -> StreamBudget {
        StreamBudget {
            max_streams: config.max_streams,
            max_per_client: config.max_streams_per_client,
            names: Names {
                streams: "event streams",
                total_key: "heureka.events.max-streams",
                per_client_key: "heureka.events.max-streams-per-client",
            },
            open: Mutex::new(Open::default()),
        }
    }

    /// The budget of the push streams.
    pub(crate) fn for_push(config: &PushConfig) -> StreamBudget {
        StreamBudget {
            max_streams: config.max_subscribers,
            max_per_client: config.max_subscribers_per_client,
            names: Names {
                streams: "push streams",
                total_key: "heureka.push.max-subscribers",
                per_client_key: "heureka.push.max-subscribers-per-client",
            },
            open: Mutex::new(Open::default()),
        }
    }

    /// A place for a stream from `client` (`None` when the address is unknown: only the total
    /// applies), or the one-line reason it has none.
    pub(crate) fn admit(self: &Arc<Self>, client: Option<IpAddr>) -> Result<StreamPermit, String> {
        let mut open = self.open.lock();
        if open.total >= self.max_streams {
            let Names {
                streams, total_key, ..
            } = self.names;
            return Err(format!(
                "too many {streams}: {} open, the limit ({total_key})",
                self.max_streams
            ));
        }
        if let Some(client) = client {
            let count = open.by_client.entry(client).or_insert(0);
            if *count >= self.max_per_client {
                let Names {
                    streams,
                    per_client_key,
                    ..
                } = self.names;
                return Err(format!(
                    "too many {streams} from {client}: {} open, the limit ({per_client_key})",
                    self.max_per_client
                ));
            }
            *count += 1;
        }
        open.total += 1;
        Ok(StreamPermit {
            budget: Arc::clone(self),
            client,
        })
    }
}

impl Drop for StreamPermit {
    fn drop(&mut self) {
        let mut open = self.budget.open.lock();
        open.total -= 1;
        if let Some(client) = self.client {
            if let Some(count) = open.by_client.get_mut(&client) {
                *count -= 1;
                if *count == 0 {
                    open.by_client.remove(&client);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn budget(max_streams: usize, max_streams_per_client: usize) -> Arc<StreamBudget> {
        Arc::new(StreamBudget::for_events(&EventStreamConfig {
            max_streams,
            max_streams_per_client,
            keep_alive_interval: Duration::from_secs(15),
            send_timeout: Duration::from_secs(30),
            max_age: Duration::from_secs(1800),
        }))
    }

    fn ip(last: u8) -> Option<IpAddr> {
        Some(IpAddr::from([10, 0, 0, last]))
    }

    #[test]
    fn the_total_is_shared_by_all_clients_and_given_back_on_drop() {
        let budget = budget(2, 2);
        let first = budget.admit(ip(1)).unwrap();
        let _second = budget.admit(ip(2)).unwrap();
        let refused = budget.admit(ip(3)).unwrap_err();
        assert!(refused.contains("heureka.events.max-streams"), "{refused}");
        drop(first);
        assert!(budget.admit(ip(3)).is_ok());
    }

    #[test]
    fn one_client_is_held_to_its_own_limit_and_others_are_not() {
        let budget = budget(10, 1);
        let first = budget.admit(ip(1)).unwrap();
        let refused = budget.admit(ip(1)).unwrap_err();
        assert!(refused.contains("max-streams-per-client"), "{refused}");
        assert!(budget.admit(ip(2)).is_ok());
        drop(first);
        assert!(budget.admit(ip(1)).is_ok());
        assert!(budget.open.lock().by_client.len() <= 2);
    }
}
