//! API STUB — replaced by the real implementation.

use heureka_core::{Application, Applications, Instance, Millis};

/// Which of Eureka's two encodings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    Json,
    Xml,
}

/// Why a body could not be read. The message is one line, fit for a 400 response.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    #[error("{0}")]
    Malformed(String),
}

pub fn encode_applications(apps: &Applications, format: Format) -> Vec<u8> {
    let _ = (apps, format);
    unimplemented!()
}
pub fn encode_application(app: &Application, format: Format) -> Vec<u8> {
    let _ = (app, format);
    unimplemented!()
}
pub fn encode_instance(instance: &Instance, format: Format) -> Vec<u8> {
    let _ = (instance, format);
    unimplemented!()
}
/// Reads a register body (`{"instance":{…}}` or `<instance>…</instance>`); `now` is "parse time".
pub fn decode_instance(body: &[u8], format: Format, now: Millis) -> Result<Instance, DecodeError> {
    let _ = (body, format, now);
    unimplemented!()
}
pub fn decode_applications(body: &[u8], format: Format) -> Result<Applications, DecodeError> {
    let _ = (body, format);
    unimplemented!()
}
