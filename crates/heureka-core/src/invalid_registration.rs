//! Why a registration was refused: Eureka's checks (`registration.rs`) and Heureka's limits
//! (`limits.rs`) alike, core's one error type for input. `Display` is the message the server
//! answers with, Eureka's word for word where Eureka refuses too.

use std::fmt;

/// Why a registration was refused; `Display` is Eureka's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InvalidRegistration {
    MissingInstanceId,
    MissingHostname,
    MissingIpAddress,
    MissingAppName,
    /// The body's app differs from the path's, compared upper-cased.
    MismatchedAppName {
        /// The path's app, upper-cased.
        expected: String,
        /// The body's app, as sent.
        actual: String,
    },
    MissingDataCenterInfo,
    MissingDataCenterName,
    /// A name (`appName`, `instanceId`, `vipAddress`, `secureVipAddress`) over the length limit.
    NameTooLong {
        field: &'static str,
        length: usize,
        max: usize,
    },
    /// `metadata` or `dataCenterInfo.metadata` with more entries than the limit.
    TooManyMetadataEntries {
        field: &'static str,
        entries: usize,
        max: usize,
    },
    /// `metadata` or `dataCenterInfo.metadata` with more bytes than the limit.
    MetadataTooLarge {
        field: &'static str,
        bytes: usize,
        max: usize,
    },
    /// A new instance while the registry holds `max` already; re-registers always pass.
    RegistryFull {
        max: usize,
    },
}

impl InvalidRegistration {
    /// Whether this is one of Heureka's limits rather than one of Eureka's checks.
    pub fn is_limit(&self) -> bool {
        matches!(
            self,
            InvalidRegistration::NameTooLong { .. }
                | InvalidRegistration::TooManyMetadataEntries { .. }
                | InvalidRegistration::MetadataTooLarge { .. }
                | InvalidRegistration::RegistryFull { .. }
        )
    }
}

impl fmt::Display for InvalidRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InvalidRegistration::MissingInstanceId => f.write_str("Missing instanceId"),
            InvalidRegistration::MissingHostname => f.write_str("Missing hostname"),
            InvalidRegistration::MissingIpAddress => f.write_str("Missing ip address"),
            InvalidRegistration::MissingAppName => f.write_str("Missing appName"),
            InvalidRegistration::MismatchedAppName { expected, actual } => {
                write!(
                    f,
                    "Mismatched appName, expecting {expected} but was {actual}"
                )
            }
            InvalidRegistration::MissingDataCenterInfo => f.write_str("Missing dataCenterInfo"),
            InvalidRegistration::MissingDataCenterName => {
                f.write_str("Missing dataCenterInfo Name")
            }
            InvalidRegistration::NameTooLong { field, length, max } => {
                write!(
                    f,
                    "{field} is {length} bytes long, over the limit of {max} bytes"
                )
            }
            InvalidRegistration::TooManyMetadataEntries {
                field,
                entries,
                max,
            } => {
                write!(f, "{field} has {entries} entries, over the limit of {max}")
            }
            InvalidRegistration::MetadataTooLarge { field, bytes, max } => {
                write!(f, "{field} is {bytes} bytes, over the limit of {max} bytes")
            }
            InvalidRegistration::RegistryFull { max } => write!(
                f,
                "registry full: it holds its limit of {max} instances, a new one cannot register"
            ),
        }
    }
}
