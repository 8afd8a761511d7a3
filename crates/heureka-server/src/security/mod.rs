//! Who may do what, below the HTTP side: the users and their passwords, certificates standing
//! for users, the roles and their matrix (which role each request needs), Basic credentials,
//! the names a browser may reach this server under, and where a request comes from (a page's
//! origin, a write's `Origin`). Pure rules over plain values: no request types and no
//! configuration keys. `http/` adapts them to requests (reads the headers, asks, maps a
//! refusal to `ApiError`); `config` parses the values (roles, passwords, origins, host
//! patterns) with them; `state` builds them from the configuration.

pub(crate) mod basic;
pub(crate) mod hosts;
pub(crate) mod origins;
pub(crate) mod password;
pub(crate) mod principal;
pub(crate) mod roles;
pub(crate) mod users;
