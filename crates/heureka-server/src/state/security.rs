//! The configuration turned into `security`'s values: the users (`spring.security.user`,
//! `heureka.replication.peer-user`, `heureka.security.users`) and the names a browser may
//! reach this server under. Here rather than in `security`, which reads no configuration.

use crate::config::{BasicAuth, Config, Role, UserConfig};
use crate::replication::OwnAddress;
use crate::security::hosts::AllowedHosts;
use crate::security::roles::{Grant, Roles};
use crate::security::users::{Account, Users};

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
        Grant { roles, apps: None },
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
        },
    )
}

/// This server's own names and its peers' (`security/hosts.rs`'s module docs), and
/// `heureka.security.allowed-hosts`. `port` is the port listened on, by which this server
/// recognises itself among the configured peers.
pub(crate) fn allowed_hosts(config: &Config, port: u16) -> AllowedHosts {
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
