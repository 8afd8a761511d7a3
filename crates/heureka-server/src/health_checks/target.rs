//! What to probe for one instance: its health URL, or its port, or nothing (pure).
//!
//! The mode comes from the instance's own metadata `heureka.health-check`, else from
//! `heureka.health-checks.apps.<app>`, else from what it registered: a `healthCheckUrl` is
//! fetched, otherwise its port is connected to. A URL is fetched only when its host is the
//! instance's own `hostName` or `ipAddr`: the registry must not become a tool that sends GETs
//! wherever a registration points it. Such an instance is checked on its port instead.

use heureka_core::HealthSubject;

use crate::config::CheckMode;

/// One probe to make.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// `GET` this URL; a 2xx answer passes.
    Http(String),
    /// Connect to `host:port`.
    Tcp(String, u16),
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Http(url) => write!(f, "GET {url}"),
            Target::Tcp(host, port) => write!(f, "connect {host}:{port}"),
        }
    }
}

/// The probe for `subject`; `None` when it is not checked at all (mode `off`, or nothing to
/// connect to).
pub(crate) fn target_of(subject: &HealthSubject, app_mode: Option<CheckMode>) -> Option<Target> {
    let own_mode = subject.mode.as_deref().and_then(CheckMode::from_name);
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
    own.iter()
        .any(|name| !name.is_empty() && name.eq_ignore_ascii_case(host))
        .then(|| Target::Http(url.to_owned()))
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
