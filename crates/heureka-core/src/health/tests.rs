//! The precedence rule: a failing verdict only ever turns an instance's own UP into DOWN.

use super::*;
use crate::model::InstanceStatus::{Down, OutOfService, Starting, Up};

#[test]
fn with_health_only_ever_turns_up_into_down() {
    for status in [Up, Down, Starting, OutOfService, InstanceStatus::Unknown] {
        let expected = if status == Up { Down } else { status };
        assert_eq!(with_health(status, None, Health::Failing), expected);
        assert_eq!(with_health(status, None, Health::Passing), status);
    }
}
