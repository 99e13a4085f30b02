//! Eight bytes of text at a time (SWAR, "SIMD within a register"): finding the first byte of a
//! kind in a word of text without a branch per byte. The JSON scans use it to pass over strings
//! and containers (`json_text`, which trusts text already checked, and `checked_json`, which
//! checks it); the gateway uses it to escape the strings of the JSON it writes.

/// Every byte is `0x01`: times a byte, a word of that byte.
const ONES: u64 = 0x0101_0101_0101_0101;

/// The high bit of each byte of `word` below `limit` (a byte under 0x80); the lowest one set is
/// the first such byte (higher ones may be false, from a borrow, which is never read).
pub const fn bytes_below(word: u64, limit: u8) -> u64 {
    word.wrapping_sub(ONES * limit as u64) & !word & (ONES << 7)
}

/// The same for the bytes equal to `byte`.
pub const fn bytes_equal(word: u64, byte: u8) -> u64 {
    bytes_below(word ^ (ONES * byte as u64), 1)
}

/// `word` with bit 5 of every byte set: `[` and `]` read as `{` and `}`.
pub const fn fold_brackets(word: u64) -> u64 {
    word | (ONES * 0x20)
}

/// Where the first byte `stop` finds is in `bytes` from `at` on, looking at eight bytes at a
/// time; or where fewer than eight bytes are left (the caller looks at those one at a time).
#[inline(always)]
pub fn first_stop(bytes: &[u8], at: usize, stop: impl Fn(u64) -> u64) -> usize {
    let mut offset = at;
    while let Some(word) = bytes
        .get(offset..offset + 8)
        .and_then(|chunk| <[u8; 8]>::try_from(chunk).ok())
    {
        let found = stop(u64::from_le_bytes(word));
        if found != 0 {
            return offset + (found.trailing_zeros() / 8) as usize;
        }
        offset += 8;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first stop found is the first byte of its kind, whatever follows it in the word.
    #[test]
    fn the_first_byte_of_a_kind_is_found() {
        let quote_or_control = |word| bytes_equal(word, b'"') | bytes_below(word, 0x20);
        for (text, first) in [
            (&b"abcdefgh\"ijk"[..], 8),
            (b"ab\"\"\x01\x01\"x", 2),
            (b"\x01\"abcdefg", 0),
            (b"abcdefghijklmnop\x1f", 16),
            (b"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\"", 8),
            (b"abc", 0),
        ] {
            assert_eq!(first_stop(text, 0, quote_or_control), first, "{text:?}");
        }
        assert_eq!(
            first_stop(b"\"abcdefgh\"", 1, quote_or_control),
            9,
            "from an offset"
        );
        assert_eq!(
            first_stop(b"abcdefg]", 0, |w| bytes_equal(fold_brackets(w), b'}')),
            7,
            "a folded bracket"
        );
    }
}
