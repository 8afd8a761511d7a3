//! What to probe for one instance: its health URL, or its port, or nothing (pure).
//!
//! The mode comes from the instance's own metadata `heureka.health-check`, else from
//! `heureka.health-checks.apps.<app>`, else from what it registered: a `healthCheckUrl` is
//! fetched, otherwise its port is connected to. A URL is fetched only when its host is the
//! instance's own `hostName` or `ipAddr`: the registry must not become a tool that sends GETs
//! wherever a registration points it. Such an instance is checked on its port instead. Which
//! addresses a probe may connect to at all (`heureka.health-checks.allowed-networks`) is
//! checked where it connects, in `probe.rs`.
//!
//! An instance registered by Spring Cloud's Eureka client (it always sends the metadata
//! `management.port`) folds the registry's own view of it back into its `/actuator/health`:
//! the `eureka` health indicator reports the status the registry serves for the instance. Once
//! the checks marked it DOWN (or an operator set OUT_OF_SERVICE) it would answer 503 for that
//! reason alone, forever. For such an instance a Spring Boot health answer of any status means
//! alive ([`Target::Http`]'s `echoes_registry`); only no answer fails it. Its application's own
//! health reaches the registry through `eureka.client.healthcheck.enabled=true`, which Spring
//! reports without the echo, and which outranks the checks as the instance's own DOWN.

use heureka_core::HealthSubject;

use crate::config::CheckMode;

/// The metadata key by which an instance chooses how it is checked.
pub(crate) const MODE_KEY: &str = "heureka.health-check";
/// The metadata key Spring Cloud's Eureka client always registers.
pub(crate) const SPRING_CLOUD_KEY: &str = "management.port";
/// The metadata the checks read, for `Registry::health_subjects`.
pub(crate) const METADATA_KEYS: [&str; 2] = [MODE_KEY, SPRING_CLOUD_KEY];

/// One probe to make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// `GET` this URL; a 2xx answer passes, and so does any Spring Boot health answer when the
    /// instance's health `echoes_registry` (see above).
    Http { url: String, echoes_registry: bool },
    /// Connect to `host:port`.
    Tcp(String, u16),
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Http { url, .. } => write!(f, "GET {url}"),
            Target::Tcp(host, port) => write!(f, "connect {host}:{port}"),
        }
    }
}

fn metadata<'a>(subject: &'a HealthSubject, key: &str) -> Option<&'a str> {
    subject
        .metadata
        .iter()
        .find(|(name, _)| name == key)
        .map(|(_, value)| value.as_str())
}

/// The probe for `subject`; `None` when it is not checked at all (mode `off`, or nothing to
/// connect to).
pub(crate) fn target_of(subject: &HealthSubject, app_mode: Option<CheckMode>) -> Option<Target> {
    let own_mode = metadata(subject, MODE_KEY).and_then(CheckMode::from_name);
    match own_mode.or(app_mode) {
        Some(CheckMode::Off) => None,
        Some(CheckMode::Tcp) => tcp_target(subject),
        Some(CheckMode::Http) | None => http_target(subject).or_else(|| tcp_target(subject)),
    }
}

/// The secure URL when only the secure port is enabled, else the plain one; only when its
/// host is the instance's own.
fn http_target(subject: &HealthSubject) -> Option<Target> {
    let secure_only = subject.secure_port.enabled && !subject.port.enabled;
    let url = if secure_only {
        subject.secure_health_check_url.as_deref()
    } else {
        subject.health_check_url.as_deref()
    }
    .or(subject.health_check_url.as_deref())?;
    let parsed = url::Url::parse(url).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    let host = parsed
        .host_str()?
        .trim_start_matches('[')
        .trim_end_matches(']');
    let own = [subject.host_name.as_str(), subject.ip_addr.as_str()];
    let echoes_registry = metadata(subject, SPRING_CLOUD_KEY).is_some();
    own.iter()
        .any(|name| !name.is_empty() && name.eq_ignore_ascii_case(host))
        .then(|| Target::Http {
            url: url.to_owned(),
            echoes_registry,
        })
}

/// The enabled port (the plain one first) on the instance's IP address, else its host name.
fn tcp_target(subject: &HealthSubject) -> Option<Target> {
    let port = [subject.port, subject.secure_port]
        .into_iter()
        .find(|port| port.enabled && port.number > 0)?;
    let port = u16::try_from(port.number).ok()?;
    let host = [subject.ip_addr.as_str(), subject.host_name.as_str()]
        .into_iter()
        .find(|host| !host.is_empty())?;
    Some(Target::Tcp(host.to_owned(), port))
}

#[cfg(test)]
mod tests;
