//! The streaming reader against the tree reader it replaces on the register path: for every
//! body, the same instance or the same error.

use proptest::prelude::*;

use super::instance;
use crate::json::decode;

const NOW: i64 = 1_714_550_400_000;

fn same_answer(body: &[u8]) {
    assert_eq!(
        instance(body, NOW),
        decode::instance(body, NOW),
        "body: {}",
        String::from_utf8_lossy(body)
    );
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

fn key() -> impl Strategy<Value = &'static str> {
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
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

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
