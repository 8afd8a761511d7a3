//! The roles matrix: which role each kind of request needs, and whether what a user was granted
//! covers it. Pure: the authentication layer (`http/auth.rs`) names the request by its matched
//! route and asks [`required_role`] and [`allows`].
//!
//! Four roles (`heureka.security.users[<n>].roles`): `read` fetches the registry; `register`
//! also registers, renews and cancels, and updates metadata, for every app or only those its
//! `.apps` lists; `admin` is everything a client or an operator does (overrides, any instance,
//! ASG status); `peer` is replication. `admin` implies `register`, which implies `read`; `peer`
//! implies `read` (a peer's start-up sync fetches the registry) and nothing else.

use std::fmt;
use std::sync::Arc;

use axum::http::Method;

/// One role a user may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Read,
    Register,
    Admin,
    Peer,
}

impl Role {
    pub(crate) const ALL: [Role; 4] = [Role::Read, Role::Register, Role::Admin, Role::Peer];

    /// The name written in the configuration.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Role::Read => "read",
            Role::Register => "register",
            Role::Admin => "admin",
            Role::Peer => "peer",
        }
    }

    /// The role written as `name`, in any case.
    pub(crate) fn from_name(name: &str) -> Option<Role> {
        Role::ALL
            .into_iter()
            .find(|role| role.name().eq_ignore_ascii_case(name.trim()))
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// A set of roles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Roles(u8);

impl Roles {
    /// What `spring.security.user` holds, and anyone while authentication is off.
    pub(crate) const ALL: Roles = Roles(0b1111);

    pub(crate) fn of(roles: &[Role]) -> Roles {
        Roles(roles.iter().fold(0, |bits, role| bits | role.bit()))
    }

    pub(crate) fn has(self, role: Role) -> bool {
        self.0 & role.bit() != 0
    }

    /// Whether these roles, with what each implies, cover `needed`.
    fn cover(self, needed: Role) -> bool {
        match needed {
            Role::Read => self.0 != 0,
            Role::Register => self.has(Role::Register) || self.has(Role::Admin),
            Role::Admin => self.has(Role::Admin),
            Role::Peer => self.has(Role::Peer),
        }
    }
}

/// `read,register`: the roles as configured, for reasons and logs.
impl fmt::Display for Roles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Role::ALL
            .into_iter()
            .filter(|role| self.has(*role))
            .map(Role::name)
            .collect();
        f.write_str(&names.join(","))
    }
}

/// What a user was granted: roles, and the apps `register` is limited to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Grant {
    pub(crate) roles: Roles,
    /// Upper-cased, as Eureka names apps; `None` for every app.
    pub(crate) apps: Option<Arc<[String]>>,
    /// The namespaces the user may use, lower-cased; `None` for every one.
    pub(crate) namespaces: Option<Arc<[String]>>,
}

impl Grant {
    /// Whether the user may use namespace `name` at all (its roles decide what it does there).
    pub(crate) fn may_use(&self, name: &str) -> bool {
        self.namespaces
            .as_ref()
            .is_none_or(|namespaces| namespaces.iter().any(|allowed| allowed == name))
    }
}

/// Every role, every app, every namespace.
pub(crate) static EVERYTHING: Grant = Grant {
    roles: Roles::ALL,
    apps: None,
    namespaces: None,
};

/// Why a request was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The user's roles do not cover the one named.
    Needs(Role),
    /// The user may register, but not this app.
    AppNotListed,
}

type Cell = Option<Role>;
const READ: Cell = Some(Role::Read);
const REGISTER: Cell = Some(Role::Register);
const ADMIN: Cell = Some(Role::Admin);
const PEER: Cell = Some(Role::Peer);
/// The route serves no such method: the router answers 405, nothing happens.
const __: Cell = None;

/// One API route (its template under `{base}` and `{base}/v2`) and what each method needs.
struct Row {
    route: &'static str,
    get: Cell,
    post: Cell,
    put: Cell,
    delete: Cell,
}

const fn row(route: &'static str, get: Cell, post: Cell, put: Cell, delete: Cell) -> Row {
    Row {
        route,
        get,
        post,
        put,
        delete,
    }
}

/// The roles matrix, route by route (`routes.rs` lists the same routes). A write carrying
/// `x-netflix-discovery-replication: true` is replication whatever its route: it needs `peer`.
#[rustfmt::skip]
const MATRIX: &[Row] = &[
    //   route                          GET/HEAD  POST      PUT       DELETE
    row("/apps",                        READ,     __,       __,       __),
    row("/apps/delta",                  READ,     __,       __,       __),
    // POST: register.
    row("/apps/{app}",                  READ,     REGISTER, __,       __),
    // PUT: renew (also `?status=`, a client's own status); DELETE: cancel.
    row("/apps/{app}/{id}",             READ,     __,       REGISTER, REGISTER),
    // A status override, set or removed, is an operator's act.
    row("/apps/{app}/{id}/status",      __,       __,       ADMIN,    ADMIN),
    row("/apps/{app}/{id}/metadata",    __,       __,       REGISTER, __),
    // PUT: the drain sets OUT_OF_SERVICE, an operator's act like the override it is.
    row("/apps/{app}/{id}/drain",       READ,     __,       ADMIN,    __),
    row("/consumers",                   READ,     __,       __,       __),
    row("/instances/{id}",              READ,     __,       __,       __),
    row("/regions",                     READ,     __,       __,       __),
    row("/vips/{vip}",                  READ,     __,       __,       __),
    row("/svips/{svip}",                READ,     __,       __,       __),
    row("/asg/{asg}/status",            __,       __,       ADMIN,    __),
    row("/peerreplication/batch",       __,       PEER,     __,       __),
    row("/peerreplication/digest",      PEER,     __,       __,       __),
    row("/peerreplication/stamped",     __,       PEER,     __,       __),
    row("/peerreplication/copies",      __,       PEER,     __,       __),
    row("/peerreplication/health-checks", PEER,   __,       __,       __),
    row("/peerreplication/drain",       PEER,     __,       __,       __),
    row("/status",                      READ,     __,       __,       __),
    row("/events",                      READ,     __,       __,       __),
    row("/push",                        READ,     __,       __,       __),
    // POST: a consumer's acknowledgment of what it applied, a reader's own bookkeeping.
    row("/push/ack",                    __,       READ,     __,       __),
    row("/prometheus/sd",               READ,     __,       __,       __),
    row("/dashboard/summary",           READ,     __,       __,       __),
    row("/dashboard/lastn",             READ,     __,       __,       __),
    row("/dashboard/health-checks",     READ,     __,       __,       __),
    row("/dashboard/dashboard.js",      READ,     __,       __,       __),
    row("/dashboard/dashboard.css",     READ,     __,       __,       __),
];

/// The role a request needs: `route` is its matched route's template with the base path (and
/// `/v2`) taken off, or the whole template for routes outside the API (the dashboard's page,
/// the actuator), and `replicated` whether it carries the replication header.
pub(crate) fn required_role(method: &Method, route: &str, replicated: bool) -> Role {
    let write = !method.is_safe();
    if write && replicated {
        return Role::Peer;
    }
    let Some(row) = MATRIX.iter().find(|row| row.route == route) else {
        // The pages and the actuator are reads. A write to a route the matrix does not list
        // is refused to all but admins, so a new route is guarded before it has its row.
        return if write { Role::Admin } else { Role::Read };
    };
    let cell = match *method {
        Method::GET | Method::HEAD => row.get,
        Method::POST => row.post,
        Method::PUT => row.put,
        Method::DELETE => row.delete,
        _ => None,
    };
    cell.unwrap_or(Role::Read)
}

/// Whether `grant` covers `needed` for a request about `app` (the route's `{app}`, if any).
pub(crate) fn allows(grant: &Grant, needed: Role, app: Option<&str>) -> Result<(), Refusal> {
    let roles = grant.roles;
    if !roles.cover(needed) {
        return Err(Refusal::Needs(needed));
    }
    let limited = needed == Role::Register && !roles.has(Role::Admin);
    match (&grant.apps, app) {
        (Some(apps), Some(app)) if limited && !apps.contains(&app.to_uppercase()) => {
            Err(Refusal::AppNotListed)
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests;
