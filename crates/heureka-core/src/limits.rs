//! Limits on what one registration may hold and on how many the registry holds: the bounds
//! Eureka does not have, which an attacker with valid credentials would otherwise use to
//! exhaust memory or to register instances nobody can heartbeat or expire.
//!
//! One rule per bound, shared by every path a registration arrives on (REST JSON and XML,
//! metadata and status paths, Eureka's peer batch, Heureka's stamped batch and the copies
//! anti-entropy and replication answers bring): the server calls `validate_registration`
//! (`registration.rs`) or [`Limits::check_names`] at each entry, and the registry applies
//! [`Limits::lease_terms`] again to whatever it stores, so no path stores a lease the limit
//! does not allow. Refusals are [`InvalidRegistration`]s, core's one error type for input.

use std::collections::BTreeMap;
use std::fmt;

use crate::invalid_registration::InvalidRegistration;
use crate::model::{Instance, LeaseInfo};
use crate::stamped_copy::StampedCopy;

/// The bounds, built by the server from `heureka.limits.*`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Longest app name, instance id, `vipAddress` and `secureVipAddress`, in bytes.
    pub max_name_length: usize,
    /// Most `metadata` entries one instance holds.
    pub max_metadata_entries: usize,
    /// Most bytes of `metadata` (every key and value, UTF-8) one instance holds.
    pub max_metadata_bytes: usize,
    /// Longest lease (`durationInSecs`) stored; longer ones are shortened to it.
    pub max_lease_duration_secs: u32,
    /// Most instances the registry holds; a new one beyond it is refused.
    pub max_instances: usize,
}

impl Limits {
    /// 256 bytes: longer than any host-based id (`host:app:port`) real clients build, and
    /// heartbeatable within the default 8 KB header limit (see [`longest_heartbeatable_name`]).
    pub const DEFAULT_MAX_NAME_LENGTH: usize = 256;
    pub const DEFAULT_MAX_METADATA_ENTRIES: usize = 128;
    pub const DEFAULT_MAX_METADATA_BYTES: usize = 32 * 1024;
    /// One hour: far above Eureka's 90 s default and the long leases benchmarks and batch
    /// jobs use, far below "never expires" (`durationInSecs=2147483647`).
    pub const DEFAULT_MAX_LEASE_DURATION_SECS: u32 = 3600;
    /// Above the one million instances one node is tested with; a guard against runaway
    /// registration, to be lowered to what the node's memory holds.
    pub const DEFAULT_MAX_INSTANCES: usize = 2_000_000;
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_name_length: Limits::DEFAULT_MAX_NAME_LENGTH,
            max_metadata_entries: Limits::DEFAULT_MAX_METADATA_ENTRIES,
            max_metadata_bytes: Limits::DEFAULT_MAX_METADATA_BYTES,
            max_lease_duration_secs: Limits::DEFAULT_MAX_LEASE_DURATION_SECS,
            max_instances: Limits::DEFAULT_MAX_INSTANCES,
        }
    }
}

/// A lease shortened to the limit: what the instance asked for and what is stored and served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClampedLease {
    pub requested_secs: u32,
    pub stored_secs: u32,
}

impl fmt::Display for ClampedLease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "lease of {} s shortened to the limit of {} s",
            self.requested_secs, self.stored_secs
        )
    }
}

/// Bytes of a heartbeat's request head that are not the app name and instance id: the
/// method, base path, `/apps/` and `/`, the query string (`status`, `lastDirtyTimestamp`,
/// `overriddenstatus`), the protocol and the headers clients send (Host, Authorization,
/// Accept, User-Agent, `DiscoveryIdentity-*`). Measured heads of Spring, Python and JS
/// clients stay under 1 KB; twice that is set aside.
pub const HEARTBEAT_HEAD_ALLOWANCE: usize = 2048;

/// The longest name that still lets a heartbeat fit `max_header_bytes`: its URL carries the app
/// name and the instance id, each percent-encoded (up to 3 bytes per byte), after a base path
/// of `base_path_len` bytes.
pub fn longest_heartbeatable_name(max_header_bytes: usize, base_path_len: usize) -> usize {
    max_header_bytes.saturating_sub(HEARTBEAT_HEAD_ALLOWANCE + base_path_len) / 6
}

impl Limits {
    /// App name and instance id within [`Limits::max_name_length`]: every write naming an
    /// instance is checked, so no path reaches what the REST path would refuse.
    pub fn check_names(&self, app: &str, id: &str) -> Result<(), InvalidRegistration> {
        self.check_name("appName", app)?;
        self.check_name("instanceId", id)
    }

    /// The names, the VIP addresses and the metadata of a registration: its own `metadata`, and
    /// an AmazonInfo's `dataCenterInfo.metadata`, each within the same bounds on its own (no
    /// real AmazonInfo comes near them: EC2's metadata is some fifteen short entries).
    pub fn check_instance(&self, instance: &Instance) -> Result<(), InvalidRegistration> {
        self.check_names(&instance.app, instance.id())?;
        for (field, vip) in [
            ("vipAddress", &instance.vip_address),
            ("secureVipAddress", &instance.secure_vip_address),
        ] {
            if let Some(vip) = vip {
                self.check_name(field, vip)?;
            }
        }
        self.check_metadata(&instance.metadata)?;
        match &instance.data_center_info {
            Some(data_center) => self.check_map("dataCenterInfo.metadata", &data_center.metadata),
            None => Ok(()),
        }
    }

    /// Metadata within the entry and byte limits (checked on a merged map for updates).
    pub fn check_metadata(
        &self,
        metadata: &BTreeMap<String, String>,
    ) -> Result<(), InvalidRegistration> {
        self.check_map("metadata", metadata)
    }

    fn check_map(
        &self,
        field: &'static str,
        map: &BTreeMap<String, String>,
    ) -> Result<(), InvalidRegistration> {
        if map.len() > self.max_metadata_entries {
            return Err(InvalidRegistration::TooManyMetadataEntries {
                field,
                entries: map.len(),
                max: self.max_metadata_entries,
            });
        }
        let bytes: usize = map.iter().map(|(k, v)| k.len() + v.len()).sum();
        if bytes > self.max_metadata_bytes {
            return Err(InvalidRegistration::MetadataTooLarge {
                field,
                bytes,
                max: self.max_metadata_bytes,
            });
        }
        Ok(())
    }

    /// Shortens `terms.durationInSecs` to the limit, saying so for the caller's warning. The
    /// floor is Eureka's: a 0 s lease means the 90 s default (`lease.rs`), so no lease expires
    /// the moment it is made; that default is itself shortened when the limit is below it.
    pub fn lease_terms(&self, terms: &mut LeaseInfo) -> Option<ClampedLease> {
        let requested = match terms.duration_in_secs {
            0 => LeaseInfo::DEFAULT_DURATION_SECS,
            secs => secs,
        };
        let max = self.max_lease_duration_secs.max(1);
        if requested <= max {
            return None;
        }
        terms.duration_in_secs = max;
        Some(ClampedLease {
            requested_secs: requested,
            stored_secs: max,
        })
    }

    /// A peer's stamped copy: its names, and its registration when it carries one.
    pub fn check_copy(&self, copy: &StampedCopy) -> Result<(), InvalidRegistration> {
        self.check_names(&copy.app, &copy.id)?;
        match &copy.parts.registration {
            Some(registration) => self.check_instance(registration),
            None => Ok(()),
        }
    }

    pub(crate) fn admits_copy(&self, copy: &StampedCopy) -> bool {
        self.check_copy(copy).is_ok()
    }

    fn check_name(&self, field: &'static str, name: &str) -> Result<(), InvalidRegistration> {
        if name.len() > self.max_name_length {
            return Err(InvalidRegistration::NameTooLong {
                field,
                length: name.len(),
                max: self.max_name_length,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
