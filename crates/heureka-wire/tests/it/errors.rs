//! Bodies that must be refused, and the one-line reasons given for them.

use heureka_wire::{decode_application, decode_applications, decode_instance, DecodeError, Format};

use crate::fixtures::NOW;

fn json_error(body: &str) -> String {
    decode_instance(body.as_bytes(), Format::Json, NOW)
        .unwrap_err()
        .to_string()
}

fn xml_error(body: &str) -> DecodeError {
    decode_instance(body.as_bytes(), Format::Xml, NOW).unwrap_err()
}

#[test]
fn malformed_json_says_where() {
    assert_eq!(
        json_error(r#"{"instance":"#),
        "invalid JSON at line 1 column 12: EOF while parsing a value"
    );
    assert_eq!(
        json_error("{\n  \"instance\": {,}}"),
        "invalid JSON at line 2 column 16: key must be a string"
    );
}

#[test]
fn trailing_garbage_is_malformed() {
    assert!(json_error(r#"{"instance":{}} x"#)
        .starts_with("invalid JSON at line 1 column 17: trailing characters"));
}

#[test]
fn empty_body_is_refused_in_both_formats() {
    assert_eq!(
        decode_instance(b"", Format::Json, NOW).unwrap_err(),
        DecodeError::Empty
    );
    assert_eq!(
        decode_instance(b"  \n", Format::Xml, NOW).unwrap_err(),
        DecodeError::Empty
    );
    assert_eq!(DecodeError::Empty.to_string(), "request body is empty");
}

#[test]
fn unwrapped_instance_is_refused_like_java() {
    assert_eq!(
        json_error(r#"{"hostName":"h","app":"A"}"#),
        r#"expected a JSON object {"instance":{…}} at the root of the body"#
    );
    assert_eq!(json_error("[]"), json_error(r#"{"instance":"x"}"#));
}

#[test]
fn wrong_xml_root_is_refused() {
    assert_eq!(
        xml_error("<application/>").to_string(),
        "expected an <instance> element at the root of the body"
    );
}

#[test]
fn non_numeric_port_names_the_field() {
    assert_eq!(
        json_error(r#"{"instance":{"port":{"$":"http"}}}"#),
        "port.$ is not a number"
    );
    assert_eq!(
        xml_error("<instance><securePort>x</securePort></instance>").to_string(),
        "securePort.$ is not a number"
    );
}

#[test]
fn out_of_range_numbers_name_the_field() {
    assert_eq!(
        json_error(r#"{"instance":{"port":{"$":-1}}}"#),
        "port.$ is out of range"
    );
    assert_eq!(
        json_error(r#"{"instance":{"countryId":9999999999}}"#),
        "countryId is out of range"
    );
    assert_eq!(
        json_error(r#"{"instance":{"leaseInfo":{"durationInSecs":1e30}}}"#),
        "leaseInfo.durationInSecs is not a number"
    );
}

#[test]
fn non_numeric_timestamp_names_the_field() {
    assert_eq!(
        json_error(r#"{"instance":{"lastDirtyTimestamp":"yesterday"}}"#),
        "lastDirtyTimestamp is not a number"
    );
}

#[test]
fn nested_metadata_value_is_refused() {
    assert_eq!(
        json_error(r#"{"instance":{"metadata":{"a":{"b":1}}}}"#),
        "metadata.a is not text"
    );
}

#[test]
fn known_field_holding_an_object_is_refused() {
    assert_eq!(
        json_error(r#"{"instance":{"status":{"x":1}}}"#),
        "status is not a single value"
    );
    assert_eq!(
        json_error(r#"{"instance":{"leaseInfo":[1]}}"#),
        "leaseInfo is not an object"
    );
}

#[test]
fn unknown_data_center_name_is_refused() {
    assert_eq!(
        json_error(r#"{"instance":{"dataCenterInfo":{"name":"Moon"}}}"#),
        "dataCenterInfo.name is not one of Netflix, Amazon, MyOwn"
    );
}

#[test]
fn errors_inside_a_registry_name_their_place() {
    let body =
        br#"{"applications":{"application":[{"name":"A","instance":[{},{"port":{"$":"x"}}]}]}}"#;
    assert_eq!(
        decode_applications(body, Format::Json)
            .unwrap_err()
            .to_string(),
        "application[0].instance[1].port.$ is not a number"
    );
    let body = b"<applications><application><instance><countryId>x</countryId></instance></application></applications>";
    assert_eq!(
        decode_applications(body, Format::Xml)
            .unwrap_err()
            .to_string(),
        "application[0].instance[0].countryId is not a number"
    );
    let body = br#"{"application":{"name":"A","instance":{"countryId":"x"}}}"#;
    assert_eq!(
        decode_application(body, Format::Json)
            .unwrap_err()
            .to_string(),
        "application.instance.countryId is not a number"
    );
}

#[test]
fn doctype_is_refused() {
    assert_eq!(
        xml_error("<!DOCTYPE instance><instance/>"),
        DecodeError::DocType
    );
    assert_eq!(
        DecodeError::DocType.to_string(),
        "XML DOCTYPE declarations are not allowed"
    );
}

#[test]
fn entity_declarations_are_refused_before_any_expansion() {
    let billion_laughs = r#"<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
<instance><hostName>&lol2;</hostName></instance>"#;
    assert_eq!(xml_error(billion_laughs), DecodeError::DocType);
    let external = r#"<!DOCTYPE i [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><instance><hostName>&xxe;</hostName></instance>"#;
    assert_eq!(xml_error(external), DecodeError::DocType);
}

#[test]
fn undeclared_entity_reference_is_malformed() {
    let error = xml_error("<instance><hostName>&xxe;</hostName></instance>").to_string();
    assert!(error.starts_with("invalid XML at byte "), "{error}");
    assert!(!error.contains('\n'));
}

#[test]
fn mismatched_xml_tags_are_malformed() {
    let error = xml_error("<instance><hostName>h</app></instance>").to_string();
    assert!(error.starts_with("invalid XML at byte "), "{error}");
}

#[test]
fn unclosed_xml_is_malformed() {
    assert_eq!(
        xml_error("<instance><hostName>h</hostName>").to_string(),
        "invalid XML at byte 32: unexpected end of document"
    );
}

#[test]
fn several_xml_roots_are_malformed() {
    assert!(xml_error("<instance/><instance/>")
        .to_string()
        .ends_with("more than one root element"));
}

#[test]
fn xml_with_a_character_xml_forbids_is_malformed() {
    assert_eq!(
        xml_error("<instance><hostName>a\u{FFFE}</hostName></instance>").to_string(),
        "invalid XML at byte 21: character U+FFFE is not allowed in XML 1.0"
    );
    for body in [
        "<instance><hostName>\u{FFFF}</hostName></instance>",
        "<instance><hostName>\u{1}</hostName></instance>",
        "<instance><metadata><k\u{FFFE}>1</k\u{FFFE}></metadata></instance>",
    ] {
        assert!(
            matches!(xml_error(body), DecodeError::Malformed(_)),
            "{body:?}"
        );
    }
}

#[test]
fn xml_character_references_to_forbidden_characters_are_malformed() {
    for body in [
        "<instance><hostName>&#xFFFE;</hostName></instance>",
        "<instance><hostName>a&#1;</hostName></instance>",
        "<instance><port enabled=\"&#x1b;\">80</port></instance>",
    ] {
        let error = xml_error(body).to_string();
        assert!(error.starts_with("invalid XML at byte "), "{error}");
        assert!(error.contains("is not allowed in XML 1.0"), "{error}");
    }
}

#[test]
fn non_utf8_xml_is_malformed() {
    let error = decode_instance(b"<instance>\xff</instance>", Format::Xml, NOW).unwrap_err();
    assert_eq!(error.to_string(), "XML body is not valid UTF-8 at byte 10");
}

#[test]
fn a_metadata_key_quoted_in_a_message_keeps_it_on_one_line() {
    // Found by fuzzing: a key is the client's text, and JSON lets it hold any line break.
    assert_eq!(
        json_error(r#"{"instance":{"metadata":{"a\nb\u2028c\u0085":{}}}}"#),
        r"metadata.a\nb\u{2028}c\u{85} is not text"
    );
}

#[test]
fn a_long_metadata_key_is_cut_in_a_message() {
    let key = "k".repeat(5000);
    let error = json_error(&format!(r#"{{"instance":{{"metadata":{{"{key}":[]}}}}}}"#));
    assert!(error.len() < 300, "{error}");
    assert!(error.ends_with("… is not text"), "{error}");
}

#[test]
fn a_long_name_of_control_characters_is_cut_after_its_escapes() {
    // Found by fuzzing: the cut counted characters read, not characters written.
    let name = "k".to_owned() + &"\u{7f}".repeat(500);
    let body = format!("<instance><{name}></x></instance>");
    let error = xml_error(&body).to_string();
    assert!(error.chars().count() < 300, "{error}");
}

#[test]
fn every_message_is_one_line() {
    for body in [
        "{",
        "{\"instance\":{\"port\":{\"$\":\"a\nb\"}}}",
        "[1,2",
        "\"x\"",
    ] {
        assert!(!json_error(body).contains('\n'), "{body}");
    }
}
