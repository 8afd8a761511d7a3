//! Instances and documents shared by the tests: the canonical `ORDERS` instance of the protocol
//! spec (§4.5) and helpers to read files from `tests/data/`.

use std::collections::BTreeMap;
use std::fmt::Debug;

use heureka_core::{
    ActionType, Application, Applications, DataCenterClass, DataCenterInfo, Instance,
    InstanceStatus, Millis,
};
use heureka_wire::DecodeError;

#[path = "../support/spring.rs"]
mod spring;
pub use spring::{port, spring_instance};

/// "Parse time" handed to decoders.
pub const NOW: Millis = 1_800_000_000_000;

/// The instance of the spec's canonical full-registry example.
pub fn orders() -> Instance {
    let mut i = spring_instance("orders", "10.0.0.5:orders:8080", "10.0.0.5", "orders");
    i.last_dirty_timestamp = 1_714_550_399_000;
    i.action_type = Some(ActionType::Added);
    i
}

/// A registry document holding the given instances, one application per distinct `app`.
pub fn registry(versions_delta: i64, hash: &str, instances: Vec<Instance>) -> Applications {
    let mut applications: Vec<Application> = Vec::new();
    for instance in instances {
        match applications.iter_mut().find(|a| a.name == instance.app) {
            Some(app) => app.instances.push(instance),
            None => applications.push(Application {
                name: instance.app.clone(),
                instances: vec![instance],
            }),
        }
    }
    Applications {
        versions_delta,
        apps_hashcode: hash.to_owned(),
        applications,
    }
}

/// A delta of version 42 (hash `UP_3_`) in which the ORDERS instance was deleted.
pub fn orders_deleted() -> Applications {
    let mut gone = orders();
    gone.action_type = Some(ActionType::Deleted);
    registry(42, "UP_3_", vec![gone])
}

/// An AWS data center with the given metadata.
pub fn amazon(metadata: &[(&str, &str)]) -> DataCenterInfo {
    DataCenterInfo {
        class: DataCenterClass::Amazon,
        name: "Amazon".to_owned(),
        metadata: metadata
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    }
}

/// An instance that exercises every optional part of the model.
pub fn everything() -> Instance {
    let mut i = orders();
    i.instance_id = Some("i-0abc".to_owned());
    i.app = "BILLING_SVC".to_owned();
    i.sid = "42".to_owned();
    i.status = InstanceStatus::OutOfService;
    i.overridden_status = InstanceStatus::OutOfService;
    i.country_id = 7;
    i.data_center_info = Some(amazon(&[
        ("instance-id", "i-0abc"),
        ("availability-zone", "us-east-1c"),
    ]));
    i.metadata = BTreeMap::from([
        (
            "my_key".to_owned(),
            "a \"quoted\" <value> & 'more'".to_owned(),
        ),
        ("price$".to_owned(), "€5\ttab\r\nnewline".to_owned()),
        ("empty".to_owned(), String::new()),
    ]);
    i.app_group_name = Some("PAYMENTS".to_owned());
    i.secure_health_check_url = Some(String::new());
    i.is_coordinating_discovery_server = true;
    i.action_type = Some(ActionType::Modified);
    i.asg_name = Some("billing-asg".to_owned());
    i
}

/// A file of `tests/data/`, recorded from a real client.
pub fn data(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).expect("encoders write UTF-8")
}

/// Every element of a decoded batch, each of which must have decoded.
pub fn every_item<T>(batch: Result<Vec<Result<T, DecodeError>>, DecodeError>) -> Vec<T> {
    batch
        .unwrap()
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Asserts that `decode` refuses each body for its root.
pub fn assert_wrong_roots<T: Debug>(
    decode: impl Fn(&str) -> Result<T, DecodeError>,
    bodies: &[&str],
) {
    for body in bodies {
        assert!(
            matches!(decode(body), Err(DecodeError::WrongRoot { .. })),
            "{body}"
        );
    }
}
