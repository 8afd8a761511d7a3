//! The inputs of the rules over several keys (`rules.rs`), as the key table's bindings write
//! them: what a default worked out from other keys needs.

use std::path::PathBuf;

use heureka_config::bindings::Entries;

/// The values of keys that a rule over several keys turns into configuration.
#[derive(Default)]
pub(crate) struct Pending {
    /// `spring.application.name`: the default application name and VIP addresses.
    pub(crate) application_name: Option<String>,
    /// `server.port`: the default ports and `management.port`.
    pub(crate) server_port: Option<u16>,
    /// `management.server.port`.
    pub(crate) management_port: Option<u16>,
    pub(crate) appname: Option<String>,
    pub(crate) instance_id: Option<String>,
    pub(crate) hostname: Option<String>,
    pub(crate) ip_address: Option<String>,
    pub(crate) non_secure_port: Option<u16>,
    pub(crate) secure_port: Option<u16>,
    pub(crate) virtual_host_name: Option<String>,
    pub(crate) secure_virtual_host_name: Option<String>,
    /// `eureka.instance.metadata-map.<key>`.
    pub(crate) metadata: Entries<String>,
    /// `eureka.client.tls.*`.
    pub(crate) tls: TlsKeys,
}

/// `eureka.client.tls.*` as read, before `enabled` decides whether they count.
#[derive(Default)]
pub(crate) struct TlsKeys {
    pub(crate) enabled: bool,
    pub(crate) key_store: Option<PathBuf>,
    pub(crate) key_store_type: Option<String>,
    pub(crate) key_store_password: Option<String>,
    pub(crate) key_alias: Option<String>,
    pub(crate) key_password: Option<String>,
    pub(crate) trust_store: Option<PathBuf>,
    pub(crate) trust_store_type: Option<String>,
    pub(crate) trust_store_password: Option<String>,
}
