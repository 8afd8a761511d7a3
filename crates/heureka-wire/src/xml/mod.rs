//! Eureka's XML, as XStream writes and reads it, including XStream's "XML-friendly" name coding
//! ([`names`]): the registry's elements are `versions__delta` and `apps__hashcode`, and a
//! metadata key `prometheus.io/scrape` travels as `<prometheus.io_.002fscrape>`.
//!
//! Every document written is well-formed XML 1.0 whatever the registry holds: names are always
//! coded into valid names, and text never holds a character XML 1.0 forbids ([`is_xml_char`]).

pub(crate) mod decode;
pub(crate) mod encode;
mod name_chars;
mod names;

pub use names::metadata_key_fits_xml;

/// Whether XML 1.0 allows `c` in a document at all (its `Char` production): tab, line feed,
/// carriage return, and everything from U+0020 up except U+FFFE and U+FFFF. (The surrogates it
/// also excludes cannot occur in a Rust string.)
pub(crate) fn is_xml_char(c: char) -> bool {
    !matches!(c, '\0'..='\u{8}' | '\u{B}' | '\u{C}' | '\u{E}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}')
}
