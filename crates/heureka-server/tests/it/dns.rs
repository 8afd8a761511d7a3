//! DNS (`heureka.dns.*`) over real UDP and TCP sockets: what a resolver asking the server
//! sees of the registry. The rules one by one are `src/dns/`'s unit tests; `dig` and Go's
//! resolver against the binary are `interop/tests/test_dns.py`.

use std::time::Duration;

use hickory_proto::op::{Edns, Message, MessageType, OpCode, Query, ResponseCode};
use hickory_proto::rr::{DNSClass, Name, RData, RecordType};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UdpSocket};

use crate::support::{Sent, TestServer};

/// A server answering DNS on a port of its own, with `args` besides.
async fn dns_server(args: &[&str]) -> (TestServer, u16) {
    let port = heureka_testkit::free_port();
    let mut all = vec![
        "--heureka.dns.enabled=true".to_owned(),
        "--heureka.dns.address=127.0.0.1".to_owned(),
        format!("--heureka.dns.port={port}"),
    ];
    all.extend(args.iter().map(|arg| arg.to_string()));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let server = TestServer::start(&all).await;
    (server, port)
}

/// Registers `app/id` at `ip` as a Spring client would, with metadata `zone` when given.
async fn register_at(server: &TestServer, app: &str, id: &str, ip: &str, zone: Option<&str>) {
    let mut body = heureka_testkit::spring_body(app, id).replace("10.0.0.5", ip);
    if let Some(zone) = zone {
        body = body.replace(
            r#""management.port":"8080""#,
            &format!(r#""management.port":"8080","zone":"{zone}""#),
        );
    }
    let response = server.post_json(&format!("/apps/{app}"), &body).await;
    assert_eq!(response.status(), 204, "register {app}/{id}");
}

fn question(name: &str, qtype: RecordType, edns: bool) -> Vec<u8> {
    let mut message = Message::new(7, MessageType::Query, OpCode::Query);
    message.metadata.recursion_desired = true;
    message.add_query(Query::query(Name::from_ascii(name).unwrap(), qtype));
    if edns {
        let mut edns = Edns::new();
        edns.set_max_payload(4096);
        message.set_edns(edns);
    }
    message.to_vec().unwrap()
}

/// Asks over UDP, waiting at most a few seconds for the answer.
async fn udp(port: u16, name: &str, qtype: RecordType, edns: bool) -> Message {
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    socket
        .send_to(&question(name, qtype, edns), ("127.0.0.1", port))
        .await
        .unwrap();
    let mut buffer = vec![0; 65_535];
    let received = tokio::time::timeout(Duration::from_secs(5), socket.recv(&mut buffer))
        .await
        .expect("an answer within 5 s")
        .unwrap();
    Message::from_vec(&buffer[..received]).unwrap()
}

/// Asks over TCP (a two-byte length before each message, RFC 1035 §4.2.2).
async fn tcp(port: u16, name: &str, qtype: RecordType) -> Message {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let query = question(name, qtype, false);
    stream
        .write_all(&(query.len() as u16).to_be_bytes())
        .await
        .unwrap();
    stream.write_all(&query).await.unwrap();
    let length = stream.read_u16().await.unwrap();
    let mut buffer = vec![0; usize::from(length)];
    stream.read_exact(&mut buffer).await.unwrap();
    Message::from_vec(&buffer).unwrap()
}

fn data(message: &Message) -> Vec<String> {
    message
        .answers
        .iter()
        .map(|record| record.data.to_string())
        .collect()
}

#[tokio::test]
async fn an_up_instance_is_answered_by_its_address_whatever_the_names_case() {
    let (server, port) = dns_server(&[]).await;
    register_at(&server, "ORDERS", "o-1", "10.0.0.7", None).await;
    let answer = udp(port, "OrDeRs.eureka.", RecordType::A, false).await;
    assert_eq!(answer.metadata.response_code, ResponseCode::NoError);
    assert!(answer.metadata.authoritative);
    assert_eq!(data(&answer), ["10.0.0.7"]);
    assert_eq!(answer.answers[0].ttl, 5);
}

#[tokio::test]
async fn an_instance_out_of_service_is_not_answered_and_its_app_answers_empty() {
    let (server, port) = dns_server(&[]).await;
    register_at(&server, "ORDERS", "o-1", "10.0.0.7", None).await;
    server.take_out_of_service("ORDERS", "o-1").await;
    let answer = udp(port, "orders.eureka.", RecordType::A, false).await;
    assert_eq!(answer.metadata.response_code, ResponseCode::NoError);
    assert!(answer.answers.is_empty());
    assert_eq!(answer.authorities[0].record_type(), RecordType::SOA);
}

#[tokio::test]
async fn an_unknown_app_is_nxdomain_with_the_soa() {
    let (_server, port) = dns_server(&[]).await;
    let answer = udp(port, "nobody.eureka.", RecordType::A, false).await;
    assert_eq!(answer.metadata.response_code, ResponseCode::NXDomain);
    let RData::SOA(soa) = &answer.authorities[0].data else {
        panic!("{:?}", answer.authorities)
    };
    assert_eq!(soa.minimum, 5);
}

#[tokio::test]
async fn a_name_outside_the_domain_is_refused() {
    let (_server, port) = dns_server(&["--heureka.dns.domain=svc.example."]).await;
    let answer = udp(port, "orders.eureka.", RecordType::A, false).await;
    assert_eq!(answer.metadata.response_code, ResponseCode::Refused);
}

#[tokio::test]
async fn srv_over_tcp_answers_ports_and_the_targets_addresses() {
    let (server, port) = dns_server(&[]).await;
    register_at(&server, "ORDERS", "o-1", "10.0.0.7", None).await;
    let answer = tcp(port, "_orders._tcp.eureka.", RecordType::SRV).await;
    assert_eq!(data(&answer), ["0 1 8080 10-0-0-7.orders.eureka."]);
    let glue: Vec<String> = answer
        .additionals
        .iter()
        .map(|record| format!("{} {}", record.name, record.data))
        .collect();
    assert_eq!(glue, ["10-0-0-7.orders.eureka. 10.0.0.7"]);
}

#[tokio::test]
async fn an_answer_too_long_for_udp_is_truncated_and_whole_over_tcp() {
    let (server, port) = dns_server(&["--heureka.dns.max-answers=40"]).await;
    for n in 1..=30 {
        register_at(
            &server,
            "ORDERS",
            &format!("o-{n}"),
            &format!("10.0.1.{n}"),
            None,
        )
        .await;
    }
    let over_udp = udp(port, "_orders._tcp.eureka.", RecordType::SRV, false).await;
    assert!(over_udp.metadata.truncation, "TC set over 512 bytes");
    assert!(over_udp.answers.len() < 30);
    let over_tcp = tcp(port, "_orders._tcp.eureka.", RecordType::SRV).await;
    assert!(!over_tcp.metadata.truncation);
    assert_eq!(over_tcp.answers.len(), 30);
    assert_eq!(over_tcp.additionals.len(), 30);
}

#[tokio::test]
async fn at_most_max_answers_records_answer() {
    let (server, port) = dns_server(&["--heureka.dns.max-answers=3"]).await;
    for n in 1..=5 {
        register_at(
            &server,
            "ORDERS",
            &format!("o-{n}"),
            &format!("10.0.1.{n}"),
            None,
        )
        .await;
    }
    let answer = udp(port, "orders.eureka.", RecordType::A, true).await;
    assert_eq!(answer.answers.len(), 3);
}

#[tokio::test]
async fn an_asker_registered_in_a_zone_gets_its_zones_instances_at_priority_0() {
    let (server, port) = dns_server(&[]).await;
    register_at(&server, "BILLING", "b-1", "127.0.0.1", Some("zone-b")).await;
    register_at(&server, "ORDERS", "o-a", "10.0.0.1", Some("zone-a")).await;
    register_at(&server, "ORDERS", "o-b", "10.0.0.2", Some("zone-b")).await;
    for _ in 0..2 {
        let answer = udp(port, "_orders._tcp.eureka.", RecordType::SRV, false).await;
        assert_eq!(
            data(&answer),
            [
                "0 1 8080 10-0-0-2.orders.eureka.",
                "1 1 8080 10-0-0-1.orders.eureka."
            ]
        );
    }
}

#[tokio::test]
async fn a_source_over_the_rate_limit_is_refused() {
    let (server, port) = dns_server(&["--heureka.dns.rate-limit=3"]).await;
    register_at(&server, "ORDERS", "o-1", "10.0.0.7", None).await;
    let mut codes = Vec::new();
    for _ in 0..6 {
        codes.push(
            udp(port, "orders.eureka.", RecordType::A, false)
                .await
                .metadata
                .response_code,
        );
    }
    assert_eq!(codes[..3], [ResponseCode::NoError; 3]);
    assert!(codes[3..].contains(&ResponseCode::Refused), "{codes:?}");
}

#[tokio::test]
async fn queries_are_counted_in_metrics_by_outcome() {
    let (server, port) = dns_server(&[]).await;
    udp(port, "nobody.eureka.", RecordType::A, false).await;
    let text = server
        .http
        .get(server.root_url("/actuator/prometheus"))
        .sent()
        .await
        .text()
        .await
        .unwrap();
    assert!(
        text.contains(r#"heureka_dns_queries_total{outcome="nxdomain"} 1"#),
        "{text}"
    );
}

#[tokio::test]
async fn a_query_of_another_class_is_refused() {
    let (_server, port) = dns_server(&[]).await;
    let mut message = Message::new(9, MessageType::Query, OpCode::Query);
    let mut query = Query::query(Name::from_ascii("version.bind.").unwrap(), RecordType::TXT);
    query.set_query_class(DNSClass::CH);
    message.add_query(query);
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    socket
        .send_to(&message.to_vec().unwrap(), ("127.0.0.1", port))
        .await
        .unwrap();
    let mut buffer = vec![0; 512];
    let received = tokio::time::timeout(Duration::from_secs(5), socket.recv(&mut buffer))
        .await
        .expect("an answer within 5 s")
        .unwrap();
    let answer = Message::from_vec(&buffer[..received]).unwrap();
    assert_eq!(answer.metadata.response_code, ResponseCode::Refused);
}

#[tokio::test]
async fn the_dns_port_closes_with_the_server() {
    let (server, port) = dns_server(&[]).await;
    server.stop().await;
    UdpSocket::bind(("127.0.0.1", port))
        .await
        .expect("UDP port free again");
    tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .expect("TCP port free again");
}
