//! The value types of the client's keys, each with what a good value looks like (for the
//! error) and its parser: Spring's conversions from `heureka_config::values`.

use std::path::PathBuf;
use std::time::Duration;

use std::collections::BTreeMap;

use heureka_config::bindings::{non_empty_or, Entries};
use heureka_config::typed::{ListOf, Optional, Type};
use heureka_config::values::{parse_duration, parse_http_url, parse_number, DurationUnit};
use heureka_core::InstanceStatus;

use crate::config::DEFAULT_ZONE;

/// The default service URL map: Spring Cloud's `EurekaClientConfigBean`.
pub(crate) const DEFAULT_SERVICE_URL: &str = "http://localhost:8761/eureka/";

/// Text as written, placeholders resolved; never wrong.
pub(crate) const TEXT: Type<String> = Type::new("a value", |text| Some(text.to_owned()));
/// Trimmed text, or `None` when blank; never wrong.
pub(crate) const OPTIONAL_TEXT: Optional<String> =
    Optional(Type::new("a value", |text| Some(text.trim().to_owned())));
/// A password: taken as written (spaces may be part of one), `None` when blank.
pub(crate) const SECRET: Optional<String> =
    Optional(Type::new("a password", |text| Some(text.to_owned())));
/// A Spring resource location that is a file: `file:` is dropped; `classpath:` has no meaning
/// outside a JVM, so it is not a value this client can use.
pub(crate) const FILE: Optional<PathBuf> = Optional(Type::new(
    "a file path (file: accepted; classpath: resources do not exist outside a JVM)",
    |text| {
        let text = text.trim();
        if text.starts_with("classpath:") {
            return None;
        }
        Some(PathBuf::from(text.strip_prefix("file:").unwrap_or(text)))
    },
));
pub(crate) const BOOL: Type<bool> = Type::new("true or false", heureka_config::values::parse_bool);
/// A port, or `None` when blank: the ports whose default is another key's.
pub(crate) const OPTIONAL_PORT: Optional<u16> =
    Optional(Type::new("a port from 0 to 65535", parse_number::<u16>));
/// An interval: zero would make a task spin.
pub(crate) const SECONDS: Type<Duration> =
    Type::new("a whole number of seconds greater than 0", |text| {
        parse_duration(text, DurationUnit::Seconds).filter(|d| !d.is_zero())
    });
/// `spring.cloud.inetutils.timeout-seconds`: zero is allowed (no reverse lookup wait).
pub(crate) const TIMEOUT_SECONDS: Type<Duration> = Type::new("a whole number of seconds", |text| {
    parse_duration(text, DurationUnit::Seconds)
});
/// A back-off bound, a multiple of an interval.
pub(crate) const BOUND: Type<u32> = Type::new("a whole number greater than 0", |text| {
    parse_number::<u32>(text).filter(|bound| *bound > 0)
});
pub(crate) const REGION_NAME: Type<String> = Type::new("a region name", |text| {
    Some(text.trim().to_owned()).filter(|region| !region.is_empty())
});
pub(crate) const STATUS: Type<InstanceStatus> = Type::new(
    "one of UP, DOWN, STARTING, OUT_OF_SERVICE, UNKNOWN",
    |text| InstanceStatus::from_name(&text.trim().to_ascii_uppercase()),
);
/// A comma list of anything (patterns are checked together, in `rules.rs`); never wrong.
pub(crate) const LIST: ListOf<String> = ListOf(Type::new("a list", |item| Some(item.to_owned())));
/// Service URLs, each given a trailing `/` as Spring Cloud's
/// `EurekaClientConfigBean.getEurekaServerServiceUrls` does.
pub(crate) const SERVICE_URLS: ListOf<String> =
    ListOf(Type::new("an http:// or https:// URL", |item| {
        let url = parse_http_url(item)?;
        Some(if url.ends_with('/') {
            url
        } else {
            format!("{url}/")
        })
    }));

/// `eureka.client.service-url`: Spring Cloud's default zone when no zone lists a URL.
pub(crate) fn service_urls(zones: Entries<Vec<String>>) -> BTreeMap<String, Vec<String>> {
    non_empty_or(zones, (DEFAULT_ZONE, DEFAULT_SERVICE_URL))
}
