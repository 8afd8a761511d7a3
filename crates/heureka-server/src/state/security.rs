//! The state's security part: who may do what, built from the configuration with
//! `security`'s values: the users (`spring.security.user`, `heureka.replication.peer-user`,
//! `heureka.security.users`), the peers' credentials, the names a browser may reach this server
//! under. Built here rather than in `security`, which reads no
//! configuration.

use crate::config::{BasicAuth, Config, Role, UserConfig};
use crate::replication::OwnAddress;
use crate::security::basic::basic_auth_header;
use crate::security::hosts::AllowedHosts;
use crate::security::roles::{Grant, Roles};
use crate::security::users::{Account, Users};

/// Who may do what, resolved once at start-up.
#[derive(Debug)]
pub(crate) struct Security {
    /// The users authentication knows; `None` when none is configured: authentication off.
    pub(crate) users: Option<Users>,
    /// The `Authorization` header value only peers send (`heureka.replication.peer-user.*`).
    pub(crate) peer_auth_header: Option<String>,
    /// `heureka.replication.peers-only`: replication only from peers (`http/peers_only.rs`).
    pub(crate) peers_only: bool,
    /// `heureka.security.allowed-origins`, normalised: the foreign origins that may write.
    pub(crate) allowed_origins: Vec<String>,
    /// The names a browser may reach this server under: its own, its peers',
    /// `heureka.security.allowed-hosts` (`security/hosts.rs`).
    pub(crate) allowed_hosts: AllowedHosts,
}

impl Security {
    /// `port` is the port listened on, by which this server recognises itself among the
    /// configured peers.
    pub(crate) fn from_config(config: &Config, port: u16) -> Security {
        Security {
            users: users(config),
            peer_auth_header: config
                .heureka
                .replication
                .peer_user
                .as_ref()
                .map(|auth| basic_auth_header(&auth.name, &auth.password)),
            peers_only: config.heureka.replication.peers_only,
            allowed_origins: config.heureka.allowed_origins.clone(),
            allowed_hosts: allowed_hosts(config, port),
        }
    }
}

/// The users configured; `None` when there are none, and so no authentication.
pub(crate) fn users(config: &Config) -> Option<Users> {
    let mut accounts = Vec::new();
    if let Some(user) = &config.security {
        accounts.push(basic(user, Roles::ALL));
    }
    let peer_user = config.heureka.replication.peer_user.as_ref();
    // The same credentials as the spring user's are that user, with every role.
    if let Some(user) = peer_user.filter(|user| Some(*user) != config.security.as_ref()) {
        accounts.push(basic(user, Roles::of(&[Role::Peer])));
    }
    accounts.extend(config.heureka.users.iter().map(account));
    Users::new(accounts)
}

/// `spring.security.user` and the peer user: a name, a password, roles for every app.
fn basic(user: &BasicAuth, roles: Roles) -> Account {
    Account::new(
        &user.name,
        Some(&user.password),
        None,
        Grant {
            roles,
            apps: None,
            namespaces: None,
        },
    )
}

fn account(user: &UserConfig) -> Account {
    Account::new(
        &user.name,
        user.password.as_deref(),
        user.certificate.as_deref(),
        Grant {
            roles: Roles::of(&user.roles),
            apps: (!user.apps.is_empty()).then(|| user.apps.iter().cloned().collect()),
            namespaces: (!user.namespaces.is_empty())
                .then(|| user.namespaces.iter().cloned().collect()),
        },
    )
}

/// This server's own names and its peers' (`security/hosts.rs`'s module docs), and
/// `heureka.security.allowed-hosts`. `port` is the port listened on, by which this server
/// recognises itself among the configured peers.
fn allowed_hosts(config: &Config, port: u16) -> AllowedHosts {
    let own = OwnAddress::from_config(config, port).hosts;
    let urls = config
        .client
        .service_url
        .values()
        .flatten()
        .chain(&config.eureka_server.my_url);
    let url_hosts: Vec<String> = urls
        .filter_map(|url| {
            url::Url::parse(url).ok().and_then(|url| {
                url.host_str().map(|host| {
                    host.trim_start_matches('[')
                        .trim_end_matches(']')
                        .to_owned()
                })
            })
        })
        .collect();
    let patterns = own
        .iter()
        .chain(&url_hosts)
        .chain(&config.heureka.allowed_hosts);
    AllowedHosts::new(patterns.map(String::as_str))
}
