//! The domain types of a Eureka registry: instances, applications and their statuses.
//!
//! These mirror Eureka's `InstanceInfo`, `Application` and `Applications`, field for field, so
//! that `heureka-wire` can encode them exactly as the Java codecs do. They carry no serde: how a
//! field is spelled on the wire is `heureka-wire`'s business alone.

use std::collections::BTreeMap;
use std::fmt;

/// Milliseconds since the Unix epoch. Every time-dependent function in this crate takes one.
pub type Millis = i64;

/// An instance's status, as Eureka spells it on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum InstanceStatus {
    Up,
    Down,
    Starting,
    OutOfService,
    Unknown,
}

impl InstanceStatus {
    /// All statuses in the byte order of their names, which is the order `apps__hashcode` uses.
    pub const BY_NAME: [InstanceStatus; 5] = [
        InstanceStatus::Down,
        InstanceStatus::OutOfService,
        InstanceStatus::Starting,
        InstanceStatus::Unknown,
        InstanceStatus::Up,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            InstanceStatus::Up => "UP",
            InstanceStatus::Down => "DOWN",
            InstanceStatus::Starting => "STARTING",
            InstanceStatus::OutOfService => "OUT_OF_SERVICE",
            InstanceStatus::Unknown => "UNKNOWN",
        }
    }

    /// Exact, case-sensitive match on the enum name (Java's `InstanceStatus.valueOf`).
    pub fn from_name(name: &str) -> Option<InstanceStatus> {
        Some(match name {
            "UP" => InstanceStatus::Up,
            "DOWN" => InstanceStatus::Down,
            "STARTING" => InstanceStatus::Starting,
            "OUT_OF_SERVICE" => InstanceStatus::OutOfService,
            "UNKNOWN" => InstanceStatus::Unknown,
            _ => return None,
        })
    }

    /// Lenient parse used for bodies: Eureka's readers map any unknown string to `UNKNOWN`.
    pub fn from_name_lenient(name: &str) -> InstanceStatus {
        InstanceStatus::from_name(name.trim()).unwrap_or(InstanceStatus::Unknown)
    }
}

impl fmt::Display for InstanceStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why an instance appears in a delta. Set by the registry, never trusted from clients.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ActionType {
    Added,
    Modified,
    Deleted,
}

impl ActionType {
    pub fn as_str(self) -> &'static str {
        match self {
            ActionType::Added => "ADDED",
            ActionType::Modified => "MODIFIED",
            ActionType::Deleted => "DELETED",
        }
    }

    pub fn from_name(name: &str) -> Option<ActionType> {
        Some(match name {
            "ADDED" => ActionType::Added,
            "MODIFIED" => ActionType::Modified,
            "DELETED" => ActionType::Deleted,
            _ => return None,
        })
    }
}

/// A port and whether it is enabled: Eureka's `{"$": 8080, "@enabled": "true"}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Port {
    pub number: u32,
    pub enabled: bool,
}

impl Port {
    /// Eureka's default when a body has no `port`: 7001, enabled.
    pub const DEFAULT_PLAIN: Port = Port {
        number: 7001,
        enabled: true,
    };
    /// Eureka's default when a body has no `securePort`: 7002, disabled.
    pub const DEFAULT_SECURE: Port = Port {
        number: 7002,
        enabled: false,
    };
}

/// Which Java class a `dataCenterInfo` is. Clients send it as `@class` (JSON) or `class` (XML).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataCenterClass {
    /// `com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo` or `…MyDataCenterInfo`.
    Default,
    /// `com.netflix.appinfo.AmazonInfo`, which carries EC2 metadata.
    Amazon,
}

/// Where an instance runs. Only Amazon data centres carry metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataCenterInfo {
    pub class: DataCenterClass,
    /// `MyOwn`, `Netflix` or `Amazon`.
    pub name: String,
    /// AmazonInfo metadata (`instance-id`, `availability-zone`, …); empty otherwise.
    pub metadata: BTreeMap<String, String>,
}

impl DataCenterInfo {
    /// The data-centre info every Spring client sends.
    pub fn my_own() -> DataCenterInfo {
        DataCenterInfo {
            class: DataCenterClass::Default,
            name: "MyOwn".to_owned(),
            metadata: BTreeMap::new(),
        }
    }
}

/// Lease terms and timestamps as they travel on the wire inside an instance.
///
/// On input only the two durations matter; the registry overwrites every timestamp when it
/// serves the instance (Eureka's "decorate").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseInfo {
    pub renewal_interval_in_secs: u32,
    pub duration_in_secs: u32,
    pub registration_timestamp: Millis,
    pub last_renewal_timestamp: Millis,
    pub eviction_timestamp: Millis,
    pub service_up_timestamp: Millis,
}

impl LeaseInfo {
    pub const DEFAULT_RENEWAL_INTERVAL_SECS: u32 = 30;
    pub const DEFAULT_DURATION_SECS: u32 = 90;
}

impl Default for LeaseInfo {
    fn default() -> LeaseInfo {
        LeaseInfo {
            renewal_interval_in_secs: LeaseInfo::DEFAULT_RENEWAL_INTERVAL_SECS,
            duration_in_secs: LeaseInfo::DEFAULT_DURATION_SECS,
            registration_timestamp: 0,
            last_renewal_timestamp: 0,
            eviction_timestamp: 0,
            service_up_timestamp: 0,
        }
    }
}

/// One running process of an application: Eureka's `InstanceInfo`.
///
/// Field order follows the order in which Eureka's JSON writer emits them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    /// The client-chosen id; when absent, [`Instance::id`] falls back as Eureka does.
    pub instance_id: Option<String>,
    /// Required on register. Empty means missing.
    pub host_name: String,
    /// The application name, upper-cased. Required on register. Empty means missing.
    pub app: String,
    /// Required on register. Empty means missing.
    pub ip_addr: String,
    /// Deprecated; `"na"` unless a client says otherwise.
    pub sid: String,
    pub status: InstanceStatus,
    pub overridden_status: InstanceStatus,
    pub port: Port,
    pub secure_port: Port,
    pub country_id: i32,
    /// Required on register.
    pub data_center_info: Option<DataCenterInfo>,
    pub lease_info: LeaseInfo,
    pub metadata: BTreeMap<String, String>,
    pub app_group_name: Option<String>,
    pub home_page_url: Option<String>,
    pub status_page_url: Option<String>,
    pub health_check_url: Option<String>,
    pub secure_health_check_url: Option<String>,
    pub vip_address: Option<String>,
    pub secure_vip_address: Option<String>,
    /// True only for the answering server's own instance; server-computed.
    pub is_coordinating_discovery_server: bool,
    /// Server-set on every change.
    pub last_updated_timestamp: Millis,
    /// The client's version of this instance's data; compared on register and renew.
    pub last_dirty_timestamp: Millis,
    /// Server-set; why the instance is in a delta.
    pub action_type: Option<ActionType>,
    pub asg_name: Option<String>,
}

impl Instance {
    /// An instance with Eureka's defaults for every optional field, as a reader would build it
    /// from a body that names only these fields. `now` stands for "parse time", Eureka's default
    /// for both `lastUpdatedTimestamp` and `lastDirtyTimestamp`.
    pub fn new(
        app: &str,
        instance_id: &str,
        host_name: &str,
        ip_addr: &str,
        now: Millis,
    ) -> Instance {
        Instance {
            instance_id: Some(instance_id.to_owned()).filter(|id| !id.is_empty()),
            host_name: host_name.to_owned(),
            app: app.to_uppercase(),
            ip_addr: ip_addr.to_owned(),
            sid: "na".to_owned(),
            status: InstanceStatus::Up,
            overridden_status: InstanceStatus::Unknown,
            port: Port::DEFAULT_PLAIN,
            secure_port: Port::DEFAULT_SECURE,
            country_id: 1,
            data_center_info: Some(DataCenterInfo::my_own()),
            lease_info: LeaseInfo::default(),
            metadata: BTreeMap::new(),
            app_group_name: None,
            home_page_url: None,
            status_page_url: None,
            health_check_url: None,
            secure_health_check_url: None,
            vip_address: None,
            secure_vip_address: None,
            is_coordinating_discovery_server: false,
            last_updated_timestamp: now,
            last_dirty_timestamp: now,
            action_type: None,
            asg_name: None,
        }
    }

    /// The key of this instance inside its application (Eureka's `InstanceInfo.getId()`):
    /// `instanceId` if non-empty, else an AmazonInfo's `instance-id`, else `hostName`.
    pub fn id(&self) -> &str {
        if let Some(id) = self.instance_id.as_deref().filter(|id| !id.is_empty()) {
            return id;
        }
        if let Some(dc) = &self.data_center_info {
            if dc.class == DataCenterClass::Amazon {
                if let Some(id) = dc.metadata.get("instance-id").filter(|id| !id.is_empty()) {
                    return id;
                }
            }
        }
        &self.host_name
    }
}

/// One application and its instances: Eureka's `Application`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Application {
    /// Upper-cased application name.
    pub name: String,
    pub instances: Vec<Instance>,
}

/// A registry document: the full registry, a delta, or a VIP selection. Eureka's `Applications`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applications {
    /// `versions__delta`: `1` for a full fetch, a counter for deltas, `-1` for VIP reads.
    pub versions_delta: i64,
    /// `apps__hashcode`: see [`crate::apps_hashcode`].
    pub apps_hashcode: String,
    pub applications: Vec<Application>,
}
