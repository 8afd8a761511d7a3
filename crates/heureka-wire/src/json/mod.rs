//! Eureka's JSON, as written by the legacy `EurekaJacksonCodec` and read leniently.

pub(crate) mod decode;
pub(crate) mod encode;
pub(crate) mod object;
pub(crate) mod stream;
pub(crate) mod tree;
