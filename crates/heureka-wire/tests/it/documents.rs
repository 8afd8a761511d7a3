//! Every kind of document the server writes from a registry, and strict third-party parsers to
//! read them with: roxmltree (well-formedness, XML 1.0 characters, namespaces, like Python's
//! expat) and serde_json.

use heureka_core::{ActionType, Application, Applications, Instance};
use heureka_wire::{encode_application, encode_applications, encode_instance, Format};

use crate::pieces::assembled;

/// Each document kind, named: the full registry (whole and assembled from pieces, as the cache
/// builds it), the delta (every instance with an action type), each application, each instance
/// and the VIP document of the first instance's VIP address.
pub fn every_document(apps: &Applications, format: Format) -> Vec<(String, Vec<u8>)> {
    let mut documents = vec![
        ("full".to_owned(), encode_applications(apps, format)),
        ("full from pieces".to_owned(), assembled(apps, format)),
        (
            "delta".to_owned(),
            encode_applications(&delta(apps), format),
        ),
    ];
    if let Some(vip) = apps
        .applications
        .iter()
        .flat_map(|a| &a.instances)
        .find_map(|i| i.vip_address.clone())
    {
        documents.push((
            "vip".to_owned(),
            encode_applications(&vip_document(apps, &vip), format),
        ));
    }
    for app in &apps.applications {
        documents.push((
            format!("application {:?}", app.name),
            encode_application(app, format),
        ));
        for instance in &app.instances {
            let name = format!("instance {:?}", instance.instance_id);
            documents.push((name, encode_instance(instance, format)));
        }
    }
    documents
}

/// Parses `document` as XML with a strict parser, panicking with the parser's reason.
pub fn assert_strict_xml(name: &str, document: &[u8]) {
    let text = std::str::from_utf8(document).unwrap_or_else(|e| panic!("{name}: {e}"));
    if let Err(e) = roxmltree::Document::parse(text) {
        panic!("{name} is not well-formed XML ({e}):\n{text}");
    }
}

/// Parses `document` as JSON, panicking with the parser's reason.
pub fn assert_strict_json(name: &str, document: &[u8]) {
    if let Err(e) = serde_json::from_slice::<serde_json::Value>(document) {
        panic!(
            "{name} is not JSON ({e}):\n{}",
            String::from_utf8_lossy(document)
        );
    }
}

fn delta(apps: &Applications) -> Applications {
    let actions = [ActionType::Added, ActionType::Modified, ActionType::Deleted];
    let mut delta = apps.clone();
    for (n, instance) in delta
        .applications
        .iter_mut()
        .flat_map(|a| &mut a.instances)
        .enumerate()
    {
        instance.action_type = Some(actions[n % actions.len()]);
    }
    delta
}

fn vip_document(apps: &Applications, vip: &str) -> Applications {
    let wanted = |i: &&Instance| i.vip_address.as_deref() == Some(vip);
    Applications {
        applications: apps
            .applications
            .iter()
            .map(|a| Application {
                name: a.name.clone(),
                instances: a.instances.iter().filter(wanted).cloned().collect(),
            })
            .filter(|a| !a.instances.is_empty())
            .collect(),
        ..apps.clone()
    }
}
