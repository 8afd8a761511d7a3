//! Raw deflate segments that concatenate into one stream, and the gzip member laid around them.

use std::io::Read;

use bytes::Bytes;
use flate2::{Compress, Compression, FlushCompress};
use zlib_rs::crc32::{crc32, crc32_combine_gen, crc32_combine_op};

/// The CRC-32 and length of a piece of a gzip member's data, and the operator that moves a
/// CRC past the piece (`x^(8·len) mod P`). A document's CRC is its runs' combined, once per
/// build: with the operator made once per run, each combination is one multiplication
/// rather than a logarithm of the run's length of them (combining was an eighth of a rebuild
/// after one change at 100,000 instances).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Checksum {
    crc: u32,
    len: u64,
    shift: u32,
}

impl Checksum {
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The CRC modulo `modulus`: a number drawn from the data's content.
    pub(crate) fn residue(&self, modulus: usize) -> usize {
        self.crc as usize % modulus
    }

    /// The checksum of pieces laid one after another, from theirs: one multiplication per
    /// piece, and the operator of the whole made once at the end.
    pub(crate) fn of_sequence<'a>(pieces: impl IntoIterator<Item = &'a Checksum>) -> Checksum {
        let (crc, len) = pieces.into_iter().fold((0, 0), |(crc, len), piece| {
            (
                crc32_combine_op(crc, piece.crc, piece.shift),
                len + piece.len,
            )
        });
        Checksum {
            crc,
            len,
            shift: crc32_combine_gen(len),
        }
    }
}

pub(crate) fn crc_of(data: &[u8]) -> Checksum {
    let len = data.len() as u64;
    Checksum {
        crc: crc32(0, data),
        len,
        shift: crc32_combine_gen(len),
    }
}

/// A segment made by [`deflate`], uncompressed: closed with an empty final block, it is a
/// complete raw deflate stream on its own, since no segment refers back past its start.
pub(super) fn inflate_segment(segment: &[u8]) -> Bytes {
    let mut stream = Vec::with_capacity(segment.len() + GzipMember::FINAL_BLOCK.len());
    stream.extend_from_slice(segment);
    stream.extend_from_slice(&GzipMember::FINAL_BLOCK);
    let mut plain = Vec::with_capacity(segment.len() * 8);
    flate2::read::DeflateDecoder::new(stream.as_slice())
        .read_to_end(&mut plain)
        .expect("our own deflate segment decodes");
    Bytes::from(plain)
}

/// `data` as a raw deflate segment that ends with a sync flush, so segments can be
/// concatenated into one stream. Level 6, zlib's default: a fragment is compressed once per
/// change, not once per read, so the smaller payload is worth the extra microseconds.
pub(crate) fn deflate(data: &[u8]) -> Vec<u8> {
    deflate_at(data, Compression::default())
}

/// [`deflate`] at another level.
pub(crate) fn deflate_at(data: &[u8], level: Compression) -> Vec<u8> {
    let mut compressor = Compress::new(level, false);
    let mut out = Vec::with_capacity(data.len() / 6 + 64);
    loop {
        let consumed = compressor.total_in() as usize;
        compressor
            .compress_vec(&data[consumed..], &mut out, FlushCompress::Sync)
            .expect("deflate into a Vec cannot fail");
        if compressor.total_in() as usize == data.len() && out.len() < out.capacity() {
            // Kept for as long as the run is unchanged: `Bytes` would hold the spare capacity
            // too (about 2/3 of it, at JSON's 1:20 ratio), so give it back first.
            out.shrink_to_fit();
            return out;
        }
        out.reserve(out.capacity().max(64));
    }
}

/// What [`push_stored_block`] appends for `plain`.
pub(crate) fn stored_block_size(plain: &[u8]) -> usize {
    if plain.is_empty() {
        0
    } else {
        5 + plain.len()
    }
}

/// `plain` as one stored deflate block (at most 65,535 bytes; the few bytes of separators
/// and closing brackets), appended to `out`.
pub(crate) fn push_stored_block(out: &mut Vec<u8>, plain: &[u8]) {
    if plain.is_empty() {
        return;
    }
    let len = u16::try_from(plain.len()).expect("stored blocks here are a few bytes");
    out.push(0x00);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&(!len).to_le_bytes());
    out.extend_from_slice(plain);
}

/// A gzip member assembled from deflate segments and stored blocks (RFC 1951/1952), in one
/// buffer or, where shared pieces are pushed ([`GzipMember::push_shared`]), in parts.
pub(crate) struct GzipMember {
    /// The parts before `out`: shared pieces and the buffers written between them.
    parts: Vec<Bytes>,
    out: Vec<u8>,
    crc: u32,
    len: u64,
}

impl GzipMember {
    /// Header: magic, deflate, no flags, no mtime, no extra flags, unknown OS.
    const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    /// An empty final block with fixed Huffman codes: closes the deflate stream.
    const FINAL_BLOCK: [u8; 2] = [0x03, 0x00];
    /// The final block and the trailer (CRC-32 and length).
    const END: usize = Self::FINAL_BLOCK.len() + 8;

    pub(crate) fn new() -> GzipMember {
        GzipMember::with_capacity(0)
    }

    /// A member that will hold `segments` bytes of deflate segments and stored blocks, so it is
    /// written into one allocation: a large document's body is megabytes, and growing it by
    /// doubling copied it about three times over.
    pub(crate) fn with_capacity(segments: usize) -> GzipMember {
        let mut out = Vec::with_capacity(Self::HEADER.len() + segments + Self::END);
        out.extend_from_slice(&Self::HEADER);
        GzipMember {
            parts: Vec::new(),
            out,
            crc: 0,
            len: 0,
        }
    }

    /// Appends a segment produced by [`deflate`] from data whose checksum is `checksum`.
    pub(crate) fn push_deflated(&mut self, segment: &[u8], checksum: &Checksum) {
        self.out.extend_from_slice(segment);
        self.crc = crc32_combine_op(self.crc, checksum.crc, checksum.shift);
        self.len += checksum.len;
    }

    /// Appends a piece of deflate segments and stored blocks, shared rather than copied (it
    /// becomes a part of its own), whose data's checksum is `checksum`.
    pub(crate) fn push_shared(&mut self, piece: Bytes, checksum: &Checksum) {
        if !self.out.is_empty() {
            let written = std::mem::take(&mut self.out);
            self.parts.push(Bytes::from(written));
        }
        self.parts.push(piece);
        self.crc = crc32_combine_op(self.crc, checksum.crc, checksum.shift);
        self.len += checksum.len;
    }

    /// Appends `plain` uncompressed, as one stored block (used for the few bytes of
    /// separators and the closing brackets). Stored blocks hold at most 65,535 bytes.
    pub(crate) fn push_stored(&mut self, plain: &[u8]) {
        push_stored_block(&mut self.out, plain);
        self.crc = crc32(self.crc, plain);
        self.len += plain.len() as u64;
    }

    /// The member in one buffer (shared pieces, if any, copied into it).
    pub(crate) fn finish(self) -> Bytes {
        let mut parts = self.finish_parts();
        if parts.len() == 1 {
            return parts.pop().unwrap_or_default();
        }
        Bytes::from(parts.concat())
    }

    /// The member as its parts, shared pieces as they were pushed.
    pub(crate) fn finish_parts(mut self) -> Vec<Bytes> {
        self.out.extend_from_slice(&Self::FINAL_BLOCK);
        self.out.extend_from_slice(&self.crc.to_le_bytes());
        // ISIZE: the length modulo 2^32.
        self.out.extend_from_slice(&(self.len as u32).to_le_bytes());
        // The body is kept for the whole version; without this, so would its spare capacity.
        self.out.shrink_to_fit();
        self.parts.push(Bytes::from(self.out));
        self.parts
    }
}

#[cfg(test)]
mod tests;
