//! Sending one request to the first service URL that answers it (§8.6, simplified).
//!
//! The URLs come in order of preference, the client's own zone first. As Java's
//! `RetryableEurekaHttpClient`: the URL that last succeeded is kept ("sticky"); a URL that fails
//! with a connection error or a 5xx is quarantined and the request is tried on the next. Unlike
//! Java, a quarantine lapses after a configured time rather than when two thirds of the URLs are
//! quarantined, and when every URL is quarantined all are tried again, so a client never gives
//! up on a recovered server.
//!
//! As Java's `SessionedEurekaHttpClient`, a session ends after the reconnect interval ± 50 %:
//! the sticky URL and the quarantines are forgotten and the next request starts again from the
//! preferred URL. So a client that failed over to another zone comes back to its own, and
//! clients that all failed over at once spread back out at different times.

use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use reqwest::{Client, RequestBuilder, Response};

use crate::error::ClientError;
use crate::tls::ClientTls;

pub(crate) struct Transport {
    http: Client,
    /// Base URLs without their trailing `/`.
    urls: Vec<String>,
    quarantine: Duration,
    session: Duration,
    state: Mutex<Rotation>,
}

struct Rotation {
    /// The index of the URL tried first.
    sticky: usize,
    /// Until when each URL is skipped, by index.
    quarantined_until: Vec<Option<Instant>>,
    /// When the current session ends.
    session_ends: Instant,
}

impl Transport {
    /// `tls` is what `https://` URLs are verified against (and the certificate presented);
    /// its stores are read here, so a bad one fails the client's start.
    pub(crate) fn new(
        urls: &[String],
        quarantine: Duration,
        session: Duration,
        (connect_timeout, timeout): (Duration, Duration),
        tls: Option<&ClientTls>,
    ) -> Result<Transport, ClientError> {
        if urls.is_empty() {
            return Err(ClientError::NoServiceUrls);
        }
        let http = crate::tls::http_client(tls, |builder| {
            builder.connect_timeout(connect_timeout).timeout(timeout)
        })?;
        Ok(Transport {
            http,
            urls: urls
                .iter()
                .map(|url| url.trim_end_matches('/').to_owned())
                .collect(),
            quarantine,
            session,
            state: Mutex::new(Rotation {
                sticky: 0,
                quarantined_until: vec![None; urls.len()],
                session_ends: Instant::now() + jittered(session),
            }),
        })
    }

    /// Sends the request `build` makes for a base URL and a path, on each candidate URL in turn
    /// until one answers with something other than a connection error or a 5xx.
    pub(crate) async fn send(
        &self,
        path: &str,
        build: impl Fn(&Client, String) -> RequestBuilder,
    ) -> Result<Response, ClientError> {
        self.send_at(path, build)
            .await
            .map(|(response, _)| response)
    }

    /// [`Transport::send`], also naming the base URL (without its `/`) that answered, for a
    /// request that must follow up on the same server (the push's acknowledgements).
    pub(crate) async fn send_at(
        &self,
        path: &str,
        build: impl Fn(&Client, String) -> RequestBuilder,
    ) -> Result<(Response, String), ClientError> {
        let mut last_error = String::new();
        for index in self.candidates() {
            let url = format!("{}/{path}", self.urls[index]);
            match build(&self.http, url).send().await {
                Ok(response) if !response.status().is_server_error() => {
                    self.succeeded(index);
                    return Ok((response, self.urls[index].clone()));
                }
                Ok(response) => {
                    last_error = format!("{} answered {}", self.urls[index], response.status());
                }
                Err(error) => {
                    last_error = format!("{}: {}", self.urls[index], crate::tls::failure(&error));
                }
            }
            tracing::debug!(url = %self.urls[index], error = %last_error, "service URL failed");
            self.failed(index);
        }
        Err(ClientError::AllServersFailed(last_error))
    }

    /// Skips the URL whose base [`Transport::send_at`] named for the quarantine, as a failed one:
    /// for an answer that is not a failure of the request but says "not here, now" (a push
    /// stream refused with 429 while the server has too many).
    pub(crate) fn quarantine(&self, base: &str) {
        if let Some(index) = self.urls.iter().position(|url| url == base) {
            self.failed(index);
        }
    }

    /// The HTTP client every request is sent with (TLS, timeouts), for one sent to a base URL
    /// [`Transport::send_at`] named, without failing over.
    pub(crate) fn http(&self) -> &Client {
        &self.http
    }

    /// Every URL once, from the sticky one on, those in quarantine left out unless that leaves
    /// none.
    fn candidates(&self) -> Vec<usize> {
        let now = Instant::now();
        let mut state = self.state.lock().expect("transport state lock");
        if state.session_ends <= now {
            tracing::debug!("session over; starting again from the preferred service URL");
            state.sticky = 0;
            state.quarantined_until.fill(None);
            state.session_ends = now + jittered(self.session);
        }
        let n = self.urls.len();
        let ordered = (0..n).map(|offset| (state.sticky + offset) % n);
        let open: Vec<usize> = ordered
            .clone()
            .filter(|&index| state.quarantined_until[index].is_none_or(|until| until <= now))
            .collect();
        if open.is_empty() {
            ordered.collect()
        } else {
            open
        }
    }

    fn succeeded(&self, index: usize) {
        let mut state = self.state.lock().expect("transport state lock");
        state.sticky = index;
        state.quarantined_until[index] = None;
    }

    fn failed(&self, index: usize) {
        let mut state = self.state.lock().expect("transport state lock");
        state.quarantined_until[index] = Some(Instant::now() + self.quarantine);
    }
}

/// `session` ± 50 %, at random.
fn jittered(session: Duration) -> Duration {
    session.mul_f64(0.5 + fastrand::f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: Duration = Duration::from_secs(3600);

    fn transport(quarantine: Duration) -> Transport {
        transport_with_session(quarantine, LONG)
    }

    fn transport_with_session(quarantine: Duration, session: Duration) -> Transport {
        let urls = ["http://a/eureka/", "http://b/eureka/", "http://c/eureka/"].map(String::from);
        Transport::new(
            &urls,
            quarantine,
            session,
            (Duration::from_secs(1), Duration::from_secs(1)),
            None,
        )
        .unwrap()
    }

    #[test]
    fn urls_are_tried_in_order_from_the_one_that_last_answered() {
        let transport = transport(LONG);
        assert_eq!(transport.candidates(), [0, 1, 2]);
        transport.succeeded(1);
        assert_eq!(transport.candidates(), [1, 2, 0]);
    }

    #[test]
    fn a_failed_url_is_skipped_while_quarantined() {
        let transport = transport(LONG);
        transport.failed(0);
        assert_eq!(transport.candidates(), [1, 2]);
    }

    #[test]
    fn a_lapsed_quarantine_lets_the_url_back_in() {
        let transport = transport(Duration::ZERO);
        transport.failed(0);
        assert_eq!(transport.candidates(), [0, 1, 2]);
    }

    #[test]
    fn when_every_url_is_quarantined_all_are_tried_again() {
        let transport = transport(LONG);
        for index in 0..3 {
            transport.failed(index);
        }
        assert_eq!(transport.candidates(), [0, 1, 2]);
    }

    #[tokio::test(start_paused = true)]
    async fn when_the_session_ends_the_preferred_url_is_tried_first_again() {
        let transport = transport_with_session(LONG, Duration::from_secs(1200));
        transport.failed(0);
        transport.succeeded(1);
        assert_eq!(transport.candidates(), [1, 2]);
        // The longest a session lasts: 1200 s + 50 %.
        tokio::time::advance(Duration::from_secs(1800)).await;
        assert_eq!(transport.candidates(), [0, 1, 2]);
    }

    #[test]
    fn a_url_quarantined_by_its_base_is_skipped() {
        let transport = transport(LONG);
        transport.quarantine("http://a/eureka");
        assert_eq!(transport.candidates(), [1, 2]);
    }

    #[test]
    fn no_service_url_is_an_error() {
        let error = Transport::new(
            &[],
            Duration::ZERO,
            LONG,
            (Duration::from_secs(1), Duration::from_secs(1)),
            None,
        )
        .err();
        assert!(matches!(error, Some(ClientError::NoServiceUrls)));
    }
}
