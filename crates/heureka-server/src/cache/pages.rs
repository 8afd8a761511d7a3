//! The runs' deflate segments of a gzip body, copied together a page at a time, and pages kept
//! from one build to the next where none of their runs changed.
//!
//! A gzip body of 1,000,000 instances is about 50 MB. Copied into one buffer on every build,
//! the copy and the fresh pages it touched were most of the time between a registration and
//! a full fetch that shows it. Sending the runs' segments as they are kept, one body part
//! each, costs no copy but a frame per run on every read (twice the CPU per full fetch at
//! 10,000 instances: `bench/results/ab/gzip-body-one-buffer-vs-shared-run-segments.md`). Pages
//! sit between the two: a body part per megabyte, and a change copies its own page only.
//!
//! Pages end at content-defined places, as runs do: after a run whose checksum, taken modulo
//! [`PAGE_BYTES`], falls below its compressed length, so a page holds about `PAGE_BYTES` on
//! average, and a changed run moves no boundary but its own.

use std::collections::HashMap;

use bytes::Bytes;

use super::gzip::{crc_of, push_stored_block, Checksum};

/// The average page: a change copies about this much, and a read sends about a body part per
/// this much.
pub(super) const PAGE_BYTES: usize = 1024 * 1024;

/// A page as laid out: the runs' segments it was copied from (held, so that no other segment
/// can take their addresses while the page stands for them), whether a separator precedes its
/// first run, and its bytes with their checksum.
#[derive(Debug)]
struct Page {
    segments: Vec<Bytes>,
    leading_separator: bool,
    bytes: Bytes,
    checksum: Checksum,
}

impl Page {
    fn stands_for(&self, segments: &[(&Bytes, &Checksum)], leading_separator: bool) -> bool {
        self.leading_separator == leading_separator
            && self.segments.len() == segments.len()
            && self
                .segments
                .iter()
                .zip(segments)
                .all(|(kept, (segment, _))| same_bytes(kept, segment))
    }
}

fn same_bytes(a: &Bytes, b: &Bytes) -> bool {
    a.as_ptr() == b.as_ptr() && a.len() == b.len()
}

/// The pages of the last gzip body laid out, by the address of their first segment.
#[derive(Debug)]
pub(super) struct Pages {
    last: HashMap<usize, Page, foldhash::fast::RandomState>,
    /// The average page: [`PAGE_BYTES`], smaller in tests.
    page_bytes: usize,
}

impl Default for Pages {
    fn default() -> Pages {
        Pages::of_about(PAGE_BYTES)
    }
}

impl Pages {
    /// Pages of about `page_bytes` each.
    pub(super) fn of_about(page_bytes: usize) -> Pages {
        Pages {
            last: HashMap::default(),
            page_bytes,
        }
    }

    /// Forgets the pages kept (a body laid out without them).
    pub(super) fn clear(&mut self) {
        self.last.clear();
    }

    /// The runs' segments (in order, each with its data's checksum), a stored `separator`
    /// between each two, as pages with their checksums: kept pages shared, the others copied.
    pub(super) fn lay_out(
        &mut self,
        runs: &[(&Bytes, &Checksum)],
        separator: &[u8],
    ) -> Vec<(Bytes, Checksum)> {
        let separator = Separator::new(separator);
        let mut last = std::mem::take(&mut self.last);
        let mut laid = Vec::new();
        let mut start = 0;
        for end in page_ends(runs, self.page_bytes) {
            let page_runs = &runs[start..end];
            let leading_separator = start > 0;
            let key = page_runs[0].0.as_ptr() as usize;
            let page = match last.remove(&key) {
                Some(page) if page.stands_for(page_runs, leading_separator) => page,
                _ => Page::copied(page_runs, leading_separator, &separator),
            };
            laid.push((page.bytes.clone(), page.checksum));
            self.last.insert(key, page);
            start = end;
        }
        laid
    }
}

/// Where each page ends (exclusive run indices); the last one ends with the runs.
fn page_ends(runs: &[(&Bytes, &Checksum)], page_bytes: usize) -> Vec<usize> {
    let mut ends: Vec<usize> = runs
        .iter()
        .enumerate()
        .filter(|(_, (segment, checksum))| ends_page(checksum, segment.len(), page_bytes))
        .map(|(at, _)| at + 1)
        .collect();
    if ends.last() != Some(&runs.len()) && !runs.is_empty() {
        ends.push(runs.len());
    }
    ends
}

/// Whether a page ends after the run of this checksum, `compressed` bytes long: with a
/// probability of `compressed / page_bytes`, decided by its content alone.
fn ends_page(checksum: &Checksum, compressed: usize, page_bytes: usize) -> bool {
    checksum.residue(page_bytes) < compressed
}

/// A separator as a stored block, and its data's checksum.
struct Separator {
    block: Vec<u8>,
    checksum: Checksum,
}

impl Separator {
    fn new(plain: &[u8]) -> Separator {
        let mut block = Vec::new();
        push_stored_block(&mut block, plain);
        Separator {
            block,
            checksum: crc_of(plain),
        }
    }
}

impl Page {
    fn copied(
        runs: &[(&Bytes, &Checksum)],
        leading_separator: bool,
        separator: &Separator,
    ) -> Page {
        let separators = runs.len() - usize::from(!leading_separator);
        let size = runs.iter().map(|(segment, _)| segment.len()).sum::<usize>()
            + separators * separator.block.len();
        let mut bytes = Vec::with_capacity(size);
        let mut checksums = Vec::with_capacity(runs.len() + separators);
        for (n, (segment, checksum)) in runs.iter().enumerate() {
            if n > 0 || leading_separator {
                bytes.extend_from_slice(&separator.block);
                checksums.push(&separator.checksum);
            }
            bytes.extend_from_slice(segment);
            checksums.push(checksum);
        }
        Page {
            segments: runs
                .iter()
                .map(|(segment, _)| Bytes::clone(segment))
                .collect(),
            leading_separator,
            checksum: Checksum::of_sequence(checksums),
            bytes: Bytes::from(bytes),
        }
    }
}

#[cfg(test)]
mod tests;
