//! Authentication and the roles check for the whole API, on when any user is configured
//! (`spring.security.user`, `heureka.security.users`, `heureka.replication.peer-user`).
//!
//! A request proves who it is with HTTP Basic credentials (what Spring Security's default
//! setup reads, and what clients with `http://user:pass@host/eureka/` in their service URL
//! send; `security/basic.rs`), or, without them, with a client certificate a user is mapped
//! to (`security/users.rs`). The [`Principal`] goes into the request; then the request must be
//! within the user's roles (`security/roles.rs`), named by its matched route.

use std::sync::Arc;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use parking_lot::Mutex;

use crate::clock;
use crate::connection::ClientCertificate;
use crate::http::error::ApiError;
use crate::http::origin::origin;
use crate::log_budget::LogBudget;
use crate::namespaces::{InNamespace, Namespaces, Vacancy};
use crate::security::principal::Principal;
use crate::security::roles::{self, Refusal, Role};
use crate::security::users::authenticate;
use crate::state::SharedState;
use heureka_core::Origin;

/// Refusals beyond a user's roles logged per minute at most; the rest are counted into the
/// next line.
const REFUSALS_LOGGED_PER_MINUTE: u32 = 10;

/// The middleware's state: the server's, the API's prefixes and the refusals' log budget.
pub(crate) struct Guard {
    state: SharedState,
    /// `{base}/v2` then `{base}`: taken off a matched route to find its row in the matrix.
    prefixes: [String; 2],
    refusals: Mutex<LogBudget>,
}

impl Guard {
    pub(crate) fn new(state: SharedState, base_path: &str) -> Arc<Guard> {
        Arc::new(Guard {
            state,
            prefixes: [format!("{base_path}/v2"), base_path.to_owned()],
            refusals: Mutex::new(LogBudget::new(REFUSALS_LOGGED_PER_MINUTE)),
        })
    }
}

/// Middleware: lets a request through only as a configured user, and within its roles.
pub(crate) async fn require_user(
    State(guard): State<Arc<Guard>>,
    mut request: Request,
    next: Next,
) -> Response {
    let presented = request.headers().get(header::AUTHORIZATION).cloned();
    let certificate = request.extensions().get::<ClientCertificate>().cloned();
    let Some(principal) = authenticate(
        guard.state.security.users.as_ref(),
        presented.as_ref().map(HeaderValue::as_bytes),
        certificate.as_ref().map(|names| names.0.as_slice()),
    )
    .await
    else {
        return unauthenticated(&guard.state, &request);
    };
    if let Err(reason) = guard.authorise(&principal, &request) {
        return ApiError::NotPermitted(reason).into_response();
    }
    request.extensions_mut().insert(principal);
    next.run(request).await
}

/// Spring Security logs failed authentication at debug only; an operator chasing a client
/// that cannot register needs to see it, so Heureka says which request and why, at INFO, and
/// never what was presented.
fn unauthenticated(state: &SharedState, request: &Request) -> Response {
    let why = if request.headers().contains_key(header::AUTHORIZATION) {
        "wrong credentials"
    } else if request.extensions().get::<ClientCertificate>().is_some() {
        "a certificate no user is mapped to, and no credentials"
    } else {
        "no credentials"
    };
    tracing::info!(
        method = %request.method(),
        path = request.uri().path(),
        why,
        "rejected unauthenticated request (401)"
    );
    crate::http::audit::credentials_refused(state, request);
    ApiError::Unauthorized.into_response()
}

impl Guard {
    /// `Err(reason)` when the request is in a namespace the principal may not use, or needs
    /// a role its grant does not cover.
    fn authorise(&self, principal: &Principal, request: &Request) -> Result<(), String> {
        // A namespace not created yet is served by the vacant state: the name asked for counts.
        // The listing (which carries the directory) is in no namespace: it shows each user
        // the namespaces it may use.
        let extensions = request.extensions();
        let namespace = match extensions.get::<Vacancy>() {
            Some(vacancy) => &vacancy.name,
            None => &InNamespace::of(extensions).unwrap_or(&self.state).namespace,
        };
        let listing = request.extensions().get::<Arc<Namespaces>>().is_some();
        if !listing && !principal.grant().may_use(namespace) {
            return Err(format!(
                "user '{}' may not use namespace '{namespace}': it is limited to {}",
                principal.name(),
                principal
                    .grant()
                    .namespaces
                    .as_deref()
                    .unwrap_or_default()
                    .join(",")
            ));
        }
        let template = request
            .extensions()
            .get::<MatchedPath>()
            .map_or("", MatchedPath::as_str);
        let route = self.under_base(template);
        let replicated = origin(request.headers()) == Origin::Peer;
        let needed = roles::required_role(request.method(), route, replicated);
        let app = app_of(template, request.uri().path());
        let Err(refusal) = roles::allows(principal.grant(), needed, app.as_deref()) else {
            return Ok(());
        };
        let reason = reason(
            principal,
            request.method(),
            request.uri().path(),
            refusal,
            needed,
        );
        if let Some(suppressed) = self.refusals.lock().take(clock::instant()) {
            tracing::info!(
                user = principal.name(),
                method = %request.method(),
                path = request.uri().path(),
                needed = needed.name(),
                suppressed,
                "refused a request beyond its user's roles (403)"
            );
        }
        Err(reason)
    }

    /// The route's template under the API's prefix, or the whole template outside the API.
    fn under_base<'a>(&self, template: &'a str) -> &'a str {
        self.prefixes
            .iter()
            .find_map(|prefix| {
                template
                    .strip_prefix(prefix.as_str())
                    .filter(|rest| rest.starts_with('/'))
            })
            .unwrap_or(template)
    }
}

/// The `{app}` of a request: the path's segment where its route's template has `{app}`,
/// percent-decoded.
fn app_of(template: &str, path: &str) -> Option<String> {
    let at = template.split('/').position(|segment| segment == "{app}")?;
    let segment = path.split('/').nth(at)?;
    Some(
        percent_encoding::percent_decode_str(segment)
            .decode_utf8_lossy()
            .into_owned(),
    )
}

/// `user 'reader' (roles read) may not POST /eureka/apps/ORDERS: needs register`.
fn reason(
    principal: &Principal,
    method: &Method,
    path: &str,
    refusal: Refusal,
    needed: Role,
) -> String {
    let grant = principal.grant();
    let who = match principal {
        Principal::Certificate { name, user, .. } => {
            format!(
                "certificate '{name}' (user '{user}', roles {})",
                grant.roles
            )
        }
        _ => format!("user '{}' (roles {})", principal.name(), grant.roles),
    };
    let why = match (refusal, &grant.apps) {
        (Refusal::AppNotListed, Some(apps)) => {
            format!("{} is limited to {}", needed.name(), apps.join(","))
        }
        _ => format!("needs {}", needed.name()),
    };
    format!("{who} may not {method} {path}: {why}")
}

/// Whether a request counts as authorized: authentication is off, or it proves a user. For
/// endpoints that answer everyone but show details only to authorized callers
/// (`/actuator/health`).
pub(crate) async fn is_authorized(
    state: &SharedState,
    headers: &HeaderMap,
    certificate: Option<ClientCertificate>,
) -> bool {
    let presented = headers
        .get(header::AUTHORIZATION)
        .map(HeaderValue::as_bytes);
    let names = certificate.as_ref().map(|names| names.0.as_slice());
    authenticate(state.security.users.as_ref(), presented, names)
        .await
        .is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_app_is_the_paths_segment_where_the_route_has_it() {
        let app = app_of("/eureka/v2/apps/{app}/{id}", "/eureka/v2/apps/ORDERS/o-1");
        assert_eq!(app.as_deref(), Some("ORDERS"));
    }

    #[test]
    fn the_app_is_percent_decoded() {
        let app = app_of("/eureka/apps/{app}", "/eureka/apps/MY%20APP");
        assert_eq!(app.as_deref(), Some("MY APP"));
    }

    #[test]
    fn a_route_without_an_app_has_none() {
        assert_eq!(app_of("/eureka/apps", "/eureka/apps"), None);
    }
}
