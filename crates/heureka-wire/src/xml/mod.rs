//! Eureka's XML, as XStream writes and reads it, including XStream's "XML-friendly" name coding
//! ([`names`]): the registry's elements are `versions__delta` and `apps__hashcode`, and a
//! metadata key `prometheus.io/scrape` travels as `<prometheus.io_.002fscrape>`.
//!
//! Every document written is well-formed XML 1.0 whatever the registry holds: names are always
//! coded into valid names, and text never holds a character XML 1.0 forbids ([`is_xml_char`](name_chars::is_xml_char)).

pub(crate) mod decode;
pub(crate) mod encode;
mod name_chars;
mod names;

pub use names::metadata_key_fits_xml;
pub(crate) use names::push_encoded_name;
