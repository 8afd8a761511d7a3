//! Integration tests of heureka-wire: golden output, real client bodies, leniency, errors and
//! round trips. One test binary; one module per concern.

mod clients;
mod digest;
mod documents;
mod errors;
mod fixtures;
mod golden_json;
mod golden_xml;
mod leniency;
mod pieces;
mod properties;
mod replication;
mod round_trip;
mod stamped;
mod strict_parsers;
