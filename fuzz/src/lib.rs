//! What every fuzz target checks of the readers' output, shared by the targets.

use heureka_core::{Application, Applications, Instance, Millis};
use heureka_wire::{encode_instance, DecodeError, Format};

/// "Parse time" handed to the readers.
pub const NOW: Millis = 1_800_000_000_000;

/// Both encoders write documents that strict parsers accept.
pub fn writes_well_formed(instance: &Instance) {
    for format in [Format::Json, Format::Xml] {
        parses_strictly(&encode_instance(instance, format), format);
    }
}

/// roxmltree for XML (as strict as Python's expat: characters, names, namespaces), serde_json for
/// JSON.
pub fn parses_strictly(document: &[u8], format: Format) {
    match format {
        Format::Json => {
            if let Err(e) = serde_json::from_slice::<serde_json::Value>(document) {
                panic!("not JSON ({e}): {}", String::from_utf8_lossy(document));
            }
        }
        Format::Xml => {
            let text = std::str::from_utf8(document).expect("XML is UTF-8");
            if let Err(e) = roxmltree::Document::parse(text) {
                panic!("not well-formed XML ({e}): {text}");
            }
        }
    }
}

/// Error messages go back verbatim in a 400 response: one line, and not a novel.
pub fn one_line(error: &DecodeError) {
    let message = error.to_string();
    let breaks = |c: char| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}');
    assert!(!message.contains(breaks), "{message:?}");
    assert!(message.chars().count() < 600, "{message:?}");
}

/// The one normalisation a round trip makes on purpose: Eureka's writers leave out `sid` while it
/// holds either of its defaults, so `unknown` reads back as `na`.
pub fn normalised(mut instance: Instance) -> Instance {
    if instance.sid == "unknown" {
        instance.sid = "na".to_owned();
    }
    instance
}

pub fn normalised_app(app: Application) -> Application {
    Application {
        name: app.name,
        instances: app.instances.into_iter().map(normalised).collect(),
    }
}

pub fn normalised_apps(apps: Applications) -> Applications {
    Applications {
        applications: apps.applications.into_iter().map(normalised_app).collect(),
        ..apps
    }
}
