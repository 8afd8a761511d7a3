//! The in-process server the command-line tests run against: `heureka-testkit`'s, started
//! through `heureka_server`.

use heureka_testkit::Sent;

heureka_testkit::in_process_server!(InProcess);

pub type TestServer = heureka_testkit::TestServer<InProcess>;

pub use heureka_testkit::{spring_body, spring_body_with_blob};

/// Sends `request` with the JSON `body`; the status.
pub async fn json_status(request: reqwest::RequestBuilder, body: String) -> u16 {
    request
        .header("Content-Type", "application/json")
        .body(body)
        .sent()
        .await
        .status()
        .as_u16()
}
