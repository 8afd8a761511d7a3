//! The in-process server the command-line tests run against: `heureka-testkit`'s, started
//! through `heureka_server`.

heureka_testkit::in_process_server!(InProcess);

pub type TestServer = heureka_testkit::TestServer<InProcess>;

pub use heureka_testkit::spring_body;
