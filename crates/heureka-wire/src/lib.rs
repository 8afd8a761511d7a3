//! Eureka's two wire encodings, JSON and XML, and nothing else: this is the only crate that knows
//! how an `InstanceInfo` is spelled on the wire (and, in `actuator.rs`, how Spring Boot spells
//! its health and info documents).
//!
//! Output is strict and byte-compatible with the Java server (Jackson's legacy
//! `EurekaJacksonCodec` for JSON, XStream for XML), because the Spring client rejects any field it
//! does not know. Input is lenient: it reads every shape that real clients send (Spring's bean
//! shape, the legacy string-typed shape, Python, JS and fargo bodies) and fills Java's defaults.
//! The encoders write bytes by hand into one pre-sized `Vec<u8>`, since a full fetch of a large
//! registry is the server's hot path.

mod actuator;
mod audit;
mod consumers;
mod dashboard;
mod digest;
mod error;
mod events;
mod fields;
mod fleet;
mod format;
mod health_checks;
mod json;
mod namespaces;
mod numbers;
mod persisted;
mod prometheus_sd;
mod regions;
mod replication;
mod size;
mod stamped;
mod status;
mod xml;

use heureka_core::{Application, Applications, Instance, Millis};

pub use actuator::{
    encode_health, encode_info, BuildInfo, HealthComponents, HealthStatus, RegistryHealth,
};
pub use audit::{encode_audit_entries, AuditAction, AuditEntry};
pub use consumers::{decode_consumers, encode_consumers, ConsumerView, ConsumersDoc};
pub use dashboard::{encode_dashboard_summary, encode_lastn, DashboardSummary, LeaseRecord};
pub use digest::{decode_registry_digest, encode_registry_digest, RegistryDigest};
pub use error::DecodeError;
pub use events::{
    decode_instance_event, encode_event, Event, EventBody, InstanceEvent, InstanceEventKind,
    RegionEventKind, SelfPreservationStatus,
};
pub use fleet::{push_fleet, FleetEndpoint};
pub use format::Format;
pub use health_checks::{
    decode_checker, encode_checker, encode_health_checks, HealthChecksView, ProbeView,
};
pub use heureka_core::InstanceDigest;
pub use namespaces::{decode_namespace_names, encode_namespaces, NamespaceView};
pub use persisted::{decode_kept, encode_kept, PersistenceView};
pub use prometheus_sd::{encode_target_groups, push_target_groups, Target, GROUP_BYTES};
pub use regions::{decode_regions, encode_regions, FetchCounts, RegionView, RegionsDoc};
pub use replication::{
    decode_replication_batch, decode_replication_response, encode_replication_batch,
    encode_replication_response, ReplicationAction, ReplicationItem, ReplicationResult,
};
pub use stamped::{
    decode_stamped_batch, decode_stamped_response, encode_stamped_batch, encode_stamped_response,
    StampedItem, StampedResult,
};
pub use status::{encode_status, PeerStatus, StatusInfo};
pub use xml::metadata_key_fits_xml;

/// A registry document: `{"applications":{…}}` or `<applications>…</applications>`.
pub fn encode_applications(apps: &Applications, format: Format) -> Vec<u8> {
    match format {
        Format::Json => json::encode::applications(apps),
        Format::Xml => xml::encode::applications(apps),
    }
}

/// An `applications` document in pieces, so a server can keep each application encoded and
/// re-encode only the ones that change. The document is `head`, then each `entry` with
/// `separator` between consecutive entries, then `tail`; byte for byte what
/// [`encode_applications`] writes for the same content.
#[derive(Clone, Copy, Debug)]
pub struct ApplicationsPieces {
    pub format: Format,
}

impl ApplicationsPieces {
    pub fn head(self, versions_delta: i64, apps_hashcode: &str) -> Vec<u8> {
        match self.format {
            Format::Json => json::encode::applications_head(versions_delta, apps_hashcode),
            Format::Xml => xml::encode::applications_head(versions_delta, apps_hashcode),
        }
    }

    pub fn entry(self, app: &Application) -> Vec<u8> {
        match self.format {
            Format::Json => json::encode::applications_entry(app),
            Format::Xml => xml::encode::applications_entry(app),
        }
    }

    pub fn separator(self) -> &'static [u8] {
        match self.format {
            Format::Json => json::encode::APPLICATIONS_SEPARATOR,
            Format::Xml => xml::encode::APPLICATIONS_SEPARATOR,
        }
    }

    pub fn tail(self) -> &'static [u8] {
        match self.format {
            Format::Json => json::encode::APPLICATIONS_TAIL,
            Format::Xml => xml::encode::APPLICATIONS_TAIL,
        }
    }
}

/// One application: `{"application":{…}}` or `<application>…</application>`.
pub fn encode_application(app: &Application, format: Format) -> Vec<u8> {
    match format {
        Format::Json => json::encode::application(app),
        Format::Xml => xml::encode::application(app),
    }
}

/// One instance: `{"instance":{…}}` or `<instance>…</instance>`.
pub fn encode_instance(instance: &Instance, format: Format) -> Vec<u8> {
    match format {
        Format::Json => json::encode::instance(instance),
        Format::Xml => xml::encode::instance(instance),
    }
}

/// Reads a register body (`{"instance":{…}}` or `<instance>…</instance>`); `now` is "parse time",
/// Java's default for `lastUpdatedTimestamp` and `lastDirtyTimestamp`.
pub fn decode_instance(body: &[u8], format: Format, now: Millis) -> Result<Instance, DecodeError> {
    match format {
        Format::Json => json::stream::instance(body, now),
        Format::Xml => xml::decode::instance(body, now),
    }
}

/// Reads one application document (`{"application":{…}}` or `<application>…</application>`).
/// Instances without timestamps get `0`.
pub fn decode_application(body: &[u8], format: Format) -> Result<Application, DecodeError> {
    match format {
        Format::Json => json::stream::application(body),
        Format::Xml => xml::decode::application(body),
    }
}

/// Reads a registry document, as a peer or a client does. `application` and `instance` may each
/// be an array or a single object. Instances without timestamps get `0`.
pub fn decode_applications(body: &[u8], format: Format) -> Result<Applications, DecodeError> {
    match format {
        Format::Json => json::stream::applications(body),
        Format::Xml => xml::decode::applications(body),
    }
}
