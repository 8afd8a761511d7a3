//! The value types on their own: what each reads, and the one-line error naming key, value,
//! origin and what was expected.

use super::*;
use crate::values::parse_number;
use crate::Origin;

const PORT: Type<u16> = Type::new("a port from 0 to 65535", parse_number);

fn setting(value: &str) -> Setting {
    Setting {
        value: value.to_owned(),
        origin: Origin::CommandLine,
    }
}

#[test]
fn a_type_reads_its_value_or_names_key_value_origin_and_what_was_expected() {
    assert_eq!(PORT.read("server.port", setting(" 8761 ")), Ok(8761));
    assert_eq!(
        PORT.read("server.port", setting("http"))
            .unwrap_err()
            .to_string(),
        "invalid value 'http' for server.port (command line): expected a port from 0 to 65535"
    );
}

#[test]
fn an_optional_value_is_none_when_blank_and_checked_otherwise() {
    let port = Optional(PORT);
    assert_eq!(port.read("server.port", setting("")), Ok(None));
    assert_eq!(port.read("server.port", setting("  ")), Ok(None));
    assert_eq!(port.read("server.port", setting("80")), Ok(Some(80)));
    assert!(port.read("server.port", setting("x")).is_err());
}

#[test]
fn a_list_is_split_on_commas_trimmed_without_blank_items() {
    let ports = ListOf(PORT);
    assert_eq!(
        ports.read("ports", setting(" 1, 2,,3 , ")),
        Ok(vec![1, 2, 3])
    );
    assert_eq!(ports.read("ports", setting("")), Ok(vec![]));
}

#[test]
fn a_bad_list_item_is_reported_on_its_own() {
    let ports = ListOf(PORT);
    assert_eq!(
        ports
            .read("ports", setting("1, x ,3"))
            .unwrap_err()
            .to_string(),
        "invalid value 'x' for ports (command line): expected a port from 0 to 65535"
    );
}
