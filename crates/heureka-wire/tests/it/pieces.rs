//! An `applications` document assembled from pieces is the document, byte for byte.

use heureka_core::{Application, Applications};
use heureka_wire::{encode_applications, ApplicationsPieces, Format};

use crate::fixtures::orders;

/// The document assembled from its pieces: head, entries with separators, tail.
pub fn assembled(apps: &Applications, format: Format) -> Vec<u8> {
    let pieces = ApplicationsPieces { format };
    let mut out = pieces.head(apps.versions_delta, &apps.apps_hashcode);
    for (n, app) in apps.applications.iter().enumerate() {
        if n > 0 {
            out.extend_from_slice(pieces.separator());
        }
        out.extend_from_slice(&pieces.entry(app));
    }
    out.extend_from_slice(pieces.tail());
    out
}

fn two_apps() -> Applications {
    let mut payments = orders();
    payments.app = "PAYMENTS".to_owned();
    payments.instance_id = Some("10.0.0.6:payments:8080".to_owned());
    Applications {
        versions_delta: 1,
        apps_hashcode: "UP_3_".to_owned(),
        applications: vec![
            Application {
                name: "ORDERS".to_owned(),
                instances: vec![orders(), orders()],
            },
            Application {
                name: "PAYMENTS".to_owned(),
                instances: vec![payments],
            },
        ],
    }
}

fn empty() -> Applications {
    Applications {
        versions_delta: 1,
        apps_hashcode: String::new(),
        applications: vec![],
    }
}

#[test]
fn json_pieces_assemble_to_the_document() {
    for apps in [two_apps(), empty()] {
        assert_eq!(
            assembled(&apps, Format::Json),
            encode_applications(&apps, Format::Json)
        );
    }
}

#[test]
fn xml_pieces_assemble_to_the_document() {
    for apps in [two_apps(), empty()] {
        assert_eq!(
            String::from_utf8(assembled(&apps, Format::Xml)).unwrap(),
            String::from_utf8(encode_applications(&apps, Format::Xml)).unwrap()
        );
    }
}
