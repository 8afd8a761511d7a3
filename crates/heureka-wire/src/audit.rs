//! The audit trail's entry (Heureka's own JSON, documented in `docs/events.md`): one
//! administrative act, or one minute of refused requests from one address and user, as
//! `GET {base}/dashboard/audit` lists it and the `audit` event carries it.
//!
//! An entry holds names, addresses, statuses and metadata keys only: nothing that could be a
//! secret (no password, no `Authorization` value, no metadata value) has a field to go in.

use heureka_core::Millis;

use crate::json::encode::string;
use crate::json::object::{bool_text, field_str, field_u64, list};

/// What was done, or refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AuditAction {
    /// `PUT {base}/apps/{app}/{id}/status`.
    StatusOverrideSet,
    /// `DELETE {base}/apps/{app}/{id}/status`.
    StatusOverrideRemoved,
    /// `PUT {base}/asg/{asg}/status`.
    AsgStatusSet,
    /// `DELETE {base}/apps/{app}/{id}` by anyone but the instance itself.
    Deregistered,
    /// `PUT {base}/apps/{app}/{id}/metadata` by anyone but the instance itself.
    MetadataUpdated,
    /// Requests answered 401, summarised per address and user name a minute.
    CredentialsRefused,
    /// Replication from a sender that is not a peer, answered 403, summarised likewise.
    ReplicationRefused,
}

impl AuditAction {
    pub fn name(self) -> &'static str {
        match self {
            AuditAction::StatusOverrideSet => "status-override-set",
            AuditAction::StatusOverrideRemoved => "status-override-removed",
            AuditAction::AsgStatusSet => "asg-status-set",
            AuditAction::Deregistered => "deregistered",
            AuditAction::MetadataUpdated => "metadata-updated",
            AuditAction::CredentialsRefused => "credentials-refused",
            AuditAction::ReplicationRefused => "replication-refused",
        }
    }
}

/// One entry of the audit trail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditEntry {
    /// Wall-clock milliseconds of the act (of the first refusal, for a summary).
    pub at: Millis,
    pub action: AuditAction,
    /// Who: the authenticated principal's name (`anonymous` when authentication is off or
    /// failed).
    pub principal: String,
    /// From where: the IP address of the request's connection, when it came over a socket.
    pub address: Option<String>,
    /// In which namespace: `default` for the unprefixed API, else the name in
    /// `{prefix}/{name}` or the `x-namespace` header.
    pub namespace: String,
    pub app: Option<String>,
    pub id: Option<String>,
    /// The auto-scaling group of an ASG status request.
    pub asg: Option<String>,
    /// The status asked for, where the request names one.
    pub status: Option<String>,
    /// The metadata keys a metadata update set (their values are not kept).
    pub metadata_keys: Vec<String>,
    /// For refused credentials: the user name presented, if any.
    pub user: Option<String>,
    /// The HTTP status answered; 2xx means the act was applied.
    pub outcome: u16,
    /// How many requests the entry stands for: 1 for an act, more for a summary of refusals.
    pub count: u64,
}

impl AuditEntry {
    /// An entry for one request of `action`, at `at`, answered `outcome`; the rest empty.
    pub fn new(action: AuditAction, at: Millis, principal: &str, outcome: u16) -> AuditEntry {
        AuditEntry {
            at,
            action,
            principal: principal.to_owned(),
            address: None,
            namespace: "default".to_owned(),
            app: None,
            id: None,
            asg: None,
            status: None,
            metadata_keys: Vec::new(),
            user: None,
            outcome,
            count: 1,
        }
    }

    /// Whether the act took effect (a 2xx answer).
    pub fn applied(&self) -> bool {
        (200..300).contains(&self.outcome)
    }
}

/// `{"entries":[…]}`, in the order given (the server gives newest first).
pub fn encode_audit_entries<'a>(entries: impl Iterator<Item = &'a AuditEntry>) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    out.extend_from_slice(br#"{"entries":["#);
    for (n, entry) in entries.enumerate() {
        if n > 0 {
            out.push(b',');
        }
        out.extend_from_slice(br#"{"at":"#);
        crate::numbers::push_i64(&mut out, entry.at);
        audit_fields(&mut out, entry);
        out.push(b'}');
    }
    out.extend_from_slice(b"]}");
    out
}

/// The fields after `at`, shared by the list and the `audit` event.
pub(crate) fn audit_fields(out: &mut Vec<u8>, entry: &AuditEntry) {
    field_str(out, "action", entry.action.name());
    field_str(out, "principal", &entry.principal);
    field_str(out, "namespace", &entry.namespace);
    let optional = [
        ("address", &entry.address),
        ("app", &entry.app),
        ("id", &entry.id),
        ("asg", &entry.asg),
        ("status", &entry.status),
        ("user", &entry.user),
    ];
    for (name, value) in optional {
        if let Some(value) = value {
            field_str(out, name, value);
        }
    }
    if !entry.metadata_keys.is_empty() {
        out.extend_from_slice(br#","metadataKeys":"#);
        list(out, &entry.metadata_keys, |out, key| string(out, key));
    }
    field_u64(out, "outcome", u64::from(entry.outcome));
    out.extend_from_slice(br#","applied":"#);
    out.extend_from_slice(bool_text(entry.applied()));
    field_u64(out, "count", entry.count);
}

#[cfg(test)]
mod tests;
