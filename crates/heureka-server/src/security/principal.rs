//! Who made a request, as authentication established it (`users.rs`). The authentication
//! layer (`http/auth.rs`) puts it in the request's extensions; the role checks and the audit
//! trail read it back (`http/principal.rs`).

use crate::security::roles::{Grant, EVERYTHING};

/// The identity a request was authenticated as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Principal {
    /// Authentication is off: anyone who reaches the server, with every role.
    Anonymous,
    /// A user by password: `spring.security.user` (every role), one of
    /// `heureka.security.users`, or `heureka.replication.peer-user` (`peer`), by its configured
    /// name.
    User { name: String, grant: Grant },
    /// A client certificate standing for a user (`heureka.security.users[<n>].certificate`):
    /// `name` is the certificate's name that matched, `user` the user's.
    Certificate {
        name: String,
        user: String,
        grant: Grant,
    },
}

impl Principal {
    /// How it is named in logs and the audit trail: the user, however it authenticated.
    pub(crate) fn name(&self) -> &str {
        match self {
            Principal::Anonymous => "anonymous",
            Principal::User { name, .. } => name,
            Principal::Certificate { user, .. } => user,
        }
    }

    /// What it may do.
    pub(crate) fn grant(&self) -> &Grant {
        match self {
            Principal::Anonymous => &EVERYTHING,
            Principal::User { grant, .. } | Principal::Certificate { grant, .. } => grant,
        }
    }
}
