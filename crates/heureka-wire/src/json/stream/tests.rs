//! The streaming reader against the tree reader it replaces on the register path: for every
//! body, the same instance or the same error.

use proptest::prelude::*;

use super::instance::general;
use super::{instance, plain};
use crate::json::decode;

const NOW: i64 = 1_714_550_400_000;

/// The reader the server uses, and the general reader behind it alone (the plain shape
/// never reaches it there), both against the tree reader.
fn same_answer(body: &[u8]) {
    let tree = decode::instance(body, NOW);
    let text = String::from_utf8_lossy(body);
    assert_eq!(instance(body, NOW), tree, "body: {text}");
    assert_eq!(general(body, NOW), tree, "general reader, body: {text}");
}

/// What the plain reader makes of `body`: `None`, or the tree reader's instance.
fn plain_reads(body: &str) -> bool {
    let read = plain::instance(body.as_bytes(), NOW);
    if let Some(plain) = &read {
        assert_eq!(
            Ok(plain),
            decode::instance(body.as_bytes(), NOW).as_ref(),
            "body: {body}"
        );
    }
    read.is_some()
}

#[test]
fn real_client_bodies_read_the_same() {
    let dirs = [
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data"),
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fuzz/seeds/decode_instance_json"
        ),
    ];
    let mut instances = 0;
    for dir in dirs {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|ext| ext == "json") {
                let body = std::fs::read(&path).unwrap();
                same_answer(&body);
                instances += usize::from(instance(&body, NOW).is_ok());
            }
        }
    }
    // Five recorded clients' bodies and two written by the encoder.
    assert!(instances >= 7, "only {instances} register bodies found");
}

#[test]
fn every_recorded_client_body_takes_the_plain_way() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let mut bodies = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        // `xstream_names.json` is a table of names, not a body.
        let name = path.file_name().unwrap().to_string_lossy();
        if name.ends_with(".json") && name != "xstream_names.json" {
            let body = std::fs::read_to_string(&path).unwrap();
            let body = body.strip_prefix('\u{feff}').unwrap_or(&body);
            assert!(plain_reads(body), "{} left the plain way", path.display());
            bodies += 1;
        }
    }
    assert!(bodies >= 5, "only {bodies} recorded bodies");
}

/// Each of these leaves the plain shape or breaks a rule; the general reader answers.
#[test]
fn the_plain_way_leaves_everything_else_to_the_general_reader() {
    let bodies: &[&str] = &[
        r#"{"instance":{"app":"a\"b"}}"#,
        r#"{"instance":{"app":"a\u0041"}}"#,
        "{\"instance\":{\"app\":\"a\tb\"}}",
        r#"{"instance":{"countryId":1.0}}"#,
        r#"{"instance":{"countryId":1e2}}"#,
        r#"{"instance":{"countryId":-1}}"#,
        r#"{"instance":{"countryId":01}}"#,
        r#"{"instance":{"lastDirtyTimestamp":1234567890123456789}}"#,
        r#"{"instance":{"unknown":[]}}"#,
        r#"{"instance":{"unknown":{}}}"#,
        r#"{"instance":{"countryId":"x"}}"#,
        r#"{"instance":{"port":{"$":"x"}}}"#,
        r#"{"instance":{"leaseInfo":5}}"#,
        r#"{"instance":{"metadata":{"a":{}}}}"#,
        r#"{"instance":{"dataCenterInfo":{"name":"Elsewhere"}}}"#,
        r#"{"instance":{}, "other":1}"#,
        r#"{"other":{}}"#,
        r#"{"instanse":{"app":"a"}}"#,
        "{\"instance\":{\x0c}}",
        "{\"instance\":{\"app\":\"a\"}\x0c}",
        r#"{"other":1, "instance":{}}"#,
        r#"{"instance":{"app":"a",}}"#,
        r#"{"instance":{"app":"a"}} x"#,
        r#"{"instance":{"app":tru}}"#,
        r#"{"instance":{"app":"a"}"#,
        r#"{"instance":null}"#,
        "{\"instance\":{\"app\":\"a",
    ];
    for body in bodies {
        assert!(!plain_reads(body), "plain read {body}");
        same_answer(body.as_bytes());
    }
}

#[test]
fn the_plain_way_reads_whitespace_nulls_and_every_kind_of_scalar() {
    let body = "\r\n { \"instance\" :\t{ \"app\" : \"café\" , \"hostName\":null,\
        \"countryId\":\"7\",\"isCoordinatingDiscoveryServer\":true,\"port\":8080,\
        \"securePort\":{\"$\":\"443\",\"@enabled\":false,\"x\":null},\
        \"leaseInfo\":{\"durationInSecs\":0,\"evictionTimestamp\":null},\
        \"metadata\":{\"a\":1,\"b\":false,\"c\":null},\"metadata\":{\"d\":\"\"},\
        \"dataCenterInfo\":{\"@class\":\"com.netflix.appinfo.AmazonInfo\",\"name\":\"Amazon\",\
        \"metadata\":{\"instance-id\":\"i-1\"},\"other\":7}} } \n";
    assert!(plain_reads(body));
}

/// Bodies at the edges of the rules: order, duplicates, `null`s, wrong kinds, and syntax
/// errors after a field error.
#[test]
fn edge_cases_read_the_same() {
    let bodies: &[&str] = &[
        "",
        "  \n",
        "\u{feff}{\"instance\":{}}",
        "null",
        "[1,2]",
        "\"instance\"",
        r#"{"instance":null}"#,
        r#"{"instance":[]}"#,
        r#"{"instance":{"app":"a"},"instance":7}"#,
        r#"{"instance":{"port":{"$":"x"}},"instance":{"app":"b"}}"#,
        r#"{"instance":{"app":"b"},"instance":{"port":{"$":"x"}}}"#,
        r#"{"instance":{"port":{"$":"x"}}} trailing"#,
        r#"{"instance":{"port":{"$":"x"}, "hostName": tru}}"#,
        r#"{"instance":{"countryId":"x","port":{"$":"y"}}}"#,
        r#"{"instance":{"overriddenStatus":"DOWN","overriddenstatus":"UP"}}"#,
        r#"{"instance":{"hostName":{"a":1}}}"#,
        r#"{"instance":{"unknown":{"a":[1,{"b":null}]}}}"#,
        r#"{"instance":{"port":8080,"securePort":"443"}}"#,
        r#"{"instance":{"port":[8080]}}"#,
        r#"{"instance":{"port":{"$":{"x":1},"@enabled":0,"other":[]}}}"#,
        r#"{"instance":{"port":{"$":99999999}}}"#,
        r#"{"instance":{"port":{"$":18446744073709551615}}}"#,
        r#"{"instance":{"port":{"$":8.0,"@enabled":"TRUE"}}}"#,
        r#"{"instance":{"leaseInfo":5}}"#,
        r#"{"instance":{"leaseInfo":{"durationInSecs":-1,"renewalIntervalInSecs":"7","x":{}}}}"#,
        r#"{"instance":{"leaseInfo":{"durationInSecs":"abc"}}}"#,
        r#"{"instance":{"metadata":{"a":1,"b":true,"c":null,"@class":"x"},"metadata":{"d":2.5}}}"#,
        r#"{"instance":{"metadata":{"a":{"b":1}}}}"#,
        r#"{"instance":{"metadata":"x"}}"#,
        r#"{"instance":{"metadata":{"instanceId":"abc"},"hostName":"h"}}"#,
        r#"{"instance":{"dataCenterInfo":{"@class":"com.netflix.appinfo.AmazonInfo","name":"Amazon","metadata":{"instance-id":"i-1"}}}}"#,
        r#"{"instance":{"dataCenterInfo":{"@class":"com.netflix.appinfo.AmazonInfo","@class":{},"name":"Amazon"}}}"#,
        r#"{"instance":{"dataCenterInfo":{"name":"Elsewhere"}}}"#,
        r#"{"instance":{"dataCenterInfo":{"name":"MyOwn","name":null}}}"#,
        r#"{"instance":{"dataCenterInfo":{"metadata":[1]}}}"#,
        r#"{"instance":{"dataCenterInfo":"x"}}"#,
        r#"{"instance":{"dataCenterInfo":{"name":"MyOwn"},"dataCenterInfo":null}}"#,
        r#"{"instance":{"app":"caf\u00e9","hostName":"a\nb","ipAddr":"\ud83d\ude00"}}"#,
        r#"{"instance":{"app":"x","\u0061pp":"y"}}"#,
        r#"{"instance":{"unknown":"\ud800"}}"#,
        r#"{"instance":{"unknown":1e400}}"#,
        r#"{"instance":{"isCoordinatingDiscoveryServer":"yes","actionType":"ADDED","lastDirtyTimestamp":1.5}}"#,
    ];
    for body in bodies {
        same_answer(body.as_bytes());
    }
    // Invalid UTF-8 and nesting past serde_json's limit inside a field nobody reads.
    same_answer(b"{\"instance\":{\"unknown\":\"\xff\"}}");
    let deep = format!(
        "{{\"instance\":{{\"unknown\":{}{}}}}}",
        "[".repeat(200),
        "]".repeat(200)
    );
    same_answer(deep.as_bytes());
}

/// A JSON value built from the names and values the rules care about.
fn value(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        Just("null".to_owned()),
        Just("true".to_owned()),
        Just("false".to_owned()),
        Just("0".to_owned()),
        Just("-1".to_owned()),
        Just("8080".to_owned()),
        Just("1.5".to_owned()),
        Just("1e30".to_owned()),
        Just("18446744073709551615".to_owned()),
        Just("\"\"".to_owned()),
        Just("\"7\"".to_owned()),
        Just("\"UP\"".to_owned()),
        Just("\"Amazon\"".to_owned()),
        Just("\"MyOwn\"".to_owned()),
        Just("\"com.netflix.appinfo.AmazonInfo\"".to_owned()),
        Just("\"h\\u0041\"".to_owned()),
    ];
    leaf.prop_recursive(depth, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3)
                .prop_map(|items| format!("[{}]", items.join(","))),
            prop::collection::vec((key(), inner), 0..6).prop_map(|entries| {
                let entries: Vec<String> = entries
                    .into_iter()
                    .map(|(k, v)| format!("\"{k}\":{v}"))
                    .collect();
                format!("{{{}}}", entries.join(","))
            }),
        ]
    })
    .boxed()
}

fn key() -> BoxedStrategy<&'static str> {
    prop::sample::select(vec![
        "instance",
        "instanceId",
        "hostName",
        "app",
        "ipAddr",
        "status",
        "overriddenStatus",
        "overriddenstatus",
        "countryId",
        "port",
        "securePort",
        "$",
        "@enabled",
        "dataCenterInfo",
        "@class",
        "name",
        "metadata",
        "leaseInfo",
        "durationInSecs",
        "renewalIntervalInSecs",
        "evictionTimestamp",
        "lastDirtyTimestamp",
        "isCoordinatingDiscoveryServer",
        "instance-id",
        "actionType",
        "other",
    ])
    .boxed()
}

/// A value of the plain shape: the leaves it reads and objects of the keys the rules know.
fn plain_value(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        Just("null".to_owned()),
        Just("true".to_owned()),
        Just("false".to_owned()),
        Just("0".to_owned()),
        Just("8080".to_owned()),
        Just("1714550399000".to_owned()),
        Just("123456789012345678".to_owned()),
        Just("1234567890123456789".to_owned()),
        Just("\"\"".to_owned()),
        Just("\"7\"".to_owned()),
        Just("\" UP \"".to_owned()),
        Just("\"Amazon\"".to_owned()),
        Just("\"MyOwn\"".to_owned()),
        Just("\"com.netflix.appinfo.AmazonInfo\"".to_owned()),
        Just("\"grüße, 世界\"".to_owned()),
    ];
    leaf.prop_recursive(depth, 48, 6, |inner| {
        prop::collection::vec((key(), inner, "[ \t\r\n]{0,2}"), 0..6)
            .prop_map(|entries| {
                let entries: Vec<String> = entries
                    .into_iter()
                    .map(|(k, v, s)| format!("{s}\"{k}\"{s}:{s}{v}{s}"))
                    .collect();
                format!("{{{}}}", entries.join(","))
            })
            .boxed()
    })
    .boxed()
}

/// The generated plain bodies do take the plain way, a good share of them: the others break a
/// field rule (a port of `"UP"`) or hold a 19-digit number.
#[test]
fn generated_plain_bodies_mostly_take_the_plain_way() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let taken = (0..500)
        .filter(|_| {
            let inner = plain_value(3).new_tree(&mut runner).unwrap().current();
            plain_reads(&format!("{{\"instance\":{inner}}}"))
        })
        .count();
    assert!(taken >= 100, "only {taken} of 500 took the plain way");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn plain_bodies_read_as_the_tree_reader_reads_them(inner in plain_value(3), cut in any::<prop::sample::Index>()) {
        let body = format!("{{\"instance\":{inner}}}");
        plain_reads(&body);
        same_answer(body.as_bytes());
        let cut = &body.as_bytes()[..cut.index(body.len())];
        prop_assert!(plain::instance(cut, NOW).is_none());
        same_answer(cut);
    }

    #[test]
    fn generated_bodies_read_the_same(inner in value(4), cut in any::<prop::sample::Index>(), truncate in any::<bool>()) {
        let body = format!("{{\"instance\":{inner}}}");
        same_answer(body.as_bytes());
        if truncate {
            // The same body cut short: a syntax error after whatever field errors came before.
            same_answer(&body.as_bytes()[..cut.index(body.len())]);
        }
    }
}

// The registry document and the single-application document.

use super::{application, applications};
use heureka_core::{Application, Applications, Instance};

fn same_registry(body: &[u8]) -> Result<Applications, crate::DecodeError> {
    let streamed = applications(body);
    assert_eq!(
        streamed,
        decode::tree_applications(body),
        "body: {}",
        String::from_utf8_lossy(body)
    );
    streamed
}

fn same_application(body: &[u8]) -> Result<Application, crate::DecodeError> {
    let streamed = application(body);
    assert_eq!(
        streamed,
        decode::tree_application(body),
        "body: {}",
        String::from_utf8_lossy(body)
    );
    streamed
}

fn names(apps: &Applications) -> Vec<(&str, usize)> {
    apps.applications
        .iter()
        .map(|app| (app.name.as_str(), app.instances.len()))
        .collect()
}

fn field_error(field: &str, reason: &'static str) -> crate::DecodeError {
    crate::DecodeError::InvalidField {
        field: field.to_owned(),
        reason,
    }
}

/// The instances recorded from real clients, as a registry would hold them.
fn recorded_instances() -> Vec<Instance> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|ext| ext == "json") {
            if let Ok(instance) = instance(&std::fs::read(&path).unwrap(), NOW) {
                found.push(instance);
            }
        }
    }
    assert!(found.len() >= 5, "only {} recorded instances", found.len());
    found
}

#[test]
fn an_encoded_registry_reads_back_the_same_and_so_does_every_cut_of_it() {
    let instances = recorded_instances();
    let apps = Applications {
        versions_delta: 42,
        apps_hashcode: "UP_5_".to_owned(),
        applications: vec![
            Application {
                name: "FIRST".to_owned(),
                instances: instances[..2].to_vec(),
            },
            Application {
                name: "SECOND".to_owned(),
                instances: instances[2..].to_vec(),
            },
        ],
    };
    let body = crate::json::encode::applications(&apps);
    assert_eq!(same_registry(&body), Ok(apps.clone()));
    for cut in (0..body.len()).step_by(7) {
        assert!(same_registry(&body[..cut]).is_err());
    }
    let one = crate::json::encode::application(&apps.applications[1]);
    assert_eq!(same_application(&one), Ok(apps.applications[1].clone()));
    for cut in (0..one.len()).step_by(5) {
        assert!(same_application(&one[..cut]).is_err());
    }
}

#[test]
fn application_may_be_an_array_or_a_single_object() {
    let array = same_registry(br#"{"applications":{"application":[{"name":"a"},{"name":"b"}]}}"#);
    assert_eq!(names(&array.unwrap()), [("A", 0), ("B", 0)]);
    let single = same_registry(br#"{"applications":{"application":{"name":"a"}}}"#);
    assert_eq!(names(&single.unwrap()), [("A", 0)]);
}

#[test]
fn instance_may_be_an_array_or_a_single_object() {
    let body = br#"{"applications":{"application":[
        {"name":"a","instance":[{"hostName":"h1"},{"hostName":"h2"}]},
        {"name":"b","instance":{"hostName":"h3"}}]}}"#;
    let apps = same_registry(body).unwrap();
    assert_eq!(names(&apps), [("A", 2), ("B", 1)]);
    assert_eq!(apps.applications[1].instances[0].host_name, "h3");
}

#[test]
fn a_null_application_or_instance_list_is_empty_and_a_later_list_replaces_an_earlier_one() {
    let body = br#"{"applications":{"application":[{"name":"a","instance":null}],
        "application":[{"name":"b","instance":{"hostName":"h"},"instance":null}]}}"#;
    assert_eq!(names(&same_registry(body).unwrap()), [("B", 0)]);
    let emptied = br#"{"applications":{"application":[{"name":"a"}],"application":null}}"#;
    assert_eq!(names(&same_registry(emptied).unwrap()), []);
}

#[test]
fn any_key_starting_with_version_or_apps_sets_the_version_or_the_hash() {
    let body = br#"{"applications":{"versions__delta":"3","versionX":7,"apps__hashcode":"a","appsAnything":"UP_1_"}}"#;
    let apps = same_registry(body).unwrap();
    assert_eq!(
        (apps.versions_delta, apps.apps_hashcode.as_str()),
        (7, "UP_1_")
    );
    // Only scalars count; an empty version is "none", -1.
    let ignored =
        br#"{"applications":{"versions__delta":"9","version":{"a":1},"apps":[1],"versionY":""}}"#;
    let apps = same_registry(ignored).unwrap();
    assert_eq!((apps.versions_delta, apps.apps_hashcode.as_str()), (-1, ""));
}

#[test]
fn a_field_error_names_its_place_in_the_document_and_the_first_one_wins() {
    let body = br#"{"applications":{"application":[{"name":"a"},
        {"name":"b","instance":[{"hostName":"h"},{"port":{"$":"x"}},{"port":"y"}]}],
        "versionZ":"nope"}}"#;
    assert_eq!(
        same_registry(body),
        Err(field_error(
            "application[1].instance[1].port.$",
            "is not a number"
        ))
    );
    assert_eq!(
        same_registry(br#"{"applications":{"application":[{},7]}}"#),
        Err(field_error("application[1]", "is not an object"))
    );
    assert_eq!(
        same_registry(br#"{"applications":{"application":{"instance":"x"}}}"#),
        Err(field_error(
            "application.instance",
            "is not an array or an object"
        ))
    );
    assert_eq!(
        same_application(br#"{"application":{"instance":[null]}}"#),
        Err(field_error("application.instance[0]", "is not an object"))
    );
}

#[test]
fn a_syntax_error_after_a_field_error_wins() {
    let body = br#"{"applications":{"application":[{"instance":[{"port":{"$":"x"}}]}]},"x":tru}"#;
    let Err(crate::DecodeError::Malformed(message)) = same_registry(body) else {
        panic!("a syntax error was expected");
    };
    assert!(message.starts_with("invalid JSON at line 1"), "{message}");
}

#[test]
fn registry_edge_cases_read_the_same() {
    let bodies: &[&str] = &[
        "",
        "null",
        "[]",
        r#"{"applications":[]}"#,
        r#"{"applications":null}"#,
        r#"{"applications":{}}"#,
        r#"{"applications":{},"applications":"x"}"#,
        r#"{"applications":{"application":[{"port":1}]},"applications":{}}"#,
        r#"{"applications":{"application":7}}"#,
        r#"{"applications":{"application":[[]]}}"#,
        r#"{"applications":{"application":[{"name":{"x":1}},{"name":null},{"name":"é","name":true}]}}"#,
        r#"{"applications":{"versions__delta":1.5}}"#,
        r#"{"applications":{"versions__delta":"x","application":[{"port":"y"}]}}"#,
        r#"{"applications":{"application":{"instance":{"metadata":{"instanceId":"i"},"hostName":"h"}}}}"#,
        r#"{"applications":{"application":[]}} x"#,
        r#"{"application":{"name":"a"},"application":[]}"#,
        r#"{"applications":{"\u0061pplication":{"name":"a"}}}"#,
        r#"{"applications":{"application":{"instance":5}},"applications":{}}"#,
        r#"{"applications":{},"applications":{"application":{"instance":5}}}"#,
    ];
    for body in bodies {
        same_registry(body.as_bytes()).ok();
        same_application(body.as_bytes()).ok();
    }
}

/// serde_json's nesting limit falls at the same depth for both readers, counted from the root
/// through the application and instance lists.
#[test]
fn deep_nesting_inside_an_instance_fails_at_the_same_depth() {
    for depth in 110..130 {
        let body = format!(
            r#"{{"applications":{{"application":[{{"instance":[{{"unknown":{}{}}}]}}]}}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        same_registry(body.as_bytes()).ok();
        let one = format!(
            r#"{{"application":{{"instance":{{"unknown":{}{}}}}}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        same_application(one.as_bytes()).ok();
    }
}

/// Keys an `applications` or `application` object may hold, any-key variants included, with
/// the key that leads deeper (`application` or `instance`) chosen most often.
fn registry_key(deeper: &'static str) -> impl Strategy<Value = &'static str> {
    prop_oneof![
        3 => Just(deeper),
        2 => prop::sample::select(vec![
            "application",
            "instance",
            "name",
            "versions__delta",
            "version",
            "versionsX",
            "apps__hashcode",
            "appsX",
            "apps",
            "applications",
            "other",
        ]),
    ]
}

/// An object of the given entries.
fn object_of(entries: Vec<(&'static str, String)>) -> String {
    let entries: Vec<String> = entries
        .into_iter()
        .map(|(k, v)| format!("\"{k}\":{v}"))
        .collect();
    format!("{{{}}}", entries.join(","))
}

/// An array of `items`, or one of them alone (how older servers write a single element).
fn list_of(items: BoxedStrategy<String>) -> BoxedStrategy<String> {
    prop_oneof![
        3 => prop::collection::vec(items.clone(), 0..4).prop_map(|items| format!("[{}]", items.join(","))),
        1 => items,
    ]
    .boxed()
}

/// Registry-shaped JSON: mostly the right shape, with wrong kinds and junk mixed in at every
/// level. Instances are the register-body generator's objects.
fn registry_value() -> BoxedStrategy<String> {
    let recorded: Vec<String> = recorded_instances()
        .iter()
        .map(|instance| {
            let mut out = Vec::new();
            crate::json::encode::instance_body(&mut out, instance);
            String::from_utf8(out).unwrap()
        })
        .collect();
    // A recorded instance as the encoder writes it, alone or with one generated field in front
    // (which a later field of the same name overrides); or generated fields only.
    let valid = prop::sample::select(recorded);
    let perturbed = (valid.clone(), key(), value(2))
        .prop_map(|(body, key, value)| format!("{{\"{key}\":{value},{}", &body[1..]));
    let fields = prop::collection::vec((key(), value(2)), 0..8).prop_map(object_of);
    let instance = prop_oneof![12 => valid, 3 => perturbed, 1 => fields, 1 => value(1)].boxed();
    let instances = list_of(instance);
    let app_value = prop_oneof![8 => instances, 1 => value(1)].boxed();
    let app = prop::collection::vec((registry_key("instance"), app_value), 0..5)
        .prop_map(object_of)
        .boxed();
    let apps_list = prop_oneof![8 => list_of(app), 1 => value(1)].boxed();
    prop::collection::vec((registry_key("application"), apps_list), 0..5)
        .prop_map(object_of)
        .boxed()
}

/// The body changed at one byte to a character that matters to JSON's syntax or the rules.
fn mutate(body: &str, at: prop::sample::Index, with: u8) -> Vec<u8> {
    let mut bytes = body.as_bytes().to_vec();
    if !bytes.is_empty() {
        let i = at.index(bytes.len());
        bytes[i] = with;
    }
    bytes
}

fn syntax_byte() -> impl Strategy<Value = u8> {
    prop::sample::select(b"{}[],:\"n1x ".to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn generated_registries_read_the_same(
        inner in registry_value(),
        cut in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        with in syntax_byte(),
    ) {
        let body = format!("{{\"applications\":{inner}}}");
        same_registry(body.as_bytes()).ok();
        same_registry(&body.as_bytes()[..cut.index(body.len())]).ok();
        same_registry(&mutate(&body, at, with)).ok();
    }

    #[test]
    fn generated_applications_read_the_same(
        inner in registry_value(),
        cut in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        with in syntax_byte(),
    ) {
        let body = format!("{{\"application\":{inner}}}");
        same_application(body.as_bytes()).ok();
        same_application(&body.as_bytes()[..cut.index(body.len())]).ok();
        same_application(&mutate(&body, at, with)).ok();
    }
}

#[test]
fn invalid_utf8_is_malformed_json_that_says_where() {
    // Bodies are checked for UTF-8 whole before they are read; a bad byte is still reported
    // where it is, as serde_json's byte reader reports it.
    let error = instance(b"{\"instance\":{\"app\":\"a\xffb\"}}", NOW).unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid JSON at line 1 column 22: invalid unicode code point"
    );
}
