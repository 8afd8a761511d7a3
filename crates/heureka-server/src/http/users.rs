//! The users authentication knows: `spring.security.user` (every role),
//! `heureka.replication.peer-user` (`peer`) and `heureka.security.users` (their roles), each
//! proved by a password, a client certificate or both. Passwords are read as Spring Security
//! stores them: plain, `{noop}plain` or `{bcrypt}$2a$…`.

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use parking_lot::Mutex;
use ring::digest;

use crate::config::{BasicAuth, Config, Role, UserConfig};
use crate::http::basic::{constant_time_eq, Credentials};
use crate::http::roles::{Grant, Roles};

/// Verified bcrypt credentials kept at most; beyond, the cache starts over. Each user's clients
/// present one password, so a few per user is all a healthy server holds.
const CACHE_LIMIT: usize = 1024;

/// A configured password.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Password {
    /// Plain text (or `{noop}`'s): compared in constant time.
    Plain(String),
    /// A bcrypt hash (`{bcrypt}`'s).
    Bcrypt(String),
}

impl Password {
    /// Reads a password as Spring Security's delegating encoder does: a leading `{id}` names
    /// the encoding. Heureka has `bcrypt` and `noop`; without an `{id}` it is plain text.
    pub(crate) fn parse(written: &str) -> Result<Password, String> {
        let Some((id, rest)) = written
            .strip_prefix('{')
            .and_then(|rest| rest.split_once('}'))
        else {
            return Ok(Password::Plain(written.to_owned()));
        };
        match id {
            "noop" => Ok(Password::Plain(rest.to_owned())),
            "bcrypt" if bcrypt::HashParts::from_str(rest).is_ok() => {
                Ok(Password::Bcrypt(rest.to_owned()))
            }
            "bcrypt" => Err(
                "{bcrypt} must be followed by a bcrypt hash ($2a$10$ and 53 \
                 characters), such as `htpasswd -bnBC 10 \"\" password | tr -d ':\\n'` prints"
                    .to_owned(),
            ),
            other => Err(format!(
                "{{{other}}} is not an encoding Heureka reads: use {{bcrypt}}, {{noop}} or \
                 plain text"
            )),
        }
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Password::Plain(_) => "Plain(<redacted>)",
            Password::Bcrypt(_) => "Bcrypt(<redacted>)",
        })
    }
}

/// One user.
#[derive(Clone, Debug)]
pub(crate) struct Account {
    pub(crate) name: String,
    password: Option<Password>,
    certificate: Option<String>,
    pub(crate) grant: Grant,
}

/// Every user, and the bcrypt verifications already made.
#[derive(Debug)]
pub(crate) struct Users {
    accounts: Vec<Account>,
    /// SHA-256 of `user:password` (user lower-cased) to the account it proved. bcrypt costs
    /// 50-100 ms of CPU per check by design, and clients send their credentials on every
    /// heartbeat; checking once per credentials keeps heartbeats cheap. Only the digest is
    /// kept, never a password.
    verified: Mutex<HashMap<[u8; 32], usize>>,
}

impl Users {
    /// The users configured; `None` when there are none, and so no authentication.
    pub(crate) fn from_config(config: &Config) -> Option<Users> {
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
        (!accounts.is_empty()).then(|| Users {
            accounts,
            verified: Mutex::new(HashMap::new()),
        })
    }

    /// The account whose name and password `credentials` carry.
    pub(crate) async fn by_password(&self, credentials: &Credentials) -> Option<&Account> {
        // Spring's in-memory user store lower-cases names, so case never tells users apart.
        let user = credentials.user().to_lowercase();
        let index = self
            .accounts
            .iter()
            .position(|account| account.name.to_lowercase() == user)?;
        let account = &self.accounts[index];
        match account.password.as_ref()? {
            Password::Plain(expected) => {
                constant_time_eq(credentials.password().as_bytes(), expected.as_bytes())
                    .then_some(account)
            }
            Password::Bcrypt(hash) => self
                .verify_bcrypt(credentials, hash, index)
                .await
                .then_some(account),
        }
    }

    /// The account a client certificate with these names stands for, and the name that did.
    pub(crate) fn by_certificate<'a>(
        &'a self,
        names: &'a [String],
    ) -> Option<(&'a str, &'a Account)> {
        names.iter().find_map(|name| {
            self.accounts
                .iter()
                .find(|account| account.certificate.as_deref() == Some(name.as_str()))
                .map(|account| (name.as_str(), account))
        })
    }

    async fn verify_bcrypt(&self, credentials: &Credentials, hash: &str, index: usize) -> bool {
        let key = cache_key(credentials);
        if self.verified.lock().get(&key) == Some(&index) {
            return true;
        }
        let (password, hash) = (credentials.password().to_owned(), hash.to_owned());
        // A check takes tens of milliseconds of CPU: off the async workers, which serve every
        // other request meanwhile.
        let verified =
            tokio::task::spawn_blocking(move || bcrypt::verify(password, &hash).unwrap_or(false))
                .await
                .unwrap_or(false);
        if verified {
            let mut cache = self.verified.lock();
            if cache.len() >= CACHE_LIMIT {
                cache.clear();
            }
            cache.insert(key, index);
        }
        verified
    }
}

fn cache_key(credentials: &Credentials) -> [u8; 32] {
    let mut context = digest::Context::new(&digest::SHA256);
    context.update(credentials.user().to_lowercase().as_bytes());
    context.update(b":");
    context.update(credentials.password().as_bytes());
    let mut key = [0; 32];
    key.copy_from_slice(context.finish().as_ref());
    key
}

/// `spring.security.user` and the peer user: a name, a password, roles for every app.
fn basic(user: &BasicAuth, roles: Roles) -> Account {
    Account {
        name: user.name.clone(),
        password: Some(password(&user.password)),
        certificate: None,
        grant: Grant { roles, apps: None },
    }
}

fn account(user: &UserConfig) -> Account {
    Account {
        name: user.name.clone(),
        password: user.password.as_deref().map(password),
        certificate: user.certificate.clone(),
        grant: Grant {
            roles: Roles::of(&user.roles),
            apps: (!user.apps.is_empty()).then(|| user.apps.iter().cloned().collect()),
        },
    }
}

/// A password the configuration rules accepted (a malformed one stops the start-up).
fn password(written: &str) -> Password {
    Password::parse(written).unwrap_or_else(|_| Password::Plain(written.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::basic::basic_auth_header;

    /// The users of the default configuration with `user` added: `user` alone.
    fn users_with(user: UserConfig) -> Users {
        let mut config = Config::default();
        config.heureka.users.push(user);
        Users::from_config(&config).expect("a user turns authentication on")
    }

    fn reader(password: Option<String>, certificate: Option<&str>) -> UserConfig {
        UserConfig {
            name: "Reader".into(),
            password,
            certificate: certificate.map(str::to_owned),
            roles: vec![Role::Read],
            apps: Vec::new(),
        }
    }

    fn credentials(user: &str, password: &str) -> Credentials {
        Credentials::from_header(basic_auth_header(user, password).as_bytes()).unwrap()
    }

    #[test]
    fn no_user_configured_is_no_authentication() {
        assert!(Users::from_config(&Config::default()).is_none());
    }

    #[tokio::test]
    async fn a_verified_bcrypt_password_is_remembered_and_a_wrong_one_is_not() {
        let hash = bcrypt::hash("pw", 4).unwrap();
        let users = users_with(reader(Some(format!("{{bcrypt}}{hash}")), None));
        assert!(users
            .by_password(&credentials("reader", "guess"))
            .await
            .is_none());
        assert!(users.verified.lock().is_empty());
        assert!(users
            .by_password(&credentials("reader", "pw"))
            .await
            .is_some());
        assert_eq!(users.verified.lock().len(), 1);
    }

    #[tokio::test]
    async fn the_name_is_matched_ignoring_case_and_the_password_exactly() {
        let users = users_with(reader(Some("pw".into()), None));
        assert!(users
            .by_password(&credentials("READER", "pw"))
            .await
            .is_some());
        assert!(users
            .by_password(&credentials("reader", "PW"))
            .await
            .is_none());
    }

    #[tokio::test]
    async fn a_user_without_a_password_cannot_present_one() {
        let users = users_with(reader(None, Some("reader")));
        assert!(users
            .by_password(&credentials("reader", ""))
            .await
            .is_none());
    }

    #[test]
    fn a_certificate_is_the_user_one_of_its_names_is() {
        let users = users_with(reader(None, Some("reader.example.com")));
        let names = vec!["CN-only".to_owned(), "reader.example.com".to_owned()];
        let (name, account) = users.by_certificate(&names).unwrap();
        assert_eq!(
            (name, account.name.as_str()),
            ("reader.example.com", "Reader")
        );
    }

    #[test]
    fn a_password_without_an_encoding_is_plain() {
        assert_eq!(
            Password::parse("s3cret"),
            Ok(Password::Plain("s3cret".into()))
        );
    }

    #[test]
    fn noop_is_plain_text_after_it() {
        assert_eq!(
            Password::parse("{noop}s3cret"),
            Ok(Password::Plain("s3cret".into()))
        );
    }

    #[test]
    fn bcrypt_needs_a_well_formed_hash() {
        let hash = "$2a$04$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy";
        assert_eq!(
            Password::parse(&format!("{{bcrypt}}{hash}")),
            Ok(Password::Bcrypt(hash.into()))
        );
        assert!(Password::parse("{bcrypt}s3cret").is_err());
    }

    #[test]
    fn an_encoding_heureka_lacks_is_refused() {
        let error = Password::parse("{sha256}abc").unwrap_err();
        assert!(error.contains("{sha256}"), "{error}");
    }
}
