//! Writing integers into an output buffer without going through `fmt`.
//!
//! `write!` costs a formatter call per number, and a registry document has a dozen numbers per
//! instance; this is the small hand-rolled equivalent of the `itoa` crate.

/// Appends the decimal digits of `n`.
pub(crate) fn push_i64(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    push_u64(out, n.unsigned_abs());
}

/// Appends the decimal digits of `n`.
pub(crate) fn push_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(n: i64) -> String {
        let mut out = Vec::new();
        push_i64(&mut out, n);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn integers_are_written_like_display() {
        for n in [0, 7, 10, 8080, -1, 1_714_550_400_000, i64::MAX, i64::MIN] {
            assert_eq!(text(n), n.to_string());
        }
    }
}
