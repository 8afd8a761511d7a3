//! Exact XML output, compared byte for byte with what XStream writes.

use heureka_core::Application;
use heureka_wire::{
    decode_instance, encode_application, encode_applications, encode_instance, Format,
};

use crate::fixtures::{amazon, data, orders, orders_deleted, registry, text, NOW};

/// Spec §4.7, verbatim.
const CANONICAL: &str = r#"<applications>
  <versions__delta>1</versions__delta>
  <apps__hashcode>UP_1_</apps__hashcode>
  <application>
    <name>ORDERS</name>
    <instance>
      <instanceId>10.0.0.5:orders:8080</instanceId>
      <hostName>10.0.0.5</hostName>
      <app>ORDERS</app>
      <ipAddr>10.0.0.5</ipAddr>
      <status>UP</status>
      <overriddenstatus>UNKNOWN</overriddenstatus>
      <port enabled="true">8080</port>
      <securePort enabled="false">443</securePort>
      <countryId>1</countryId>
      <dataCenterInfo class="com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo">
        <name>MyOwn</name>
      </dataCenterInfo>
      <leaseInfo>
        <renewalIntervalInSecs>30</renewalIntervalInSecs>
        <durationInSecs>90</durationInSecs>
        <registrationTimestamp>1714550400000</registrationTimestamp>
        <lastRenewalTimestamp>1714550580000</lastRenewalTimestamp>
        <evictionTimestamp>0</evictionTimestamp>
        <serviceUpTimestamp>1714550400000</serviceUpTimestamp>
      </leaseInfo>
      <metadata>
        <management.port>8080</management.port>
      </metadata>
      <homePageUrl>http://10.0.0.5:8080/</homePageUrl>
      <statusPageUrl>http://10.0.0.5:8080/actuator/info</statusPageUrl>
      <healthCheckUrl>http://10.0.0.5:8080/actuator/health</healthCheckUrl>
      <vipAddress>orders</vipAddress>
      <secureVipAddress>orders</secureVipAddress>
      <isCoordinatingDiscoveryServer>false</isCoordinatingDiscoveryServer>
      <lastUpdatedTimestamp>1714550400012</lastUpdatedTimestamp>
      <lastDirtyTimestamp>1714550399000</lastDirtyTimestamp>
      <actionType>ADDED</actionType>
    </instance>
  </application>
</applications>"#;

fn instance_xml(i: &heureka_core::Instance) -> String {
    text(encode_instance(i, Format::Xml))
}

/// The ORDERS instance with just these metadata entries, as XML.
fn metadata_xml(entries: &[(&str, &str)]) -> String {
    let mut i = orders();
    i.metadata = entries
        .iter()
        .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
        .collect();
    instance_xml(&i)
}

#[test]
fn full_registry_matches_the_canonical_example() {
    let apps = registry(1, "UP_1_", vec![orders()]);
    assert_eq!(text(encode_applications(&apps, Format::Xml)), CANONICAL);
}

#[test]
fn empty_registry_has_no_application_element_and_an_open_close_hash() {
    let apps = registry(1, "", vec![]);
    assert_eq!(
        text(encode_applications(&apps, Format::Xml)),
        "<applications>\n  <versions__delta>1</versions__delta>\n  <apps__hashcode></apps__hashcode>\n</applications>"
    );
}

#[test]
fn delta_carries_the_deleted_action_type() {
    let xml = text(encode_applications(&orders_deleted(), Format::Xml));
    assert!(xml.starts_with("<applications>\n  <versions__delta>42</versions__delta>\n  <apps__hashcode>UP_3_</apps__hashcode>\n"));
    assert!(xml.ends_with("      <actionType>DELETED</actionType>\n    </instance>\n  </application>\n</applications>"));
}

#[test]
fn single_instance_is_the_canonical_instance_unindented() {
    let start = CANONICAL.find("    <instance>").unwrap();
    let end = CANONICAL.find("</instance>").unwrap() + "</instance>".len();
    let expected: Vec<&str> = CANONICAL[start..end].lines().map(|l| &l[4..]).collect();
    assert_eq!(instance_xml(&orders()), expected.join("\n"));
}

#[test]
fn single_application_holds_repeated_instance_elements() {
    let mut second = orders();
    second.instance_id = Some("b".to_owned());
    let app = Application {
        name: "ORDERS".to_owned(),
        instances: vec![orders(), second],
    };
    let xml = text(encode_application(&app, Format::Xml));
    assert!(xml.starts_with("<application>\n  <name>ORDERS</name>\n  <instance>\n    <instanceId>10.0.0.5:orders:8080</instanceId>"));
    assert!(xml.contains("  </instance>\n  <instance>\n    <instanceId>b</instanceId>"));
    assert!(xml.ends_with("  </instance>\n</application>"));
}

#[test]
fn empty_metadata_is_a_self_closing_empty_map() {
    let mut i = orders();
    i.metadata.clear();
    assert!(instance_xml(&i).contains("\n  <metadata class=\"java.util.Collections$EmptyMap\"/>\n"));
}

#[test]
fn metadata_keys_use_xstream_name_coding() {
    assert!(metadata_xml(&[("my_key", "1"), ("a$b", "2")])
        .contains("  <metadata>\n    <a_-b>2</a_-b>\n    <my__key>1</my__key>\n  </metadata>\n"));
}

#[test]
fn metadata_keys_that_are_not_xml_names_get_xstream_hex_escapes() {
    assert!(metadata_xml(&[
        ("1abc", "a"),
        ("a b", "b"),
        ("prometheus.io/scrape", "true"),
        ("prometheus.io/port", "9102")
    ])
    .contains(concat!(
        "  <metadata>\n",
        "    <_.0031abc>a</_.0031abc>\n",
        "    <a_.0020b>b</a_.0020b>\n",
        "    <prometheus.io_.002fport>9102</prometheus.io_.002fport>\n",
        "    <prometheus.io_.002fscrape>true</prometheus.io_.002fscrape>\n",
        "  </metadata>\n"
    )));
}

/// `tests/data/xstream_names.json`: 400 names (ASCII, Latin, Greek, Hebrew, Indic, Thai, CJK,
/// Hangul, private use, emoji, controls) and the element name XStream 1.4.21's
/// `XmlFriendlyNameCoder.encodeNode` made of each, recorded by running it.
fn xstream_names() -> Vec<(String, String)> {
    serde_json::from_slice(&data("xstream_names.json")).unwrap()
}

#[test]
fn metadata_keys_are_coded_as_xstream_codes_them() {
    for (name, xstream) in xstream_names() {
        // Our one deliberate difference: XStream writes `:` raw (see docs/compat.md).
        let expected = xstream.replace(':', "_.003a");
        let element = format!("\n    <{expected}>v</{expected}>\n");
        assert!(
            metadata_xml(&[(&name, "v")]).contains(&element),
            "{name:?} should be {expected:?}"
        );
    }
}

#[test]
fn metadata_keys_xstream_coded_are_read_back() {
    for (name, xstream) in xstream_names() {
        let body = format!("<instance><metadata><{xstream}>v</{xstream}></metadata></instance>");
        let instance = decode_instance(body.as_bytes(), Format::Xml, NOW).unwrap();
        assert_eq!(
            instance.metadata.keys().collect::<Vec<_>>(),
            [&name],
            "{xstream:?}"
        );
    }
}

#[test]
fn metadata_key_escapes_are_four_lower_case_hex_digits_per_utf16_unit() {
    let xml = metadata_xml(&[("k\u{1}", "1"), ("k\u{FFFF}", "2"), ("k😀", "3")]);
    assert!(xml.contains("<k_.0001>1</k_.0001>"), "{xml}");
    assert!(xml.contains("<k_.ffff>2</k_.ffff>"), "{xml}");
    assert!(xml.contains("<k_.d83d_.de00>3</k_.d83d_.de00>"), "{xml}");
}

#[test]
fn metadata_key_colons_are_escaped_so_no_parser_sees_a_namespace_prefix() {
    assert!(metadata_xml(&[("ns:key", "x")]).contains("<ns_.003akey>x</ns_.003akey>"));
}

#[test]
fn only_the_empty_metadata_key_is_left_out() {
    assert!(metadata_xml(&[("", "x"), ("ok", "y")])
        .contains("  <metadata>\n    <ok>y</ok>\n  </metadata>\n"));
}

#[test]
fn metadata_with_only_the_empty_key_is_written_empty() {
    assert!(
        metadata_xml(&[("", "x")]).contains("<metadata class=\"java.util.Collections$EmptyMap\"/>")
    );
}

#[test]
fn empty_string_is_an_open_close_pair() {
    let mut i = orders();
    i.secure_health_check_url = Some(String::new());
    i.metadata.insert("zone".to_owned(), String::new());
    let xml = instance_xml(&i);
    assert!(xml.contains("<secureHealthCheckUrl></secureHealthCheckUrl>"));
    assert!(xml.contains("<zone></zone>"));
}

#[test]
fn text_is_escaped() {
    let mut i = orders();
    i.metadata
        .insert("k".to_owned(), "a&b <c> \"d\" 'e' \r\n\t\u{1}".to_owned());
    assert!(instance_xml(&i)
        .contains("<k>a&amp;b &lt;c&gt; &quot;d&quot; &apos;e&apos; &#xd;\n\t\u{FFFD}</k>"));
}

#[test]
fn characters_xml_forbids_become_the_replacement_character() {
    let mut i = orders();
    i.host_name = "h\u{FFFE}\u{FFFF}\u{0}\u{1F}x".to_owned();
    assert!(instance_xml(&i).contains("<hostName>h\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}x</hostName>"));
}

#[test]
fn characters_xml_allows_are_written_as_they_are() {
    let mut i = orders();
    i.host_name = "\u{7F}\u{85}\u{FFFD}\u{FDD0}\u{1FFFE}😀".to_owned();
    assert!(
        instance_xml(&i).contains("<hostName>\u{7F}\u{85}\u{FFFD}\u{FDD0}\u{1FFFE}😀</hostName>")
    );
}

#[test]
fn amazon_data_center_has_its_class_and_metadata() {
    let mut i = orders();
    i.data_center_info = Some(amazon(&[("instance-id", "i-1")]));
    assert!(instance_xml(&i).contains(concat!(
        "  <dataCenterInfo class=\"com.netflix.appinfo.AmazonInfo\">\n",
        "    <name>Amazon</name>\n",
        "    <metadata>\n",
        "      <instance-id>i-1</instance-id>\n",
        "    </metadata>\n",
        "  </dataCenterInfo>\n"
    )));
}

#[test]
fn sid_and_optional_fields_follow_the_json_order() {
    let mut i = orders();
    i.sid = "7".to_owned();
    i.app_group_name = Some("G".to_owned());
    i.asg_name = Some("asg".to_owned());
    let xml = instance_xml(&i);
    assert!(xml.contains("<ipAddr>10.0.0.5</ipAddr>\n  <sid>7</sid>\n  <status>UP</status>"));
    assert!(xml.contains("</metadata>\n  <appGroupName>G</appGroupName>\n  <homePageUrl>"));
    assert!(xml.ends_with("<actionType>ADDED</actionType>\n  <asgName>asg</asgName>\n</instance>"));
}
