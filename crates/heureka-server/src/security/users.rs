//! The users authentication knows: `spring.security.user` (every role),
//! `heureka.replication.peer-user` (`peer`) and `heureka.security.users` (their roles), each
//! proved by a password (`password.rs`), a client certificate or both, and who a request is
//! by what it presents ([`authenticate`]). The configuration is mapped to accounts above this
//! module (`state/security.rs`), so nothing here reads a key.

use std::collections::HashMap;

use parking_lot::Mutex;
use ring::digest;

use crate::security::basic::{constant_time_eq, Credentials};
use crate::security::password::Password;
use crate::security::principal::Principal;
use crate::security::roles::Grant;

/// Verified bcrypt credentials kept at most; beyond, the cache starts over. Each user's clients
/// present one password, so a few per user is all a healthy server holds.
const CACHE_LIMIT: usize = 1024;

/// One user.
#[derive(Clone, Debug)]
pub(crate) struct Account {
    pub(crate) name: String,
    password: Option<Password>,
    certificate: Option<String>,
    pub(crate) grant: Grant,
}

impl Account {
    /// A user named `name`, proved by `password` (as written in the configuration) or by a
    /// client certificate named `certificate`, granted `grant`.
    pub(crate) fn new(
        name: &str,
        password: Option<&str>,
        certificate: Option<&str>,
        grant: Grant,
    ) -> Account {
        Account {
            name: name.to_owned(),
            password: password.map(self::password),
            certificate: certificate.map(str::to_owned),
            grant,
        }
    }
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
    /// These accounts; `None` when there are none, and so no authentication.
    pub(crate) fn new(accounts: Vec<Account>) -> Option<Users> {
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

/// A password the configuration rules accepted (a malformed one stops the start-up).
fn password(written: &str) -> Password {
    Password::parse(written).unwrap_or_else(|_| Password::Plain(written.to_owned()))
}

/// Who a request is: the user its Basic credentials (`presented`, its `Authorization` value)
/// name and prove, else the user its client certificate (`certificate`, the certificate's
/// names) stands for; `Anonymous` when authentication is off (no `users`); `None` when it is
/// on and the request proves neither.
pub(crate) async fn authenticate(
    users: Option<&Users>,
    presented: Option<&[u8]>,
    certificate: Option<&[String]>,
) -> Option<Principal> {
    let Some(users) = users else {
        return Some(Principal::Anonymous);
    };
    if let Some(presented) = presented {
        let credentials = Credentials::from_header(presented)?;
        let account = users.by_password(&credentials).await?;
        return Some(Principal::User {
            name: account.name.clone(),
            grant: account.grant.clone(),
        });
    }
    let (name, account) = users.by_certificate(certificate?)?;
    Some(Principal::Certificate {
        name: name.to_owned(),
        user: account.name.clone(),
        grant: account.grant.clone(),
    })
}

#[cfg(test)]
mod tests;
