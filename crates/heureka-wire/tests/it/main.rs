//! Integration tests of heureka-wire: golden output, real client bodies, leniency, errors and
//! round trips. One test binary; one module per concern.

mod clients;
mod digest;
mod errors;
mod fixtures;
mod golden_json;
mod golden_xml;
mod leniency;
mod pieces;
mod replication;
mod round_trip;
