//! Finding ASCII marks in the short strings of a request line (a path's `/`, a query's `&`
//! and `=`), eight bytes at a time. A heartbeat's path and query are tens of bytes, too short
//! for `memchr`'s vector search to pay for its setup, and a byte-wise match over them cost a
//! heartbeat about a twentieth of its instructions.

/// Where the first byte at or after `from` that is one of `marks` (ASCII) is.
#[inline]
pub(crate) fn next_mark<const K: usize>(
    bytes: &[u8],
    from: usize,
    marks: [u8; K],
) -> Option<usize> {
    let mut at = from;
    while let Some(word) = bytes.get(at..at + 8) {
        let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        let found = marks_in(word, marks);
        if found != 0 {
            // Little-endian: the lowest set bit is the earliest byte, and a true mark.
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let tail = bytes.get(at..)?;
    let found = tail.iter().position(|byte| marks.contains(byte))?;
    Some(at + found)
}

/// The high bit of each byte of `word` that is one of `marks`. A byte after a flagged one may
/// be flagged falsely (the borrow of the zero-byte test runs upwards), never a byte before
/// it, so the lowest flag is always a true one.
#[inline]
fn marks_in<const K: usize>(word: u64, marks: [u8; K]) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    marks.iter().fold(0, |found, &mark| {
        let diff = word ^ (ONES * u64::from(mark));
        found | (diff.wrapping_sub(ONES) & !diff & HIGHS)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_mark_in_the_first_word_in_a_later_one_and_in_the_tail_is_found() {
        let text = b"status=UP&lastDirtyTimestamp=17";
        assert_eq!(next_mark(text, 0, [b'&', b'=']), Some(6));
        assert_eq!(next_mark(text, 7, [b'&', b'=']), Some(9));
        assert_eq!(next_mark(text, 10, [b'&', b'=']), Some(28));
        assert_eq!(next_mark(text, 29, [b'&', b'=']), None);
    }

    #[test]
    fn a_byte_falsely_flagged_after_a_true_mark_is_never_the_one_found() {
        // `.` is `/` with its lowest bit flipped: right after a true `/`, the zero-byte test's
        // borrow can flag it too, and only the lowest flag is read. From the `.` on, in a whole
        // word, there is no `/` to borrow from and nothing is found.
        assert_eq!(next_mark(b"ab/.cdefgh", 0, [b'/']), Some(2));
        assert_eq!(next_mark(b"ab/.cdefghijkl", 3, [b'/']), None);
    }

    proptest! {
        #[test]
        fn the_mark_found_is_the_first_a_byte_wise_search_finds(
            text in proptest::collection::vec(any::<u8>(), 0..40),
            from in 0usize..44,
            marks in proptest::array::uniform3(any::<u8>().prop_map(|byte| byte & 0x7f)),
        ) {
            let expected = text
                .get(from..)
                .and_then(|tail| tail.iter().position(|byte| marks.contains(byte)))
                .map(|found| from + found);
            prop_assert_eq!(next_mark(&text, from, marks), expected);
        }
    }
}
