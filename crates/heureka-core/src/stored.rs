//! How the registry stores an instance: compactly, with the strings many instances repeat
//! stored once.
//!
//! [`Instance`] is the exchange type every crate uses, and it is built for that: fifteen
//! `String`s (24 bytes each, plus the heap copy) and two `BTreeMap`s, the first entry of which
//! allocates a whole 544-byte B-tree node. Kept as such, a registered instance took about
//! 2.4 KB of heap for about 950 bytes of JSON. The registry keeps a [`StoredInstance`] instead
//! (`bench/results/memory.md` has the figures):
//!
//! - the strings each instance has its own of (id, host, address, URLs, ASG name) are laid end
//!   to end in one allocation, where they took eight;
//! - the strings instances share (application name, VIP addresses, `sid`, data-centre name,
//!   group name, metadata keys) are [`Name`]s from the registry's [`Interner`]: one copy per
//!   distinct value, however many instances carry it;
//! - metadata is a sorted boxed slice: one allocation, none when empty.
//!
//! Readers still get `Instance`s: [`StoredInstance::to_instance`] builds one where the
//! registry used to clone the stored one, at about the same cost.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::health::Health;
use crate::limits::Limits;
use crate::maps::HashSet;
use crate::merge::{PartStamps, Parts};
use crate::model::{
    ActionType, DataCenterClass, DataCenterInfo, Instance, InstanceStatus, LeaseInfo, Millis, Port,
};

/// A string stored once for all the instances that carry it.
pub(crate) type Name = Arc<str>;

/// Metadata as stored: pairs sorted by key, keys unique (as the `BTreeMap` they come from).
type Metadata = Box<[(Name, Box<str>)]>;

/// The registry's set of shared strings.
///
/// Every value is held by the set and by the instances and delta-queue items using it.
/// [`Interner::purge_unused`] drops the values only the set still holds, so clients sending
/// ever new names (a million applications, random metadata keys) cost memory only while
/// something registered still carries them.
#[derive(Debug, Default)]
pub(crate) struct Interner {
    names: HashSet<Name>,
}

impl Interner {
    /// The shared copy of `text`, made on first use.
    pub(crate) fn intern(&mut self, text: &str) -> Name {
        if let Some(name) = self.names.get(text) {
            return Name::clone(name);
        }
        let name: Name = Arc::from(text);
        self.names.insert(Name::clone(&name));
        name
    }

    /// Forgets the values nothing but the set holds any more, and those that only
    /// `is_idle_key` holds besides: the name of an application with no lease left, which the
    /// registry's map keeps as Eureka keeps the application, while nothing registered
    /// carries it.
    pub(crate) fn purge_unused(&mut self, is_idle_key: impl Fn(&Name) -> bool) {
        self.names.retain(|name| match Arc::strong_count(name) {
            1 => false,
            2 => !is_idle_key(name),
            _ => true,
        });
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }
}

/// Where an instance runs, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
struct StoredDataCenter {
    class: DataCenterClass,
    name: Name,
    metadata: Metadata,
}

/// The instance's own strings, in the order [`Texts`] lays them out.
#[derive(Clone, Copy)]
enum Text {
    InstanceId,
    HostName,
    IpAddr,
    HomePageUrl,
    StatusPageUrl,
    HealthCheckUrl,
    SecureHealthCheckUrl,
    AsgName,
}

const TEXTS: usize = 8;

/// An instance's own strings end to end in one allocation: most are short (an address, a
/// URL), and as separate allocations each paid 16 bytes inline and the allocator's rounding.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Texts {
    all: Box<str>,
    /// Where each string ends in `all`; each starts where the previous ends.
    ends: [u32; TEXTS],
    /// Bit `n` set: string `n` is present (an absent one is empty in `all`).
    present: u8,
}

impl Texts {
    fn new(texts: [Option<String>; TEXTS]) -> Texts {
        let mut all = String::with_capacity(texts.iter().flatten().map(String::len).sum());
        let mut ends = [0; TEXTS];
        let mut present = 0;
        for (n, text) in texts.iter().enumerate() {
            if let Some(text) = text {
                all.push_str(text);
                present |= 1 << n;
            }
            // Registered instances come from bodies the server caps far below 4 GiB.
            ends[n] = u32::try_from(all.len()).expect("an instance's strings fit in 4 GiB");
        }
        Texts {
            all: all.into_boxed_str(),
            ends,
            present,
        }
    }

    fn get(&self, text: Text) -> Option<&str> {
        let n = text as usize;
        if self.present & (1 << n) == 0 {
            return None;
        }
        let start = if n == 0 { 0 } else { self.ends[n - 1] as usize };
        Some(&self.all[start..self.ends[n] as usize])
    }

    fn owned(&self, text: Text) -> Option<String> {
        self.get(text).map(str::to_owned)
    }
}

/// An [`Instance`] as the registry stores it; field for field the same data, plus the status
/// the instance reports itself and the stamps of its parts. The fields the registry's rules
/// read and write are visible to the crate; the rest only travel.
#[derive(Clone, Debug, PartialEq, Eq)]
// In the order written: a heartbeat reads the first five fields of a holder it finds cold in a
// large registry, and the compiler's own order spread them over three cache lines (the app at
// byte 112, the dirty timestamp at 256, the statuses at 351). Written first they share one:
// a holder is a 384-byte allocation, which the allocator places on a line boundary.
#[repr(C)]
pub(crate) struct StoredInstance {
    pub(crate) app: Name,
    pub(crate) last_dirty_timestamp: Millis,
    pub(crate) status: InstanceStatus,
    pub(crate) overridden_status: InstanceStatus,
    /// The health checks' verdict (`health.rs`), which `status` already reflects.
    pub(crate) health: Health,
    /// The status the instance itself reports (`status` is the one the rules made of it).
    pub(crate) own_status: InstanceStatus,
    pub(crate) action_type: Option<ActionType>,
    is_coordinating_discovery_server: bool,
    country_id: i32,
    port: Port,
    secure_port: Port,
    pub(crate) last_updated_timestamp: Millis,
    /// The stamps of the writes that set its parts (`merge.rs`).
    pub(crate) stamps: PartStamps,
    texts: Texts,
    sid: Name,
    data_center_info: Option<StoredDataCenter>,
    pub(crate) lease_info: LeaseInfo,
    metadata: Metadata,
    app_group_name: Option<Name>,
    pub(crate) vip_address: Option<Name>,
    pub(crate) secure_vip_address: Option<Name>,
}

impl StoredInstance {
    /// Stores `instance`, its shared strings through `names`.
    pub(crate) fn new(instance: Instance, names: &mut Interner) -> StoredInstance {
        let Instance {
            instance_id,
            host_name,
            app,
            ip_addr,
            sid,
            status,
            overridden_status,
            port,
            secure_port,
            country_id,
            data_center_info,
            lease_info,
            metadata,
            app_group_name,
            home_page_url,
            status_page_url,
            health_check_url,
            secure_health_check_url,
            vip_address,
            secure_vip_address,
            is_coordinating_discovery_server,
            last_updated_timestamp,
            last_dirty_timestamp,
            action_type,
            asg_name,
        } = instance;
        StoredInstance {
            texts: Texts::new([
                instance_id,
                Some(host_name),
                Some(ip_addr),
                home_page_url,
                status_page_url,
                health_check_url,
                secure_health_check_url,
                asg_name,
            ]),
            app: names.intern(&app),
            sid: names.intern(&sid),
            status,
            overridden_status,
            port,
            secure_port,
            country_id,
            data_center_info: data_center_info.map(|dc| StoredDataCenter {
                class: dc.class,
                name: names.intern(&dc.name),
                metadata: stored_metadata(dc.metadata, names),
            }),
            lease_info,
            metadata: stored_metadata(metadata, names),
            app_group_name: app_group_name.map(|text| names.intern(&text)),
            vip_address: vip_address.map(|text| names.intern(&text)),
            secure_vip_address: secure_vip_address.map(|text| names.intern(&text)),
            is_coordinating_discovery_server,
            last_updated_timestamp,
            last_dirty_timestamp,
            action_type,
            own_status: status,
            health: Health::Passing,
            stamps: PartStamps::default(),
        }
    }

    /// Stores live `parts` (`merge.rs`) of an instance of `app`, as a peer's copy or a record
    /// kept on disk brings them: the registration document, with the status and override the
    /// parts give and a lease no longer than `limits` allow (the sender may allow longer ones
    /// than we do), and the parts' own status, verdict and stamps.
    pub(crate) fn from_live_parts(
        app: &str,
        parts: &Parts,
        limits: &Limits,
        names: &mut Interner,
    ) -> StoredInstance {
        let mut document: Instance = parts.registration.clone().expect("live parts");
        document.app = app.to_owned();
        document.status = parts.status();
        document.overridden_status = parts.overridden.unwrap_or(InstanceStatus::Unknown);
        let _ = limits.lease_terms(&mut document.lease_info);
        let mut holder = StoredInstance::new(document, names);
        holder.own_status = parts.own_status;
        holder.health = parts.health;
        holder.stamps = parts.stamps;
        holder
    }

    /// The instance as the rest of the world sees it.
    pub(crate) fn to_instance(&self) -> Instance {
        let name = |name: &Option<Name>| name.as_deref().map(str::to_owned);
        let texts = &self.texts;
        Instance {
            instance_id: texts.owned(Text::InstanceId),
            host_name: texts.owned(Text::HostName).unwrap_or_default(),
            app: self.app.to_string(),
            ip_addr: texts.owned(Text::IpAddr).unwrap_or_default(),
            sid: self.sid.to_string(),
            status: self.status,
            overridden_status: self.overridden_status,
            port: self.port,
            secure_port: self.secure_port,
            country_id: self.country_id,
            data_center_info: self.data_center_info.as_ref().map(|dc| DataCenterInfo {
                class: dc.class,
                name: dc.name.to_string(),
                metadata: metadata_map(&dc.metadata),
            }),
            lease_info: self.lease_info,
            metadata: metadata_map(&self.metadata),
            app_group_name: name(&self.app_group_name),
            home_page_url: texts.owned(Text::HomePageUrl),
            status_page_url: texts.owned(Text::StatusPageUrl),
            health_check_url: texts.owned(Text::HealthCheckUrl),
            secure_health_check_url: texts.owned(Text::SecureHealthCheckUrl),
            vip_address: name(&self.vip_address),
            secure_vip_address: name(&self.secure_vip_address),
            is_coordinating_discovery_server: self.is_coordinating_discovery_server,
            last_updated_timestamp: self.last_updated_timestamp,
            last_dirty_timestamp: self.last_dirty_timestamp,
            action_type: self.action_type,
            asg_name: texts.owned(Text::AsgName),
        }
    }

    /// What the server's health checks need of it (`health.rs`).
    pub(crate) fn health_subject(
        &self,
        app: &str,
        id: &str,
        keys: &[&str],
    ) -> crate::health::HealthSubject {
        let texts = &self.texts;
        let metadata = keys
            .iter()
            .filter_map(|wanted| {
                let at = self
                    .metadata
                    .binary_search_by(|(key, _)| key.as_ref().cmp(wanted))
                    .ok()?;
                Some((wanted.to_string(), self.metadata[at].1.to_string()))
            })
            .collect();
        crate::health::HealthSubject {
            app: app.to_owned(),
            id: id.to_owned(),
            host_name: texts.owned(Text::HostName).unwrap_or_default(),
            ip_addr: texts.owned(Text::IpAddr).unwrap_or_default(),
            port: self.port,
            secure_port: self.secure_port,
            health_check_url: texts.owned(Text::HealthCheckUrl),
            secure_health_check_url: texts.owned(Text::SecureHealthCheckUrl),
            metadata,
            status: self.status,
            health: self.health,
        }
    }

    /// Host name, IP address and port: where consumers send traffic (`takeover.rs`).
    pub(crate) fn endpoint(&self) -> (&str, &str, u32) {
        let host_name = self.texts.get(Text::HostName).unwrap_or_default();
        let ip_addr = self.texts.get(Text::IpAddr).unwrap_or_default();
        (host_name, ip_addr, self.port.number)
    }

    /// [`Instance::id`], on the stored form: `instanceId` if non-empty, else an AmazonInfo's
    /// `instance-id`, else `hostName`.
    pub(crate) fn id(&self) -> &str {
        if let Some(id) = self.texts.get(Text::InstanceId).filter(|id| !id.is_empty()) {
            return id;
        }
        if let Some(dc) = &self.data_center_info {
            if dc.class == DataCenterClass::Amazon {
                let id = dc
                    .metadata
                    .binary_search_by(|(key, _)| key.as_ref().cmp("instance-id"))
                    .ok()
                    .map(|at| &*dc.metadata[at].1)
                    .filter(|id| !id.is_empty());
                if let Some(id) = id {
                    return id;
                }
            }
        }
        self.texts.get(Text::HostName).unwrap_or_default()
    }
}

/// A `BTreeMap` iterates in key order, so the slice comes out sorted, keys unique.
fn stored_metadata(metadata: BTreeMap<String, String>, names: &mut Interner) -> Metadata {
    metadata
        .into_iter()
        .map(|(key, value)| (names.intern(&key), value.into_boxed_str()))
        .collect()
}

fn metadata_map(metadata: &Metadata) -> BTreeMap<String, String> {
    metadata
        .iter()
        .map(|(key, value)| (key.to_string(), value.to_string()))
        .collect()
}

#[cfg(test)]
mod tests;
