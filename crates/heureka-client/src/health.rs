//! The application's health check, the counterpart of Java's `HealthCheckHandler` (enabled in
//! Spring by `eureka.client.healthcheck.enabled`), and how its answer combines with the status
//! the application sets itself.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use heureka_core::InstanceStatus;

/// A boxed, sendable future, as [`HealthCheck::check`] returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Tells the client how the application is. It is consulted before the first registration, at
/// every instance-info replication round (`instance_info_replication_interval`) and on demand
/// ([`crate::EurekaClient::request_update`]).
///
/// Any `Fn() -> impl Future<Output = InstanceStatus>` is one:
/// `|| async { InstanceStatus::Up }`. A check that does not answer within the replication
/// interval counts as `DOWN`, as a Java handler that throws does.
pub trait HealthCheck: Send + Sync + 'static {
    fn check(&self) -> BoxFuture<'_, InstanceStatus>;
}

impl<F, Fut> HealthCheck for F
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = InstanceStatus> + Send + 'static,
{
    fn check(&self) -> BoxFuture<'_, InstanceStatus> {
        Box::pin(self())
    }
}

/// `eureka.client.healthcheck.enabled` without a health check given in code: the instance's
/// own health-check URL (`eureka.instance.health-check-url[-path]`, as registered), asked with
/// a GET; a 2xx answer is `UP`, any other answer or no answer `DOWN`. This is what the key does
/// for a Spring application, whose actuator health then decides its Eureka status. The
/// sidecar asks its application's health URL the same way.
///
/// An `https://` health URL is verified against the public roots: `eureka.client.tls.*` says
/// whom to trust as a Eureka server, not the application's own pages.
pub(crate) fn url_health_check(
    url: String,
    timeout: Duration,
) -> Result<impl HealthCheck, crate::error::ClientError> {
    let http = crate::tls::http_client(None, |builder| builder.timeout(timeout))?;
    Ok(move || {
        let request = http.get(&url);
        let url = url.clone();
        async move {
            match request.send().await {
                Ok(response) if response.status().is_success() => InstanceStatus::Up,
                // Debug only: the status change itself is logged once, by the client.
                Ok(response) => {
                    tracing::debug!(%url, status = %response.status(), "health URL: DOWN");
                    InstanceStatus::Down
                }
                Err(error) => {
                    let error = crate::tls::failure(&error);
                    tracing::debug!(%url, %error, "health URL unreachable: DOWN");
                    InstanceStatus::Down
                }
            }
        }
    })
}

/// The status to register: what the application set, unless that is `UP` and a health check
/// has answered, in which case the health check's answer.
///
/// So the health check can take a running instance down and bring it back, but it cannot
/// override an application that said it is `STARTING`, `DOWN` or `OUT_OF_SERVICE`. (Java's
/// default bridge leaves `STARTING` and `OUT_OF_SERVICE` alone too, but lets a later health
/// answer overwrite a `DOWN` the application set; here the application's word stands.)
pub(crate) fn registered_status(
    reported: InstanceStatus,
    health: Option<InstanceStatus>,
) -> InstanceStatus {
    match (reported, health) {
        (InstanceStatus::Up, Some(health)) => health,
        (reported, _) => reported,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_health_check_the_reported_status_is_registered() {
        assert_eq!(
            registered_status(InstanceStatus::Up, None),
            InstanceStatus::Up
        );
        assert_eq!(
            registered_status(InstanceStatus::Down, None),
            InstanceStatus::Down
        );
    }

    #[test]
    fn the_health_check_decides_for_an_instance_reported_up() {
        assert_eq!(
            registered_status(InstanceStatus::Up, Some(InstanceStatus::Down)),
            InstanceStatus::Down
        );
    }

    #[test]
    fn a_status_the_application_set_other_than_up_outranks_the_health_check() {
        for reported in [
            InstanceStatus::Starting,
            InstanceStatus::Down,
            InstanceStatus::OutOfService,
        ] {
            assert_eq!(
                registered_status(reported, Some(InstanceStatus::Up)),
                reported
            );
        }
    }
}
