//! A server per test, `heureka-testkit`'s, started through this crate; and the request bodies
//! real clients send.

heureka_testkit::in_process_server!(InProcess);

/// A running server; it stops when the test's runtime ends.
pub type TestServer = heureka_testkit::TestServer<InProcess>;

pub use heureka_testkit::spring_body;
