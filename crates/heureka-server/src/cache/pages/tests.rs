//! Pages lay out the runs exactly, and a build after one change copies one page.

use std::io::Read;

use super::*;
use crate::cache::gzip::{deflate, GzipMember};

/// A run of JSON-like text, different for each `n` and `version`, about 2 kB compressed.
fn run_text(n: usize, version: usize) -> Vec<u8> {
    let mut text = Vec::new();
    let mut state = (n as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ version as u64;
    for i in 0..120 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        text.extend_from_slice(format!("{{\"instanceId\":\"i-{n}-{i}-{state:x}\"}},").as_bytes());
    }
    text
}

/// Pages of 64 KiB: a few dozen runs each, as at the server's page size a large document's.
const TEST_PAGE: usize = 64 * 1024;

struct Fixture {
    plain: Vec<Vec<u8>>,
    segments: Vec<Bytes>,
    checksums: Vec<Checksum>,
}

impl Fixture {
    fn new(runs: usize) -> Fixture {
        let plain: Vec<Vec<u8>> = (0..runs).map(|n| run_text(n, 0)).collect();
        Fixture {
            segments: plain.iter().map(|p| Bytes::from(deflate(p))).collect(),
            checksums: plain.iter().map(|p| crc_of(p)).collect(),
            plain,
        }
    }

    fn change(&mut self, n: usize, version: usize) {
        self.plain[n] = run_text(n, version);
        self.segments[n] = Bytes::from(deflate(&self.plain[n]));
        self.checksums[n] = crc_of(&self.plain[n]);
    }

    fn runs(&self) -> Vec<(&Bytes, &Checksum)> {
        self.segments.iter().zip(&self.checksums).collect()
    }

    /// The runs joined by the separator: what the pages must inflate to.
    fn expected(&self) -> Vec<u8> {
        self.plain.join(&b","[..])
    }
}

fn inflate_member(pages: &[(Bytes, Checksum)]) -> Vec<u8> {
    let mut gzip = GzipMember::new();
    for (page, checksum) in pages {
        gzip.push_shared(page.clone(), checksum);
    }
    let body = gzip.finish();
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(&body[..])
        .read_to_end(&mut plain)
        .expect("a valid gzip member, CRC and length included");
    plain
}

#[test]
fn pages_inflate_to_the_runs_with_a_separator_between_each_two() {
    let fixture = Fixture::new(300);
    let pages = Pages::of_about(TEST_PAGE).lay_out(&fixture.runs(), b",");
    assert!(pages.len() > 1, "{} pages", pages.len());
    assert_eq!(inflate_member(&pages), fixture.expected());
}

#[test]
fn pages_hold_about_page_bytes_each() {
    let fixture = Fixture::new(2_000);
    let pages = Pages::of_about(TEST_PAGE).lay_out(&fixture.runs(), b",");
    let total: usize = pages.iter().map(|(page, _)| page.len()).sum();
    let average = total / pages.len();
    assert!(
        (TEST_PAGE / 3..TEST_PAGE * 3).contains(&average),
        "{} pages of {average} bytes on average",
        pages.len()
    );
}

#[test]
fn a_build_after_one_change_copies_only_the_page_of_the_changed_run() {
    let mut fixture = Fixture::new(600);
    let mut pages = Pages::of_about(TEST_PAGE);
    let before = pages.lay_out(&fixture.runs(), b",");
    fixture.change(321, 1);
    let after = pages.lay_out(&fixture.runs(), b",");
    assert!(after.len() > 4, "{} pages", after.len());
    let kept = |page: &Bytes| before.iter().any(|(old, _)| same_bytes(old, page));
    let copied = after.iter().filter(|(page, _)| !kept(page)).count();
    assert!(
        (1..=2).contains(&copied),
        "{copied} of {} pages copied",
        after.len()
    );
    assert_eq!(inflate_member(&after), fixture.expected());
}

#[test]
fn an_unchanged_build_copies_nothing() {
    let fixture = Fixture::new(300);
    let mut pages = Pages::of_about(TEST_PAGE);
    let before = pages.lay_out(&fixture.runs(), b",");
    let again = pages.lay_out(&fixture.runs(), b",");
    assert_eq!(before.len(), again.len());
    assert!(before
        .iter()
        .zip(&again)
        .all(|((old, _), (new, _))| same_bytes(old, new)));
}

#[test]
fn a_removed_first_run_makes_the_next_page_start_without_a_separator() {
    let mut fixture = Fixture::new(300);
    let mut pages = Pages::of_about(TEST_PAGE);
    let before = pages.lay_out(&fixture.runs(), b",");
    assert!(before.len() > 2, "{} pages", before.len());
    // Drop the first page's runs: the second page's first run now opens the document.
    let first_page_runs = page_ends(&fixture.runs(), TEST_PAGE)[0];
    fixture.plain.drain(..first_page_runs);
    fixture.segments.drain(..first_page_runs);
    fixture.checksums.drain(..first_page_runs);
    let after = pages.lay_out(&fixture.runs(), b",");
    assert!(
        !same_bytes(&before[1].0, &after[0].0),
        "copied without its separator"
    );
    assert_eq!(inflate_member(&after), fixture.expected());
}

#[test]
fn no_runs_make_no_pages() {
    assert!(Pages::of_about(TEST_PAGE).lay_out(&[], b",").is_empty());
}
