//! The answers to each kind of question, on values: the DNS rules of `answer.rs`.

use super::*;

fn zone(max_answers: usize) -> Zone {
    Zone {
        domain: Name::from_ascii("eureka.").unwrap(),
        ttl: 5,
        max_answers,
    }
}

fn endpoint(address: &str, port: Option<u16>, secure_port: Option<u16>, zone: &str) -> Endpoint {
    Endpoint {
        address: address.parse().unwrap(),
        port,
        secure_port,
        zone: Some(zone.to_owned()).filter(|zone| !zone.is_empty()),
    }
}

/// What the registry holds for the application asked about (`None`: unknown), in order.
struct Held {
    endpoints: Option<Vec<Endpoint>>,
    asker_zone: Option<&'static str>,
}

fn found(endpoints: Option<Vec<Endpoint>>) -> Held {
    Held {
        endpoints,
        asker_zone: None,
    }
}

fn ask(name: &str, qtype: RecordType, held: &Held, max_answers: usize) -> Answer {
    let found = Found {
        endpoints: held.endpoints.as_ref().map(|held| held.iter().collect()),
        asker_zone: held.asker_zone,
        serial: 7,
    };
    let qname = Name::from_ascii(name).unwrap();
    let zone = zone(max_answers);
    let asked = super::super::names::asked(&qname, &zone.domain);
    answer(&zone, &asked, &qname, qtype, &found)
}

fn data(records: &[Record]) -> Vec<String> {
    records
        .iter()
        .map(|record| record.data.to_string())
        .collect()
}

fn two_up() -> Held {
    found(Some(vec![
        endpoint("10.0.0.1", Some(8080), Some(8443), ""),
        endpoint("fd00::2", Some(8081), None, ""),
    ]))
}

#[test]
fn a_and_aaaa_answer_the_up_addresses_of_their_family() {
    let a = ask("orders.eureka.", RecordType::A, &two_up(), 32);
    assert_eq!(
        (a.code, a.outcome),
        (ResponseCode::NoError, Outcome::Answered)
    );
    assert_eq!(data(&a.answers), ["10.0.0.1"]);
    let aaaa = ask("orders.eureka.", RecordType::AAAA, &two_up(), 32);
    assert_eq!(data(&aaaa.answers), ["fd00::2"]);
    assert_eq!(aaaa.answers[0].ttl, 5);
}

#[test]
fn an_unknown_application_is_nxdomain_with_the_soa() {
    let answer = ask("nope.eureka.", RecordType::A, &found(None), 32);
    assert_eq!(
        (answer.code, answer.outcome),
        (ResponseCode::NXDomain, Outcome::NxDomain)
    );
    let soa = answer.soa.expect("an SOA in the authority section");
    assert_eq!(soa.name.to_ascii(), "eureka.");
    let RData::SOA(soa) = soa.data else {
        panic!("{soa:?}")
    };
    assert_eq!((soa.minimum, soa.serial), (5, 7));
}

#[test]
fn an_application_with_no_up_instance_is_noerror_without_answers() {
    let answer = ask(
        "orders.eureka.",
        RecordType::A,
        &found(Some(Vec::new())),
        32,
    );
    assert_eq!(
        (answer.code, answer.outcome),
        (ResponseCode::NoError, Outcome::Empty)
    );
    assert!(answer.answers.is_empty());
    assert!(answer.soa.is_some());
}

#[test]
fn a_name_outside_the_zone_is_refused() {
    let answer = ask("orders.example.com.", RecordType::A, &two_up(), 32);
    assert_eq!(
        (answer.code, answer.outcome),
        (ResponseCode::Refused, Outcome::Refused)
    );
}

#[test]
fn srv_answers_ports_with_targets_that_resolve_in_the_additional_section() {
    let answer = ask("_orders._tcp.eureka.", RecordType::SRV, &two_up(), 32);
    assert_eq!(
        data(&answer.answers),
        [
            "0 1 8080 10-0-0-1.orders.eureka.",
            "0 1 8081 fd00-0-0-0-0-0-0-2.orders.eureka."
        ]
    );
    let glue: Vec<String> = answer
        .additionals
        .iter()
        .map(|record| format!("{} {}", record.name, record.data))
        .collect();
    assert_eq!(
        glue,
        [
            "10-0-0-1.orders.eureka. 10.0.0.1",
            "fd00-0-0-0-0-0-0-2.orders.eureka. fd00::2"
        ]
    );
}

#[test]
fn the_https_service_answers_secure_ports_of_instances_that_enable_one() {
    let answer = ask("_orders._https.eureka.", RecordType::SRV, &two_up(), 32);
    assert_eq!(data(&answer.answers), ["0 1 8443 10-0-0-1.orders.eureka."]);
}

#[test]
fn srv_puts_the_askers_zone_at_priority_0_and_others_at_1() {
    let mut found = found(Some(vec![
        endpoint("10.0.0.1", Some(8080), None, "a"),
        endpoint("10.0.0.2", Some(8080), None, "b"),
    ]));
    found.asker_zone = Some("b");
    let answer = ask("_orders._tcp.eureka.", RecordType::SRV, &found, 32);
    assert_eq!(
        data(&answer.answers),
        [
            "1 1 8080 10-0-0-1.orders.eureka.",
            "0 1 8080 10-0-0-2.orders.eureka."
        ]
    );
}

#[test]
fn a_target_name_resolves_to_its_instance_while_it_is_up() {
    let up = ask("10-0-0-1.orders.eureka.", RecordType::A, &two_up(), 32);
    assert_eq!(data(&up.answers), ["10.0.0.1"]);
    let gone = ask("10-0-0-9.orders.eureka.", RecordType::A, &two_up(), 32);
    assert_eq!(gone.code, ResponseCode::NXDomain);
}

#[test]
fn at_most_max_answers_records_answer_and_addresses_are_not_repeated() {
    let endpoints = (1..=5)
        .flat_map(|n| {
            let address = format!("10.0.0.{n}");
            [
                endpoint(&address, Some(8080), None, ""),
                endpoint(&address, Some(8081), None, ""),
            ]
        })
        .collect();
    let found = found(Some(endpoints));
    let a = ask("orders.eureka.", RecordType::A, &found, 3);
    assert_eq!(data(&a.answers), ["10.0.0.1", "10.0.0.2", "10.0.0.3"]);
    let srv = ask("_orders._tcp.eureka.", RecordType::SRV, &found, 3);
    assert_eq!(srv.answers.len(), 3);
    assert_eq!(srv.additionals.len(), 2, "one address record per target");
}

#[test]
fn other_types_on_served_names_are_nodata_and_the_apex_answers_its_soa() {
    let mx = ask("orders.eureka.", RecordType::MX, &two_up(), 32);
    assert_eq!(
        (mx.code, mx.outcome),
        (ResponseCode::NoError, Outcome::Empty)
    );
    let srv_on_addresses = ask("orders.eureka.", RecordType::SRV, &two_up(), 32);
    assert_eq!(srv_on_addresses.outcome, Outcome::Empty);
    let apex = ask("eureka.", RecordType::SOA, &found(None), 32);
    assert_eq!(apex.answers.len(), 1);
    assert_eq!(apex.answers[0].record_type(), RecordType::SOA);
}
