//! Encoding then decoding gives back the same documents, in both formats.

use heureka_core::Applications;
use heureka_wire::{
    decode_application, decode_applications, decode_instance, encode_application,
    encode_applications, encode_instance, Format,
};

use crate::fixtures::{everything, orders, registry, NOW};

fn sample() -> Applications {
    let mut no_id = orders();
    no_id.instance_id = None;
    no_id.data_center_info = None;
    no_id.metadata.clear();
    let mut other = orders();
    other.app = "OTHER".to_owned();
    registry(
        5,
        "OUT_OF_SERVICE_1_UP_3_",
        vec![orders(), everything(), no_id, other],
    )
}

/// The registry document written in `format` and read back.
fn round_trip(apps: &Applications, format: Format) -> Applications {
    decode_applications(&encode_applications(apps, format), format).unwrap()
}

#[test]
fn registry_survives_json() {
    assert_eq!(round_trip(&sample(), Format::Json), sample());
}

#[test]
fn registry_survives_xml() {
    assert_eq!(round_trip(&sample(), Format::Xml), sample());
}

#[test]
fn empty_registry_survives_both_formats() {
    let apps = registry(1, "", vec![]);
    for format in [Format::Json, Format::Xml] {
        assert_eq!(round_trip(&apps, format), apps);
    }
}

#[test]
fn instance_survives_both_formats() {
    for instance in [orders(), everything()] {
        for format in [Format::Json, Format::Xml] {
            let back = decode_instance(&encode_instance(&instance, format), format, NOW).unwrap();
            assert_eq!(back, instance, "{format:?}");
        }
    }
}

#[test]
fn application_survives_both_formats() {
    let app = sample().applications.remove(0);
    for format in [Format::Json, Format::Xml] {
        assert_eq!(
            decode_application(&encode_application(&app, format), format).unwrap(),
            app,
            "{format:?}"
        );
    }
}
