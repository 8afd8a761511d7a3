//! Who made a request, as authentication established it. The authentication layer puts it in
//! the request's extensions; the role checks and the audit trail read it with [`of`].

use axum::http::Extensions;

/// The identity a request was authenticated as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Principal {
    /// Authentication is off: anyone who reaches the server.
    Anonymous,
    /// A user by name: `spring.security.user`.
    User(String),
    /// The peers' own credentials (`heureka.replication.peer-user`), by user name.
    Peer(String),
}

// Read by the roles check and the audit trail (issue 20, items 4 and 5), which come next.
#[allow(dead_code)]
impl Principal {
    /// How it is named in logs and the audit trail.
    pub(crate) fn name(&self) -> &str {
        match self {
            Principal::Anonymous => "anonymous",
            Principal::User(name) | Principal::Peer(name) => name,
        }
    }
}

#[allow(dead_code)]
/// The request's principal; `Anonymous` when no authentication ran (it is off).
pub(crate) fn of(extensions: &Extensions) -> Principal {
    extensions
        .get::<Principal>()
        .cloned()
        .unwrap_or(Principal::Anonymous)
}
