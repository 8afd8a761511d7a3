//! The answer to one question, given what the registry holds for the name asked: the DNS
//! rules, apart from sockets and the lock, so each is tested on values.
//!
//! * an unknown application (or an address none of its UP instances has) is NXDOMAIN;
//! * an application with no UP instance, or none of the family or port asked, is NOERROR with
//!   no answer (NODATA);
//! * negative answers carry the zone's SOA in the authority section, its minimum (and TTL) the
//!   configured TTL, so resolvers cache them no longer than a positive answer (RFC 2308);
//! * SRV targets are `<address>.<app>.<domain>`, names this server answers, with their address
//!   in the additional section (glue), so a client needs no second query;
//! * at most `max_answers` records answer (the first, in the order given).

use std::net::IpAddr;

use hickory_proto::op::ResponseCode;
use hickory_proto::rr::rdata::{SOA, SRV};
use hickory_proto::rr::{Name, RData, Record, RecordType};

use super::endpoints::Endpoint;
use super::names::{label_of_address, Asked};

/// The zone's settings (`heureka.dns.*`).
#[derive(Clone, Debug)]
pub(crate) struct Zone {
    /// The domain, fully qualified, lower case.
    pub(crate) domain: Name,
    pub(crate) ttl: u32,
    pub(crate) max_answers: usize,
}

/// What one query is answered.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) code: ResponseCode,
    pub(crate) answers: Vec<Record>,
    pub(crate) additionals: Vec<Record>,
    /// The zone's SOA, for the authority section of a negative answer.
    pub(crate) soa: Option<Record>,
    pub(crate) outcome: Outcome,
}

/// How a query was answered, as counted in metrics and `status()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// At least one record.
    Answered,
    /// NOERROR without records.
    Empty,
    NxDomain,
    /// Outside the zone, not class IN, or not a query.
    Refused,
    /// Over `heureka.dns.rate-limit`.
    RateLimited,
}

impl Outcome {
    pub(crate) const ALL: [Outcome; 5] = [
        Outcome::Answered,
        Outcome::Empty,
        Outcome::NxDomain,
        Outcome::Refused,
        Outcome::RateLimited,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Outcome::Answered => "answered",
            Outcome::Empty => "empty",
            Outcome::NxDomain => "nxdomain",
            Outcome::Refused => "refused",
            Outcome::RateLimited => "rate_limited",
        }
    }
}

/// What the registry holds for the application asked about, read by the caller under the
/// store's lock: `None` when the application is unknown, else its UP instances, in the order
/// to answer them (`order.rs`), and the asker's zone when known.
#[derive(Debug, Default)]
pub(crate) struct Found<'a> {
    pub(crate) endpoints: Option<Vec<&'a Endpoint>>,
    pub(crate) asker_zone: Option<&'a str>,
    /// The registry's version, the SOA's serial.
    pub(crate) serial: u32,
}

/// A refusal (REFUSED, or FORMERR for a message that is not one question): no records.
pub(crate) fn refused(code: ResponseCode) -> Answer {
    Answer {
        code,
        answers: Vec::new(),
        additionals: Vec::new(),
        soa: None,
        outcome: Outcome::Refused,
    }
}

/// The answer to `qtype` for `qname`, which reads as `asked`.
pub(crate) fn answer(
    zone: &Zone,
    asked: &Asked,
    qname: &Name,
    qtype: RecordType,
    found: &Found<'_>,
) -> Answer {
    let soa = || soa(zone, found.serial);
    let (endpoints, app) = match asked {
        Asked::Outside => return refused(ResponseCode::Refused),
        Asked::Apex if qtype == RecordType::SOA => return positive(vec![soa()], Vec::new()),
        Asked::Apex => return negative(ResponseCode::NoError, soa()),
        Asked::Nothing => return negative(ResponseCode::NXDomain, soa()),
        Asked::Addresses { app } | Asked::Service { app, .. } | Asked::Host { app, .. } => {
            match &found.endpoints {
                Some(endpoints) => (endpoints, app),
                None => return negative(ResponseCode::NXDomain, soa()),
            }
        }
    };
    let (answers, additionals) = match asked {
        Asked::Addresses { .. } => (
            addresses(zone, qname, qtype, endpoints.iter().copied()),
            Vec::new(),
        ),
        Asked::Host { address, .. } => {
            let mut at = endpoints
                .iter()
                .copied()
                .filter(|e| e.address == *address)
                .peekable();
            if at.peek().is_none() {
                return negative(ResponseCode::NXDomain, soa());
            }
            (addresses(zone, qname, qtype, at), Vec::new())
        }
        Asked::Service { secure, .. } if matches!(qtype, RecordType::SRV | RecordType::ANY) => {
            services(zone, qname, app, *secure, endpoints, found.asker_zone)
        }
        _ => (Vec::new(), Vec::new()),
    };
    if answers.is_empty() {
        negative(ResponseCode::NoError, soa())
    } else {
        positive(answers, additionals)
    }
}

fn positive(answers: Vec<Record>, additionals: Vec<Record>) -> Answer {
    Answer {
        code: ResponseCode::NoError,
        answers,
        additionals,
        soa: None,
        outcome: Outcome::Answered,
    }
}

fn negative(code: ResponseCode, soa: Record) -> Answer {
    Answer {
        code,
        answers: Vec::new(),
        additionals: Vec::new(),
        soa: Some(soa),
        outcome: if code == ResponseCode::NXDomain {
            Outcome::NxDomain
        } else {
            Outcome::Empty
        },
    }
}

/// A and AAAA records of the distinct addresses, of the family `qtype` asks (both for ANY).
fn addresses<'e>(
    zone: &Zone,
    qname: &Name,
    qtype: RecordType,
    endpoints: impl Iterator<Item = &'e Endpoint>,
) -> Vec<Record> {
    let mut seen: Vec<IpAddr> = Vec::new();
    for endpoint in endpoints {
        let wanted = match endpoint.address {
            IpAddr::V4(_) => matches!(qtype, RecordType::A | RecordType::ANY),
            IpAddr::V6(_) => matches!(qtype, RecordType::AAAA | RecordType::ANY),
        };
        if wanted && !seen.contains(&endpoint.address) {
            seen.push(endpoint.address);
            if seen.len() == zone.max_answers {
                break;
            }
        }
    }
    seen.into_iter()
        .map(|address| address_record(qname.clone(), zone.ttl, address))
        .collect()
}

fn address_record(name: Name, ttl: u32, address: IpAddr) -> Record {
    let data = match address {
        IpAddr::V4(v4) => RData::A(v4.into()),
        IpAddr::V6(v6) => RData::AAAA(v6.into()),
    };
    Record::from_rdata(name, ttl, data)
}

/// One SRV record per instance with the port asked, priority 0 in the asker's zone (or for all
/// when it is unknown) and 1 elsewhere, equal weights; and the targets' addresses.
fn services(
    zone: &Zone,
    qname: &Name,
    app: &str,
    secure: bool,
    endpoints: &[&Endpoint],
    asker_zone: Option<&str>,
) -> (Vec<Record>, Vec<Record>) {
    let mut answers = Vec::new();
    let mut glue: Vec<Record> = Vec::new();
    let with_port = endpoints.iter().copied().filter_map(|endpoint| {
        let port = if secure {
            endpoint.secure_port
        } else {
            endpoint.port
        };
        Some((endpoint, port?))
    });
    for (endpoint, port) in with_port.take(zone.max_answers) {
        let Some(target) = target(zone, app, endpoint.address) else {
            continue;
        };
        let priority = match asker_zone {
            Some(asker) if endpoint.zone.as_deref() != Some(asker) => 1,
            _ => 0,
        };
        let srv = SRV::new(priority, 1, port, target.clone());
        answers.push(Record::from_rdata(qname.clone(), zone.ttl, RData::SRV(srv)));
        if !glue.iter().any(|record| record.name == target) {
            glue.push(address_record(target, zone.ttl, endpoint.address));
        }
    }
    (answers, glue)
}

/// `<address>.<app>.<domain>`; `None` only if the name would exceed DNS's limits.
fn target(zone: &Zone, app: &str, address: IpAddr) -> Option<Name> {
    Name::from_labels([label_of_address(address), app.to_ascii_lowercase()])
        .ok()?
        .append_domain(&zone.domain)
        .ok()
}

/// The zone's SOA: serial the registry's version, refresh/retry/expire nominal (there are no
/// secondaries), minimum the TTL: the negative-caching time (RFC 2308).
fn soa(zone: &Zone, serial: u32) -> Record {
    let under = |label: &str| {
        Name::from_labels([label])
            .and_then(|name| name.append_domain(&zone.domain))
            .unwrap_or_else(|_| zone.domain.clone())
    };
    let data = SOA::new(
        under("ns"),
        under("hostmaster"),
        serial,
        3600,
        600,
        86400,
        zone.ttl,
    );
    Record::from_rdata(zone.domain.clone(), zone.ttl, RData::SOA(data))
}

#[cfg(test)]
mod tests;
