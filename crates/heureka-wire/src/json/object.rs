//! Heureka's own JSON objects written field by field: `,"name":value` after an object's first
//! field, and `[…]` lists, shared by the events, audit, dashboard, consumers, health-check,
//! status and actuator documents.

use super::encode::string;
use crate::numbers::{push_i64, push_u64};

/// `[a,b,…]`: each item written by `write`, with commas between.
pub(crate) fn list<T>(
    out: &mut Vec<u8>,
    items: impl IntoIterator<Item = T>,
    mut write: impl FnMut(&mut Vec<u8>, T),
) {
    out.push(b'[');
    for (n, item) in items.into_iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        write(out, item);
    }
    out.push(b']');
}

pub(crate) fn bool_text(value: bool) -> &'static [u8] {
    if value {
        b"true"
    } else {
        b"false"
    }
}

pub(crate) fn field_str(out: &mut Vec<u8>, name: &str, value: &str) {
    out.push(b',');
    string(out, name);
    out.push(b':');
    string(out, value);
}

pub(crate) fn field_u64(out: &mut Vec<u8>, name: &str, value: u64) {
    out.push(b',');
    string(out, name);
    out.push(b':');
    push_u64(out, value);
}

pub(crate) fn field_i64(out: &mut Vec<u8>, name: &str, value: i64) {
    out.push(b',');
    string(out, name);
    out.push(b':');
    push_i64(out, value);
}
