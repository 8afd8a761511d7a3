//! Parsers for the value types of the server's keys: Spring's conversions from
//! `heureka_config::values`, and the server's own rules on top.

use heureka_config::values::DurationUnit;
pub(crate) use heureka_config::values::{
    parse_bool, parse_http_url, parse_ip, parse_level, parse_number,
};

/// Spring's `DataSize.parse` (a bare number is bytes). Zero and sizes beyond `usize` are
/// rejected: every size Heureka reads is a limit, and none may be switched off.
pub(crate) fn parse_data_size(text: &str) -> Option<usize> {
    let bytes = heureka_config::values::parse_data_size(text).filter(|bytes| *bytes > 0)?;
    usize::try_from(bytes).ok()
}

/// Spring's `DurationStyle`, a bare number in milliseconds (the default unit of the keys that
/// use this). Zero is rejected: every duration Heureka reads is a timeout, and none of them
/// may be switched off.
pub(crate) fn parse_duration(text: &str) -> Option<std::time::Duration> {
    heureka_config::values::parse_duration(text, DurationUnit::Millis)
        .filter(|duration| !duration.is_zero())
}

/// `heureka.base-path`: starts with `/` and does not end with one.
pub(crate) fn parse_base_path(text: &str) -> Option<String> {
    let text = text.trim();
    (text.starts_with('/') && !text.ends_with('/') && !text.contains(char::is_whitespace))
        .then(|| text.to_owned())
}

/// A peer URL list entry: http(s), normalised to end with `/` as Spring Cloud's
/// `EurekaClientConfigBean.getEurekaServerServiceUrls` does.
pub(crate) fn parse_service_url(text: &str) -> Option<String> {
    let url = parse_http_url(text)?;
    Some(if url.ends_with('/') {
        url
    } else {
        format!("{url}/")
    })
}

/// `eureka.dashboard.path`: `/` or a path starting with `/`; a trailing `/` is dropped.
pub(crate) fn parse_dashboard_path(text: &str) -> Option<String> {
    let text = text.trim();
    if !text.starts_with('/') || text.contains(char::is_whitespace) {
        return None;
    }
    let trimmed = text.trim_end_matches('/');
    Some(if trimmed.is_empty() { "/" } else { trimmed }.to_owned())
}
