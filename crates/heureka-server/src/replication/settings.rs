//! The replication settings, resolved from configuration once: the queues' limits, the
//! peer client's timeouts, anti-entropy's interval, the start-up sync's retries.

use std::time::Duration;

use heureka_core::Millis;

use super::queue::QueueLimits;
use super::transport::Timeouts;
use crate::config::Config;

/// The replication settings, resolved from configuration once.
#[derive(Clone, Debug)]
pub(crate) struct ReplicationSettings {
    pub(crate) limits: QueueLimits,
    pub(crate) timeouts: Timeouts,
    pub(crate) compress: bool,
    pub(crate) adopt_newer_copies: bool,
    pub(crate) anti_entropy_interval: Option<Duration>,
    pub(crate) peer_refresh_interval: Duration,
    pub(crate) sync_attempts: u32,
    pub(crate) sync_retry_wait: Duration,
    /// `eureka.client.fetch-registry`: whether the start-up sync fetches from peers.
    pub(crate) fetch_registry_at_start: bool,
    /// `heureka.replication.peers-only`: whether senders are checked (and so resolved).
    pub(crate) peers_only: bool,
    /// `heureka.namespaces.path-prefix`: where peers list their namespaces (`discovery.rs`).
    pub(crate) namespaces_prefix: String,
}

impl ReplicationSettings {
    pub(crate) fn from_config(config: &Config) -> ReplicationSettings {
        let server = &config.eureka_server;
        let heureka = &config.heureka.replication;
        ReplicationSettings {
            limits: QueueLimits {
                capacity: server.max_elements_in_peer_replication_pool.max(1),
                max_age_ms: server.max_time_for_replication as Millis,
                batch_delay_ms: heureka.batch_delay_ms as Millis,
                batch_size: heureka.batch_size,
            },
            timeouts: Timeouts {
                connect: Duration::from_millis(server.peer_node_connect_timeout_ms.max(1)),
                batch: Duration::from_millis(server.peer_node_read_timeout_ms.max(1)),
                registry_read: Duration::from_secs(
                    config.client.eureka_server_read_timeout_seconds.max(1),
                ),
            },
            compress: server.enable_replicated_request_compression,
            adopt_newer_copies: server.sync_when_timestamp_differs,
            anti_entropy_interval: Some(heureka.anti_entropy_interval_ms)
                .filter(|ms| *ms > 0)
                .map(Duration::from_millis),
            peer_refresh_interval: Duration::from_millis(
                server.peer_eureka_nodes_update_interval_ms.max(1_000),
            ),
            // Spring's rule: 0 configured retries become 5 when the server registers itself.
            sync_attempts: match (
                server.registry_sync_retries,
                config.client.register_with_eureka,
            ) {
                (0, true) => 5,
                (retries, _) => retries,
            },
            sync_retry_wait: Duration::from_millis(server.registry_sync_retry_wait_ms),
            fetch_registry_at_start: config.client.fetch_registry,
            peers_only: heureka.peers_only,
            namespaces_prefix: config.heureka.namespaces.path_prefix.clone(),
        }
    }
}
