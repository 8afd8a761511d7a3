//! Rules over several keys or entries, applied once every key of the table is read: basic
//! authentication needs both its keys, the exposed endpoints are one list minus another, a
//! webhook needs its URL, a user its name, proof and roles, the peer map falls back to Spring's
//! default zone, names must be heartbeatable within the header limit.

use std::collections::BTreeMap;

use heureka_config::bindings::{non_empty_or, Entries};
use heureka_config::{ConfigError, Origin, Setting};

use super::model::{BasicAuth, Config, Exposure, Role, UserConfig, WebhookConfig};
use super::ssl::{self, ClientTlsKeys, RegionTrustKeys, SslKeys};
use crate::security::password::Password;

/// The values of keys that a rule over several keys turns into configuration.
pub(crate) struct Pending {
    /// `spring.security.user.name`, with its source for the error.
    pub(crate) user_name: Setting,
    /// `spring.security.user.password`, with its source for the error.
    pub(crate) user_password: Setting,
    /// `heureka.replication.peer-user.name`, with its source for the error.
    pub(crate) peer_user_name: Setting,
    /// `heureka.replication.peer-user.password`, with its source for the error.
    pub(crate) peer_user_password: Setting,
    /// `management.endpoints.web.exposure.include`, lower-cased.
    pub(crate) exposure_include: Vec<String>,
    /// `management.endpoints.web.exposure.exclude`, lower-cased.
    pub(crate) exposure_exclude: Vec<String>,
    /// Whether the Prometheus export is on: either of Spring Boot's two names turns it off.
    pub(crate) prometheus_export: bool,
    /// `heureka.webhooks[<n>].*` by index.
    webhooks: BTreeMap<u32, WebhookEntry>,
    /// `heureka.security.users[<n>].*` by index.
    users: BTreeMap<u32, UserEntry>,
    /// `heureka.namespaces.max-instances.<namespace>`, names as written.
    pub(crate) namespace_max_instances: Vec<(String, usize)>,
    /// `server.ssl.*` and the SSL bundles, as set.
    pub(crate) ssl: SslKeys,
    /// `eureka.client.tls.*`, as set.
    pub(crate) client_tls: ClientTlsKeys,
    /// `eureka.server.remote-region-trust-store` and `-password`, as set.
    pub(crate) region_trust: RegionTrustKeys,
}

/// One `heureka.webhooks[<n>]` entry as written: its URL may be missing.
#[derive(Default)]
pub(crate) struct WebhookEntry {
    pub(crate) url: Option<String>,
    pub(crate) events: Vec<String>,
}

/// One `heureka.security.users[<n>]` entry as written: any part may be missing.
#[derive(Default)]
pub(crate) struct UserEntry {
    pub(crate) name: Option<String>,
    pub(crate) password: Option<String>,
    pub(crate) certificate: Option<String>,
    pub(crate) roles: Option<Vec<Role>>,
    pub(crate) apps: Vec<String>,
    pub(crate) namespaces: Vec<String>,
}

impl Pending {
    /// Nothing read yet: every binding of the table overwrites or combines into these.
    pub(crate) fn new() -> Pending {
        let unset = || Setting {
            value: String::new(),
            origin: Origin::Default,
        };
        Pending {
            user_name: unset(),
            user_password: unset(),
            peer_user_name: unset(),
            peer_user_password: unset(),
            exposure_include: Vec::new(),
            exposure_exclude: Vec::new(),
            prometheus_export: true,
            webhooks: BTreeMap::new(),
            users: BTreeMap::new(),
            namespace_max_instances: Vec::new(),
            ssl: SslKeys::default(),
            client_tls: ClientTlsKeys::default(),
            region_trust: RegionTrustKeys::default(),
        }
    }

    /// The webhook entry at `index`.
    pub(crate) fn webhook(&mut self, index: u32) -> &mut WebhookEntry {
        self.webhooks.entry(index).or_default()
    }

    /// The user entry at `index`.
    pub(crate) fn user(&mut self, index: u32) -> &mut UserEntry {
        self.users.entry(index).or_default()
    }

    /// Applies the rules to `config`.
    pub(crate) fn finish(self, config: &mut Config) -> Result<(), ConfigError> {
        config.security = basic_auth("spring.security.user", self.user_name, self.user_password)?;
        config.heureka.replication.peer_user = basic_auth(
            "heureka.replication.peer-user",
            self.peer_user_name,
            self.peer_user_password,
        )?;
        let listed =
            |list: &[String], endpoint: &str| list.iter().any(|n| n == "*" || n == endpoint);
        let exposed = |endpoint: &str| {
            listed(&self.exposure_include, endpoint) && !listed(&self.exposure_exclude, endpoint)
        };
        config.management.exposed = Exposure {
            health: exposed("health"),
            info: exposed("info"),
            prometheus: exposed("prometheus") && self.prometheus_export,
        };
        config.heureka.webhooks = webhooks(self.webhooks)?;
        if let Some(user) = &config.security {
            check_password("spring.security.user.password", &user.password)?;
        }
        config.heureka.users = users(self.users, config)?;
        config.heureka.namespaces.max_instances =
            namespace_max_instances(self.namespace_max_instances)?;
        config.server.ssl = ssl::server_ssl(&self.ssl)?;
        config.client.tls = ssl::client_tls(&self.client_tls)?;
        config.eureka_server.regions.trust_store = ssl::region_trust(&self.region_trust)?;
        heartbeatable_names(config)
    }
}

/// `heureka.namespaces.max-instances.<namespace>` by namespace name, lower-cased; a key that
/// names no valid namespace is an error naming it.
fn namespace_max_instances(
    entries: Vec<(String, usize)>,
) -> Result<BTreeMap<String, usize>, ConfigError> {
    entries
        .into_iter()
        .map(|(name, max)| match crate::namespace_name::parse(&name) {
            Ok(name) => Ok((name, max)),
            Err(why) => Err(ConfigError::new(format!(
                "heureka.namespaces.max-instances.{name}: {why}"
            ))),
        })
        .collect()
}

/// Both or neither of `{prefix}.name` and `.password` (`spring.security.user`,
/// `heureka.replication.peer-user`).
fn basic_auth(
    prefix: &str,
    name: Setting,
    password: Setting,
) -> Result<Option<BasicAuth>, ConfigError> {
    match (name.value.is_empty(), password.value.is_empty()) {
        (true, true) => Ok(None),
        (false, false) => Ok(Some(BasicAuth {
            name: name.value,
            password: password.value,
        })),
        (false, true) => Err(ConfigError::new(format!(
            "{prefix}.name is set ({}) but {prefix}.password is not: \
             basic authentication needs both",
            name.origin
        ))),
        (true, false) => Err(ConfigError::new(format!(
            "{prefix}.password is set ({}) but {prefix}.name is not: \
             basic authentication needs both{}",
            password.origin,
            if prefix == "spring.security.user" {
                " (Spring Boot's implicit name 'user' must be written out)"
            } else {
                ""
            }
        ))),
    }
}

/// Names no longer than a heartbeat can carry: its URL holds the app name and the instance id,
/// each percent-encoded (up to 3 bytes per byte), under the longest prefix served
/// (`{base}/v2`), and the head must fit the header limit. A name that can register but never
/// heartbeat would be evicted after every register.
fn heartbeatable_names(config: &Config) -> Result<(), ConfigError> {
    let prefix = config.heureka.base_path.len() + "/v2".len();
    let header = config.connections.max_header_bytes;
    let longest = heureka_core::longest_heartbeatable_name(header, prefix);
    let max = config.heureka.limits.max_name_length;
    if max <= longest {
        return Ok(());
    }
    if longest == 0 {
        return Err(ConfigError::new(format!(
            "server.max-http-request-header-size ({header} bytes) leaves no room for the names \
             of a heartbeat's URL (heureka.limits.max-name-length is {max} bytes): raise \
             server.max-http-request-header-size"
        )));
    }
    Err(ConfigError::new(format!(
        "heureka.limits.max-name-length ({max} bytes) is too long for \
         server.max-http-request-header-size ({header} bytes): a heartbeat's URL carries the app \
         name and instance id percent-encoded; lower heureka.limits.max-name-length to at most \
         {longest} or raise server.max-http-request-header-size"
    )))
}

/// The webhooks in index order; an entry needs its URL.
fn webhooks(entries: BTreeMap<u32, WebhookEntry>) -> Result<Vec<WebhookConfig>, ConfigError> {
    entries
        .into_iter()
        .map(|(index, entry)| match entry.url {
            Some(url) => Ok(WebhookConfig {
                url,
                events: entry.events,
            }),
            None => Err(ConfigError::new(format!(
                "heureka.webhooks[{index}] has no url: each webhook needs heureka.webhooks[{index}].url"
            ))),
        })
        .collect()
}

/// The users in index order; each needs a name, a password or a certificate, and roles.
fn users(
    entries: BTreeMap<u32, UserEntry>,
    config: &Config,
) -> Result<Vec<UserConfig>, ConfigError> {
    let users = entries
        .into_iter()
        .map(|(index, entry)| Ok((index, user(index, entry)?)))
        .collect::<Result<Vec<_>, ConfigError>>()?;
    distinct_names(config, &users)?;
    distinct_certificates(&users)?;
    Ok(users.into_iter().map(|(_, user)| user).collect())
}

fn user(index: u32, entry: UserEntry) -> Result<UserConfig, ConfigError> {
    let key = |property: &str| format!("heureka.security.users[{index}].{property}");
    let set = |value: Option<String>| value.filter(|value| !value.is_empty());
    let Some(name) = set(entry.name) else {
        return Err(ConfigError::new(format!(
            "heureka.security.users[{index}] has no name: each user needs {}",
            key("name")
        )));
    };
    let (password, certificate) = (set(entry.password), set(entry.certificate));
    if password.is_none() && certificate.is_none() {
        return Err(ConfigError::new(format!(
            "heureka.security.users[{index}] ({name}) has neither a password nor a \
             certificate: set {} or {}",
            key("password"),
            key("certificate")
        )));
    }
    if let Some(password) = &password {
        check_password(&key("password"), password)?;
    }
    let Some(roles) = entry.roles.filter(|roles| !roles.is_empty()) else {
        return Err(ConfigError::new(format!(
            "{} is not set: a user needs at least one of read, register, admin, peer",
            key("roles")
        )));
    };
    Ok(UserConfig {
        name,
        password,
        certificate,
        roles,
        apps: entry.apps,
        namespaces: entry.namespaces,
    })
}

/// A password Heureka can check: plain, `{noop}…` or a well-formed `{bcrypt}…`.
fn check_password(key: &str, password: &str) -> Result<(), ConfigError> {
    Password::parse(password)
        .map(|_| ())
        .map_err(|why| ConfigError::new(format!("{key}: {why}")))
}

/// Every user name once, ignoring case as authentication matches them: a name standing for
/// two users would make which one a request is depend on the password it happens to carry.
fn distinct_names(config: &Config, users: &[(u32, UserConfig)]) -> Result<(), ConfigError> {
    let named = |key: String, name: &str| (key, name.to_lowercase());
    let mut names: Vec<(String, String)> = Vec::new();
    if let Some(user) = &config.security {
        names.push(named("spring.security.user.name".to_owned(), &user.name));
    }
    // The peers may send the clients' own credentials: then the peer user is that user.
    let peer_user = config.heureka.replication.peer_user.as_ref();
    if let Some(user) = peer_user.filter(|user| Some(*user) != config.security.as_ref()) {
        let key = "heureka.replication.peer-user.name".to_owned();
        names.push(named(key, &user.name));
    }
    for (index, user) in users {
        let key = format!("heureka.security.users[{index}].name");
        names.push(named(key, &user.name));
    }
    first_repeat(&names).map_or(Ok(()), |(first, second, name)| {
        Err(ConfigError::new(format!(
            "{second} ({name}) names the same user as {first}: user names must differ \
             (ignoring case)"
        )))
    })
}

/// Every certificate name once: a certificate stands for one user.
fn distinct_certificates(users: &[(u32, UserConfig)]) -> Result<(), ConfigError> {
    let certificates: Vec<(String, String)> = users
        .iter()
        .filter_map(|(index, user)| {
            let key = format!("heureka.security.users[{index}].certificate");
            user.certificate.clone().map(|name| (key, name))
        })
        .collect();
    first_repeat(&certificates).map_or(Ok(()), |(first, second, name)| {
        Err(ConfigError::new(format!(
            "{second} ({name}) names the same certificate as {first}: a certificate stands \
             for one user"
        )))
    })
}

/// The first value that two keys share: `(first key, second key, value)`.
fn first_repeat(values: &[(String, String)]) -> Option<(&str, &str, &str)> {
    values.iter().enumerate().find_map(|(at, (second, value))| {
        values[..at]
            .iter()
            .find(|(_, earlier)| earlier == value)
            .map(|(first, _)| (first.as_str(), second.as_str(), value.as_str()))
    })
}

/// The default `eureka.client.service-url` map: Spring Cloud's `EurekaClientConfigBean`.
pub(crate) const DEFAULT_ZONE: (&str, &str) = ("defaultZone", "http://localhost:8761/eureka/");

/// `eureka.client.service-url`: Spring Cloud's default zone when no zone lists a URL.
pub(crate) fn service_urls(zones: Entries<Vec<String>>) -> BTreeMap<String, Vec<String>> {
    non_empty_or(zones, DEFAULT_ZONE)
}

/// `logging.level`: the root level first, then by target.
pub(crate) fn root_first(mut levels: Vec<(String, String)>) -> Vec<(String, String)> {
    levels.sort_by_key(|(target, _)| !target.eq_ignore_ascii_case("root"));
    levels
}

/// `eureka.server.remote-region-urls-with-name.<region>`: names trimmed and lower-cased, as
/// Eureka looks regions up; a blank URL unsets its region.
pub(crate) fn region_urls(entries: Entries<String>) -> Vec<(String, String)> {
    entries
        .into_iter()
        .map(|(region, url)| (region.trim().to_lowercase(), url))
        .filter(|(region, url)| !region.is_empty() && !url.trim().is_empty())
        .collect()
}

/// `eureka.server.remote-region-app-whitelist.<region>`: by lower-cased region name, empty
/// lists dropped (an empty whitelist is no whitelist, as in Eureka).
pub(crate) fn region_whitelist(entries: Entries<Vec<String>>) -> BTreeMap<String, Vec<String>> {
    entries
        .into_iter()
        .map(|(region, apps)| (region.trim().to_lowercase(), apps))
        .filter(|(_, apps)| !apps.is_empty())
        .collect()
}
