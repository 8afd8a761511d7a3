//! Deflate segments and stored blocks make one valid gzip member.

use super::*;
use crate::cache::fixtures::gunzip_single_member;

#[test]
fn deflate_segments_and_stored_blocks_form_one_valid_gzip_member() {
    let parts: [&[u8]; 3] = [
        b"{\"applications\":[",
        b"{\"name\":\"A\"}",
        b"{\"name\":\"B\"}",
    ];
    let mut gzip = GzipMember::new();
    gzip.push_deflated(&deflate(parts[0]), &crc_of(parts[0]));
    gzip.push_deflated(&deflate(parts[1]), &crc_of(parts[1]));
    gzip.push_stored(b",");
    gzip.push_deflated(&deflate(parts[2]), &crc_of(parts[2]));
    gzip.push_stored(b"]}");
    let single = gunzip_single_member(&gzip.finish());
    assert_eq!(
        single,
        b"{\"applications\":[{\"name\":\"A\"},{\"name\":\"B\"}]}"
    );
}

#[test]
fn large_inputs_deflate_completely() {
    let data: Vec<u8> = (0..200_000u32).flat_map(|n| n.to_le_bytes()).collect();
    let mut gzip = GzipMember::new();
    gzip.push_deflated(&deflate(&data), &crc_of(&data));
    assert_eq!(gunzip_single_member(&gzip.finish()), data);
}

#[test]
fn segments_deflated_at_different_levels_form_one_valid_member() {
    // A first large build compresses its runs fast; runs re-encoded later use the kept level.
    let fast = b"{\"name\":\"A\",\"instance\":[]}".repeat(50);
    let kept = b"{\"name\":\"B\",\"instance\":[]}".repeat(50);
    let mut gzip = GzipMember::new();
    gzip.push_deflated(&deflate_at(&fast, Compression::new(2)), &crc_of(&fast));
    gzip.push_stored(b",");
    gzip.push_deflated(&deflate(&kept), &crc_of(&kept));
    let expected = [fast.as_slice(), b",", kept.as_slice()].concat();
    assert_eq!(gunzip_single_member(&gzip.finish()), expected);
}
